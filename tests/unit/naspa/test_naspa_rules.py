"""NASPA rules, hand-worked (docs/rules/naspa.md N1, N5, segments, variants).

Every expected figure is worked out from the rule text in the comment above it; the
exp() values were taken with a pocket calculator (math.exp) and are written out.
"""

from __future__ import annotations

import pytest
from naspa_support import engine, rate

from service.engine.contract import EngineRejection
from service.engine.naspa.expected import expected_wins
from service.engine.naspa.newcomers import Newcomer
from service.engine.naspa.rated import band_walk, multiplier
from service.engine.naspa.segments import segment_rounds

# --- N1: expected wins -------------------------------------------------------------


def test_n1_equal_ratings_expect_half_a_win():
    # E = 1 / (1 + exp(0)) = 1 / 2
    assert expected_wins(1500, 1500) == 0.5


def test_n1_logistic_200_points_apart_no_clamp():
    # exp(-0.0031879 * 200) = exp(-0.63758) = 0.5285700; E = 1 / 1.5285700 = 0.6542062
    assert expected_wins(1700, 1500) == pytest.approx(0.6542062, abs=1e-7)
    # the other side: 1 - 0.6542062 = 0.3457938
    assert expected_wins(1500, 1700) == pytest.approx(0.3457938, abs=1e-7)
    # no clamp: 3000 points apart, exp(-9.5637) = 0.0000703; E = 0.9999297 (not 1)
    assert expected_wins(3000, 0) == pytest.approx(0.9999297, abs=1e-7)


# --- N5: multiplier ----------------------------------------------------------------


@pytest.mark.parametrize(
    "games, rating, m",
    [
        (49, 1799.9, 30),  # R < 1800, g < 50: 30
        (50, 1799, 20),  # R < 1800, g >= 50: 20
        (0, 1800, 24),  # 1800-1999, g < 50: 24
        (50, 1999.5, 16),  # 1800-1999, g >= 50: 16
        (49, 2000, 15),  # 2000+, g < 50: 15
        (500, 2400, 10),  # 2000+, g >= 50: 10
    ],
)
def test_n5_multiplier_table(games, rating, m):
    assert multiplier(games, rating) == m


# --- N5: the band walk -------------------------------------------------------------


def test_n5_walk_up_through_1800():
    # g = 100, R = 1790, excess 1: m = 20, r = 1790 + 20 = 1810, M(1810) = 16 != 20:
    # to 1800, excess 1 - (1800 - 1790) / 20 = 0.5; m = 16: r = 1800 + 8 = 1808, M = 16.
    walk = band_walk(1790, 100, 1.0)
    assert walk.rating == 1808
    assert walk.multipliers == (20, 16)


def test_n5_walk_up_through_2000():
    # g = 10, R = 1990, excess 1: m = 24, r = 2014, M(2014) = 15: to 2000, excess
    # 1 - 10/24 = 14/24; m = 15: r = 2000 + 15 * 14/24 = 2000 + 8.75 = 2008.75.
    walk = band_walk(1990, 10, 1.0)
    assert walk.rating == pytest.approx(2008.75, abs=1e-9)
    assert walk.multipliers == (24, 15)


def test_n5_walk_down_through_1799():
    # g = 100, R = 1810, excess -1: m = 16, r = 1794, M(1794) = 20: to 1799, excess
    # -1 - (1799 - 1810)/16 = -1 + 11/16 = -0.3125; m = 20: r = 1799 - 6.25 = 1792.75.
    walk = band_walk(1810, 100, -1.0)
    assert walk.rating == pytest.approx(1792.75, abs=1e-9)
    assert walk.multipliers == (16, 20)


def test_n5_walk_down_through_1999():
    # g = 100, R = 2010, excess -2: m = 10, r = 1990, M(1990) = 16: to 1999, excess
    # -2 - (1999 - 2010)/10 = -2 + 1.1 = -0.9; m = 16: r = 1999 - 14.4 = 1984.6.
    walk = band_walk(2010, 100, -2.0)
    assert walk.rating == pytest.approx(1984.6, abs=1e-9)
    assert walk.multipliers == (10, 16)


