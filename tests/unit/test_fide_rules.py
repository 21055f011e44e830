"""FIDE rule functions, hand-worked from the rule text (docs/rules/fide.md F3-F8, FIDE 8.1-8.3,
Title Regulations 1.4). Tables: 8.1.2 PD bands, 8.1.1 dp by p."""

import datetime as dt

from schemas.fide import FirstEvent, InitialGame
from service.engine.fide.change import base_k, capped_k, game_term, period_change, rating_difference
from service.engine.fide.initial import games_in_window, initial_rating
from service.engine.fide.performance import norms_met, performance

BEFORE = dt.date(2025, 9, 30)
FROM = dt.date(2025, 10, 1)


# --- FIDE 8.3.1, the 400-point rule as dated (F3) ---------------------------------
def test_cap_applies_to_everyone_before_2025_10_01():
    # 2700 - 2200 = 500 > 400, event starts 2025-09-30: plain cap -> 400
    assert rating_difference(2700, 2200, BEFORE, "standard") == 400


def test_2650_player_uses_true_difference_from_2025_10_01():
    # 2700 - 2200 = 500, start 2025-10-01, own rating 2700 >= 2650 -> true D 500
    assert rating_difference(2700, 2200, FROM, "standard") == 500


def test_exemption_decided_by_own_rating_at_2650_and_2649():
    # 2650 - 2150 = 500, own 2650 >= 2650 -> 500; 2649 - 2149 = 500, own 2649 < 2650 -> 400
    assert rating_difference(2650, 2150, FROM, "standard") == 500
    assert rating_difference(2649, 2149, FROM, "standard") == 400


def test_lower_player_against_2650_is_still_capped():
    # 2200 - 2700 = -500; the player being rated is 2200 (< 2650): -400
    assert rating_difference(2200, 2700, FROM, "standard") == -400


def test_rapid_and_blitz_have_no_exemption():
    # 2700 - 2200 = 500 in rapid / blitz after 2025-10-01: still 400
    assert rating_difference(2700, 2200, FROM, "rapid") == 400
    assert rating_difference(2700, 2200, FROM, "blitz") == 400


def test_cap_edges_400_and_401():
    # |D| = 400 is not over 400 -> 400; |D| = 401 -> 400; -401 -> -400
    assert rating_difference(2400, 2000, BEFORE, "standard") == 400
    assert rating_difference(2401, 2000, BEFORE, "standard") == 400
    assert rating_difference(2000, 2401, BEFORE, "standard") == -400


# --- FIDE 8.1.2 through one game: (score - PD) in hundredths ----------------------
def test_table_edges_3_4_and_lower_column():
    # D = 3 -> band 0-3 -> .50; D = 4 -> band 4-10 -> .51; D = -4 -> L column 1 - .51 = .49
    assert game_term(2003, 2000, 2, BEFORE, "standard") == (50, 50)  # win: 1 - .50
    assert game_term(2004, 2000, 1, BEFORE, "standard") == (-1, 51)  # draw: .5 - .51
    assert game_term(2000, 2004, 1, BEFORE, "standard") == (1, 49)  # draw: .5 - .49


def test_d_over_735_gives_one_only_with_the_exemption():
    # 2700 vs 1964 from 2025-10-01: D = 736 > 735 -> PD 1.00; a win gives 1 - 1.00 = 0
    assert game_term(2700, 1964, 2, FROM, "standard") == (0, 100)
    # 2700 vs 1965: D = 735 -> band 620-735 -> .99; a win gives +.01
    assert game_term(2700, 1965, 2, FROM, "standard") == (1, 99)
    # before 2025-10-01 the same D = 736 counts as 400 -> .92 (band 392-411): win +.08
    assert game_term(2700, 1964, 2, BEFORE, "standard") == (8, 92)
    # the lower player: D = -736 capped to -400 -> L = 1 - .92 = .08; loss 0 - .08
    assert game_term(1964, 2700, 0, FROM, "standard") == (-8, 8)


