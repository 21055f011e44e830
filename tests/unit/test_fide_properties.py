"""Properties of a FIDE rating period (8.3.4, F4): the change depends on the period's
games only, not on how they are grouped into events or in which order events arrive."""

import datetime as dt

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from schemas.events import EventFinished, Game, PeriodClosed, PlayerRef
from schemas.records import PlayerRecord, PoolState
from service.engine.contract import EventInput
from service.engine.fide import FideEngine

ENGINE = FideEngine()
PERIOD = "2025-10"


@st.composite
def periods(draw):
    n = draw(st.integers(2, 8))
    records = [
        PlayerRecord(
            system="fide",
            pool="standard",
            id=f"p{i}",
            rating=draw(st.integers(1400, 2800)),
            status="established",
            games=draw(st.integers(0, 60)),
            birth_year=draw(st.sampled_from([None, 1970, 2008])),
        )
        for i in range(n)
    ]
    events = []
    for e in range(draw(st.integers(1, 4))):
        # starts on both sides of 2025-10-01 (F3), all in period 2025-10
        start = dt.date(2025, 9, 28) + dt.timedelta(days=draw(st.integers(0, 10)))
        games = []
        for r in range(draw(st.integers(1, 12))):
            a, b = draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True))
            games.append(
                (
                    f"p{a}",
                    f"p{b}",
                    draw(st.sampled_from([0.0, 0.5, 1.0])),
                    draw(st.booleans()) and r == 0,
                )
            )
        events.append((f"e{e}", start, games))
    return records, events


def event(eid, start, games):
    return EventFinished(
        event_id=eid,
        system="fide",
        name=eid,
        start_date=start,
        end_date=max(start, dt.date(2025, 10, 1)),
        rounds=len(games),
        players=[PlayerRef(id=p) for p in sorted({g[0] for g in games} | {g[1] for g in games})],
        games=[
            Game(round=i + 1, a=a, b=b, score=s, forfeit=f) for i, (a, b, s, f) in enumerate(games)
        ],
        pool="standard",
        ruleset="fide-2024",
        period=PERIOD,
    )


def run(records, events):
    store = {r.id: r for r in records}
    pool = PoolState(system="fide", pool="standard")
    for eid, start, games in events:
        e = event(eid, start, games)
        outcome = ENGINE.rate_event(EventInput(e, {p.id: store[p.id] for p in e.players}, pool))
        store.update({r.id: r for r in outcome.records})
    last_end = (
        max(event(eid, start, games).end_date for eid, start, games in events) if events else None
    )
    closed = ENGINE.close_period(
        PeriodClosed(system="fide", pool="standard", period=PERIOD), store, pool, last_end
    )
    return [
        (r.id, r.old_rating, r.new_rating, r.change, r.event_games, r.details.k_applied)
        for r in closed.results
    ]


@settings(max_examples=150, deadline=None)
@given(periods(), st.randoms(use_true_random=False))
def test_period_change_does_not_depend_on_event_order(case, rnd):
    records, events = case
    shuffled = list(events)
    rnd.shuffle(shuffled)
    assert run(records, shuffled) == run(records, events)


@settings(max_examples=150, deadline=None)
@given(periods(), st.data())
def test_splitting_an_event_in_two_changes_nothing(case, data):
    records, events = case
    eid, start, games = events[0]
    assume(len(games) >= 2)
    cut = data.draw(st.integers(1, len(games) - 1))
    split = [(eid + "a", start, games[:cut]), (eid + "b", start, games[cut:]), *events[1:]]
    assert run(records, split) == run(records, events)


@settings(max_examples=200, deadline=None)
@given(st.integers(-(10**6), 10**6), st.integers(1, 10**4))
def test_integer_rounding_equals_the_shared_exact_rounding(num, den):
    # service.engine.fide.exact is the integer form of arithmetic.py's Fraction rounding
    from fractions import Fraction

    from service.engine.arithmetic import half_away_from_zero, half_up, to_exact
    from service.engine.fide.exact import ratio_half_away_from_zero, ratio_half_up, ratio_text

    assert ratio_half_up(num, den) == half_up(Fraction(num, den))
    assert ratio_half_away_from_zero(num, den) == half_away_from_zero(Fraction(num, den))
    assert ratio_text(num, den) == to_exact(Fraction(num, den))
