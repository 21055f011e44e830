"""FIDE rule boundaries, each at the value, one below and one above, worked by hand.

Initial rating published from 1400 (7.2.1, F8), the 24 months of kept lists (F1), the
title norms' 35 % (Title Regulations 1.4). Table 8.1.1 values as printed: dp(0.29) = -158,
dp(0.30) = -149, dp(0.35) = -110, dp(0.40) = -72.
"""

from __future__ import annotations

import datetime as dt

import pytest

from schemas.fide import FideState, InitialGame, PublishedRating
from schemas.records import PlayerRecord
from service.engine.fide.change import base_k, capped_k, rating_difference
from service.engine.fide.initial import games_in_window, initial_rating
from service.engine.fide.performance import norm_benchmarks, norms_met
from service.engine.fide.periods import rating_in_force, with_new_list
from service.engine.tables import fide_pd_higher


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


# --- 8.3.1: the 400-point rule, the 2650 exemption and its date (F3) -------------------

BEFORE, FROM = dt.date(2025, 9, 30), dt.date(2025, 10, 1)


@pytest.mark.parametrize(
    "own, opponent, d",
    [
        (2399, 2000, 399),  # |D| 399: as it is
        (2400, 2000, 400),  # |D| 400 is not over 400
        (2401, 2000, 400),  # 401 counts as 400
        (2000, 2399, -399),
        (2000, 2400, -400),
        (2000, 2401, -400),
    ],
)
def test_400_point_rule_at_400(own, opponent, d):
    # Before 2025-10-01: no exemption for anyone.
    assert rating_difference(own, opponent, BEFORE, "standard") == d


@pytest.mark.parametrize(
    "own, d",
    [
        (2649, 400),  # own - opponent = 500; 2649 < 2650: capped
        (2650, 500),  # 2650 or above: the true D
        (2651, 500),
    ],
)
def test_2650_exemption_at_2650(own, d):
    assert rating_difference(own, own - 500, FROM, "standard") == d


@pytest.mark.parametrize(
    "start, d",
    [
        (dt.date(2025, 9, 30), 400),  # before the amendment: 2700 - 2200 = 500 counts as 400
        (dt.date(2025, 10, 1), 500),  # from 2025-10-01: 2700 >= 2650, the true D
        (dt.date(2025, 10, 2), 500),
    ],
)
def test_2650_exemption_from_2025_10_01(start, d):
    assert rating_difference(2700, 2200, start, "standard") == d


@pytest.mark.parametrize("d, pd", [(734, 99), (735, 99), (736, 100), (737, 100)])
def test_table_8_1_2_ends_at_735(d, pd):
    # 620-735: .99; > 735: 1.00 (the CFC table ends one earlier, at 734).
    assert fide_pd_higher(d) == pd


# --- 8.3.3: K (F6, F7) and the 700 cap ------------------------------------------------


@pytest.mark.parametrize("rating, k", [(2399, 20), (2400, 10), (2401, 10)])
def test_k_10_from_2400(rating, k):
    # Born 1980, 500 games, never 2300 or 2400 before: the rating on the list decides.
    assert base_k(rating, 500, 1980, False, False, 2025) == k


@pytest.mark.parametrize("list_year, k", [(2024, 40), (2025, 40), (2026, 20)])
def test_k_junior_to_18(list_year, k):
    # Born 2007, rated 2000, 200 games: list year - birth year 17, 18 (<= 18: junior), 19.
    assert base_k(2000, 200, 2007, False, False, list_year) == k


@pytest.mark.parametrize("rating, k", [(2299, 40), (2300, 20), (2301, 20)])
def test_k_junior_only_under_2300(rating, k):
    # Born 2010, list 2025 (15: a junior), 200 games: 40 only while rated under 2300.
    assert base_k(rating, 200, 2010, False, False, 2025) == k


@pytest.mark.parametrize("games, k", [(29, 40), (30, 20), (31, 20)])
def test_k_40_under_30_games(games, k):
    # Born 1980, rated 1800: fewer than 30 rated games in total: 40.
    assert base_k(1800, games, 1980, False, False, 2025) == k


@pytest.mark.parametrize(
    "k, games, capped",
    [
        (20, 34, 20),  # 20 x 34 = 680
        (20, 35, 20),  # 20 x 35 = 700: not over 700
        (20, 36, 19),  # 20 x 36 = 720 > 700: floor(700 / 36) = 19
        (40, 17, 40),  # 680
        (40, 18, 38),  # 720: floor(700 / 18) = 38
    ],
)
def test_k_times_games_capped_at_700(k, games, capped):
    assert capped_k(k, games) == capped


# --- 8.2: initial ratings: 5 games, the 2200 cap; 7.1.4: the 26 months ------------------


