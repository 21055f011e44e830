"""The docs harness's parser, normaliser and matcher (tests/docs/pages.py), by the rules of
docs/development.md, "Commands in the docs"."""

from __future__ import annotations

import pytest

from tests.docs.pages import PageError, line_matches, matches, normalise, parse_page

FENCE = "```"


def page(*lines: str) -> str:
    return "\n".join(lines) + "\n"


def test_commands_outputs_and_line_numbers():
    text = page(
        "# Title",
        "",
        f"{FENCE}console",
        "$ rating-service version",
        "one",
        "two",
        "",
        "$ true",
        FENCE,
    )
    steps = parse_page(text).steps
    assert [(s.line, s.command, s.expected, s.status) for s in steps] == [
        (4, "rating-service version", ["one", "two"], 0),
        (8, "true", [], 0),
    ]


def test_a_continued_command_is_one_step_and_a_continuation_is_not_output():
    text = page(f"{FENCE}console", "$ rating-service export \\", "    --pool regular", "out", FENCE)
    (step,) = parse_page(text).steps
    assert step.command == "rating-service export \\\n    --pool regular"
    assert step.expected == ["out"]
    unfinished = page(f"{FENCE}console", "$ rating-service export", "    --pool regular", FENCE)
    (step,) = parse_page(unfinished).steps
    assert step.expected == ["    --pool regular"]  # no backslash: the next line is output


def test_exit_status_is_the_last_line_of_the_output():
    text = page(
        f"{FENCE}console", "$ rating-service export", "error: --pool", "[exit 2]", "", FENCE
    )
    (step,) = parse_page(text).steps
    assert (step.expected, step.status) == (["error: --pool"], 2)
    not_last = page(f"{FENCE}console", "$ x", "[exit 2]", "more", FENCE)
    (step,) = parse_page(not_last).steps
    assert (step.expected, step.status) == (["[exit 2]", "more"], 0)


def test_skip_marker_right_before_a_block():
    text = page(
        "<!-- docs-test: skip needs a Docker engine: tests/container/test_compose.py -->",
        "",
        f"{FENCE}console",
        "$ docker compose up",
        FENCE,
        f"{FENCE}console",
        "$ true",
        FENCE,
    )
    parsed = parse_page(text)
    assert parsed.blocks[0].skip == "needs a Docker engine: tests/container/test_compose.py"
    assert [s.command for s in parsed.steps] == ["true"]
    with pytest.raises(PageError, match=":1: a skip marker is not right before"):
        parse_page(page("<!-- docs-test: skip why -->", "some prose", f"{FENCE}console", FENCE))
    with pytest.raises(PageError, match="says why"):
        parse_page(page("<!-- docs-test: skip -->", f"{FENCE}console", FENCE))


def test_serve_marker_and_unknown_markers():
    assert parse_page(page("<!-- docs-test: serve -->")).serve
    assert parse_page(page("<!-- docs-test: new-redis -->")).new_redis
    assert not parse_page(page("<!-- docs-test: serve -->")).new_redis
    assert not parse_page(page("Put `<!-- docs-test: serve -->` in a page.")).serve  # prose
    with pytest.raises(PageError, match="unknown marker"):
        parse_page(page("<!-- docs-test: srve -->"))


def test_blocks_other_than_console_are_not_run():
    text = page(
        f"{FENCE}sh",
        "$ rating-service serve",
        FENCE,
        "~~~json",
        '{"a": 1}',
        "~~~",
        f"{FENCE}",
        "$ plain",
        FENCE,
        "    ```console",
        "    $ indented",
        "    out",
        "    ```",
    )
    parsed = parse_page(text)
    assert [(s.command, s.expected) for s in parsed.steps] == [("indented", ["out"])]


def test_output_before_a_command_and_unclosed_blocks_are_errors():
    with pytest.raises(PageError, match=":2: output before"):
        parse_page(page(f"{FENCE}console", "stray", "$ true", FENCE))
    with pytest.raises(PageError, match="not closed"):
        parse_page(page(f"{FENCE}console", "$ true"))


def test_normalise():
    real = (
        "1796096082195-0  ottawa: rated   \n"
        "at 2026-12-01T21:02:23.665529Z and 2026-12-01 21:02:23+00:00\n"
        "took 0.41 s, 12 ms, age 6s, 3h 05m, 1d12h\n"
        "http://127.0.0.1:41234/health\n"
        "\n"
    )
    assert normalise(real, port=41234) == [
        "<id>  ottawa: rated",
        "at <time> and <time>",
        "took <duration>, <duration>, age <duration>, <duration> <duration>, <duration>",
        "http://127.0.0.1:8080/health",
    ]


def test_normalise_keeps_the_data():
    kept = "event 2025-11-01 to 2025-11-02, cfc-2009, 5 players, 9 rounds, score 2.5, id 55fb111f"
    assert normalise(kept) == [kept]
    assert normalise("port 41234") == ["port 41234"]  # no serve: no port to replace


def test_exact_lines():
    assert matches(["a", "b"], ["a", "b"])
    assert not matches(["a", "b"], ["a", "c"])
    assert not matches(["a"], ["a", "b"])
    assert not matches([], ["anything"])  # no output shown: none printed
    assert matches([], [])


@pytest.mark.parametrize(
    ("expected", "actual"),
    [
        (["...", "end"], ["x", "y", "end"]),  # at the start
        (["start", "...", "end"], ["start", "end"]),  # in the middle, zero lines
        (["start", "...", "end"], ["start", "x", "y", "end"]),
        (["start", "..."], ["start", "x"]),  # at the end
        (["..."], []),
    ],
)
def test_dots_line_matches_any_lines(expected, actual):
    assert matches(expected, actual)


@pytest.mark.parametrize(
    ("expected", "actual"),
    [
        (["...", "end"], ["x", "end", "y"]),
        (["start", "...", "end"], ["begin", "x", "end"]),
        (["start", "..."], ["x", "start"]),
    ],
)
def test_dots_line_does_not_match(expected, actual):
    assert not matches(expected, actual)


def test_dots_inside_a_line():
    assert line_matches("rating ... established", "rating 1607 (+9) established")
    assert line_matches("...end", "the end")
    assert line_matches("start...", "start")
    assert line_matches("a...b...c", "a1b2c")
    assert not line_matches("rating ... established", "rating 1607 provisional")
    assert not line_matches("a.b", "axb")  # only `...` is a wildcard
    assert not line_matches("start...", "x start")
    assert matches(["  ..."], ["  one line"])  # not exactly `...`: within one line only
    assert not matches(["  ..."], ["  one", "  two"])