# --- FIDE 8.3.4 rounding once, half away from zero (F4) ---------------------------
def test_rounding_half_away_from_zero_both_signs():
    # K 10 x (+.05) = +0.5 -> +1 ; K 10 x (-.05) = -0.5 -> -1 (round() would give 0 and 0)
    assert period_change(10, 5) == 1
    assert period_change(10, -5) == -1
    # K 10 x .25 = 2.5 -> 3 ; K 10 x -.25 = -2.5 -> -3 ; K 20 x .12 = 2.4 -> 2
    assert period_change(10, 25) == 3
    assert period_change(10, -25) == -3
    assert period_change(20, 12) == 2


# --- FIDE 8.3.3 K (F5, F6, F7) and the 700/n cap ---------------------------------
def test_k_ever_2400_is_10_even_rated_below():
    # ever published 2400 -> 10, whatever the rating now (2350) and games (5)
    assert base_k(2350, 5, 2010, False, True, 2025) == 10
    # a rating of 2400 on the list counts as published 2400
    assert base_k(2400, 500, 1980, False, False, 2025) == 10


def test_k_junior_by_birth_year():
    # list year 2025 - born 2007 = 18 <= 18, rated 2000 < 2300 -> 40 (200 games)
    assert base_k(2000, 200, 2007, False, False, 2025) == 40
    # list year 2026 - 2007 = 19 > 18 -> 20
    assert base_k(2000, 200, 2007, False, False, 2026) == 20
    # junior but 2300 published once (now 2250) -> not the junior branch -> 20
    assert base_k(2250, 200, 2010, True, False, 2025) == 20
    # junior rated 2300 now -> not under 2300 -> 20
    assert base_k(2300, 200, 2010, False, False, 2025) == 20


def test_k_fewer_than_30_games():
    # 29 rated games in total -> 40; 30 -> 20 (born 1980: no junior branch)
    assert base_k(1800, 29, 1980, False, False, 2025) == 40
    assert base_k(1800, 30, 1980, False, False, 2025) == 20


def test_700_over_n_cap_at_35_and_36_games():
    # 20 x 35 = 700, not over 700 -> 20; 20 x 36 = 720 > 700 -> floor(700/36) = 19
    assert capped_k(20, 35) == 20
    assert capped_k(20, 36) == 19
    # 40 x 17 = 680 -> 40; 40 x 18 = 720 -> floor(700/18) = 38; 10 x 71 = 710 -> 9
    assert capped_k(40, 17) == 40
    assert capped_k(40, 18) == 38
    assert capped_k(10, 71) == 9


# --- FIDE 8.2 initial ratings (F8) ------------------------------------------------
def _games(opponents, halves, event="e1", period="2025-11"):
    return [
        InitialGame(
            period=period,
            event_id=event,
            start_date=dt.date(2025, 11, 1),
            opponent_rating=r,
            score_halves=h,
        )
        for r, h in zip(opponents, halves)
    ]


def test_initial_rating_real_case_1922():
    # 3/5 against opponents summing 9507: Ra = (9507 + 3600) / 7 = 13107/7 = 1872.43;
    # p = (3 + 1) / 7 = .5714 -> .57; dp(.57) = 50; Ru = 1922.43 -> 1922
    result = initial_rating(_games([1900, 1900, 1900, 1900, 1907], [2, 2, 2, 0, 0]), None)
    assert result.ra == 1872.43  # 1872.428..., 2 decimals
    assert (result.ra_exact, result.p_hundredths, result.dp, result.rating, result.published) == (
        "13107/7",
        57,
        50,
        1922,
        True,
    )


def test_initial_rating_capped_at_2200():
    # 5/5 vs five 2400: Ra = (12000 + 3600)/7 = 2228.57; p = 6/7 = .857 -> .86; dp(.86) 309;
    # Ru = 2537.57 -> 2538 -> capped at 2200
    result = initial_rating(_games([2400] * 5, [2] * 5), None)
    assert (result.p_hundredths, result.dp, result.rating, result.capped) == (86, 309, 2200, True)


