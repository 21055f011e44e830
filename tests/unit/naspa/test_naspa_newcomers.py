"""Newcomers (the seed and N2-N4, docs/rules/naspa.md), hand-worked where
a pass or two settles it, and checked against the seed oracle (naspa_support) where the
iteration runs long. Search traces list each probed mid with the sign of IPR(mid).
"""

from __future__ import annotations

import pytest
from naspa_support import E, half_up, rate, seed_newcomers

from service.engine.arithmetic import decimal_number
from service.engine.naspa.expected import ExpectedWins
from service.engine.naspa.newcomers import search

# --- N2: the binary search returns the last probed mid ------------------------------


def test_n2_search_95_percent_ends_on_its_high_end():
    # 1 win of 1 vs 1500: w = 0.95. E(r, 1500) = 0.95 at r = 1500 + ln(19)/0.0031879 = 2423.63.
    # probes: 1500- 2250- 2625+ 2437+ 2343- 2390- 2413- 2425+ 2419- 2422- 2423- 2424+
    # (E(2423) = 0.949905 < 0.95, E(2424) = 0.950056): low 2423, high 2424: last mid 2424.
    assert search(0.95, [1500.0], ExpectedWins()) == 2424


def test_n2_search_draw_ends_on_its_low_end():
    # 0.5 of 1 vs 1500: IPR(1500) = 0.5 - 0.5 = 0, not < 0: high = 1500; then every probe
    # 750- 1125- 1312- 1406- 1453- 1476- 1488- 1494- 1497- 1498- 1499- moves low up:
    # low 1499, high 1500, last mid 1499 (not 1500).
    assert search(0.5, [1500.0], ExpectedWins()) == 1499


def test_n2_search_5_percent():
    # 0 wins of 1 vs 1500: w = 0.05; E = 0.05 at 1500 - 923.63 = 576.37.
    # probes: 1500+ 750+ 375- 562- 656+ 609+ 585+ 573- 579+ 576- 577+ -> 577
    # (E(576) = 0.049944 < 0.05 <= E(577) = 0.050095).
    assert search(0.05, [1500.0], ExpectedWins()) == 577


# --- One newcomer in a rated field --------------------------------------------------


def test_one_newcomer_all_wins_95_percent_rule_then_cap():
    # N beats L (1400, g=100) and H (1600, g=100): w = 0.95 x 2 = 1.9; the search lands far
    # above the cap (E(2000, 1400) + E(2000, 1600) = 0.8713 + 0.7816 = 1.653 < 1.9), so
    # N3: cap = 1600 + 400 x 2/2 = 2000 -> 2000. Pass 1: 1500 -> 2000; pass 2 no change: 2.
    # L: E(1400, 2000) = 0.1286733, 1400 - 20 x 0.1286733 = 1397.427 -> 1397.
    # H: E(1600, 2000) = 0.2183752, 1600 - 4.367504 = 1595.632 -> 1596.
    r = rate(
        {"N": (None, 0), "L": (1400, 100), "H": (1600, 100)}, [(1, "N", "L", 1), (2, "N", "H", 1)]
    )
    assert (r["N"].new_rating, r["L"].new_rating, r["H"].new_rating) == (2000, 1397, 1596)
    assert r["N"].details.newcomer_iterations == 2 and not r["N"].details.averaged
    assert (r["N"].old_rating, r["N"].change, r["N"].old_status, r["N"].status) == (
        None,
        None,
        "unrated",
        "established",
    )
    assert (r["N"].games, r["N"].event_games, r["N"].score) == (2, 2, 2)


def test_one_newcomer_all_losses_5_percent_rule():
    # N loses to R (1500, g=100): w = 0.05, search 577 (above), floor 500 no effect,
    # cap 1500 + 0 = 1500 no effect -> 577; 2 passes.
    # R: E(1500, 577) = 1 / (1 + exp(-2.9424)) = 0.949905, 1500 + 20 x 0.050095 = 1501.0
    # -> 1501; Acc = 1.0 - 5 < 0.
    r = rate({"N": (None, 0), "R": (1500, 100)}, [(1, "R", "N", 1)])
    assert (r["N"].new_rating, r["R"].new_rating) == (577, 1501)
    assert r["N"].details.newcomer_iterations == 2


def test_newcomer_draw_ends_on_the_low_end():
    # N draws R (1500, g=100): w = 0.5 -> 1499 (search above); cap 1500 + 200 = 1700.
    # R: E(1500, 1499) = 0.500797, 1500 + 20 x (0.5 - 0.500797) = 1499.984 -> 1500.
    r = rate({"N": (None, 0), "R": (1500, 100)}, [(1, "N", "R", 0.5)])
    assert (r["N"].new_rating, r["R"].new_rating) == (1499, 1500)
    assert r["N"].score == 0.5


