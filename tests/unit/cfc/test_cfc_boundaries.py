"""CFC boundaries of 716 and 717's groups, at the value, one below and one above, by hand.

716 (C11) acts on the rounded post-event rating with the bonus: (a) post < 800 for a player
established before with pre > 799: 799; (b) post < 800 with pre <= 799: max(pre, post);
(c) below 200: 200. 717 step 5: established players rated below 800 first; a player of 800
or more counts such an opponent at the higher of its pre- and post-event rating (C10).
"""

from __future__ import annotations

import pytest

from service.engine.cfc.formulas import apply_floors

from .builders import est, rate


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
