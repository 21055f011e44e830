"""CFC 714a / 714b hand-worked cases (ruleset cfc-2009; C1, C2, C3, C8, C11).

Every expected figure is worked out by hand from the handbook text; the arithmetic is
in the comment above the assertion.
"""

from __future__ import annotations

import pytest

from .builders import est, new, prov, rate


def test_714a_single_game_rates_a_new_player():
    # docs/rules/cfc.md#cfc-714a: "beat a 1740 in the only game: 2140".
    # 717: AR = 1740 - 400(0-1)/1 = 2140 (x has no unrated opponent, AR unused).
    # x: Rp = 1740 + 400(1-0)/1 = 2140 -> provisional after 1 game; C1 sum = 2140.
    # o (established, 714b): x's post-event value 2140 (C9); diff 400 -> band 392-411,
    # o is the lower player: .08; Rn = 1740 + 32(0 - .08) = 1737.44 -> 1737.
    r = rate({"x": new(), "o": est(1740)}, [("x", "o", 1)])
    assert r.new("x") == 2140
    assert r.result["x"].status == "provisional" and r.result["x"].games == 1
    assert r.record["x"].cfc.provisional_sum == "2140"
    assert r.record["x"].highest == 2140  # a brand-new player's highest is the first rating
    assert r.new("o") == 1737
    assert r.values("o") == [("x", "2140", "post_event")]
    assert r.result["o"].expected == 0.08


def test_c1_cumulative_uses_the_exact_running_sum():
    # C1: p has games 5 and exact sum 7502 (published 7502/5 = 1500.4 -> 1500).
    # Event: beats e1 1600, draws e2 1402 -> sum(opp) + 400(W-L) = 3002 + 400 = 3402.
    # New sum = 7502 + 3402 = 10904 over 7 games = 1557.714... -> 1558.
    r = rate(
        {"p": prov(1500, 5, total="7502"), "e1": est(1600), "e2": est(1402)},
        [("p", "e1", 1, 1), ("p", "e2", 0.5, 2)],
    )
    assert r.new("p") == 1558
    assert r.record["p"].cfc.provisional_sum == "10904"
    assert r.record["p"].games == 7
    # The event's own performance, 714a form: 3402 / 2 = 1701.
    assert r.details("p").performance_exact == "1701"


def test_c1_imported_provisional_record_uses_rating_times_games():
    # C1: imported with rating 1500 and 5 games only -> sum 1500 x 5 = 7500.
    # Same event: 7500 + 3402 = 10902 over 7 = 1557.43 -> 1557 (the exact sum gave 1558).
    r = rate(
        {"p": prov(1500, 5), "e1": est(1600), "e2": est(1402)},
        [("p", "e1", 1, 1), ("p", "e2", 0.5, 2)],
    )
    assert r.new("p") == 1557
    assert r.record["p"].cfc.provisional_sum == "10902"


def test_c11_performance_rounds_half_up():
    # x draws 1601 and 1600: Rp = (1601 + 1600 + 400(0))/2 = 1600.5 -> 1601 half up
    # (Python's round would give 1600, half to even).
    r = rate(
        {"x": new(), "e1": est(1601), "e2": est(1600)}, [("x", "e1", 0.5, 1), ("x", "e2", 0.5, 2)]
    )
    assert r.new("x") == 1601
    assert r.details("x").rating_before_bonus_exact == "3201/2"


def test_714b_k32_win_against_lower_player():
    # diff 100 -> band 99-106: .64 / .36.
    # a: 1600 + 32(1 - .64) = 1611.52 -> 1612; b: 1500 + 32(0 - .36) = 1488.48 -> 1488.
    r = rate({"a": est(1600), "b": est(1500)}, [("a", "b", 1)])
    assert (r.new("a"), r.new("b")) == (1612, 1488)
    assert (
        r.details("a").k == 32 and r.details("a").rating_before_bonus_exact == "40288/25"
    )  # 1611.52
    assert r.details("b").rating_before_bonus_exact == "37212/25"  # 1488.48
    assert (r.result["a"].expected, r.result["b"].expected) == (0.64, 0.36)


def test_714b_k16_from_2199_and_c2_no_rule_going_down():
    # Both 2199: K = 16 ("2199 or over"); diff 0 -> .50.
    # winner 2199 + 16(.5) = 2207, no 2199 rule (it only applies below 2199);
    # loser 2199 - 8 = 2191 (C2: nothing special when going down).
    r = rate({"a": est(2199), "b": est(2199)}, [("a", "b", 1)])
    assert (r.new("a"), r.new("b")) == (2207, 2191)
    assert r.details("a").k == 16 and r.details("a").rule_2199 is False


def test_714b_2199_rule_halves_the_gain_over_2199():
    # a 2190 (K 32) beats b 2190: Rn = 2190 + 32(.5) = 2206 > 2199 ->
    # 2199 + (2206 - 2199)/2 = 2202.5 -> 2203 (C11 half up). b: 2190 - 16 = 2174.
    r = rate({"a": est(2190), "b": est(2190)}, [("a", "b", 1)])
    assert (r.new("a"), r.new("b")) == (2203, 2174)
    assert r.details("a").rule_2199 is True
    assert r.details("a").rating_before_bonus_exact == "4405/2"
    assert r.details("b").rule_2199 is False