def test_n5_walk_across_two_boundaries():
    # g = 0, R = 1790, excess 10: m = 30, r = 2090: to 1800, excess 10 - 10/30 = 29/3;
    # m = 24, r = 1800 + 24 * 29/3 = 2032, M = 15: to 2000, excess 29/3 - 200/24 = 4/3;
    # m = 15: r = 2000 + 15 * 4/3 = 2020.
    walk = band_walk(1790, 0, 10.0)
    assert walk.rating == pytest.approx(2020, abs=1e-9)
    assert walk.multipliers == (30, 24, 15)


def test_n5_walk_to_the_letter_a_small_loss_from_2000_lands_on_1999_4():
    # g = 0, R = 2000, excess -0.05: m = 15, r = 1999.25, M(1999.25) = 24: to 1999,
    # excess -0.05 - (1999 - 2000)/15 = -0.05 + 0.0666667 = +0.0166667; m = 24:
    # r = 1999 + 24 * 0.0166667 = 1999.4 (the 1-point step 2000 -> 1999 costs 1/15).
    walk = band_walk(2000, 0, -0.05)
    assert walk.rating == pytest.approx(1999.4, abs=1e-9)
    assert walk.multipliers == (15, 24)


def test_n5_no_excess_no_walk():
    # excess 0: the rating stays; the multiplier at the old rating is reported (g=60: 20)
    walk = band_walk(1500, 60, 0.0)
    assert (walk.rating, walk.multipliers) == (1500, (20,))


# --- Segments ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "rounds, segments",
    [
        (16, [(1, 16)]),  # n0 = 15 < 16: one segment
        (17, [(1, 9), (10, 17)]),  # n0 = 16: [0, 8] and [9, 16], from 0
        (18, [(1, 9), (10, 18)]),  # n0 = 17: [0, 8], [9, 17]
        (31, [(1, 16), (17, 31)]),  # n0 = 30: [0, 15], [16, 30]
        (35, [(1, 18), (19, 35)]),  # n0 = 34 < 35: [0, 17], [18, 34]
        (36, [(1, 12), (13, 24), (25, 36)]),  # n0 = 35: [0, 11], [.., 71 // 3 = 23], [.., 35]
        (40, [(1, 14), (15, 27), (28, 40)]),  # n0 = 39: [0, 13], [.., 79 // 3 = 26], [.., 39]
    ],
)
def test_segments_n0_rule(rounds, segments):
    assert segment_rounds(rounds) == segments


# --- Newcomer start and targets (seed) ---------------------------------------------


def test_seed_start_is_the_mean_per_game_and_targets_5_and_95_percent():
    # rated opponents 1000, 1000 (met twice), 1600: start (1000 + 1000 + 1600) / 3 = 1200
    nc = Newcomer(earned=0, games=3, rated=(1000.0, 1000.0, 1600.0))
    assert nc.start == 1200
    # 0 wins of 3: target 5% x 3 = 0.15; cap 1600 + 400 x 0/3 = 1600
    assert nc.target == pytest.approx(0.15)
    assert nc.rated_cap == 1600
    # 3 of 3: 95% x 3 = 2.85; cap with raw wins: 1600 + 400 x 3/3 = 2000
    won = Newcomer(earned=3, games=3, rated=(1000.0, 1000.0, 1600.0))
    assert won.target == pytest.approx(2.85)
    assert won.rated_cap == 2000
    # 1.5 of 3 (draws): neither rule; no rated opponent: start 1500
    assert Newcomer(earned=1.5, games=3, unrated=(1, 1, 1)).target == 1.5
    assert Newcomer(earned=1.5, games=3, unrated=(1, 1, 1)).start == 1500


# --- Rated players through the engine ----------------------------------------------


