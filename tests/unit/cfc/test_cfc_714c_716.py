"""CFC 714c bonus points and 716 floors, hand-worked (ruleset cfc-2009; C4, C5, C6, C11)."""

from __future__ import annotations

import pytest

from .builders import est, new, prov, rate


@pytest.mark.parametrize(
    "rating, expected",
    [
        # Two players of the same rating draw 4 games in 4 rounds: Sx = 4 x .50 = 2 = S,
        # Rn = Ro; 2/4 = 50 % -> no result bonus; participation = 4 x the band's amount.
        (1000, 1008),  # 0000-1000: 2.00 x 4 = 8
        (1001, 1007),  # 1001-1800: 1.50 x 4 = 6
        (1800, 1806),  # 1001-1800: 6
        (1801, 1805),  # 1801-2000: 1.00 x 4 = 4
        (2000, 2004),  # 1801-2000: 4
        (2001, 2004),  # 2001-2200: .75 x 4 = 3
        (2200, 2203),  # 2001-2200: 3 (K 16 here, S = Sx, no change)
        (2201, 2203),  # 2201+: .50 x 4 = 2
    ],
)
def test_714c_participation_bands(rating, expected):
    games = [("a", "b", 0.5, n) for n in (1, 2, 3, 4)]
    r = rate({"a": est(rating), "b": est(rating)}, games)
    assert r.new("a") == expected and r.new("b") == expected
    assert r.details("a").result_bonus == 0


def test_c4_no_bonus_below_4_rounds():
    # Three draws between two 1500s: Rn = 1500. 3 rounds: no 714c at all -> 1500.
    r = rate({"a": est(1500), "b": est(1500)}, [("a", "b", 0.5, n) for n in (1, 2, 3)])
    assert r.new("a") == 1500 and r.details("a").participation_bonus_exact == "0"
    assert r.details("a").result_percent is None


def test_c4_four_rounds_actually_played_counts_rounds_not_games():
    # The same three draws, but the event had 4 rounds (a and b had a bye in round 4):
    # participation 1.50 x 3 games = 4.5; 1.5 / 4 rounds = 37 % -> no result bonus.
    # 1500 + 4.5 = 1504.5 -> 1505 (half up). Byes are not rated (N = 3).
    r = rate(
        {"a": est(1500), "b": est(1500)},
        [("a", "b", 0.5, n) for n in (1, 2, 3)],
        byes=[("a", 1, 4), ("b", 1, 4)],
    )
    assert r.new("a") == 1505 and r.result["a"].event_games == 3
    assert r.details("a").participation_bonus_exact == "9/2"


def _score_line(wins: int, draws: int, losses: int, rounds: int, highest: int = 1500):
    """p (1500) meets a different 1500 opponent each round: wins, then draws, then losses."""
    results = [1] * wins + [0.5] * draws + [0] * losses
    players = {"p": est(1500, highest=highest)}
    games = []
    for n, score in enumerate(results, 1):
        players[f"o{n}"] = est(1500)
        games.append(("p", f"o{n}", score, n))
    return rate(players, games, rounds=rounds)


@pytest.mark.parametrize(
    "wins, draws, losses, rounds, percent, bonus, expected",
    [
        # Opponents all 1500: Sx = .50 per game; performance 1500 + 400(W-L)/N > 1500 when W > L.
        # 12.5/21 = 59.52 % -> truncated 59 -> 0.  Rn = 1500 + 32(12.5 - 10.5) = 1564;
        # participation 1.50 x 21 = 31.5 -> 1595.5 -> 1596.
        (10, 5, 6, 21, 59, 0, 1596),
        # 3/5 = 60 % -> 5.  Rn = 1500 + 32(3 - 2.5) = 1516; + 7.5 + 5 = 1528.5 -> 1529.
        (3, 0, 2, 5, 60, 5, 1529),
        # 8.5/12 = 70.83 % -> truncated 70 -> 5 (rounding would give 71 and 10).
        # Rn = 1500 + 32(8.5 - 6) = 1580; + 18 + 5 = 1603.
        (8, 1, 3, 12, 70, 5, 1603),
        # 5/7 = 71.43 % -> 71 -> 10.  Rn = 1500 + 32(5 - 3.5) = 1548; + 10.5 + 10 = 1568.5 -> 1569.
        (5, 0, 2, 7, 71, 10, 1569),
        # 21.5/24 = 89.58 % -> truncated 89 -> 10.  Rn = 1500 + 32(21.5 - 12) = 1804; + 36 + 10 = 1850.
        (21, 1, 2, 24, 89, 10, 1850),
        # 9/10 = 90 % -> 15.  Rn = 1500 + 32(9 - 5) = 1628; + 15 + 15 = 1658.
        (9, 0, 1, 10, 90, 15, 1658),
    ],
)
def test_714c_result_bonus_thresholds_c5(wins, draws, losses, rounds, percent, bonus, expected):
    r = _score_line(wins, draws, losses, rounds)
    d = r.details("p")
    assert (d.result_percent, d.result_bonus, r.new("p")) == (percent, bonus, expected)