def test_500_floor():
    # N loses to R (1000): w = 0.05, search (1500+ 750+ 375+ 187+ 93+ 46- 69- 81+ 75- 78+
    # 76- 77+) 77 < 500 -> 500 (N3); cap 1000 + 0 = 1000 no effect -> 500.
    r = rate({"N": (None, 0), "R": (1000, 100)}, [(1, "R", "N", 1)])
    assert r["N"].new_rating == 500


def test_cap_pulls_below_500():
    # N loses twice to R (300): w = 0.05 x 2 = 0.1; search: every probe 1500+ 750+ ... 2+ 1+
    # (2 x E(1, 300) = 0.556 > 0.1) -> 1; floor -> 500; then the cap 300 + 400 x 0/2 = 300
    # -> 300 (N3: floor first, then the cap, which may pull below 500).
    r = rate({"N": (None, 0), "R": (300, 100)}, [(1, "R", "N", 1), (2, "R", "N", 1)])
    assert r["N"].new_rating == 300


def test_newcomer_byes_and_forfeits_left_out():
    # N: a bye (round 1), a forfeit win (round 2), a loss to R (1500) in round 3: 0 of 1
    # counted -> 5% rule: 577 as above; one rated game.
    r = rate(
        {"N": (None, 0), "R": (1500, 100), "F": (1200, 100)},
        [(2, "N", "F", 1, "forfeit"), (3, "R", "N", 1)],
        byes=[(1, "N", 1)],
    )
    assert (r["N"].new_rating, r["N"].event_games, r["N"].score) == (577, 1, 0)


def test_newcomer_with_no_counted_game_gets_no_rating():
    r = rate(
        {"N": (None, 0), "R": (1500, 100), "S": (1500, 100)},
        [(1, "N", "R", 1, "forfeit"), (2, "R", "S", 0.5)],
        byes=[(2, "N", 1)],
    )
    assert (r["N"].new_rating, r["N"].status, r["N"].games, r["N"].expected) == (
        None,
        "unrated",
        0,
        None,
    )


# --- Newcomers who meet -------------------------------------------------------------


def test_two_newcomers_who_meet_in_a_rated_field():
    # N1 beats R2 (1400), loses to R3 (1800, g=20), beats N2; N2 beats R1 (1600), loses
    # to R2. Oracle: the seed's loop settles after 6 passes.
    players = {
        "N1": (None, 0),
        "N2": (None, 0),
        "R1": (1600, 100),
        "R2": (1400, 100),
        "R3": (1800, 20),
    }
    games = [("N1", "R2", 1), ("N1", "R3", 0), ("N1", "N2", 1), ("N2", "R1", 1), ("N2", "R2", 0)]
    oracle = seed_newcomers({p: r for p, (r, _) in players.items()}, games)
    assert oracle == {"N1": (1755, 6, False), "N2": (1357, 6, False)}
    r = rate(players, [(i + 1, *g) for i, g in enumerate(games)])
    assert (r["N1"].new_rating, r["N2"].new_rating) == (1755, 1357)
    assert r["N1"].details.newcomer_iterations == 6
    # Rated players meet the newcomers at their new ratings (N5), within one band:
    # R1 (m 20): 1600 + 20 x (0 - E(1600, 1357)) -> 1586
    assert r["R1"].new_rating == half_up(1600 + 20 * (0 - E(1600, 1357))) == 1586
    # R2 (m 20): 1400 + 20 x (1 - E(1400, 1357) - E(1400, 1755)) -> 1404
    assert r["R2"].new_rating == half_up(1400 + 20 * (1 - E(1400, 1357) - E(1400, 1755))) == 1404
    # R3 (g 20, m 24): walked 1800 + 24 x (1 - E(1800, 1755)) = 1800 + 24 x 0.464197 = 1811.14;
    # Acc = 11.14 - 5 = 6.14 -> 1817.28 -> 1817; newcomers get no feedback.
    walked = 1800 + 24 * (1 - E(1800, 1755))
    assert r["R3"].new_rating == half_up(walked + (walked - 1800 - 5)) == 1817
    assert r["R3"].details.acceleration == 6.14  # 6.1407, 2 decimals
    assert r["N1"].details.feedback == 0