def test_acceleration_with_feedback():
    # A (1500, g=0, m=30) beats B (1500, g=100, m=20) twice. E = 0.5 per game.
    # A: excess 2 - 1 = 1, walked 1500 + 30 = 1530; N5: Acc = 1530 - 1500 - 5 x 2 = 20 > 0
    #    -> 1530 + 20 = 1550.
    # B: excess 0 - 1 = -1, walked 1480; Acc = -20 - 10 < 0; feedback 20/20 per game x 2
    #    = 2 -> 1482.
    r = rate({"A": (1500, 0), "B": (1500, 100)}, [(1, "A", "B", 1), (2, "A", "B", 1)])
    assert (r["A"].new_rating, r["B"].new_rating) == (1550, 1482)
    assert r["A"].details.acceleration == 20 and r["A"].details.feedback == 0
    assert r["B"].details.feedback == 2 and r["B"].details.acceleration == 0
    assert r["A"].details.multipliers == [30] and r["B"].details.multipliers == [20]
    assert r["A"].games == 2 and r["B"].games == 102


def test_no_acceleration_below_five_points_a_game():
    # A (1500, g=60, m=20) beats B (1500, g=60) once: walked 1510, Acc = 10 - 5 = 5 > 0 ->
    # 1515; B: 1490 + 5/20 = 1490.25 -> 1490. With g=60 on both and a draw instead:
    # excess 0, Acc = 0 - 5 < 0: nothing moves.
    r = rate({"A": (1500, 60), "B": (1500, 60)}, [(1, "A", "B", 1)])
    assert (r["A"].new_rating, r["B"].new_rating) == (1515, 1490)
    r = rate({"A": (1500, 60), "B": (1500, 60)}, [(1, "A", "B", 0.5)])
    assert (r["A"].new_rating, r["B"].new_rating) == (1500, 1500)


def test_draw_between_unequal_players():
    # 1600 (g=100, m=20) draws 1400 (g=100): E(1600, 1400) = 0.6542062 (N1 case above).
    # 1600: excess 0.5 - 0.6542062 = -0.1542062, 1600 - 3.084124 = 1596.915876 -> 1597
    # 1400: excess 0.5 - 0.3457938 = +0.1542062, 1400 + 3.084124 = 1403.084 -> 1403;
    #       Acc = 3.08 - 5 < 0.
    r = rate({"H": (1600, 100), "L": (1400, 100)}, [(1, "H", "L", 0.5)])
    assert (r["H"].new_rating, r["L"].new_rating) == (1597, 1403)
    assert r["H"].score == 0.5 and r["H"].expected == 0.65  # 0.6542062, 2 decimals


def test_nsa2008_floor_of_one_is_before_feedback():
    # X (5, g=100, m=20) loses to Y (5, g=0, m=30). E = 0.5.
    # Y: walked 5 + 15 = 20, Acc = 15 - 5 = 10 -> 30; X gets 10/20 = 0.5 feedback.
    # X: walked 5 - 10 = -5; nsa2008 floor 1 (before feedback) -> 1 + 0.5 = 1.5 -> 2
    #    (floor after feedback would give max(-4.5, 1) = 1).
    r = rate({"X": (5, 100), "Y": (5, 0)}, [(1, "Y", "X", 1)])
    assert (r["X"].new_rating, r["Y"].new_rating) == (2, 30)
    # naspa2024 has no floor: -5 + 0.5 = -4.5 -> floor(-4.5 + 0.5) = -4, below zero by the
    # letter of the rules (a record holds it).
    r = rate({"X": (5, 100), "Y": (5, 0)}, [(1, "Y", "X", 1)], ruleset="naspa2024")
    assert (r["X"].new_rating, r["Y"].new_rating) == (-4, 30)
    assert r["X"].details.unrounded_rating == pytest.approx(-4.5)


def test_rounding_is_half_up_not_half_even():
    # CSW seed case below gives B = 1600 - 10 + 0.5 = 1590.5 exactly -> 1591 (round() says 1590).
    # Here: A (1600, g=100) loses to C (1600, g=0): C walked 1615, Acc = 15 - 5 = 10 -> 1625;
    # A: 1600 - 10 + 10/20 = 1590.5 -> 1591.
    r = rate({"A": (1600, 100), "C": (1600, 0)}, [(1, "C", "A", 1)])
    assert (r["A"].new_rating, r["C"].new_rating) == (1591, 1625)


