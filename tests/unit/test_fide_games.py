"""The per-game figures of a FIDE event's details (FideDetails.games, FideGame): what FIDE's
rating calculator lists for each game - the opponent's rating, D after the 400-point rule
(8.3.1), PD from Table 8.1.2, W, W - We and K x (W - We) - as the engine summed them.

Hand-worked figures come from docs/rules/fide.md and Table 8.1.2 as printed there; the
arithmetic is in the comment beside each. The property checks that the listed figures
add up exactly to the event's sums, and agree with the independent reference's PD.
"""

from __future__ import annotations

import datetime as dt
from fractions import Fraction

from hypothesis import given, settings

from schemas.events import EventFinished, Game, PlayerRef
from schemas.records import PlayerRecord, PoolState, unrated_record
from schemas.validation import normalize
from service.engine.contract import EventInput
from service.engine.fide import FideEngine
from tests.unit import fide_reference as ref
from tests.unit.test_fide_properties import event as property_event
from tests.unit.test_fide_properties import periods

ENGINE = FideEngine()


def rec(pid, rating, games=100, birth_year=1980):
    return PlayerRecord(
        system="fide",
        pool="standard",
        id=pid,
        rating=rating,
        status="established",
        games=games,
        birth_year=birth_year,
    )


def rate(records, games, start="2025-11-03", pool="standard"):
    """games: (round, a, b, a's score[, forfeit]), listed in any order. Results by id."""
    ids = sorted({g[1] for g in games} | {g[2] for g in games})
    event = normalize(
        EventFinished(
            event_id="e1",
            system="fide",
            name="e1",
            start_date=dt.date.fromisoformat(start),
            end_date=dt.date.fromisoformat(start),
            rounds=max(g[0] for g in games),
            players=[PlayerRef(id=p) for p in ids],
            games=[
                Game(round=g[0], a=g[1], b=g[2], score=g[3], forfeit=len(g) > 4 and g[4])
                for g in games
            ],
            pool=pool,
        )
    )
    known = {r.id: r for r in records}
    inputs = {p: known.get(p) or unrated_record("fide", pool, p) for p in ids}
    outcome = ENGINE.rate_event(EventInput(event, inputs, PoolState(system="fide", pool=pool)))
    return {r.id: r for r in outcome.results}


def exact(number: float) -> Fraction:
    """A number of the message as the decimal JSON writes it (0.76 -> 19/25)."""
    return Fraction(repr(number))


def row(g):
    return (
        g.round,
        g.opponent,
        g.opponent_rating,
        g.difference,
        g.expected,
        g.score,
        g.change,
        g.k,
        g.rating_change,
    )


def test_each_game_with_the_400_point_rule_and_the_2650_exemption():
    # A 2000 (K 20: 100 games, born 1980, never 2300+), event starting 2025-11-03 (the
    # amended 8.3.1 applies). Games listed out of round order; round 4 against an
    # unrated player (F2: not rated for A), round 5 a forfeit (never rated).
    out = rate(
        [rec("A", 2000), rec("B", 2100), rec("C", 2600), rec("H", 2700)],
        [
            (3, "A", "H", 0),
            (1, "A", "B", 0.5),
            (2, "A", "C", 1),
            (4, "A", "U", 1),
            (5, "A", "B", 1, True),
        ],
    )
    a = out["A"].details
    assert [row(g) for g in a.games] == [
        # r1 vs 2100: D = 2000 - 2100 = -100, |D| 100 in 99-106 -> H .64, A is lower:
        # PD = 1 - .64 = .36 = 9/25; W - We = .5 - .36 = .14 = 7/50; x 20 = 2.8 = 14/5
        (1, "B", 2100, -100, 0.36, 0.5, 0.14, 20, 2.8),
        # r2 vs 2600: D = -600, |D| > 400 and A is under 2650: D = -400 (8.3.1);
        # 400 in 392-411 -> .92, PD = .08 = 2/25; W - We = 1 - .08 = .92 = 23/25; x 20 = 18.4
        (2, "C", 2600, -400, 0.08, 1.0, 0.92, 20, 18.4),
        # r3 vs 2700: D = -700 -> -400 (A's own rating decides, F3); PD .08; 0 - .08 = -.08; x 20 = -1.6
        (3, "H", 2700, -400, 0.08, 0.0, -0.08, 20, -1.6),
    ]
    # Sum W - We = .14 + .92 - .08 = .98 = 49/50; K x sum = 20 x .98 = 19.6 = 98/5
    assert (a.games_counted, a.event_sum, a.event_change) == (3, 0.98, 19.6)
    assert (a.event_sum_exact, a.event_change_exact) == ("49/50", "98/5")
    assert sum(exact(g.change) for g in a.games) == Fraction(a.event_sum_exact)
    assert sum(exact(g.rating_change) for g in a.games) == Fraction(a.event_change_exact)
    # PD .36 + .08 + .08 = .52: the player's expected score
    assert out["A"].expected == 0.52

    # C 2600 (K 10: rated 2400+) vs A: D = 600 -> 400 (2600 is under 2650): PD .92 = 23/25;
    # 0 - .92 = -.92; x 10 = -9.2 = -46/5
    assert [row(g) for g in out["C"].details.games] == [
        (2, "A", 2000, 400, 0.92, 0.0, -0.92, 10, -9.2)
    ]
    # H 2700 (K 10) vs A, event from 2025-10-01 in the standard pool, H >= 2650: the true
    # D = 700 is used (8.3.1 as amended, F3); 700 in 620-735 -> .99; 1 - .99 = .01; x 10 = .1
    assert [row(g) for g in out["H"].details.games] == [
        (3, "A", 2000, 700, 0.99, 1.0, 0.01, 10, 0.1)
    ]
    # B 2100 (K 20) vs A in round 1 only (the round 5 forfeit is left out): D = 100 -> .64;
    # .5 - .64 = -.14; x 20 = -2.8
    b = out["B"].details
    assert [row(g) for g in b.games] == [(1, "A", 2000, 100, 0.64, 0.5, -0.14, 20, -2.8)]
    assert (b.event_sum, b.event_change, b.event_sum_exact, b.event_change_exact) == (
        -0.14,
        -2.8,
        "-7/50",
        "-14/5",
    )


