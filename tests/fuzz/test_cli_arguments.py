"""The command line's arguments (D80): hostile option values for the commands that need no
Redis (`calc`'s tools, `rate`, `validate`, `convert` on the samples). Each run is accepted,
or refused with exit code 2 and one line: argparse's `... error: ...` after its usage for
an argument it cannot parse, else `rating-service COMMAND: ...`; never a traceback."""

from __future__ import annotations

from hypothesis import given, note
from hypothesis import strategies as st

from tests.fuzz.cli import Run, run
from tests.fuzz.hostile import ROOT, examples

NUMBERS = [
    "0",
    "-0",
    "-1",
    "1500",
    "1500.5",
    "1e3",
    "1e400",
    "1e10000000",
    "nan",
    "inf",
    "-inf",
    "99999999999999999999",
    "0x10",
    "1_000",
    "\u0661\u0665\u0660\u0660",  # 1500 in Arabic-Indic digits
    "\u00b2",
    "",
    " ",
    "unrated",
]
value = st.one_of(
    st.sampled_from(NUMBERS),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.text(st.characters(exclude_categories=("Cs",)), max_size=20),
)
game = st.one_of(
    st.tuples(value, st.sampled_from(["1", "0.5", "0", "=", "2", "-1", "", "nan"])).map(":".join),
    st.tuples(value, value, st.sampled_from(["GM", "IM", "", "X"])).map(":".join),
    value,
)
SYSTEM = st.sampled_from(["cfc", "fide", "naspa", "glicko2", "", "FIDE"])


@st.composite
def calc_argv(draw: st.DrawFn) -> list[str]:
    tool = draw(st.sampled_from(["expected", "change", "performance", "norm"]))
    argv = ["calc", tool]
    if tool != "norm":
        argv += ["--system", draw(SYSTEM)]
    if tool in ("expected", "change") or draw(st.booleans()):
        argv += ["--rating", draw(value)]
    if tool == "expected":
        argv += ["--opponent", draw(value)]
    else:
        for g in draw(st.lists(game, max_size=4)):
            argv += ["--game", g]
    if tool == "change":
        for option in ("--k", "--games-before", "--birth-year"):
            if draw(st.booleans()):
                argv += [option, draw(value)]
    if tool in ("expected", "change") and draw(st.booleans()):
        argv += [
            "--date",
            draw(st.sampled_from(["2025-10-01", "2025-02-30", "0001-01-01", ""]) | value),
        ]
    if tool in ("expected", "change") and draw(st.booleans()):
        argv += ["--pool", draw(st.sampled_from(["standard", "rapid", "x"]) | value)]
    if draw(st.booleans()):
        argv.append("--json")
    return argv


TRF = str(ROOT / "tests/data/autumn-open-2025.trf")
EVENT = str(ROOT / "deploy/examples/fide-event.json")


@st.composite
def file_argv(draw: st.DrawFn) -> list[str]:
    command = draw(st.sampled_from(["rate", "validate", "convert"]))
    argv = [command, TRF if command == "convert" or draw(st.booleans()) else EVENT]
    for option in ("--system", "--pool", "--event-id", "--period"):
        if draw(st.booleans()):
            argv += [option, draw(SYSTEM if option == "--system" else value)]
    if command == "rate" and draw(st.booleans()):
        argv.append("--ratings-from-trf")
    return argv


def _check(result: Run, command: str) -> None:
    assert "Traceback" not in result.err + result.out, result
    assert result.code in (0, 1, 2), result
    if result.code == 2:
        lines = result.err.splitlines()
        assert lines, result
        if lines[0].startswith("usage:"):
            assert ": error: " in lines[-1], result  # argparse: its usage, then one line
        else:
            assert len(lines) == 1 and lines[0].startswith(f"rating-service {command}"), result


@examples(ci=300)
@given(calc_argv())
def test_hostile_calculator_arguments(argv):
    note(repr(argv))
    _check(run(argv), "calc")


@examples(ci=100)
@given(file_argv())
def test_hostile_options_of_the_file_commands(argv):
    note(repr(argv))
    _check(run(argv), argv[0])