def test_c5_percentage_is_score_over_event_rounds_not_games():
    # p plays 3 games (W3) of a 5-round event: 3/5 = 60 % -> 5 (3/3 games would be 100 % -> 15).
    # Rn = 1500 + 32(3 - 1.5) = 1548; participation 1.50 x 3 = 4.5; performance 1900 > 1500.
    # 1548 + 4.5 + 5 = 1557.5 -> 1558.
    r = rate(
        {"p": est(1500), "a": est(1500), "b": est(1500), "c": est(1500)},
        [("p", "a", 1, 1), ("p", "b", 1, 2), ("p", "c", 1, 3)],
        rounds=5,
    )
    assert r.details("p").result_percent == 60 and r.new("p") == 1558


@pytest.mark.parametrize(
    "highest, bonus, expected",
    [
        # W3 L2 of 5 against 1500s: performance = 1500 + 400(1)/5 = 1580; 60 % -> 5 if 1580 > highest.
        # Rn 1516 + 7.5 = 1523.5; with bonus 1528.5 -> 1529, without 1523.5 -> 1524.
        (1579, 5, 1529),
        (1580, 0, 1524),  # "must exceed": equal is not enough
    ],
)
def test_714c_result_bonus_needs_performance_strictly_above_highest(highest, bonus, expected):
    r = _score_line(3, 0, 2, 5, highest=highest)
    assert r.details("p").performance_exact == "1580"
    assert r.details("p").highest_before == highest
    assert (r.details("p").result_bonus, r.new("p")) == (bonus, expected)


def test_714c_bonus_is_added_after_the_2199_rule_and_not_halved():
    # p 2190 beats four 2190s in 4 rounds: Rn = 2190 + 32(4 - 2) = 2254 -> 2199 + 55/2 = 2226.5;
    # participation (2001-2200 on the pre-event rating) .75 x 4 = 3; 100 % -> 15 (performance 2590 > 2190).
    # 2226.5 + 3 + 15 = 2244.5 -> 2245.
    players = {"p": est(2190), **{f"o{n}": est(2190) for n in range(1, 5)}}
    r = rate(players, [("p", f"o{n}", 1, n) for n in range(1, 5)])
    d = r.details("p")
    assert d.rule_2199 and d.rating_before_bonus_exact == "4453/2" and d.result_bonus == 15
    assert r.new("p") == 2245


def test_714c_provisional_players_get_no_bonus():
    # p provisional 1500 after 5 games (sum 7500); W3 L2 against 1500s in 5 rounds.
    # 714a: 7500 + 5 x 1500 + 400(1) = 15400 over 10 games = 1540; no bonus points.
    players = {"p": prov(1500, 5), **{f"o{n}": est(1500) for n in range(1, 6)}}
    r = rate(players, [("p", f"o{n}", s, n) for n, s in zip(range(1, 6), (1, 1, 1, 0, 0))])
    assert r.new("p") == 1540
    assert r.details("p").participation_bonus_exact == "0" and r.details("p").result_bonus == 0


def test_716a_established_above_799_is_held_at_799():
    # a 810 loses 3 games to b 810 (3 rounds, no bonus): 810 - 3 x 16 = 762 < 800, pre 810 > 799 -> 799.
    # b: 810 + 48 = 858.
    r = rate({"a": est(810), "b": est(810)}, [("b", "a", 1, n) for n in (1, 2, 3)])
    assert r.details("a").rating_before_floor == 762
    assert (r.new("a"), r.details("a").floor, r.new("b")) == (799, "716a", 858)


