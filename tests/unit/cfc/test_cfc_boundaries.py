"""CFC boundaries of 716 and 717's groups, at the value, one below and one above, by hand.

716 (C11) acts on the rounded post-event rating with the bonus: (a) post < 800 for a player
established before with pre > 799: 799; (b) post < 800 with pre <= 799: max(pre, post);
(c) below 200: 200. 717 step 5: established players rated below 800 first; a player of 800
or more counts such an opponent at the higher of its pre- and post-event rating (C10).
"""

from __future__ import annotations

import pytest

from service.engine.cfc.formulas import (
    apply_floors,
    established_ratio,
    k_factor,
    participation_hundredths,
    result_bonus,
    result_percent,
)
from service.engine.cfc.standing import status_for

from .builders import est, new, prov, rate


@pytest.mark.parametrize(
    "post, pre, published",
    [
        (800, 850, (800, None)),  # not under 800: no floor
        (799, 850, (799, "716a")),  # under 800, pre 850 > 799: 799
        (801, 850, (801, None)),
        (780, 800, (799, "716a")),  # pre 800 > 799: (a)
        (780, 799, (799, "716b")),  # pre 799 is not > 799: (b), max(799, 780)
        (780, 798, (798, "716b")),  # (b): max(798, 780)
        (799, 799, (799, None)),  # (b): max(799, 799) changes nothing
        (200, 150, (200, None)),  # (c) is for ratings under 200 only; (b) keeps 200
        (199, 150, (200, "716c")),  # (b) keeps max(150, 199) = 199, under 200: (c)
    ],
)
def test_716_floors_at_their_edges(post, pre, published):
    assert apply_floors(post, pre, True) == published


def test_716c_for_a_player_not_established_before():
    # (a) and (b) do not apply to a player who was not established before the event.
    assert apply_floors(199, 900, False) == (200, "716c")
    assert apply_floors(200, 900, False) == (200, None)
    assert apply_floors(201, 900, False) == (201, None)


@pytest.mark.parametrize(
    "a_rating, a_new, b_value_for_a, a_value_for_d, d_new",
    [
        # A (established) loses to B (700) in round 1 and beats D (1000) in round 2; 2
        # rounds: no 714c. B, below 800, is rated first, A at its pre-event rating:
        #   B vs A: 700 - A's rating is 99-106 -> B's Sx .36; 700 + 32 x .64 = 720.48 -> 720.
        # A = 800 is not below 800 (C10): B counts at max(700, 720) = 720.
        #   vs B: 800 - 720 = 80 (77-83) -> .61; vs D: 200 (198-206) -> .24; Sx .85.
        #   800 + 32 x (1 - .85) = 804.8 -> 805.
        #   D (1000) vs A (800, not below 800: pre-event 800): 200 -> .76;
        #   1000 - 32 x .76 = 975.68 -> 976.
        (800, 805, "720", "800", 976),
        # A = 799 is below 800: rated in the first group, B at its pre-event 700.
        #   vs B: 99 (99-106) -> .64; vs D: 201 (198-206) -> .24; Sx .88.
        #   799 + 32 x .12 = 802.84 -> 803.
        #   D counts A at max(799, 803) = 803 (C10): 197 (189-197) -> .75;
        #   1000 - 32 x .75 = 976.
        (799, 803, "700", "803", 976),
        # A = 801: B (700 - 801 = 101 -> .36: 720.48 -> 720) at 720: 81 -> .61; D: 199 ->
        #   .24; Sx .85: 801 + 4.8 = 805.8 -> 806. D: 199 -> .76: 976.
        (801, 806, "720", "801", 976),
    ],
)
def test_717_players_from_800_count_a_sub_800_opponent_at_its_higher_value(
    a_rating, a_new, b_value_for_a, a_value_for_d, d_new
):
    r = rate(
        {"a": est(a_rating), "b": est(700), "d": est(1000)},
        [("a", "b", 0, 1), ("a", "d", 1, 2)],
    )
    assert r.new("b") == 720
    assert r.new("a") == a_new
    assert [value for opponent, value, _ in r.values("a") if opponent == "b"] == [b_value_for_a]
    assert [value for opponent, value, _ in r.values("d")] == [a_value_for_d]
    assert r.new("d") == d_new