def test_initial_rating_below_1400_not_published():
    # 0.5/5 vs five 1400: Ra = (7000 + 3600)/7 = 1514.29; p = 1.5/7 = .214 -> .21; dp -230;
    # Ru = 1284.29 -> 1284 < 1400: not published
    result = initial_rating(_games([1400] * 5, [1, 0, 0, 0, 0]), None)
    assert (result.rating, result.published) == (1284, False)


def test_initial_rating_needs_5_games():
    # 4 games < 5: no rating
    result = initial_rating(_games([2000] * 4, [2] * 4), None)
    assert (result.rating, result.published, result.games) == (None, False, 4)


def test_initial_p_rounded_half_up_to_hundredths():
    # 4/6 vs six 2000: p = (4 + 1)/8 = .625 -> half up .63 (not .62); dp(.63) = 95;
    # Ra = (12000 + 3600)/8 = 1950; Ru = 2045 (with .62: 1950 + 87 = 2037)
    result = initial_rating(_games([2000] * 6, [2, 2, 2, 2, 0, 0]), None)
    assert (result.p_hundredths, result.rating) == (63, 2045)


def test_initial_ru_rounded_half_up():
    # 3/6 vs 2000 x5 + 2004: Ra = (12004 + 3600)/8 = 1950.5; p = 4/8 = .50 -> dp 0;
    # Ru = 1950.5 -> half up 1951
    result = initial_rating(_games([2000] * 5 + [2004], [2, 2, 2, 0, 0, 0]), None)
    assert (result.ra, result.ra_exact, result.rating) == (1950.5, "3901/2", 1951)


def test_zero_first_event_disregarded():
    # first event 0/3 vs 2000 is disregarded; the rest 3/5 vs 9507 -> 1922 as above
    first = _games([2000] * 3, [0] * 3, event="first")
    rest = _games([1900, 1900, 1900, 1900, 1907], [2, 2, 2, 0, 0], event="second")
    result = initial_rating(
        first + rest, FirstEvent(start_date=dt.date(2025, 11, 1), event_id="first")
    )
    assert (result.games, result.rating, result.disregarded_event) == (5, 1922, "first")
    # a zero event that is not the first one counts: 8 games, 3 points, sum 15507:
    # Ra = (15507 + 3600)/10 = 1910.7; p = 4/10 = .40 -> dp -72; Ru = 1838.7 -> 1839
    later = initial_rating(
        rest + first, FirstEvent(start_date=dt.date(2025, 10, 1), event_id="older")
    )
    assert (later.games, later.rating) == (8, 1839)


def test_pool_window_is_26_months():
    # closing 2025-11: 26 months are 2023-10 .. 2025-11
    games = _games([2000], [1], period="2023-09") + _games([2000], [1], period="2023-10")
    assert [g.period for g in games_in_window(games, "2025-11")] == ["2023-10"]


# --- Performance rating (Title Regulations 1.4, Table 8.1.1) -----------------------
def test_performance_100_and_0_percent():
    # 9/9 vs mean 2400 -> 2400 + 800 = 3200; 0/9 -> 2400 - 800 = 1600
    assert performance([2400] * 9, 18) == 3200
    assert performance([2400] * 9, 0) == 1600


def test_performance_rounds_ra_and_p_half_up():
    # 2.5/4 vs 2000, 2001, 2001, 2000: Ra = 8002/4 = 2000.5 -> 2001; p = 62.5% -> 63%
    # dp(.63) = 95 -> 2096
    assert performance([2000, 2001, 2001, 2000], 5) == 2096


