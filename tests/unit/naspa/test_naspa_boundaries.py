"""NASPA boundaries, at the value, one below and one above, worked by hand.

Segments (docs/rules/naspa.md "Segments"): with n0 = rounds - 1, n0 < 16 one segment,
n0 < 35 two ([0, n0 // 2] and the rest), otherwise three ([0, n0 // 3],
[.., (2 n0 + 1) // 3], [.., n0]); rounds below are numbered from 1. One-third-rated events:
the rounded change is clipped to +/-50, and the flag says so only when it was clipped.
"""

from __future__ import annotations

import pytest

from service.engine.naspa.expected import ExpectedWins
from service.engine.naspa.newcomers import Newcomer, search
from service.engine.naspa.rated import band_walk, multiplier
from service.engine.naspa.segments import segment_rounds
from tests.unit.naspa.naspa_support import rate


@pytest.mark.parametrize(
    "rounds, segments",
    [
        (16, [(1, 16)]),  # n0 = 15 < 16: one segment
        (17, [(1, 9), (10, 17)]),  # n0 = 16: two; 16 // 2 = 8 -> rounds 1-9
        (18, [(1, 9), (10, 18)]),  # n0 = 17: 17 // 2 = 8
        (35, [(1, 18), (19, 35)]),  # n0 = 34 < 35: two; 34 // 2 = 17
        (36, [(1, 12), (13, 24), (25, 36)]),  # n0 = 35: three; 35 // 3 = 11, 71 // 3 = 23
        (37, [(1, 13), (14, 25), (26, 37)]),  # n0 = 36: 12, 73 // 3 = 24
        # (2 n0 + 1) // 3 differs from 2 n0 // 3 when 2 n0 % 3 == 2, i.e. n0 % 3 == 1:
        (38, [(1, 13), (14, 26), (27, 38)]),  # n0 = 37: 12, 75 // 3 = 25 (74 // 3 = 24)
        (41, [(1, 14), (15, 28), (29, 41)]),  # n0 = 40: 13, 81 // 3 = 27 (80 // 3 = 26)
        (44, [(1, 15), (16, 30), (31, 44)]),  # n0 = 43: 14, 87 // 3 = 29 (86 // 3 = 28)
    ],
)
def test_segment_ends(rounds, segments):
    assert segment_rounds(rounds) == segments


@pytest.mark.parametrize(
    "games, draws, change, clipped",
    [
        # P (1000, 100 career games: multiplier 20) meets a new 1000 (100 games) each round;
        # E = .5 a game. One-third rated: change = 20 x excess / 3, no acceleration.
        (15, 0, 50, False),  # 15 wins: excess 7.5; 150 / 3 = 50 exactly: not clipped
        (15, 1, 47, False),  # 14 wins, a draw: excess 7; 140 / 3 = 46.67 -> 47
        (16, 0, 50, True),  # 16 wins: excess 8; 160 / 3 = 53.33 -> 53, clipped to 50
    ],
)
def test_one_third_rated_clip_at_exactly_50(games, draws, change, clipped):
    players = {"P": (1000, 100)} | {f"O{i}": (1000, 100) for i in range(games)}
    scores = [1.0] * (games - draws) + [0.5] * draws
    r = rate(players, [(i + 1, "P", f"O{i}", s) for i, s in enumerate(scores)], one_third=True)
    assert r["P"].change == change
    assert r["P"].details.clipped is clipped


@pytest.mark.parametrize(
    "games, draws, change, clipped",
    [
        # The same, losing: P (1000, 100 games, multiplier 20) loses to each new 1000.
        (15, 0, -50, False),  # excess -7.5: -150 / 3 = -50 exactly: not clipped
        (15, 1, -47, False),  # 14 losses, a draw: excess -7; -140 / 3 = -46.67; 953.33 -> 953
        (16, 0, -50, True),  # excess -8: -160 / 3 = -53.33; 946.67 -> 947, -53 clipped to -50
    ],
)
def test_one_third_rated_clip_at_exactly_minus_50(games, draws, change, clipped):
    players = {"P": (1000, 100)} | {f"O{i}": (1000, 100) for i in range(games)}
    scores = [0.0] * (games - draws) + [0.5] * draws
    r = rate(players, [(i + 1, "P", f"O{i}", s) for i, s in enumerate(scores)], one_third=True)
    assert r["P"].change == change
    assert r["P"].details.clipped is clipped


# --- N5: the multiplier's bands (1800, 2000) and its 50 career games --------------------


