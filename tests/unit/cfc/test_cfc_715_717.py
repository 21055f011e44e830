"""CFC 715 (provisional -> established) and 717 (order of calculation), hand-worked
(ruleset cfc-2009; C1, C7, C8, C9, C10)."""

from __future__ import annotations

from .builders import est, new, prov, rate


def test_717_ar_and_unrated_against_unrated_two_passes_c8():
    # 717 AR over the rated players: e1 lost its game: 1600 - 400(0-1)/1 = 2000;
    #   e2 won: 1400 - 400(1-0)/1 = 1000; AR = (2000 + 1000)/2 = 1500, AR - 200 = 1300.
    # Pass 1 (C8: unrated opponent at AR - 200; +400(W-L) is the player's own 714a term):
    #   x (beat e1, drew y): (1600 + 1300 + 400(1))/2 = 1650
    #   y (lost to e2, drew x): (1400 + 1300 - 400(1))/2 = 1150
    # Pass 2 (unrated opponents at their pass-1 values):
    #   x: (1600 + 1150 + 400)/2 = 1575;  y: (1400 + 1650 - 400)/2 = 1325
    # e1 vs x (post 1575, C9): diff 25 -> .53; 1600 + 32(0 - .53) = 1583.04 -> 1583
    # e2 vs y (post 1325): diff 75 -> .60; 1400 + 32(1 - .60) = 1412.8 -> 1413
    r = rate(
        {"e1": est(1600), "e2": est(1400), "x": new(), "y": new()},
        [("x", "e1", 1, 1), ("e2", "y", 1, 1), ("x", "y", 0.5, 2)],
    )
    assert r.details("x").ar_exact == "1500"
    assert (r.details("x").pass_1_exact, r.details("y").pass_1_exact) == ("1650", "1150")
    assert r.values("x") == [("e1", "1600", "pre_event"), ("y", "1150", "pass_1")]
    assert (r.new("x"), r.new("y"), r.new("e1"), r.new("e2")) == (1575, 1325, 1583, 1413)
    assert r.result["x"].status == "provisional" and r.record["y"].cfc.provisional_sum == "2650"


def test_717_mixed_event_unrated_provisional_established():
    # a established 1600 (highest 1650), b provisional 1500 after 10 games, c and d new; 4 rounds.
    # r1: a beats b, c draws d; r2: a beats c, d beats b.
    # AR: a 1600 - 400(2)/2 = 1200; b 1500 - 400(-2)/2 = 1900; AR = 1550; AR - 200 = 1350.
    # Pass 1: c (drew d, lost to a): (1350 + 1600 - 400)/2 = 1275
    #         d (drew c, beat b):    (1350 + 1500 + 400)/2 = 1625
    # Pass 2: c: (1625 + 1600 - 400)/2 = 1412.5 -> 1413; d: (1275 + 1500 + 400)/2 = 1587.5 -> 1588
    # b (provisional step): a at pre 1600, d at post 1588; C1 sum 15000 + 3188 - 800 = 17388
    #   over 12 games = 1449; event performance 2388/2 = 1194.
    # a: b at post 1449 (diff 151 -> .70), c at post 1413 (diff 187 -> .74): Sx = 1.44;
    #   Rn = 1600 + 32(2 - 1.44) = 1617.92; participation 1.50 x 2 = 3;
    #   2/4 rounds = 50 % -> no result bonus (performance (1449 + 1413 + 800)/2 = 1831 > 1650);
    #   1620.92 -> 1621.
    r = rate(
        {"a": est(1600, highest=1650), "b": prov(1500, 10), "c": new(), "d": new()},
        [("a", "b", 1, 1), ("c", "d", 0.5, 1), ("a", "c", 1, 2), ("d", "b", 1, 2)],
        rounds=4,
    )
    assert (r.new("c"), r.new("d"), r.new("b"), r.new("a")) == (1413, 1588, 1449, 1621)
    assert (
        r.details("c").pass_1_exact == "1275"
        and r.details("d").rating_before_bonus_exact == "3175/2"
    )
    assert r.values("b") == [("a", "1600", "pre_event"), ("d", "1588", "post_event")]
    assert (
        r.record["b"].cfc.provisional_sum == "17388" and r.details("b").performance_exact == "1194"
    )
    assert r.values("a") == [("b", "1449", "post_event"), ("c", "1413", "post_event")]
    assert r.details("a").expected_hundredths == 144 and r.details("a").performance_exact == "1831"
    assert r.details("a").result_bonus == 0 and r.details("a").participation_bonus_exact == "3"
    assert [r.result[p].status for p in "abcd"] == [
        "established",
        "provisional",
        "provisional",
        "provisional",
    ]
    assert r.record["c"].highest == 1413 and r.record["a"].highest == 1650