# --- Norm benchmarks --------------------------------------------------------------
def test_all_four_norm_benchmarks():
    # 6.5/9 vs nine 2450: Ra 2450; p = 72.2% -> 72; dp(.72) 166; Rp 2616:
    # GM (2600, Ra >= 2380), IM (2450, 2230), WGM (2400, 2180), WIM (2250, 2030) all met
    norms = norms_met([2450] * 9, 13)
    assert [(n.title, n.performance, n.average_opponent) for n in norms] == [
        ("GM", 2616, 2450),
        ("IM", 2616, 2450),
        ("WGM", 2616, 2450),
        ("WIM", 2616, 2450),
    ]


def test_im_but_not_gm():
    # 6/9 vs nine 2450: p = 66.7% -> 67; dp 125; Rp = 2575 < 2600: IM, WGM, WIM only
    assert [n.title for n in norms_met([2450] * 9, 12)] == ["IM", "WGM", "WIM"]


def test_wgm_and_wim_only():
    # 6/9 vs nine 2200: Rp = 2200 + 125 = 2325: Ra 2200 < 2230 (no IM), WGM needs Rp 2400
    # (no), WIM: Rp 2325 >= 2250 and Ra 2200 >= 2030 -> WIM only
    assert [n.title for n in norms_met([2200] * 9, 12)] == ["WIM"]


def test_floor_raise_makes_the_gm_average():
    # 7/9 vs eight 2420 and one 2000: plain Ra = 21360/9 = 2373.3 < 2380.
    # GM floor 2200: 2000 raised -> 21560/9 = 2395.6 -> 2396; p 77.8% -> 78; dp 220;
    # Rp 2616 >= 2600 -> GM with raised_from 2000.
    # IM floor 2050: 21410/9 = 2378.9 -> 2379; Rp 2599 -> IM. WGM floor 2000: no raise,
    # Ra 2373, Rp 2593 -> WGM. WIM: 2373 -> WIM.
    norms = {n.title: n for n in norms_met([2420] * 8 + [2000], 14)}
    assert (norms["GM"].average_opponent, norms["GM"].performance, norms["GM"].raised_from) == (
        2396,
        2616,
        2000,
    )
    assert (norms["IM"].average_opponent, norms["IM"].raised_from) == (2379, 2000)
    assert (norms["WGM"].average_opponent, norms["WGM"].raised_from) == (2373, None)


def test_nine_game_minimum():
    # 8/8 vs 2700: Rp 3500 but only 8 games -> no norm
    assert norms_met([2700] * 8, 16) == []


def test_35_percent_minimum():
    # 3/9 vs 2800 = 33.3% < 35%: none, although Rp = 2800 + dp(.33) = 2800 - 125 = 2675
    assert norms_met([2800] * 9, 6) == []
    # 3.5/9 = 38.9% -> 39; dp -80; Rp 2720; Ra 2800: all four
    assert [n.title for n in norms_met([2800] * 9, 7)] == ["GM", "IM", "WGM", "WIM"]


def test_unrated_opponents_one_raised_others_1400():
    # 8 x 2500 and one unrated: the unrated one (1400) is the lowest, raised to 2200 for GM:
    # (20000 + 2200)/9 = 2466.7 -> 2467; 6/9 -> 67% -> dp 125 -> Rp 2592 < 2600: no GM;
    # IM: raised to 2050: 22050/9 = 2450 -> Rp 2575 -> IM
    norms = {n.title: n for n in norms_met([2500] * 8 + [None], 12)}
    assert "GM" not in norms
    assert (
        norms["IM"].average_opponent,
        norms["IM"].raised_from,
        norms["IM"].unrated_opponents,
    ) == (2450, 1400, 1)
    # 7 x 2500 and two unrated, 7.5/9 = 83.3% -> 83; dp 273. GM: one raised to 2200, the
    # other 1400: (17500 + 2200 + 1400)/9 = 2344.4 -> 2344 < 2380: no GM. IM: (17500 +
    # 2050 + 1400)/9 = 2327.8 -> 2328 >= 2230, Rp 2601 -> IM
    norms = {n.title: n for n in norms_met([2500] * 7 + [None, None], 15)}
    assert "GM" not in norms and norms["IM"].average_opponent == 2328
