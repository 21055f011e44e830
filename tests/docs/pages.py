"""The commands of a docs page, and how their output is compared (docs/development.md,
"Commands in the docs"): the parser of Markdown pages into `console` blocks and steps, the
normaliser, and the matcher of `...` wildcards."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

PROMPT = "$ "
WILDCARD = "..."
MARKER = re.compile(r"<!--\s*docs-test:\s*(?P<body>.*?)\s*-->")
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*)$")
EXIT = re.compile(r"\[exit (?P<status>\d+)\]")


class PageError(ValueError):
    """A page that does not follow the rules of its commands (a bad marker, output before a
    command, an unclosed block): said with the file and line."""


@dataclass
class Step:
    """One command of a `console` block: its line in the page, the command (continuation
    lines kept, joined by newlines), the expected output's lines, the expected exit status."""

    line: int
    command: str
    expected: list[str]
    status: int = 0


@dataclass
class Block:
    """One `console` block: its first line, its steps, and why it is not run (None: run)."""

    line: int
    steps: list[Step] = field(default_factory=list)
    skip: str | None = None


@dataclass
class Page:
    blocks: list[Block]
    serve: bool
    new_redis: bool = False  # NEW_REDIS_URL: a second, empty database (a restore's target)

    @property
    def steps(self) -> list[Step]:
        """The steps that are run, in the order of the page."""
        return [step for block in self.blocks if block.skip is None for step in block.steps]


def parse_page(text: str, name: str = "<page>") -> Page:
    """The page's `console` blocks and markers; other fenced blocks are passed over."""
    lines = text.splitlines()
    blocks: list[Block] = []
    serve = new_redis = False
    skip: tuple[int, str] | None = None  # a skip marker waiting for its block
    number = 0
    while number < len(lines):
        line = lines[number]
        number += 1
        fence = FENCE.match(line)
        if fence:
            indent, mark = len(fence["indent"]), fence["fence"]
            body_start = number
            body: list[str] = []
            while number < len(lines):
                closing = lines[number].strip()
                number += 1
                if closing.startswith(mark[0] * len(mark)) and set(closing) == {mark[0]}:
                    break
                body.append(_dedent(lines[number - 1], indent))
            else:
                raise PageError(f"{name}:{body_start}: the fenced block is not closed")
            is_console = fence["info"].split()[:1] == ["console"]
            if skip is not None and not is_console:
                raise PageError(
                    f"{name}:{skip[0]}: a skip marker is not right before a console block"
                )
            if is_console:
                block = Block(body_start, _steps(body, body_start + 1, name))
                if skip is not None:
                    block.skip = skip[1]
                blocks.append(block)
            skip = None
            continue
        marker = MARKER.fullmatch(line.strip())
        if marker:
            body_text = marker["body"]
            if body_text == "serve":
                serve = True
            elif body_text == "new-redis":
                new_redis = True
            elif body_text.split()[:1] == ["skip"]:
                reason = body_text[len("skip") :].strip()
                if not reason:
                    raise PageError(f"{name}:{number}: a skip marker says why: skip REASON")
                skip = (number, reason)
                continue
            else:
                raise PageError(f"{name}:{number}: unknown marker docs-test: {body_text}")
        if skip is not None and line.strip():
            raise PageError(f"{name}:{skip[0]}: a skip marker is not right before a console block")
    if skip is not None:
        raise PageError(f"{name}:{skip[0]}: a skip marker is not right before a console block")
    return Page(blocks, serve, new_redis)


def _dedent(line: str, indent: int) -> str:
    """The line without the fence's indentation (a block inside a list or an admonition)."""
    return line[indent:] if line[:indent].strip() == "" else line.lstrip()


def _steps(body: list[str], first: int, name: str) -> list[Step]:
    """The steps of a console block whose first body line is line `first` of the page."""
    steps: list[Step] = []
    index = 0
    while index < len(body):
        line = body[index]
        if not line.startswith(PROMPT):
            if line.strip():
                raise PageError(f"{name}:{first + index}: output before the block's first command")
            index += 1
            continue
        start = index
        command = [line[len(PROMPT) :]]
        while command[-1].endswith("\\") and index + 1 < len(body):
            index += 1
            command.append(body[index])
        index += 1
        expected: list[str] = []
        while index < len(body) and not body[index].startswith(PROMPT):
            expected.append(body[index])
            index += 1
        expected = _without_trailing_blanks(expected)
        status = 0
        if expected and EXIT.fullmatch(expected[-1].strip()):
            status = int(EXIT.fullmatch(expected[-1].strip())["status"])  # type: ignore[index]
            expected = _without_trailing_blanks(expected[:-1])
        steps.append(Step(first + start, "\n".join(command), expected, status))
    return steps


def _without_trailing_blanks(lines: list[str]) -> list[str]:
    end = len(lines)
    while end and not lines[end - 1].strip():
        end -= 1
    return lines[:end]


# The normaliser: what changes from one run to the next is replaced by a name.
_TIME = re.compile(
    r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?(?![\w:])"
)
_ENTRY_ID = re.compile(r"\b\d{10,}-\d+\b")
_DURATION = re.compile(
    r"\b(?:\d+(?:\.\d+)? ?(?:ms|µs|us|ns|min|s)|(?:\d+[wdhm])+(?:\d+(?:\.\d+)?s)?)\b"
)


def normalise(text: str | list[str], port: int | None = None) -> list[str]:
    """The lines of an output with entry ids, ISO timestamps, durations and the serve's real
    HTTP port replaced (`<id>`, `<time>`, `<duration>`, `8080`), trailing spaces and blank
    lines at the end dropped."""
    lines = text.splitlines() if isinstance(text, str) else text
    out = []
    for line in lines:
        line = _TIME.sub("<time>", line.rstrip().replace("\r", ""))
        line = _ENTRY_ID.sub("<id>", line)
        line = _DURATION.sub("<duration>", line)
        if port is not None and port != 8080:
            line = re.sub(rf"\b{port}\b", "8080", line)
        out.append(line)
    return _without_trailing_blanks(out)


def line_matches(expected: str, actual: str) -> bool:
    """One line: equal, or `...` inside the expected line stands for any text."""
    if WILDCARD not in expected:
        return expected == actual
    return _line_pattern(expected).fullmatch(actual) is not None


@functools.cache
def _line_pattern(expected: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in expected.split(WILDCARD)))


def matches(expected: list[str], actual: list[str]) -> bool:
    """The whole output: line by line, a line that is exactly `...` standing for any number
    of lines (zero or more)."""
    size = len(actual)
    # rest[j]: whether expected[i + 1:] matches actual[j:], for the line i being looked at.
    rest = [j == size for j in range(size + 1)]
    for line in reversed(expected):
        here = [False] * (size + 1)
        for j in range(size, -1, -1):
            if line == WILDCARD:
                here[j] = rest[j] or (j < size and here[j + 1])
            else:
                here[j] = j < size and rest[j + 1] and line_matches(line, actual[j])
        rest = here
    return rest[0]