def test_initial_rating_needs_5_games():
    # Draws against 2000s: p = (n / 2 + 1) / (n + 2) = .50, dp 0; Ru = Ra.
    assert initial_rating(_games([2000] * 4, [1] * 4), None).rating is None  # 4 games
    # 5: (10000 + 3600) / 7 = 1942.86 -> 1943; 6: (12000 + 3600) / 8 = 1950
    assert initial_rating(_games([2000] * 5, [1] * 5), None).rating == 1943
    assert initial_rating(_games([2000] * 6, [1] * 6), None).rating == 1950


@pytest.mark.parametrize(
    "opponents, rating, capped",
    [
        # Five draws: p = 3.5 / 7 = .50, dp 0; Ru = Ra = (sum + 3600) / 7.
        ([2360, 2360, 2360, 2360, 2353], 2199, False),  # (11793 + 3600) / 7 = 2199
        ([2360] * 5, 2200, False),  # (11800 + 3600) / 7 = 2200: at most 2200, not capped
        ([2360, 2360, 2360, 2360, 2367], 2200, True),  # (11807 + 3600) / 7 = 2201 -> 2200
    ],
)
def test_initial_rating_at_most_2200(opponents, rating, capped):
    result = initial_rating(_games(opponents, [1] * 5), None)
    assert (result.p_hundredths, result.dp) == (50, 0)
    assert (result.rating, result.capped) == (rating, capped)


def test_pool_of_26_months():
    # Closing 2025-11: the 26 months 2023-10 .. 2025-11 (P-25 .. P).
    periods = ["2023-09", "2023-10", "2023-11", "2025-11", "2025-12"]
    games = [
        InitialGame(
            period=p,
            event_id="e",
            start_date=dt.date(2023, 9, 1),
            opponent_rating=2000,
            score_halves=1,
        )
        for p in periods
    ]
    assert [g.period for g in games_in_window(games, "2025-11")] == [
        "2023-10",
        "2023-11",
        "2025-11",
    ]


# --- Title Regulations 1.4: 9 games, each title's performance, average and floor --------


@pytest.mark.parametrize(
    "games, met", [(8, []), (9, ["GM", "IM", "WGM", "WIM"]), (10, ["GM", "IM", "WGM", "WIM"])]
)
def test_norms_need_9_games(games, met):
    # All won against 2700s: p 100 %, dp +800, Rp 3500, Ra 2700: only the games can fail.
    assert [n.title for n in norms_met([2700] * games, 2 * games)] == met


TITLES = [
    ("GM", 2600, 2380, 2200),
    ("IM", 2450, 2230, 2050),
    ("WGM", 2400, 2180, 2000),
    ("WIM", 2250, 2030, 1850),
]


def _reasons(opponents, halves):
    return {check.title: reasons for check, reasons in norm_benchmarks(opponents, halves)}


@pytest.mark.parametrize("title, performance, average, floor", TITLES)
def test_norm_performance_edges(title, performance, average, floor):
    # 4.5 / 9 against nine players rated X: p 50 %, dp 0, Rp = Ra = X (above the title's
    # average and floor): the performance alone decides.
    for x, passes in ((performance - 1, False), (performance, True), (performance + 1, True)):
        reasons = _reasons([x] * 9, 9)[title]
        assert reasons == ([] if passes else [f"performance {x} is under {performance}"])


@pytest.mark.parametrize("title, performance, average, floor", TITLES)
def test_norm_average_edges(title, performance, average, floor):
    # 9 / 9 against nine players rated X: dp +800, Rp = X + 800 far above every benchmark;
    # X is above the title's floor: the average alone decides.
    for x, passes in ((average - 1, False), (average, True), (average + 1, True)):
        reasons = _reasons([x] * 9, 18)[title]
        assert reasons == ([] if passes else [f"opponents' average {x} is under {average}"])


@pytest.mark.parametrize(
    "title, floor, averages",
    [
        # Eight 2500s and one opponent rated floor - 1, floor, floor + 1; the one below the
        # floor counts at the floor: Ra = (20000 + value) / 9, half up.
        ("GM", 2200, (2467, 2467, 2467)),  # 22200 / 9 = 2466.67; 22201 / 9 = 2466.78
        ("IM", 2050, (2450, 2450, 2450)),  # 22050 / 9 = 2450; 22051 / 9 = 2450.11
        ("WGM", 2000, (2444, 2444, 2445)),  # 22000 / 9 = 2444.44; 22001 / 9 = 2444.56
        ("WIM", 1850, (2428, 2428, 2428)),  # 21850 / 9 = 2427.78; 21851 / 9 = 2427.89
    ],
)
def test_norm_floor_raises_only_below_the_floor(title, floor, averages):
    for value, average, raised in zip(
        (floor - 1, floor, floor + 1), averages, (floor - 1, None, None)
    ):
        check = {c.title: c for c, _ in norm_benchmarks([2500] * 8 + [value], 12)}[title]
        assert (check.average_opponent, check.raised_from, check.floor) == (average, raised, floor)