def test_714b_2198_still_uses_k32_and_the_2199_rule():
    # 2198 < 2199: K 32; beats 2198: 2198 + 16 = 2214 -> 2199 + 15/2 = 2206.5 -> 2207.
    r = rate({"a": est(2198), "b": est(2198)}, [("a", "b", 1)])
    assert r.new("a") == 2207 and r.details("a").k == 32 and r.details("a").rule_2199


def test_714b_landing_exactly_on_2199_is_not_cut():
    # 2183 beats 2183: 2183 + 16 = 2199, not above 2199 -> unchanged by the rule.
    r = rate({"a": est(2183), "b": est(2183)}, [("a", "b", 1)])
    assert r.new("a") == 2199 and r.details("a").rule_2199 is False


@pytest.mark.parametrize(
    "higher, expected_a, new_a, new_b",
    [
        # diff 3 -> band 0-3: .50; a 1603 loses: 1603 - 32(.50) = 1587; b: 1600 + 16 = 1616.
        (1603, 50, 1587, 1616),
        # diff 4 -> band 4-10: .51/.49; a: 1604 - 32(.51) = 1587.68 -> 1588;
        # b: 1600 + 32(1 - .49) = 1616.32 -> 1616.
        (1604, 51, 1588, 1616),
    ],
)
def test_c3_band_edge_3_4(higher, expected_a, new_a, new_b):
    r = rate({"a": est(higher), "b": est(1600)}, [("a", "b", 0)])
    assert r.details("a").expected_hundredths == expected_a
    assert r.details("b").expected_hundredths == 100 - expected_a
    assert (r.new("a"), r.new("b")) == (new_a, new_b)


@pytest.mark.parametrize(
    "higher, expected_a, new_a, new_b",
    [
        # diff 734 -> band 620-734: .99/.01; draw: a 1734 + 32(.5 - .99) = 1718.32 -> 1718;
        # b 1000 + 32(.5 - .01) = 1015.68 -> 1016.
        (1734, 99, 1718, 1016),
        # diff 735 -> "735 and over": 1.00/.00; a 1735 - 16 = 1719; b 1000 + 16 = 1016.
        (1735, 100, 1719, 1016),
    ],
)
def test_c3_band_edge_734_735(higher, expected_a, new_a, new_b):
    r = rate({"a": est(higher), "b": est(1000)}, [("a", "b", 0.5)])
    assert r.details("a").expected_hundredths == expected_a
    assert (r.new("a"), r.new("b")) == (new_a, new_b)


def test_c3_seed_example_3_to_1_at_197_points_and_bonus():
    # The seed: "the higher rated player should score 3-1 for a difference of 189-197".
    # a 1697 vs b 1500 (diff 197, .75), 4 games in 4 rounds, a wins 3, loses 1:
    # a: Sx = 4 x .75 = 3.00, S = 3 -> Rn = 1697; participation 1001-1800: 1.50 x 4 = 6;
    #    performance 1500 + 400(3-1)/4 = 1700 > highest 1697; 3/4 = 75 % -> +10: 1713.
    # b: Sx = 4 x .25 = 1.00, S = 1 -> 1500; + 6; 25 % -> no result bonus: 1506.
    games = [("a", "b", 1, 1), ("a", "b", 1, 2), ("a", "b", 1, 3), ("a", "b", 0, 4)]
    r = rate({"a": est(1697), "b": est(1500)}, games)
    assert r.details("a").expected_hundredths == 300
    assert r.details("a").participation_bonus_exact == "6" and r.details("a").result_bonus == 10
    assert (r.new("a"), r.new("b")) == (1713, 1506)


def test_c3_one_past_the_band_197_198():
    # a 1698 vs 1500: diff 198 -> band 198-206: .76; Sx = 3.04;
    # a: 1698 + 32(3 - 3.04) = 1696.72; + 6 + 10 (perf 1700 > 1698, 75 %) = 1712.72 -> 1713.
    # b: 1500 + 32(1 - .96) = 1501.28; + 6 = 1507.28 -> 1507.
    games = [("a", "b", 1, 1), ("a", "b", 1, 2), ("a", "b", 1, 3), ("a", "b", 0, 4)]
    r = rate({"a": est(1698), "b": est(1500)}, games)
    assert r.details("a").expected_hundredths == 304
    assert (r.new("a"), r.new("b")) == (1713, 1507)


def test_c11_rounding_happens_once_after_the_bonus():
    # 4 rounds, a 2054 (highest 2054) draws b 2050 in round 1 only (diff 4: .51/.49).
    # a: Rn = 2054 + 32(.5 - .51) = 2053.68; participation 2001-2200: .75 x 1;
    #    result bonus none (performance 2050 not > 2054; 1/2 of 4 rounds = 12 %).
    #    2053.68 + .75 = 2054.43 -> 2054 (rounding Rn first would give 2054 + .75 -> 2055).
    # b: 2050 + 32(.5 - .49) = 2050.32 + .75 = 2051.07 -> 2051.
    r = rate({"a": est(2054), "b": est(2050)}, [("a", "b", 0.5, 1)], rounds=4)
    assert r.details("a").rating_before_floor == 2054
    assert (r.new("a"), r.new("b")) == (2054, 2051)
    assert r.details("a").result_percent == 12
