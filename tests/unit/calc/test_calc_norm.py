"""`calc norm`: FIDE title benchmarks with the floors and the reasons for failing
(Title Regulations 1.4 as in docs/rules/fide.md#fide-title-1-4), worked by hand."""

from __future__ import annotations

import json

from service.cli.main import main


def _norm(capsys, *games: str) -> dict:
    argv = ["calc", "norm", "--json"]
    for g in games:
        argv += ["--game", g]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_floor_raises_the_lowest_opponent(capsys):
    # 8 x 2450 and one 2000, 6.5 / 9 = 72.2% -> 72: dp 166.
    # GM: 2000 raised to 2200: (19600 + 2200) / 9 = 2422.2 -> 2422, Rp 2588 < 2600: fails.
    # IM: raised to 2050: 21650 / 9 = 2405.6 -> 2406, Rp 2572: met (2406 >= 2230).
    # WGM / WIM: 2000 is not under their floors: 21600 / 9 = 2400, Rp 2566: met.
    out = _norm(
        capsys,
        "2450:1:GM",
        "2450:1:IM",
        "2450:0.5",
        "2450:0.5",
        "2450:0.5",
        "2450:1",
        "2450:1",
        "2450:0.5",
        "2000:0.5",
    )
    checks = {c["title"]: c for c in out["checks"]}
    assert out["met"] == ["IM", "WGM", "WIM"]
    assert (
        checks["GM"]["average_opponent"],
        checks["GM"]["performance"],
        checks["GM"]["raised_from"],
    ) == (2422, 2588, 2000)
    assert checks["GM"]["reasons"] == ["performance 2588 is under 2600"]
    assert (checks["IM"]["average_opponent"], checks["IM"]["performance"]) == (2406, 2572)
    assert checks["WGM"].get("raised_from") is None and checks["WGM"]["performance"] == 2566
    assert (
        out["opponent_titles"] == {"GM": 1, "IM": 1, "untitled": 7}
        and out["titles_checked"] is False
    )


def test_unrated_opponent_and_the_gates(capsys):
    # 8 x 2500 and an unrated (1400, the lowest): 6 / 9 = 66.7% -> 67: dp 125.
    # GM: 1400 raised to 2200: 22200 / 9 = 2466.7 -> 2467, Rp 2592 < 2600.
    # IM: raised to 2050: 22050 / 9 = 2450, Rp 2575: met.
    games = ["2500:1"] * 4 + ["2500:0.5"] * 4 + ["unrated:0"]
    out = _norm(capsys, *games)
    checks = {c["title"]: c for c in out["checks"]}
    assert checks["GM"]["performance"] == 2592 and checks["GM"]["raised_from"] == 1400
    assert checks["IM"]["performance"] == 2575 and "IM" in out["met"]
    assert checks["IM"]["unrated_opponents"] == 1
    # 8 games: every title fails the 9-game gate, whatever the figures.
    out = _norm(capsys, *(["2700:1"] * 8))
    assert out["met"] == [] and all("8 games, fewer than 9" in c["reasons"] for c in out["checks"])
    # 3 / 9 = 33.3% < 35%: every title fails the score gate.
    out = _norm(capsys, *(["2800:1"] * 3 + ["2800:0"] * 6))
    assert all(any("under 35%" in r for r in c["reasons"]) for c in out["checks"])


def test_human_output(capsys):
    games = [
        "2450:1",
        "2450:1",
        "2450:0.5",
        "2450:0.5",
        "2450:0.5",
        "2450:1",
        "2450:1",
        "2450:0.5",
        "2000:0.5",
    ]
    argv = ["calc", "norm"] + [a for g in games for a in ("--game", g)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "9 games, 6.5 points, p 72%, dp +166" in text
    assert "met: IM, WGM, WIM" in text
    gm = next(line for line in text.splitlines() if line.startswith("GM "))
    assert gm.split()[:7] == ["GM", "2422", "2380", "2000", "->", "2200", "2588"]