@pytest.mark.parametrize(
    "games, points_halves, met",
    [
        # Against 2750s. 7 of 20 is 35 % exactly: dp(.35) = -110, Rp 2640: every benchmark.
        (20, 14, ["GM", "IM", "WGM", "WIM"]),
        # 8.5 of 25 is 34 %: under the gate, though Rp = 2750 + dp(.34) = 2750 - 117 = 2633.
        (25, 17, []),
        # 9 of 25 is 36 %: Rp = 2750 - 102 = 2648.
        (25, 18, ["GM", "IM", "WGM", "WIM"]),
    ],
)
def test_norms_35_percent_against_34_and_36(games, points_halves, met):
    assert [n.title for n in norms_met([2750] * games, points_halves)] == met


# --- F1: the list in force in a month, at each kept list's month -------------------------


def _kept(rating: int) -> PlayerRecord:
    # Lists kept from 2025-01 (2001), 2025-03 (2002), 2025-05 (2003); the record's rating
    # (the current list) is 2100, corrected by an import since the 2025-05 list.
    lists = [PublishedRating(period=p, rating=2001 + i) for i, p in enumerate(KEPT)]
    return PlayerRecord(
        system="fide",
        pool="standard",
        id="x",
        rating=rating,
        status="established",
        games=100,
        fide=FideState(published=lists),
    )


KEPT = ("2025-01", "2025-03", "2025-05")


@pytest.mark.parametrize(
    "month, rating",
    [
        ("2024-12", 2001),  # before every kept list: the oldest one
        ("2025-01", 2001),
        ("2025-02", 2001),
        ("2025-03", 2002),  # a list is in force from its own month
        ("2025-04", 2002),
        ("2025-05", 2100),  # from the newest list's month on: the record's (current) rating
        ("2025-06", 2100),
    ],
)
def test_list_in_force_from_its_own_month(month, rating):
    assert rating_in_force(_kept(2100), month) == rating


# --- Title Regulations 1.4: the shortcuts of norms_met at each edge ------------------------


def test_norm_benchmarks_of_a_single_game():
    # 1 game, won against a 2700: 100 %, dp +800, Ra 2700, Rp 3500: only the 9 games fail.
    checks = norm_benchmarks([2700], 2)
    assert [(c.title, reasons) for c, reasons in checks] == [
        (t, ["1 games, fewer than 9"]) for t in ("GM", "IM", "WGM", "WIM")
    ]


def test_norm_35_percent_gate_over_101_games():
    # 35 points of 101 games: 100 x 70 = 7000 < 35 x 2 x 101 = 7070: 34.65 %, under 35 %.
    # p rounds to 35 (7000 / 202 = 34.65 -> 35), dp -110: Rp = 2750 - 110 = 2640 passes
    # every title: the gate alone fails.
    reasons = _reasons([2750] * 101, 70)
    assert reasons["GM"] == ["35 of 101 points is under 35%"]
    assert norms_met([2750] * 101, 70) == []


def test_norms_met_at_the_wim_average_exactly():
    # 200 games, all won (dp +800), against 100 x 2029 and 100 x 2030: sum 405900.
    # WIM (floor 1850, 2029 not below it): Ra = 405900 / 200 = 2029.5 -> 2030, exactly the
    # WIM average; Rp 2830. WGM (floor 2000): 2030 < 2180; IM (2050): (405900 - 2029 + 2050)
    # / 200 = 2029.6 -> 2030 < 2230; GM (2200): 406071 / 200 = 2030.355 -> 2030 < 2380.
    opponents = [2029] * 100 + [2030] * 100
    assert [n.title for n in norms_met(opponents, 400)] == ["WIM"]


def test_norms_met_at_the_wim_performance_exactly():
    # 4.5 / 9 against nine 2250s: p 50 %, dp 0, Ra = Rp = 2250: exactly the WIM performance
    # (WIM average 2030 passed); WGM needs 2400.
    assert [n.title for n in norms_met([2250] * 9, 9)] == ["WIM"]


def test_initial_rating_reports_the_points():
    # 4 games, 1.5 points (3 halves): under 5 games, the points are reported all the same;
    # 5 games, 2.5 points: Ra = (10000 + 3600) / 7 = 1942.86, p = 3.5 / 7 = .50: 1943.
    assert initial_rating(_games([2000] * 4, [2, 1, 0, 0]), None).points == 1.5
    assert initial_rating(_games([2000] * 5, [1] * 5), None).points == 2.5


@pytest.mark.parametrize("k, capped", [(700, 700), (701, 700)])
def test_700_cap_with_a_single_game(k, capped):
    # An imported K (F5) of 701 with 1 game: 701 x 1 = 701 > 700: floor(700 / 1) = 700.
    assert capped_k(k, 1) == capped