def test_the_2650_exemption_is_dated_and_standard_only():
    # H 2700 vs A 2000, H wins. Event starting 2025-09-29 (before the amendment): D = 700
    # -> 400, PD .92, W - We = .08, K 10 -> .8. Rapid from 2025-11-03: no exemption either.
    for start, pool in (("2025-09-29", "standard"), ("2025-11-03", "rapid")):
        out = rate([rec("A", 2000), rec("H", 2700)], [(1, "H", "A", 1)], start=start, pool=pool)
        (g,) = out["H"].details.games
        assert (g.difference, g.expected, g.change, g.rating_change) == (400, 0.92, 0.08, 0.8)


def test_an_unrated_player_lists_the_games_pooled_for_8_2_without_pd():
    # U (no rating) vs A 2000 in round 1 (U loses) and vs V (also unrated) in round 2: only
    # the game against a rated opponent joins U's initial-rating pool (8.2); it is listed
    # with the opponent's rating and U's score, and no D, PD or K.
    out = rate([rec("A", 2000)], [(1, "A", "U", 1), (2, "U", "V", 0.5)])
    u = out["U"].details
    assert [row(g) for g in u.games] == [(1, "A", 2000, None, None, 0.0, None, None, None)]
    assert u.games_counted == 1
    assert out["V"].details.games == []
    # A rated player's game against an unrated opponent is left out (F2): A has none.
    assert (out["A"].details.games, out["A"].details.games_counted) == ([], 0)


@settings(max_examples=150, deadline=None)
@given(periods())
def games_add_up_to_the_event_sums(case):
    # For random events: each rated player's listed W - We add up exactly to event_sum,
    # the K x (W - We) to event_change, the PDs to `expected`; one entry per counted game,
    # in round order; each PD is the independent reference's (docs/rules/fide.md, 8.3.1, 8.1.2).
    records, events = case
    store = {r.id: r for r in records}
    pool = PoolState(system="fide", pool="standard")
    for eid, start, games in events:
        e = property_event(eid, start, games)
        outcome = ENGINE.rate_event(EventInput(e, {p.id: store[p.id] for p in e.players}, pool))
        store.update({r.id: r for r in outcome.records})
        for result in outcome.results:
            d = result.details
            assert len(d.games) == d.games_counted == result.event_games
            assert [g.round for g in d.games] == sorted(g.round for g in d.games)
            assert sum(g.score for g in d.games) == result.score
            if d.k is None:
                assert all(g.difference is None and g.expected is None for g in d.games)
                continue
            # The numbers are whole hundredths, so exact as decimals (schemas/fide.py "Numbers").
            assert exact(d.event_sum) == Fraction(d.event_sum_exact)
            assert exact(d.event_change) == Fraction(d.event_change_exact)
            assert sum((exact(g.change) for g in d.games), Fraction(0)) == Fraction(
                d.event_sum_exact
            )
            assert sum((exact(g.rating_change) for g in d.games), Fraction(0)) == Fraction(
                d.event_change_exact
            )
            assert all(g.k == d.k for g in d.games)
            for g in d.games:
                pd = ref.game_pd(d.rating_used, g.opponent_rating, start, "standard")
                assert exact(g.expected) == Fraction(pd, 100)
                assert exact(g.change) == Fraction(g.score) - Fraction(pd, 100)
            if d.games:
                assert sum(exact(g.expected) for g in d.games) == exact(result.expected)


def test_the_games_add_up_to_the_event_sums():
    # The property runs here, as a call, so that the same test asserts its examples reached
    # both branches of the per-game D that the reference's PD is there to check: |D| > 400
    # capped (8.3.1) and a 2650+ player's true D (F3). tests/unit/fide_reference.HITS counts
    # them by rule id (see test_fide_reference.test_engine_agrees_with_the_reference).
    ref.HITS.clear()
    games_add_up_to_the_event_sums()
    missed = [rule for rule in ("8.3.1 400 cap", "F3 2650 exemption") if not ref.HITS[rule]]
    assert not missed, f"no random event reached {missed}"