@pytest.mark.parametrize("games", [49, 50, 51])
@pytest.mark.parametrize("rating", [1799, 1800, 1801, 1999, 2000, 2001])
def test_n5_multiplier_edges(games, rating):
    # Below 1800: 30 / 20; 1800-1999: 24 / 16; 2000 and over: 15 / 10 (g < 50 / g >= 50).
    band = 0 if rating < 1800 else 1 if rating < 2000 else 2
    expected = ((30, 24, 15), (20, 16, 10))[games >= 50][band]
    assert multiplier(games, rating) == expected


@pytest.mark.parametrize(
    "old, excess, rating, multipliers",
    [
        # g = 100. From 1799 up: m 20, 1819 is in 16's band: to 1800, excess 1 - 1/20 = 0.95,
        # 1800 + 16 x 0.95 = 1815.2.
        (1799, 1.0, 1815.2, (20, 16)),
        # From 1800 up: m 16, 1816 is in 16's band: done.
        (1800, 1.0, 1816.0, (16,)),
        # From 1800 down: m 16, 1784 is in 20's band: to 1799, excess -1 + 1/16 = -15/16,
        # 1799 - 20 x 15/16 = 1780.25.
        (1800, -1.0, 1780.25, (16, 20)),
        # From 1999 up: m 16, 2015 is in 10's band: to 2000, excess 1 - 1/16 = 15/16,
        # 2000 + 10 x 15/16 = 2009.375.
        (1999, 1.0, 2009.375, (16, 10)),
        # From 2000 down: m 10, 1990 is in 16's band: to 1999, excess -1 + 1/10 = -0.9,
        # 1999 - 16 x 0.9 = 1984.6.
        (2000, -1.0, 1984.6, (10, 16)),
        # From 2000 up: m 10, 2010: done.
        (2000, 1.0, 2010.0, (10,)),
        # From 2001 down: m 10, 1991 is in 16's band: to 1999, excess -1 + 2/10 = -0.8,
        # 1999 - 16 x 0.8 = 1986.2.
        (2001, -1.0, 1986.2, (10, 16)),
    ],
)
def test_n5_walk_from_each_side_of_a_boundary(old, excess, rating, multipliers):
    walk = band_walk(old, 100, excess)
    assert walk.rating == pytest.approx(rating, abs=1e-9)
    assert walk.multipliers == multipliers


# --- N5: nsa2008's floor of 1, before feedback -----------------------------------------


@pytest.mark.parametrize(
    "rating, unrounded, new",
    [
        # X (rating, 100 games, m 20) loses to Y (rating, 60 games, m 20); E = .5.
        # Y: walked rating + 10, A = 10 - 5 x 1 = 5 > 0: X receives 5 / 20 = 0.25 feedback.
        # X: walked rating - 10, floored at 1 (before feedback), + 0.25.
        (10, 1.25, 1),  # walked 0 -> 1 -> 1.25 -> 1
        (11, 1.25, 1),  # walked 1: at the floor -> 1.25 -> 1
        (12, 2.25, 2),  # walked 2 -> 2.25 -> 2
    ],
)
def test_nsa2008_floor_of_one(rating, unrounded, new):
    r = rate({"X": (rating, 100), "Y": (rating, 60)}, [(1, "Y", "X", 1)])
    assert r["X"].details.unrounded_rating == pytest.approx(unrounded)
    assert r["X"].new_rating == new


# --- Newcomers: the search range [0, 3000], the tie, the 5% / 95% rule ------------------


def test_n2_search_ends_at_the_range_ends():
    # 1 win of 1 against 3000: w = .95 > E(r, 3000) for every r <= 3000: every probe moves
    # low up: 1500 2250 2625 2812 2906 2953 2976 2988 2994 2997 2998 2999 -> 2999 (low 2998,
    # high 3000; a range of [0, 3001] would reach 3000).
    assert search(0.95, [3000.0], ExpectedWins()) == 2999
    # 0 of 1 against 0: w = .05 < E(r, 0) for every r >= 0: every probe moves high down:
    # 1500 750 375 187 93 46 23 11 5 2 1 -> 1 (low 0; [1, 3000] would end on 2, [-1, 3000] on 0).
    assert search(0.05, [0.0], ExpectedWins()) == 1