# --- 714b: K and the 2199 rule ---------------------------------------------------------


@pytest.mark.parametrize("old, k", [(2198, 32), (2199, 16), (2200, 16)])
def test_714b_k_changes_at_2199(old, k):
    # "players of 2199 or over": K 16 from 2199; 2198 is below: K 32.
    assert k_factor(old) == k


@pytest.mark.parametrize(
    "old, rn, cut",
    [
        # One win against an equal rating: Sx .50, S 1 (2 halves): Rn = Ro + 32 x .50 = Ro + 16,
        # in hundredths Ro x 100 + 32 x (100 - 50).
        (2182, (219800, 100), False),  # 2198, not above 2199
        (2183, (219900, 100), False),  # 2199 exactly: not "above 2199", nothing halved
        # 2200 > 2199: 2199 + (2200 - 2199) / 2 = (2200 + 2199) / 2 = 2199.5, over 200
        (2184, (220000 + 219900, 200), True),
    ],
)
def test_714b_2199_rule_only_above_2199(old, rn, cut):
    assert established_ratio(old, 2, 50) == (rn, 32, cut)


@pytest.mark.parametrize(
    "old, rn, k, cut",
    [
        # One win against an equal rating (Sx .50): Rn = Ro + K x .50, in hundredths.
        # 2198 < 2199: K 32, Rn = 2198 + 16 = 2214 > 2199: (2214 + 2199) / 2 = 2206.5, over 200.
        (2198, (221400 + 219900, 200), 32, True),
        # 2199 is not below 2199: K 16, 2199 + 8 = 2207, the gain not halved.
        (2199, (220700, 100), 16, False),
        (2200, (220800, 100), 16, False),  # 2200 + 8 = 2208
    ],
)
def test_714b_2199_rule_is_for_players_below_2199(old, rn, k, cut):
    assert established_ratio(old, 2, 50) == (rn, k, cut)


# --- 714c: participation bands, result bands, rounds, the highest rating -------------------


@pytest.mark.parametrize(
    "rating, hundredths",
    [
        (999, 200),  # 0000 - 1000: 2.00
        (1000, 200),
        (1001, 150),  # 1001 - 1800: 1.50
        (1799, 150),
        (1800, 150),
        (1801, 100),  # 1801 - 2000: 1.00
        (1999, 100),
        (2000, 100),
        (2001, 75),  # 2001 - 2200: 0.75
        (2199, 75),
        (2200, 75),
        (2201, 50),  # 2201 +: 0.50
    ],
)
def test_714c_participation_band_edges(rating, hundredths):
    # One game: the band's amount per game, x 1.
    assert participation_hundredths(rating, 1) == hundredths


@pytest.mark.parametrize(
    "percent, points",
    [(59, 0), (60, 5), (61, 5), (70, 5), (71, 10), (72, 10), (89, 10), (90, 15), (91, 15)],
)
def test_714c_result_band_edges(percent, points):
    # 714c B as C5 reads it: [60, 71) +5, [71, 90) +10, 90 and over +15.
    assert result_bonus(percent) == points


@pytest.mark.parametrize(
    "halves, rounds, percent",
    [
        (7, 10, 35),  # 3.5 / 10 = 35 % exactly
        (5, 7, 35),  # 2.5 / 7 = 35.71 %: truncated to 35, not rounded to 36
        (6, 7, 42),  # 3 / 7 = 42.86 %: truncated to 42
    ],
)
def test_c5_percent_truncates(halves, rounds, percent):
    assert result_percent(halves, rounds) == percent


