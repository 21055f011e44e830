"""The Calculators page's examples (docs/guides/calculators.md) are the commands' real output."""

from __future__ import annotations

import shlex
from pathlib import Path

from service.cli.main import main

PAGE = Path(__file__).resolve().parents[3] / "docs" / "guides" / "calculators.md"


def _examples() -> list[tuple[list[str], str]]:
    text = PAGE.read_text(encoding="utf-8")
    block = text.split("```console\n", 1)[1].split("```", 1)[0]
    examples: list[tuple[list[str], str]] = []
    command, output = "", []
    lines = iter(block.splitlines())
    for line in lines:
        if line.startswith("$ rating-service "):
            if command:
                examples.append((shlex.split(command)[1:], "\n".join(output).strip()))
            command, output = line[2:], []
            while command.endswith("\\"):
                command = command[:-1] + next(lines)
        else:
            output.append(line)
    examples.append((shlex.split(command)[1:], "\n".join(output).strip()))
    return examples


def test_the_page_shows_each_tool_with_its_real_output(capsys):
    examples = _examples()
    assert [argv[1] for argv in (e[0] for e in examples)] == [
        "expected",
        "change",
        "performance",
        "norm",
    ]
    for argv, shown in examples:
        assert main(argv) == 0
        assert capsys.readouterr().out.strip() == shown, argv
    assert Path("/tmp/expected.svg").exists()  # `expected --plot /tmp/expected.svg`