def test_n2_tie_at_a_probe_is_not_negative():
    # 1 of 2 against 1129 and 1871, symmetric about the first probe 1500: IPR(1500) =
    # E(371) + E(-371) - 1 = 0, which floats give as -1.1e-16: a tie, not negative, so high =
    # 1500; below it every probe 750 1125 1312 1406 1453 1476 1488 1494 1497 1498 1499 is
    # negative: 1499. (Read as negative: low = 1500, then 2250 1875 ... 1502 1501 -> 1501.)
    assert search(1.0, [1129.0, 1871.0], ExpectedWins()) == 1499


@pytest.mark.parametrize(
    "earned, target",
    [
        (0, 0.2),  # none of 4: 5 % x 4
        (0.5, 0.5),  # a draw is not none
        (3.5, 3.5),  # not all
        (4, 3.8),  # all of 4: 95 % x 4
    ],
)
def test_5_and_95_percent_only_at_none_and_all(earned, target):
    assert Newcomer(earned=earned, games=4).target == pytest.approx(target)


@pytest.mark.parametrize(
    "opponent, searched, new",
    [
        # N loses to R (rated `opponent`, 100 games): w = .05; E(r, o) < .05 exactly when
        # r < o - ln(19) / 0.0031879 = o - 923.63. The cap o + 400 x 0 / 1 = o does not bind.
        # o 1422 (threshold 498.37): 1500+ 750+ 375- 562+ 468- 515+ 491- 503+ 497- 500+ 498-
        # 499+ -> 499, under 500: 500 (N3).
        (1422, 499, 500),
        # o 1424 (threshold 500.37): ... 491- 503+ 497- 500- 501+ -> 501: kept.
        (1424, 501, 501),
    ],
)
def test_n3_newcomer_floor_500(opponent, searched, new):
    assert search(0.05, [float(opponent)], ExpectedWins()) == searched
    r = rate({"N": (None, 0), "R": (opponent, 100)}, [(1, "R", "N", 1)])
    assert r["N"].new_rating == new


# --- N5: acceleration under 1 point still feeds back; segments; a seeded career -----------


def test_n5_feedback_from_an_acceleration_under_one_point():
    # P (2100, 100 games: m 10) beats Q (2214, 100 games: m 10). N1: E(2100, 2214) =
    # 1 / (1 + e^(0.0031879 x 114)) = 1 / (1 + 1.438241) = .410132; excess .589868;
    # walked 2100 + 10 x .589868 = 2105.8987 (still m 10); A = 5.8987 - 5 x 1 = .8987: over
    # 0, under 1 point; P -> 2106.7974 -> 2107. Q, rated, receives .8987 / 20 = .0449.
    # Q: excess -.589868, 2214 - 5.8987 = 2208.1013, A 0; + .0449 = 2208.1463 -> 2208.
    # (Outputs to 2 decimals: A .90, feedback .04, unrounded 2208.15.)
    r = rate({"P": (2100, 100), "Q": (2214, 100)}, [(1, "P", "Q", 1)])
    assert r["P"].details.acceleration == pytest.approx(0.90)
    assert r["Q"].details.feedback == pytest.approx(0.04)
    assert r["Q"].details.unrounded_rating == pytest.approx(2208.15)
    assert (r["P"].new_rating, r["Q"].new_rating) == (2107, 2208)


def test_one_segment_lists_no_segments():
    # 1 round: n0 = 0 < 16, one segment: the per-segment list is given only for two or more.
    r = rate({"X": (1500, 100), "Y": (1500, 100)}, [(1, "X", "Y", 1)])
    assert r["X"].details.segments == []


def test_seeded_csw_career_restarts_at_0_games():
    # naspa-csw: x has no CSW rating (60 career games in the record), NWL 1500: seeded from
    # 1500 with career games 0 (N5's g). 17 rounds: two segments, rounds 1-9 and 10-17
    # (n0 = 16); x plays round 1 only. x beats y (1500, 60 games): E = .5, m(0 games,
    # 1500) = 30: 1500 + 15 = 1515, A = 15 - 5 = 10 -> 1525; y: m 20, 1490, + 10 / 20 = .5
    # -> 1490.5 -> 1491 (half up).
    r = rate(
        {"x": (None, 60), "y": (1500, 60)},
        [(1, "x", "y", 1)],
        rounds=17,
        ruleset="naspa-csw",
        seeds={"x": 1500},
    )
    first, second = r["x"].details.segments
    assert (first.first_round, first.last_round, first.career_games) == (1, 9, 0)
    assert (second.first_round, second.games) == (10, 0)
    assert (r["x"].new_rating, r["y"].new_rating) == (1525, 1491)
    assert r["x"].games == 1  # a seeded career starts at 0: 0 + 1