def test_one_third_rated_divides_and_clips():
    # P (1000, g=0, m=30) beats ten players at 2000 (g=100) in rounds 1-10.
    # E(1000, 2000) = 1 / (1 + exp(3.1879)) = 1 / 25.23765 = 0.0396236.
    # P: excess 10 - 0.396236 = 9.603764; walk: 1000 + 30 x 9.603764 = 1288.113 (< 1800);
    #    change / 3 = 96.0376 -> 1096.0376 -> 1096, change +96 clipped to +50 -> 1050.
    #    No acceleration (it would be 288 - 50 = 238).
    # each opponent: excess -0.9603764, m = 10: 1990.396 -> M = 16: to 1999, excess
    #    -0.9603764 + 0.1 = -0.8603764, 1999 - 16 x 0.8603764 = 1985.234; change -14.766 / 3
    #    = -4.922 -> 1995.078 -> 1995 (change -5, no clip); no feedback.
    players = {"P": (1000, 0)} | {f"O{i}": (2000, 100) for i in range(10)}
    games = [(i + 1, "P", f"O{i}", 1) for i in range(10)]
    r = rate(players, games, one_third=True)
    assert r["P"].new_rating == 1050 and r["P"].change == 50
    assert r["P"].details.clipped and r["P"].details.acceleration == 0
    assert all(r[f"O{i}"].new_rating == 1995 for i in range(10))
    assert r["O0"].details.multipliers == [10, 16] and r["O0"].details.feedback == 0


def test_one_third_rated_small_change_not_clipped():
    # A (1500, g=0) beats B (1500, g=100): A walked 1515, /3: +5 -> 1505 (no acceleration,
    # which would have been 15 - 5 = 10); B: -10 / 3 = -3.333 -> 1496.667 -> 1497.
    r = rate({"A": (1500, 0), "B": (1500, 100)}, [(1, "A", "B", 1)], one_third=True)
    assert (r["A"].new_rating, r["B"].new_rating) == (1505, 1497)
    assert not r["A"].details.clipped


def test_byes_and_forfeits_are_left_out():
    # A (1500, g=100) has a bye (round 1), a forfeit win over C (round 2) and beats B
    # (1500, g=100) in round 3: only that game counts. A: 1500 + 20 x 0.5 = 1510,
    # Acc = 10 - 5 x 1 = 5 -> 1515; B: 1490 + 5/20 -> 1490.25 -> 1490. C played no
    # counted game: unchanged, games unchanged.
    r = rate(
        {"A": (1500, 100), "B": (1500, 100), "C": (1700, 80)},
        [(2, "A", "C", 1, "forfeit"), (3, "A", "B", 1)],
        byes=[(1, "A", 1)],
    )
    assert (r["A"].new_rating, r["B"].new_rating) == (1515, 1490)
    assert (r["A"].event_games, r["A"].games, r["A"].score) == (1, 101, 1)
    assert (r["C"].new_rating, r["C"].change, r["C"].games, r["C"].event_games) == (1700, 0, 80, 0)


def test_no_counted_game_is_unratable():
    with pytest.raises(EngineRejection) as err:
        rate({"A": (1500, 10), "B": (1500, 10)}, [(1, "A", "B", 1, "forfeit")], byes=[(2, "A", 1)])
    assert err.value.reason == "unratable" and err.value.path == "$.games"
    with pytest.raises(EngineRejection):
        rate({"A": (1500, 10)}, [], byes=[(1, "A", 1)])


def test_no_rating_periods():
    from schemas.events import PeriodClosed
    from schemas.records import PoolState

    with pytest.raises(EngineRejection) as err:
        engine().close_period(
            PeriodClosed(system="naspa", period="2024-01"),
            {},
            PoolState(system="naspa", pool="nwl"),
        )
    assert err.value.reason == "unratable" and err.value.path == "$.system"


# --- Segments through the engine ---------------------------------------------------

