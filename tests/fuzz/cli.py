"""Running the command line in-process for the fuzz tests, and the rule its output keeps
(D80): exit 0 (accepted), 1 (a failed check: `validate` lists each problem, one line each,
naming the file), or 2 with one line on standard error, `rating-service COMMAND: ...`,
naming the file (a rating list's refusal then lists each bad row, `file:line: field:
reason`, one line each); never a traceback, never another exit code."""

from __future__ import annotations

import io
import re
from contextlib import redirect_stderr, redirect_stdout
from typing import NamedTuple

from service.cli.main import main

NOT_LISTED = re.compile(r"^\.\.\. and \d+ more problem\(s\) not listed$")  # after MAX_LISTED rows


class Run(NamedTuple):
    code: int
    out: str
    err: str


def run(argv: list[str]) -> Run:
    """`rating-service ARGV` in this process: its exit code and what it printed."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace")
    err = io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's usage errors, --help
            code = exc.code if isinstance(exc.code, int) else 1
    out.flush()
    return Run(code, out.buffer.getvalue().decode("utf-8", "backslashreplace"), err.getvalue())  # type: ignore[attr-defined]


def check_refusal(result: Run, command: str, *places: str) -> None:
    """The rule for a command given a file: accepted, or refused as D80 says, naming one of
    `places` (the files it was given)."""
    assert "Traceback" not in result.err + result.out, result
    assert result.code in (0, 1, 2), result
    if result.code == 2:
        lines = result.err.splitlines()
        while command == "rate" and lines and lines[0].startswith("rejected: "):
            lines = lines[1:]  # rate says each rejected message as it goes, before a bad line
        first, *more = lines
        assert first.startswith(f"rating-service {command}: "), result
        assert any(place in first for place in places), result
        for line in more:  # a list's refusal: then each bad row, one line each
            assert any(line.startswith(place) for place in places) or NOT_LISTED.match(line), result
    if result.code == 1:
        assert result.out.strip(), result
        for line in result.out.splitlines():
            assert any(line.startswith(place) for place in places), result