def test_716b_established_at_or_below_799_keeps_the_higher_of_pre_and_post():
    # a 790 loses 3 to b 790: 790 - 48 = 742 < 800, pre 790 <= 799 -> max(790, 742) = 790.
    # b: 790 + 48 = 838 (no floor).
    r = rate({"a": est(790), "b": est(790)}, [("b", "a", 1, n) for n in (1, 2, 3)])
    assert (r.new("a"), r.details("a").floor) == (790, "716b")
    assert (r.new("b"), r.details("b").floor) == (838, None)


def test_716b_below_800_gain_is_kept_and_sub_800_players_see_pre_event_ratings():
    # Both below 800, both in the first group of 717 step 5: opponents at pre-event ratings.
    # diff 90 -> band 84-91: .62/.38. a 700 beats b 790:
    # a: 700 + 32(1 - .38) = 719.84 -> 720 (post > pre: 716b leaves it);
    # b: 790 + 32(0 - .62) = 770.16 -> 770 -> 716b: max(790, 770) = 790.
    r = rate({"a": est(700), "b": est(790)}, [("a", "b", 1)])
    assert (r.new("a"), r.details("a").floor) == (720, None)
    assert (r.new("b"), r.details("b").floor) == (790, "716b")
    assert (
        r.values("a") == [("b", "790", "pre_event")]
        and r.details("a").step == "established_below_800"
    )


def test_716c_new_player_below_200_is_entered_at_200_and_opponent_sees_unfloored_value():
    # AR = 250 - 400(1-0)/1 = -150 (unused: x has no unrated opponent).
    # x loses to e 250: Rp = 250 - 400 = -150 -> 716c: 200. C1 keeps the exact sum -150.
    # e (below 800): x's post-event rating before floors (C9) = -150; diff 400 -> .92;
    # e: 250 + 32(1 - .92) = 252.56 -> 253.
    r = rate({"x": new(), "e": est(250)}, [("e", "x", 1)])
    assert (r.new("x"), r.details("x").floor, r.details("x").rating_before_floor) == (
        200,
        "716c",
        -150,
    )
    assert r.record["x"].cfc.provisional_sum == "-150"
    assert r.values("e") == [("x", "-150", "post_event")]
    assert r.new("e") == 253


def test_716c_provisional_player():
    # p provisional 250 after 1 game (sum 250) loses to e 200: (250 + 200 - 400)/2 = 25 -> 200.
    # e: p's post-event value 25 (C9); diff 175 -> band 171-179: .73; 200 + 32(1 - .73) = 208.64 -> 209.
    r = rate({"p": prov(250, 1), "e": est(200)}, [("e", "p", 1)])
    assert (r.new("p"), r.details("p").floor) == (200, "716c")
    assert r.new("e") == 209


def test_716c_after_716b_for_an_established_rating_under_200():
    # Imported established 150 loses to 150: 150 - 16 = 134; 716b: max(150, 134) = 150; 716c: 200.
    r = rate({"a": est(150), "b": est(150)}, [("b", "a", 1)])
    assert (r.new("a"), r.details("a").floor) == (200, "716c")
    # b: 150 + 16 = 166; 716b: max(150, 166) = 166 (no change); 716c: 166 < 200 -> 200.
    assert (r.new("b"), r.details("b").floor) == (200, "716c")


def test_716ab_do_not_apply_to_a_player_becoming_established():
    # p provisional 820 after 24 games plays games 25-27 (C7: 714b with Ro = 820):
    # loses 3 to 820s: 820 - 3 x 16 = 772 < 800, but p was not established before -> 772.
    # (An established 820 would be held at 799 by 716a.)
    players = {"p": prov(820, 24), **{f"o{n}": est(820) for n in (1, 2, 3)}}
    r = rate(players, [(f"o{n}", "p", 1, n) for n in (1, 2, 3)])
    assert (r.new("p"), r.details("p").floor, r.result["p"].status) == (772, None, "established")