EIGHTEEN = [
    (n, "A", "B", 1 if n in (1, 2, 3, 4, 5, 10, 11, 12, 13, 14) else 0) for n in range(1, 19)
]


@pytest.mark.parametrize("ruleset, a_rating", [("nsa2008", 1525), ("naspa2024", 1521)])
def test_eighteen_rounds_two_segments(ruleset, a_rating):
    # 18 rounds: n0 = 17, segments rounds 1-9 and 10-18. A (1500, g=45), B (1500, g=100).
    # Segment 1: A wins 5 of 9, E = 0.5: A excess 0.5, m 30 -> 1515 (Acc 15 - 45 < 0);
    #   B excess -0.5, m 20 -> 1490. Carried rounded: 1515, 1490.
    # Segment 2: A wins 5 of 9 again. E(1515, 1490) = 1 / (1 + exp(-0.0796975)) = 0.5199138;
    #   excess 5 - 9 x 0.5199138 = 0.3207755.
    #   nsa2008: career games not advanced, g = 45, m = 30: 1515 + 9.623 = 1524.623 -> 1525.
    #   naspa2024: g = 45 + 9 = 54, m = 20: 1515 + 6.416 = 1521.416 -> 1521.
    #   B (m 20 either way): 1490 - 6.416 = 1483.584 -> 1484.
    r = rate({"A": (1500, 45), "B": (1500, 100)}, EIGHTEEN, ruleset=ruleset)
    assert (r["A"].new_rating, r["B"].new_rating) == (a_rating, 1484)
    first, second = r["A"].details.segments
    assert (first.first_round, first.last_round, first.old_rating, first.new_rating) == (
        1,
        9,
        1500,
        1515,
    )
    assert (second.first_round, second.last_round, second.old_rating) == (10, 18, 1515)
    assert second.career_games == (45 if ruleset == "nsa2008" else 54)
    assert r["A"].details.multipliers == ([30, 30] if ruleset == "nsa2008" else [30, 20])
    assert (r["A"].games, r["A"].score, r["A"].old_rating) == (63, 10, 1500)


def test_newcomer_of_segment_one_is_rated_in_segment_two():
    # 18 rounds; N (newcomer) beats R (1500, g=100) in round 1 and in round 10.
    # Segment 1: N all wins of 1: w = 0.95, search -> 2424 (see newcomer tests), cap
    #   1500 + 400 x 1/1 = 1900 -> 1900. R: E(1500, 1900) = 0.2183752, 1500 - 20 x 0.2183752
    #   = 1495.633 -> 1496.
    # Segment 2: N rated 1900, g = 0 (nsa2008), m = 24. E(1900, 1496) = 0.7837935:
    #   excess 0.2162065, 1900 + 5.189 = 1905.189; Acc = 5.189 - 5 = 0.189 -> 1905.378 -> 1905;
    #   R: 1496 - 20 x 0.2162065 = 1491.676, feedback 0.189/20 = 0.0094 -> 1491.685 -> 1492.
    r = rate({"N": (None, 0), "R": (1500, 100)}, [(1, "N", "R", 1), (10, "N", "R", 1)], rounds=18)
    assert (r["N"].new_rating, r["R"].new_rating) == (1905, 1492)
    first, second = r["N"].details.segments
    assert first.newcomer and first.new_rating == 1900 and first.newcomer_iterations == 2
    assert not second.newcomer and second.old_rating == 1900 and second.multipliers == [24]
    assert second.acceleration == 0.19  # 0.189, 2 decimals
    assert r["N"].old_rating is None and r["N"].status == "established" and r["N"].games == 2
    assert r["R"].details.segments[0].new_rating == 1496


# --- Variants ----------------------------------------------------------------------


