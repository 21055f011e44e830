"""Bad input to `calc`: one line on standard error, exit code 2, never a traceback."""

from __future__ import annotations

import pytest

from service.cli.main import main


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["expected", "--system", "fide", "--rating", "x", "--opponent", "2000"],
            "--rating 'x' is not a whole number",
        ),
        (
            ["expected", "--system", "fide", "--rating", "4001", "--opponent", "2000"],
            "outside 0..4000",
        ),
        (
            ["expected", "--system", "chess", "--rating", "1", "--opponent", "2"],
            "invalid choice: 'chess'",
        ),
        (
            [
                "expected",
                "--system",
                "fide",
                "--rating",
                "1",
                "--opponent",
                "2",
                "--date",
                "2025-13-01",
            ],
            "not a date",
        ),
        (
            ["expected", "--system", "fide", "--rating", "1", "--opponent", "2", "--pool", "nwl"],
            "not a fide pool",
        ),
        (["change", "--system", "fide", "--rating", "2000"], "at least one --game"),
        (
            ["change", "--system", "fide", "--rating", "2000", "--game", "2000:2"],
            "score '2' is not 1, 0.5 or 0",
        ),
        (
            ["change", "--system", "fide", "--rating", "2000", "--game", "2000"],
            "expected OPP:SCORE",
        ),
        (
            ["change", "--system", "fide", "--rating", "2000", "--game", "unrated:1"],
            "needs the opponent's rating",
        ),
        (
            ["change", "--system", "cfc", "--rating", "2000", "--game", "2000:1", "--k", "20"],
            "--k is a FIDE K input",
        ),
        (
            ["change", "--system", "fide", "--rating", "2000", "--game", "2000:1", "--k", "0"],
            "K must be positive",
        ),
        (
            ["performance", "--system", "cfc", "--rating", "2000", "--game", "2000:1"],
            "--rating is for FIDE",
        ),
        (["norm", "--game", "2000:1:XX"], "title 'XX' is not one of"),
        ([], "required: TOOL"),
    ],
)
def test_one_line_and_exit_2(capsys, argv, message):
    try:
        code = main(["calc", *argv])
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    assert code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("rating-service calc") and message in lines[0]


def test_unwritable_plot(tmp_path, capsys):
    target = tmp_path / "missing" / "plot.svg"
    assert (
        main(
            [
                "calc",
                "expected",
                "--system",
                "fide",
                "--rating",
                "1",
                "--opponent",
                "2",
                "--plot",
                str(target),
            ]
        )
        == 2
    )
    assert capsys.readouterr().err.count("\n") == 1