def test_all_newcomer_division_hand_traced():
    # A beats B, both newcomers, no rated opponent (start 1500 each); N4 caps with the
    # opponent's current value. w(A) = 0.95, w(B) = 0.05.
    # pass 1: A vs 1500 -> 2424, cap 1500 + 400 = 1900 -> 1900; B vs 1500 -> 577, cap 1500 -> 577
    # pass 2: A vs 577 -> ~1501, cap 577 + 400 = 977 -> 977;  B vs 1900 -> 977 (< cap 1900)
    # pass 3: A vs 977 -> ~1901, cap 1377 -> 1377;            B vs 977 -> ~54 -> 500 (cap 977)
    # pass 4: A vs 500 -> ~1424, cap 900 -> 900;              B vs 1377 -> ~454 -> 500
    # pass 5: A vs 500 -> 900;                                B vs 900 -> 1 -> 500: unchanged, stop.
    r = rate({"A": (None, 0), "B": (None, 0)}, [(1, "A", "B", 1)])
    assert (r["A"].new_rating, r["B"].new_rating) == (900, 500)
    assert r["A"].details.newcomer_iterations == 5 and not r["A"].details.averaged
    assert seed_newcomers({"A": None, "B": None}, [("A", "B", 1)]) == {
        "A": (900, 5, False),
        "B": (500, 5, False),
    }


def test_all_newcomer_round_robin_against_the_oracle():
    # Four newcomers, a round robin with a draw: the loop does not settle; averaged.
    games = [
        ("A", "B", 1),
        ("A", "C", 1),
        ("A", "D", 0.5),
        ("B", "C", 1),
        ("B", "D", 0),
        ("C", "D", 1),
    ]
    oracle = seed_newcomers({p: None for p in "ABCD"}, games)
    r = rate({p: (None, 0) for p in "ABCD"}, [(i + 1, *g) for i, g in enumerate(games)])
    for p in "ABCD":
        value, passes, averaged = oracle[p]
        assert r[p].new_rating == half_up(value)
        assert r[p].details.unrounded_rating == pytest.approx(value, abs=1e-9)
        assert (
            (r[p].details.newcomer_iterations, r[p].details.averaged)
            == (passes, averaged)
            == (100, True)
        )


def test_averaging_branch_period_two_swap():
    # A and B (newcomers, no rated opponent) draw twice, then B beats A: A 1 of 3, B 2 of 3.
    # Each solves against the other's previous value: A: 3 E(r, o) = 1 at o - ln 2 / 0.0031879
    # = o - 217.43; B: o + 217.43 (caps o + 133.3 / o + 266.7 do not bind).
    # pass 1 (1500, 1500) -> (1283, 1718) [1282.57 -> last mid 1283; 1717.43 -> 1718]
    # pass 2 -> (1718 - 217.43 = 1500.57 -> 1501, 1283 + 217.43 = 1500.43 -> 1501)
    # pass 3 -> (1284, 1718), pass 4 -> (1501, 1501), ... never settles in 50 passes.
    # Passes 51-100 alternate: 25 x (1284, 1718) and 25 x (1501, 1501):
    # A = (1284 + 1501) / 2 = 1392.5 -> 1393; B = (1718 + 1501) / 2 = 1609.5 -> 1610.
    games = [("A", "B", 0.5), ("B", "A", 0.5), ("A", "B", 0)]
    r = rate({"A": (None, 0), "B": (None, 0)}, [(i + 1, *g) for i, g in enumerate(games)])
    assert (r["A"].details.unrounded_rating, r["B"].details.unrounded_rating) == (1392.5, 1609.5)
    assert (r["A"].new_rating, r["B"].new_rating) == (1393, 1610)
    assert r["A"].details.averaged and r["A"].details.newcomer_iterations == 100
    assert seed_newcomers({"A": None, "B": None}, games) == {
        "A": (1392.5, 100, True),
        "B": (1609.5, 100, True),
    }


def test_averaging_with_a_rated_player_uses_the_unrounded_mean():
    # N0 meets only N1 (lose, win, lose); N1 also draws R (800, g=100). The loop swaps
    # values and is averaged: N0 584.5, N1 801.5 (oracle). In the averaging passes N0
    # (no rated opponent) is not capped (N4).
    # R: excess 0.5 - E(800, 801.5) = 0.5 - 0.4988045 = 0.0011955; 800 + 0.0239 -> 800
    # (the unrounded 801.5, not 802, is R's opponent: N5).
    games = [("N0", "N1", 0), ("N1", "R", 0.5), ("N0", "N1", 1), ("N0", "N1", 0)]
    oracle = seed_newcomers({"N0": None, "N1": None, "R": 800}, games)
    assert oracle == {"N0": (584.5, 100, True), "N1": (801.5, 100, True)}
    r = rate(
        {"N0": (None, 0), "N1": (None, 0), "R": (800, 100)},
        [(i + 1, *g) for i, g in enumerate(games)],
    )
    assert (r["N0"].new_rating, r["N1"].new_rating, r["R"].new_rating) == (585, 802, 800)
    assert (
        r["R"].details.unrounded_rating
        == decimal_number(800 + 20 * (0.5 - E(800, 801.5)))
        == 800.02
    )
    assert r["R"].expected == 0.5  # 0.4988045, 2 decimals
