"""The per-game figures of a NASPA event's details (NaspaDetails.opponents, NaspaOpponent):
each counted game's opponent rating as the engine used it (N5) and the expected wins
(N1) it summed.

Hand-worked figures follow docs/rules/naspa.md and the seed; the exp() values were taken with
math.exp and are written out. The property checks that the listed expected wins add up
exactly (math.fsum, as the engine sums) to the details' expected wins.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st
from naspa_support import rate

from service.engine.arithmetic import decimal_number
from service.engine.naspa.expected import expected_wins
from service.engine.naspa.segments import segment_rounds

ROUNDED = 0.005  # half a hundredth: a figure written to 2 decimals (schemas/naspa.py "Numbers")


def rows(result):
    return [(o.round, o.opponent, o.opponent_rating, o.score) for o in result.details.opponents]


def test_a_newcomer_and_its_rated_opponent():
    # N (newcomer) vs A (1500, 100 career games): N loses round 1, wins round 2; round 3
    # is a forfeit and B has a bye in it: neither is a game that counts, neither is listed.
    out = rate(
        {"A": (1500, 100), "N": (None, 0), "B": (1600, 100)},
        [(1, "A", "N", 1), (2, "N", "A", 1), (3, "A", "N", 1, "forfeit")],
        byes=[(3, "B", 1)],
    )
    # N: start 1500 (mean of rated opponents), w = 1 of 2 games (no 5%/95% rule).
    # IPR(r) = 2 E(r, 1500) - 1 is negative exactly below 1500 (IPR(1500) = 0 is not, N2):
    # probes 1500 (high), then 750, 1125, 1312, 1406, 1453, 1476, 1488, 1494, 1497, 1498,
    # 1499 (all low); high - low = 1: the last mid probed, 1499. Floor 500: no; cap (N3)
    # 1500 + 400 x 1 / 2 = 1700: no. Pass 2 gives 1499 again: settled in 2 passes.
    n = out["N"]
    assert (n.details.unrounded_rating, n.details.newcomer_iterations) == (1499, 2)
    # N's games: A at its pre-event 1500; E(1499, 1500) = 1 / (1 + exp(0.0031879))
    # = 1 / (1 + 1.0031930) = 0.4992030, at N's own unrounded new rating.
    assert rows(n) == [(1, "A", 1500, 0.0), (2, "A", 1500, 1.0)]
    assert [o.expected for o in n.details.opponents] == [0.5] * 2  # 0.4992030, 2 decimals
    # A's games: N at its unrounded new rating 1499 (N5); E(1500, 1499) = 1 / (1 +
    # exp(-0.0031879)) = 1 / (1 + 0.9968172) = 0.5007970; expected wins 2 x that = 1.0015939.
    a = out["A"]
    assert rows(a) == [(1, "N", 1499, 1.0), (2, "N", 1499, 0.0)]
    assert [o.expected for o in a.details.opponents] == [0.5] * 2  # 0.5007970, 2 decimals
    assert a.details.expected_wins == 1.0  # 1.0015939, 2 decimals
    assert out["B"].details.opponents == []


def test_a_long_event_uses_each_segment_s_ratings():
    # A and B, both 1500 with 100 career games, 17 rounds, A wins every game. n0 = 16: two
    # segments, rounds 1-9 and 10-17. Segment 1: E = .5 each; A: excess 9 - 4.5 = 4.5,
    # m 20: 1590; acceleration 1590 - 1500 - 5 x 9 = 45 -> 1635; B gets 45 / 20 x 9 = 20.25
    # feedback: 1500 - 20 x 4.5 = 1410, + 20.25 = 1430.25 -> 1430.
    out = rate({"A": (1500, 100), "B": (1500, 100)}, [(r, "A", "B", 1) for r in range(1, 18)])
    a, b = out["A"].details, out["B"].details
    assert [(o.round, o.opponent_rating, o.expected) for o in a.opponents[:9]] == [
        (r, 1500, 0.5) for r in range(1, 10)
    ]
    # Segment 2 starts from the rounded results: A's opponent is B at 1430, B's is A at 1635.
    # E(1635, 1430) = 1 / (1 + exp(-0.0031879 x 205)) = 1 / (1 + 0.5202117) = 0.6578031
    assert [(o.round, o.opponent_rating) for o in a.opponents[9:]] == [
        (r, 1430) for r in range(10, 18)
    ]
    assert [o.expected for o in a.opponents[9:]] == [0.66] * 8  # 0.6578031, 2 decimals
    assert [(o.round, o.opponent_rating) for o in b.opponents[9:]] == [
        (r, 1635) for r in range(10, 18)
    ]
    assert [o.expected for o in b.opponents[9:]] == [0.34] * 8  # 0.3421969, 2 decimals
    # Each segment's expected wins is the fsum of its games' (4.5, then 8 x 0.6578031 = 5.2624248).
    assert [s.expected_wins for s in a.segments] == [4.5, 5.26]


SCORES = st.sampled_from([0.0, 0.5, 1.0])


@st.composite
def long_or_short_events(draw):
    """Players (some newcomers) and games over 1-40 rounds (one to three segments), some
    forfeits."""
    n = draw(st.integers(min_value=2, max_value=7))
    players = {
        f"p{i}": (None, 0)
        if draw(st.booleans())
        else (draw(st.integers(300, 2300)), draw(st.integers(0, 120)))
        for i in range(n)
    }
    rounds = draw(st.integers(min_value=1, max_value=40))
    games = []
    for _ in range(draw(st.integers(min_value=1, max_value=30))):
        a, b = draw(st.lists(st.sampled_from(list(players)), min_size=2, max_size=2, unique=True))
        game = (draw(st.integers(1, rounds)), a, b, draw(SCORES))
        games.append(game + ("forfeit",) if draw(st.integers(0, 9)) == 0 else game)
    return players, games, rounds


@settings(max_examples=150, deadline=None)
@given(long_or_short_events(), st.sampled_from(["nsa2008", "naspa2024"]), st.booleans())
def test_the_opponents_add_up_to_the_expected_wins(case, ruleset, one_third):
    # One entry per counted game, in round order; the scores add up to the earned wins and
    # the expected wins, segment by segment, to the details' expected wins: exactly in the
    # engine (fsum), within the 2-decimal rounding of each written term (schemas/naspa.py).
    players, games, rounds = case
    if all(len(g) > 4 for g in games):
        return  # nothing counts: the event is refused (tested elsewhere)
    out = rate(players, games, rounds=rounds, ruleset=ruleset, one_third=one_third)
    segments = segment_rounds(rounds)
    for pid, result in out.items():
        d = result.details
        listed = d.opponents
        assert len(listed) == result.event_games
        assert [o.round for o in listed] == sorted(o.round for o in listed)
        assert math.fsum(o.score for o in listed) == d.earned_wins
        if not listed:
            continue
        per_segment = [
            [o.expected for o in listed if first <= o.round <= last] for first, last in segments
        ]
        played = [s for s in per_segment if s]
        assert abs(d.expected_wins - math.fsum(map(math.fsum, played))) <= ROUNDED * (
            len(listed) + 1
        )
        if len(segments) > 1:
            for s, terms in zip([s for s in d.segments if s.games], played):
                assert abs(s.expected_wins - math.fsum(terms)) <= ROUNDED * (len(terms) + 1)
            continue
        # One segment: the ratings used are the pre-event rating of a rated opponent and a
        # newcomer's unrounded new rating (N5); E from the player's own pre-event rating,
        # or a newcomer's unrounded new rating (N1).
        own = players[pid][0] if players[pid][0] is not None else d.unrounded_rating
        for o in listed:
            pre = players[o.opponent][0]
            assert o.opponent_rating == (
                pre if pre is not None else out[o.opponent].details.unrounded_rating
            )
            if isinstance(own, int) and pre is not None:  # whole ratings: the very term, rounded
                assert o.expected == decimal_number(expected_wins(own, o.opponent_rating))
            else:  # from ratings written to 2 decimals: E moves by under 1e-5 per 0.005 point
                assert abs(o.expected - expected_wins(own, o.opponent_rating)) <= ROUNDED + 1e-5