def test_csw_first_event_starts_from_nwl_rating_with_career_games_at_zero():
    # S: CSW unrated, NWL 1600 (300 NWL games): starts at 1600 with g = 0 (m = 30).
    # S beats T (CSW 1600, g=100): S 1600 + 15 = 1615, Acc = 15 - 5 = 10 -> 1625;
    # T: 1600 - 10 + 10/20 = 1590.5 -> 1591.
    r = rate(
        {"S": (None, 0), "T": (1600, 100)},
        [(1, "S", "T", 1)],
        ruleset="naspa-csw",
        seeds={"S": 1600},
    )
    assert (r["S"].old_rating, r["S"].new_rating, r["T"].new_rating) == (1600, 1625, 1591)
    assert r["S"].details.seeded_from == "nwl" and r["S"].details.multipliers == [30]
    assert (r["S"].old_status, r["S"].status, r["S"].games) == ("unrated", "established", 1)


def test_csw_player_without_nwl_rating_is_a_newcomer_and_no_floor():
    # U has neither: a newcomer; loses to V (CSW 1500, g=100): w = 5% x 1 = 0.05,
    # search -> 577 (see newcomer tests), floor 500 no effect, cap 1500 + 0 -> 577.
    r = rate(
        {"U": (None, 0), "V": (1500, 100)},
        [(1, "V", "U", 1)],
        ruleset="naspa-csw",
        seeds={"V": 1900},
    )
    assert r["U"].new_rating == 577 and r["U"].details.seeded_from is None
    # V has a CSW rating: the NWL seed is ignored.
    assert r["V"].old_rating == 1500 and r["V"].details.seeded_from is None
    # naspa-csw has no floor: X (5, g=100) loses to Y (5, g=0): 20 x (0 - 0.5) = -10 -> -5,
    # feedback from Y's acceleration +0.5 -> -4.5, half up -> -4 (below zero, by the letter).
    r = rate({"X": (5, 100), "Y": (5, 0)}, [(1, "Y", "X", 1)], ruleset="naspa-csw")
    assert r["X"].new_rating == -4


def test_csw_seed_not_taken_without_a_counted_game():
    # W has an NWL rating but only a forfeit in this CSW event: no rating without a rated game.
    r = rate(
        {"W": (None, 0), "S": (1600, 100), "T": (1600, 100)},
        [(1, "W", "S", 1, "forfeit"), (1, "S", "T", 0.5)],
        ruleset="naspa-csw",
        seeds={"W": 1700},
    )
    assert (r["W"].old_rating, r["W"].new_rating, r["W"].status) == (None, None, "unrated")


def test_registry_pools():
    from service.engine.registry import default_registry

    registry = default_registry()
    assert registry.rulesets("naspa") == ["naspa-csw", "naspa2024", "nsa2008"]
    assert registry.get("naspa", "nsa2008").pools == ("nwl",)
    assert registry.get("naspa", "naspa-csw").pools == ("csw",)
    assert dict(registry.get("naspa", "naspa-csw").seed_pools) == {"csw": "nwl"}
    assert registry.get("naspa", "naspa2024").pools == ("nwl", "csw")


def test_a_segment_without_a_counted_game_carries_the_rating_over():
    # 17 rounds: two segments, rounds 1-9 and 10-17 (n0 = 16 -> [0, 8] and the rest). A
    # (1500, g=100) beats B (1500, g=100) in round 17 only, so for both the first segment has
    # no counted game: rating carried over, 0 games, 0 earned wins, no expected wins.
    # Segment 2: A 1500 + 20 x .5 = 1510, acceleration 10 - 5 x 1 = 5 -> 1515; B 1490 and
    # A's feedback 5 / 20 = .25 -> 1490.25 -> 1490.
    r = rate({"A": (1500, 100), "B": (1500, 100)}, [(17, "A", "B", 1)], rounds=17)
    assert (r["A"].new_rating, r["B"].new_rating) == (1515, 1490)
    for player, rating in (("A", 1515), ("B", 1490)):
        idle, played = r[player].details.segments
        assert (idle.first_round, idle.last_round, idle.old_rating, idle.new_rating) == (
            1,
            9,
            1500,
            1500,
        )
        assert (idle.games, idle.earned_wins, idle.expected_wins) == (0, 0.0, None)
        assert (played.first_round, played.last_round, played.new_rating) == (10, 17, rating)