def test_717_pass_1_values_stay_exact_fractions():
    # e 1500 beats x (r1); y draws z (r1); x draws y (r2); x draws z (r3). One rated player.
    # AR = 1500 - 400(1-0)/1 = 1100; AR - 200 = 900.
    # Pass 1: x (lost to e, drew y, z): (1500 + 900 + 900 - 400)/3 = 2900/3
    #         y (drew z, x): (900 + 900)/2 = 900;  z (drew y, x): 900.
    # Pass 2: x: (1500 + 900 + 900 - 400)/3 = 2900/3 = 966.67 -> 967
    #         y: (900 + 2900/3)/2 = (2700/3 + 2900/3)/2 = 2800/3 = 933.33 -> 933; z likewise 933.
    # C1 sum of y: 2 x 2800/3 = 5600/3.
    r = rate(
        {"e": est(1500), "x": new(), "y": new(), "z": new()},
        [("e", "x", 1, 1), ("x", "y", 0.5, 2), ("y", "z", 0.5, 1), ("x", "z", 0.5, 3)],
    )
    assert r.details("x").pass_1_exact == "2900/3"
    assert r.details("y").rating_before_bonus_exact == "2800/3"
    assert (r.new("x"), r.new("y"), r.new("z")) == (967, 933, 933)
    assert r.record["y"].cfc.provisional_sum == "5600/3"


def test_717_provisional_opponents_count_at_pre_event_rating_for_each_other():
    # p1 1500 (5 games, sum 7500) beats p2 1400 (5 games, sum 7000):
    # p1: 7500 + 1400 + 400 = 9300 / 6 = 1550;  p2: 7000 + 1500 - 400 = 8100 / 6 = 1350.
    r = rate({"p1": prov(1500, 5), "p2": prov(1400, 5)}, [("p1", "p2", 1)])
    assert (r.new("p1"), r.new("p2")) == (1550, 1350)
    assert r.values("p1") == [("p2", "1400", "pre_event")]


def test_c10_800_plus_player_counts_a_sub_800_opponent_at_its_higher_rating():
    # a 790 (rated first) beats b 1000: diff 210 -> band 207-215: .77/.23;
    #   a: 790 + 32(1 - .23) = 814.64 -> 815 (post-event before bonus/floors).
    # b: a counts at max(790, 815) = 815; diff 185 -> band 180-188: .74;
    #   b: 1000 + 32(0 - .74) = 976.32 -> 976 (with a at 790 it would be .77: 975.36 -> 975).
    # Not zero-sum: +24.64 against -23.68.
    r = rate({"a": est(790), "b": est(1000)}, [("a", "b", 1)])
    assert r.new("a") == 815
    assert r.values("b") == [("a", "815", "higher_of_pre_post")]
    assert r.new("b") == 976


def test_c10_sub_800_loser_counts_at_its_pre_event_rating():
    # a 790 loses to b 1000: a: 790 - 32(.23) = 782.64 -> 783 -> 716b: 790.
    # b: max(790, 783) = 790; .77: 1000 + 32(1 - .77) = 1007.36 -> 1007.
    r = rate({"a": est(790), "b": est(1000)}, [("b", "a", 1)])
    assert (r.new("a"), r.new("b")) == (790, 1007)
    assert r.values("b") == [("a", "790", "higher_of_pre_post")]


def test_715_provisional_player_stays_provisional_through_game_24():
    # p 1500 after 22 games (sum 33000) beats two 1500s: 33000 + 3000 + 800 = 36800 / 24 = 1533.33 -> 1533.
    r = rate(
        {"p": prov(1500, 22), "e1": est(1500), "e2": est(1500)},
        [("p", "e1", 1, 1), ("p", "e2", 1, 2)],
    )
    assert (r.new("p"), r.result["p"].status, r.result["p"].games) == (1533, "provisional", 24)
    assert r.details("p").method == "performance"


