"""`calc change`: per-game and total change, official-style against the sequential
projection, worked by hand from the tables (FIDE 8.1.2 / CFC 714b) and N1."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.calculators.change import FideK, cfc_change, fide_change, naspa_change
from service.calculators.games import Game
from service.cli.main import main


def _change(capsys, *argv: str) -> dict:
    assert main(["calc", "change", "--json", *argv]) == 0
    return json.loads(capsys.readouterr().out)


FIDE_GAMES = ["--game", "2100:1", "--game", "1950:0.5", "--game", "2500:0"]


def test_fide_rounded_once_against_sequential(capsys):
    # 2000, K 20 (30 games, adult, never 2300), event of 2025-11-01:
    #   vs 2100: D -100 (band 99-106, L column) PD 0.36, S-PD +0.64, K x = +12.80
    #   vs 1950: D  +50 (47-53)  PD 0.57, S-PD -0.07, -1.40
    #   vs 2500: D -500 -> -400 (8.3.1) (392-411, L) PD 0.08, S-PD -0.08, -1.60
    # official: 20 x 0.49 = 9.8 -> +10 (2010).
    # sequential: 2000 +12.8 -> +13 = 2013; vs 1950 D +63 (62-68) 0.59: -0.09 x 20 = -1.8 -> -2
    #   = 2011; vs 2500 D -489 -> -400: 0.08: -1.6 -> -2 = 2009.
    out = _change(
        capsys, "--system", "fide", "--rating", "2000", "--date", "2025-11-01", *FIDE_GAMES
    )
    assert out["k"] == 20
    assert [g["difference"] for g in out["games"]] == [-100, 50, -400]
    assert [g["expected"] for g in out["games"]] == [0.36, 0.57, 0.08]
    assert [g["change"] for g in out["games"]] == [12.8, -1.4, -1.6]
    assert out["official"] == {"change_exact": "49/5", "change": 10, "new_rating": 2010}
    assert [(s["before"], s["change"], s["after"]) for s in out["sequential"]] == [
        (2000, 13, 2013),
        (2013, -2, 2011),
        (2011, -2, 2009),
    ]
    assert any("8.3.1" in n for n in out["notes"])


def test_fide_half_away_from_zero(capsys):
    # 2435 (ever 2400 by its rating: K 10) draws 2400: D 35 (33-39) PD 0.55, S-PD -0.05,
    # 10 x -0.05 = -0.5 -> -1 (8.3.4, F4: away from zero; half up would give 0).
    out = _change(
        capsys, "--system", "fide", "--rating", "2435", "--date", "2025-11-01", "--game", "2400:0.5"
    )
    assert out["k"] == 10
    assert out["official"] == {"change_exact": "-1/2", "change": -1, "new_rating": 2434}


def test_fide_k_inputs_and_the_700_cap(capsys):
    base = ["--system", "fide", "--date", "2025-11-01", "--game", "2000:0.5"]
    # Junior: 2025 - 2010 = 15 <= 18, rated 2100 < 2300, never 2300: K 40 (F6).
    assert (
        _change(capsys, *base, "--rating", "2100", "--games-before", "100", "--birth-year", "2010")[
            "k"
        ]
        == 40
    )
    # The same junior once published 2300: not junior K; 100 games: K 20.
    out = _change(
        capsys,
        *base,
        "--rating",
        "2100",
        "--games-before",
        "100",
        "--birth-year",
        "2010",
        "--ever-2300",
    )
    assert out["k"] == 20
    # Fewer than 30 games (F7): 40. Ever 2400: 10 (first in F6's order, even with 5 games).
    assert _change(capsys, *base, "--rating", "2100", "--games-before", "29")["k"] == 40
    assert (
        _change(capsys, *base, "--rating", "2350", "--games-before", "5", "--ever-2400")["k"] == 10
    )
    # 8.3.3 cap: K 40 x 20 games = 800 > 700: K = floor(700 / 20) = 35; K 35 x 20 = 700 kept.
    many = [a for _ in range(20) for a in ("--game", "2000:1")]
    out = _change(capsys, "--system", "fide", "--rating", "2000", "--k", "40", *many)
    assert out["k"] == 35 and any("700" in n for n in out["notes"])
    # Each win vs 2000 from 2000: +0.50, 35 x 10 = 350.
    assert out["official"]["change"] == 350
    assert _change(capsys, "--system", "fide", "--rating", "2000", "--k", "35", *many)["k"] == 35


def test_cfc_714b_and_the_2199_rule(capsys):
    # 1850, K 32: vs 2000 |D| 150 (146-153) lower 0.30: +0.70 x 32 = +22.40;
    # vs 1800 D 50 (47-53) 0.57: -0.07 -> -2.24; vs 1700 D 150: 0.70: -0.70 -> -22.40.
    # Rn = 1850 - 2.24 = 1847.76 -> 1848 (C11). Sequential: 1850 + 22.4 -> 1872;
    # 1872 vs 1800 D 72 (69-76) 0.60: -3.2 -> 1868.8 -> 1869; 1869 vs 1700 D 169 (163-170)
    # 0.72: -23.04 -> 1845.96 -> 1846.
    out = _change(
        capsys,
        "--system",
        "cfc",
        "--rating",
        "1850",
        "--game",
        "2000:1",
        "--game",
        "1800:0.5",
        "--game",
        "1700:0",
    )
    assert out["k"] == 32
    assert [g["change"] for g in out["games"]] == [22.4, -2.24, -22.4]
    assert out["official"] == {"change_exact": "-56/25", "change": -2, "new_rating": 1848}
    assert [s["after"] for s in out["sequential"]] == [1872, 1869, 1846]
    # 2190 beats 2190: 32 x 0.5 = 16 -> 2206 > 2199: 2199 + 7/2 = 2202.5 -> 2203 (714b, C11).
    out = _change(capsys, "--system", "cfc", "--rating", "2190", "--game", "2190:1")
    assert out["official"] == {"change_exact": "25/2", "change": 13, "new_rating": 2203}
    assert any("2199 rule" in n for n in out["notes"])


def test_naspa_walk_and_acceleration(capsys):
    # 1500, 100 career games: multiplier 20. E(1500,1500) = 0.5; E(1500,1600) =
    # 1/(1+e^0.31879) = 1/2.37546 = 0.42097. Excess 2 - 0.92097 = 1.07903; walk
    # 1500 + 20 x 1.07903 = 1521.58 (< 1800, one band); A = 21.58 - 5 x 2 = 11.58;
    # 1533.16 -> 1533. Sequential: 1500 + 10 = 1510, A 10 - 5 = 5: 1515; then
    # E(1515,1600) = 1/(1+e^0.27097) = 0.43267: 20 x 0.56733 = 11.35, A 6.35: 1532.69 -> 1533.
    out = _change(
        capsys,
        "--system",
        "naspa",
        "--rating",
        "1500",
        "--games-before",
        "100",
        "--game",
        "1500:1",
        "--game",
        "1600:1",
    )
    assert out["k"] == 20
    assert out["games"][1]["expected"] == pytest.approx(0.42097, abs=1e-5)
    assert out["official"]["change_exact"] == pytest.approx(33.16, abs=0.01)
    assert out["official"]["new_rating"] == 1533
    assert [s["after"] for s in out["sequential"]] == [1515, 1533]
    # Under 50 career games the multiplier is 30 (N5).
    assert (
        _change(
            capsys,
            "--system",
            "naspa",
            "--rating",
            "1500",
            "--games-before",
            "10",
            "--game",
            "1500:1",
        )["k"]
        == 30
    )


def test_human_output_labels_both_totals(capsys):
    assert (
        main(
            [
                "calc",
                "change",
                "--system",
                "fide",
                "--rating",
                "2000",
                "--date",
                "2025-11-01",
                *FIDE_GAMES,
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert (
        "official-style: K x sum(S-PD), rounded once (FIDE 8.3.4): +9.80 -> +10, new rating 2010"
        in text
    )
    assert (
        "sequential projection (each game alone from the running rating, rounded per game): +9, rating 2009"
        in text
    )


@settings(max_examples=200, deadline=None)
@given(
    system=st.sampled_from(["fide", "cfc", "naspa"]),
    rating=st.integers(100, 3000),
    opponent=st.integers(100, 3000),
    halves=st.sampled_from([0, 1, 2]),
    career=st.integers(0, 200),
)
def test_one_game_sequential_equals_official(system, rating, opponent, halves, career):
    """With a single game there is nothing to sequence: both readings agree."""
    played = [Game(opponent, halves)]
    if system == "fide":
        result = fide_change(
            rating, played, FideK(games_before=career), dt.date(2025, 11, 1), "standard"
        )
    elif system == "cfc":
        result = cfc_change(rating, played)
    else:
        result = naspa_change(rating, played, career)
    assert result.sequential[0].after == result.new_rating