@pytest.mark.parametrize(
    "rounds, participation, participation_exact, new_a",
    [
        # Two 1500s draw three games: Sx 1.50 = S, Rn 1500. The event's rounds decide 714c (C4);
        # the extra rounds are byes, not rated (N = 3). 1.5 / rounds is under 60 %: no result bonus.
        (3, 0.0, "0", 1500),  # 3 rounds: no bonus at all
        (4, 4.5, "9/2", 1505),  # 4 rounds: 1.50 x 3 = 4.5; 1504.5 -> 1505 half up
        (5, 4.5, "9/2", 1505),  # 5 rounds: the same 4.5
    ],
)
def test_714c_from_4_rounds_actually_played(rounds, participation, participation_exact, new_a):
    byes = [(p, 1, n) for p in ("a", "b") for n in range(4, rounds + 1)]
    r = rate({"a": est(1500), "b": est(1500)}, [("a", "b", 0.5, n) for n in (1, 2, 3)], byes=byes)
    d = r.details("a")
    assert (d.participation_bonus, d.participation_bonus_exact) == (
        participation,
        participation_exact,
    )
    assert r.new("a") == new_a


@pytest.mark.parametrize(
    "highest, bonus, new_p",
    [
        # p (1500) W3 L2 against five 1500s in 5 rounds: performance 1500 + 400 x 1 / 5 = 1580;
        # Rn = 1500 + 32 x (3 - 2.5) = 1516; participation 1.50 x 5 = 7.5; 3/5 = 60 % -> +5
        # only when 1580 > highest ("must exceed").
        (1579, 5, 1529),  # 1516 + 7.5 + 5 = 1528.5 -> 1529
        (1580, 0, 1524),  # equal: 1523.5 -> 1524
        (1581, 0, 1524),
    ],
)
def test_714c_result_bonus_only_above_the_highest(highest, bonus, new_p):
    players = {"p": est(1500, highest=highest), **{f"o{n}": est(1500) for n in range(1, 6)}}
    scores = (1, 1, 1, 0, 0)
    r = rate(players, [("p", f"o{n}", s, n) for n, s in zip(range(1, 6), scores)])
    assert (r.details("p").result_bonus, r.new("p")) == (bonus, new_p)


# --- 715, C13: established from the 25th game ----------------------------------------


@pytest.mark.parametrize(
    "games, status", [(24, "provisional"), (25, "established"), (26, "established")]
)
def test_715_status_from_25_games(games, status):
    assert status_for(1500, games) == status


@pytest.mark.parametrize(
    "n, status",
    [
        # A new player x meets e (1500) n times, one a round, W = L (n even) or W = L + 1:
        # 714a: (n x 1500 + 400(W - L)) / n.
        (24, "provisional"),  # W12 L12: 1500; 24 games, still provisional
        (25, "established"),  # W13 L12: (37500 + 400) / 25 = 1516 (C13)
        (26, "established"),  # W13 L13: 1500
    ],
)
def test_c13_first_event_of_25_games(n, status):
    games = [("x", "e", 1 if i % 2 else 0, i) for i in range(1, n + 1)]
    r = rate({"x": new(), "e": est(1500)}, games)
    assert (r.result["x"].status, r.result["x"].games) == (status, n)
    assert r.new("x") == (1516 if n == 25 else 1500)
    assert r.details("x").method == "performance"


@pytest.mark.parametrize(
    "before, method, status",
    [
        # p provisional (1500 over `before` games, sum 1500 x before) beats two 1500s.
        (22, "performance", "provisional"),  # games 23-24: still 714a
        (23, "established", "established"),  # games 24-25: the 25th is in the event (C7)
        (24, "established", "established"),  # games 25-26
    ],
)
def test_c7_the_event_of_the_25th_game(before, method, status):
    r = rate(
        {"p": prov(1500, before), "e1": est(1500), "e2": est(1500)},
        [("p", "e1", 1, 1), ("p", "e2", 1, 2)],
    )
    assert (r.details("p").method, r.result["p"].status) == (method, status)
    # 714a: (1500 x 22 + 3000 + 800) / 24 = 1533.33 -> 1533; 714b: 1500 + 32 x (2 - 1) = 1532.
    assert r.new("p") == (1533 if method == "performance" else 1532)