def test_715_c7_25th_game_is_rated_by_714b_and_seen_at_post_event_by_opponents():
    # p 1500 after 23 games plays games 24 and 25 -> the event is rated by 714b with Ro = 1500 (C7):
    #   beats e1 and e2 (1500, pre-event values): Sx = 1.00; Rn = 1500 + 32(2 - 1) = 1532 (2 rounds: no 714c).
    # e1: p is a previously provisional opponent -> post-event 1532 (C9); diff 32 -> .54/.46:
    #   1500 + 32(0 - .46) = 1485.28 -> 1485.
    # 714d has no separate effect (C6): 714b (+714c) is the whole calculation.
    r = rate(
        {"p": prov(1500, 23), "e1": est(1500), "e2": est(1500)},
        [("p", "e1", 1, 1), ("p", "e2", 1, 2)],
    )
    d = r.details("p")
    assert (d.method, d.step, d.k, d.became_established) == ("established", "provisional", 32, True)
    assert (r.new("p"), r.result["p"].status, r.result["p"].games) == (1532, "established", 25)
    assert r.record["p"].cfc is None
    assert r.values("e1") == [("p", "1532", "post_event")] and r.new("e1") == 1485


def test_715_c7_player_reaching_25_is_eligible_for_714c():
    # p 1500 after 22 games plays 4 rounds (games 23-26): W3 L1 against 1500s.
    # Rn = 1500 + 32(3 - 2) = 1532; participation 1.50 x 4 = 6; 75 % -> 10 as the
    # performance 1500 + 400(2)/4 = 1700 > highest 1500: 1532 + 6 + 10 = 1548.
    players = {"p": prov(1500, 22), **{f"o{n}": est(1500) for n in range(1, 5)}}
    r = rate(players, [("p", f"o{n}", s, n) for n, s in zip(range(1, 5), (1, 1, 1, 0))])
    assert (r.new("p"), r.result["p"].status, r.result["p"].games) == (1548, "established", 26)
    assert r.details("p").result_bonus == 10


def test_715_c7_25th_game_player_sees_unrated_opponents_at_post_event():
    # p 1500 after 24 games beats new player x; e 1500 beats x too (2 rounds).
    # AR: p 1500 - 400 = 1100; e 1500 - 400 = 1100; AR = 1100 (unused: x meets no unrated player).
    # x: (1500 + 1500 - 800)/2 = 1100.
    # p (714b, Ro 1500): x at 1100, diff 400 -> .92; Rn = 1500 + 32(1 - .92) = 1502.56 -> 1503.
    r = rate(
        {"p": prov(1500, 24), "e": est(1500), "x": new()}, [("p", "x", 1, 1), ("e", "x", 1, 2)]
    )
    assert r.new("x") == 1100
    assert r.values("p") == [("x", "1100", "post_event")]
    assert r.new("p") == 1503 and r.result["p"].status == "established"


def test_715_new_player_with_25_games_in_first_event_is_established_by_714a():
    # x plays e (1500) 25 times in 25 rounds: W13 L12. 714a: (25 x 1500 + 400(1))/25 = 1516 -> established.
    # e: x at post 1516, diff 16 -> .52/.48: Sx = 25 x .48 = 12.00 = S -> Rn 1500;
    #   participation 1.50 x 25 = 37.5; 12/25 = 48 % -> 0: 1537.5 -> 1538.
    games = [("x", "e", 1 if n <= 13 else 0, n) for n in range(1, 26)]
    r = rate({"x": new(), "e": est(1500)}, games)
    assert (r.new("x"), r.result["x"].status, r.result["x"].games) == (1516, "established", 25)
    assert (
        r.details("x").method == "performance" and r.details("x").participation_bonus_exact == "0"
    )
    assert r.record["x"].cfc is None
    assert r.new("e") == 1538


def test_c1_second_event_continues_the_cumulative_sum():
    # Event 1: x beats e 1740 -> 2140 (sum 2140, 1 game).
    # Event 2: x loses to f 1800: (2140 + 1800 - 400) / 2 = 1770; sum 3540.
    first = rate({"x": new(), "e": est(1740)}, [("x", "e", 1)])
    x = first.record["x"]
    from .builders import Spec

    spec = Spec("provisional", x.rating, x.games, x.highest, x.cfc.provisional_sum)
    second = rate({"x": spec, "f": est(1800)}, [("f", "x", 1)])
    assert second.new("x") == 1770 and second.record["x"].cfc.provisional_sum == "3540"
    assert second.record["x"].highest == 2140  # highest ever held stays
