"""NASPA boundaries, at the value, one below and one above, worked by hand.

Segments (docs/rules/naspa.md "Segments"): with n0 = rounds - 1, n0 < 16 one segment,
n0 < 35 two ([0, n0 // 2] and the rest), otherwise three ([0, n0 // 3],
[.., (2 n0 + 1) // 3], [.., n0]); rounds below are numbered from 1. One-third-rated events:
the rounded change is clipped to +/-50, and the flag says so only when it was clipped.
"""

from __future__ import annotations

import pytest

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
