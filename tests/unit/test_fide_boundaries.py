"""FIDE rule boundaries, each at the value, one below and one above, worked by hand.

Initial rating published from 1400 (7.2.1, F8), the 24 months of kept lists (F1), the
title norms' 35 % (Title Regulations 1.4). Table 8.1.1 values as printed: dp(0.29) = -158,
dp(0.30) = -149, dp(0.35) = -110, dp(0.40) = -72.
"""

from __future__ import annotations

import datetime as dt

import pytest

from schemas.fide import InitialGame, PublishedRating
from service.engine.fide.initial import initial_rating
from service.engine.fide.performance import norm_benchmarks, norms_met
from service.engine.fide.periods import with_new_list


def _games(opponents: list[int], halves: list[int]) -> list[InitialGame]:
    return [
        InitialGame(
            period="2026-05",
            event_id="e1",
            start_date=dt.date(2026, 5, 2),
            opponent_rating=r,
            score_halves=h,
        )
        for r, h in zip(opponents, halves)
    ]


@pytest.mark.parametrize(
    "opponents, rating, published",
    [
        # 5 games, 1 point (a win, four losses): p = (1 + 1) / 7 = 0.2857 -> 0.29 (F8),
        # dp = -158. Ra = (sum + 2 x 1800) / 7.
        ([1462, 1461, 1461, 1461, 1461], 1400, True),  # (7306 + 3600) / 7 = 1558; 1558 - 158
        ([1461, 1460, 1460, 1459, 1459], 1399, False),  # (7299 + 3600) / 7 = 1557; 1557 - 158
        ([1463, 1463, 1463, 1462, 1462], 1401, True),  # (7313 + 3600) / 7 = 1559; 1559 - 158
    ],
)
def test_initial_rating_is_published_from_1400(opponents, rating, published):
    result = initial_rating(_games(opponents, [2, 0, 0, 0, 0]), None)
    assert (result.p_hundredths, result.dp) == (29, -158)
    assert (result.rating, result.published) == (rating, published)


def _lists(*periods: str) -> list[PublishedRating]:
    return [PublishedRating(period=p, rating=2000 + i) for i, p in enumerate(periods)]


@pytest.mark.parametrize(
    "kept, after",
    [
        # The new list is in force from 2026-12: the horizon is 24 months before, 2024-12.
        # A list is dropped when the next one is already in force at the horizon, so the one
        # in force at 2024-12 stays (F1: events that started up to 24 months back).
        (("2024-11", "2024-12"), ["2024-12", "2026-12"]),  # next in force at the horizon
        (("2024-12", "2025-01"), ["2024-12", "2025-01", "2026-12"]),  # next one month later
        (("2024-10", "2024-11"), ["2024-11", "2026-12"]),  # next one month before
    ],
)
def test_lists_are_kept_for_24_months(kept, after):
    lists = with_new_list(_lists(*kept), "2026-11", 2100, 20, PublishedRating(period="2026-12"))
    assert [entry.period for entry in lists] == after


@pytest.mark.parametrize(
    "points_halves, met",
    [
        # 10 games against 2750s. 3.5 points is 35 % exactly: p = 0.35, dp = -110,
        # Rp = 2750 - 110 = 2640 >= 2600 and Ra 2750 >= 2380: every title's benchmark.
        (7, ["GM", "IM", "WGM", "WIM"]),
        # 3 points, 30 %: under the 35 % gate, though Rp = 2750 - 149 = 2601 would pass.
        (6, []),
        # 4 points, 40 %: Rp = 2750 - 72 = 2678.
        (8, ["GM", "IM", "WGM", "WIM"]),
    ],
)
def test_norms_need_35_percent_of_the_points_exactly(points_halves, met):
    assert [n.title for n in norms_met([2750] * 10, points_halves)] == met
    checks = norm_benchmarks([2750] * 10, points_halves)
    assert [check.title for check, reasons in checks if not reasons] == met
