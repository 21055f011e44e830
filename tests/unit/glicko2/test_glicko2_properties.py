"""Properties of both Glicko-2 rulesets (docs/rules/glicko2.md G2-6 .. G2-9): a period's
close equals the paper's batch computed by an independent implementation; event mode's RD
growth by the whole periods elapsed; the close's order and its catch-up."""

from __future__ import annotations

import datetime as dt
import math

import msgspec
import pytest
from glicko2_reference import glicko2_period
from hypothesis import given
from hypothesis import strategies as st

from schemas.events import EventFinished, PeriodClosed
from schemas.glicko2 import Glicko2State
from schemas.records import PlayerRecord, PoolState
from service.engine.contract import EngineRejection, EventInput
from service.engine.registry import default_registry

REGISTRY = default_registry()
PERIODS = REGISTRY.get("glicko2", "glicko2")
EVENTS = REGISTRY.get("glicko2", "glicko2-event")
POOL = PoolState(system="glicko2", pool="blitz")

players = st.lists(
    st.tuples(
        st.integers(800, 2800),
        st.floats(30, 350, allow_nan=False),
        st.floats(0.03, 0.12, allow_nan=False),
    ),
    min_size=2,
    max_size=8,
)


def records_of(drawn, last_rated=None) -> dict[str, PlayerRecord]:
    return {
        f"p{i}": PlayerRecord(
            system="glicko2",
            pool="blitz",
            id=f"p{i}",
            rating=rating,
            rd=rd,
            volatility=vol,
            status="established",
            glicko2=None
            if last_rated is None
            else Glicko2State(rating=float(rating), last_rated=last_rated),
        )
        for i, (rating, rd, vol) in enumerate(drawn)
    }


def event(ids, games, ruleset, end=dt.date(2025, 3, 20), event_id="e1") -> EventFinished:
    return msgspec.convert(
        {
            "schema": "event.finished/v1",
            "event_id": event_id,
            "system": "glicko2",
            "name": "A blitz arena",
            "start_date": end.isoformat(),
            "end_date": end.isoformat(),
            "rounds": max([r for r, _, _, _ in games] or [1]),
            "players": [{"id": pid} for pid in ids],
            "games": [{"round": r, "a": a, "b": b, "score": s} for r, a, b, s in games],
            "pool": "blitz",
            "ruleset": ruleset,
            "period": f"{end.year:04d}-{end.month:02d}" if ruleset == "glicko2" else None,
        },
        EventFinished,
    )


@st.composite
def periods(draw):
    drawn = draw(players)
    n = len(drawn)
    pairs = st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(lambda p: p[0] != p[1])
    games = draw(
        st.lists(st.tuples(pairs, st.sampled_from([0.0, 0.5, 1.0])), min_size=1, max_size=20)
    )
    return drawn, [(i + 1, f"p{a}", f"p{b}", s) for i, ((a, b), s) in enumerate(games)]


def reference(drawn, games):
    """Each player's (r', RD', sigma') by the paper's batch, from the pre-period states."""
    want = {}
    for i, (rating, rd, vol) in enumerate(drawn):
        pid = f"p{i}"
        mine = []
        for _, a, b, s in games:
            if a == pid:
                mine.append((drawn[int(b[1:])][0], drawn[int(b[1:])][1], s))
            elif b == pid:
                mine.append((drawn[int(a[1:])][0], drawn[int(a[1:])][1], 1 - s))
        want[pid] = glicko2_period(rating, rd, vol, mine)
    return want


@given(periods())
def test_a_period_close_equals_the_paper_s_batch(drawn_games):
    drawn, games = drawn_games
    records = records_of(drawn)
    counted = PERIODS.rate_event(
        EventInput(event=event(records, games, "glicko2"), records=records, pool=POOL)
    )
    after = records | {r.id: r for r in counted.records}
    close = PeriodClosed(system="glicko2", period="2025-03", pool="blitz")
    listed = PERIODS.close_period(close, after, POOL, dt.date(2025, 3, 20))
    want = reference(drawn, games)
    assert [r.id for r in listed.results] == sorted(records)  # every player of the pool
    for r in listed.results:
        d = r.details
        got = (d.new_rating_unrounded, d.new_rd_unrounded, d.new_volatility_unrounded)
        assert got == pytest.approx(want[r.id], rel=1e-9, abs=1e-9)
        assert r.new_rating == math.floor(d.new_rating_unrounded + 0.5)


@given(periods())
def test_an_event_of_glicko2_event_is_the_paper_s_period_for_its_players(drawn_games):
    drawn, games = drawn_games
    records = records_of(drawn)
    rated = EVENTS.rate_event(
        EventInput(event=event(records, games, "glicko2-event"), records=records, pool=POOL)
    )
    want = reference(drawn, games)
    for r in rated.results:
        if r.event_games == 0:  # G2-9: a player without a game is not rated
            assert r.new_rating == r.old_rating and r.details is None
            continue
        d = r.details
        got = (d.new_rating_unrounded, d.new_rd_unrounded, d.new_volatility_unrounded)
        assert got == pytest.approx(want[r.id], rel=1e-9, abs=1e-9)


@given(players, st.integers(0, 40))
def test_event_mode_grows_the_rd_by_the_whole_periods_elapsed(drawn, months):
    """G2-8: last rated in January 2024, an event `months` later: phi^2 grows by sigma^2 for
    each whole monthly period between (months - 1, none for the same or the next month)."""
    records = records_of(drawn, last_rated=dt.date(2024, 1, 31))
    end = dt.date(2024 + months // 12, months % 12 + 1, 1)
    games = [(1, "p0", "p1", 1.0)]
    rated = EVENTS.rate_event(
        EventInput(event=event(records, games, "glicko2-event", end), records=records, pool=POOL)
    )
    elapsed = max(0, months - 1)
    for r in rated.results[:2]:
        d = r.details
        assert d.periods == elapsed + 1
        phi0 = d.rd_unrounded / 173.7178
        assert d.phi**2 == pytest.approx(phi0**2 + elapsed * d.volatility_unrounded**2, rel=1e-12)
        # And the rest is the paper's period from the grown RD (the opponent's grown too).
        other = rated.results[1 - rated.results.index(r)].details
        grown_rd = d.phi * 173.7178
        opp = (other.rating_unrounded, other.phi * 173.7178, 1.0 if r.id == "p0" else 0.0)
        want = glicko2_period(d.rating_unrounded, grown_rd, d.volatility_unrounded, [opp])
        got = (d.new_rating_unrounded, d.new_rd_unrounded, d.new_volatility_unrounded)
        assert got == pytest.approx(want, rel=1e-9)


def test_two_idle_periods_by_hand():
    """1500 / RD 200 / 0.06, last rated 2025-01-10, plays on 2025-04-05 (monthly periods):
    February and March elapsed, so phi = sqrt((200 / 173.7178)^2 + 2 x 0.06^2)
    = sqrt(1.3254745 + 0.0072) = 1.1544152, RD 200.54 before the event's own period."""
    drawn = [(1500, 200.0, 0.06), (1500, 200.0, 0.06)]
    records = records_of(drawn, last_rated=dt.date(2025, 1, 10))
    games = [(1, "p0", "p1", 0.5)]
    rated = EVENTS.rate_event(
        EventInput(
            event=event(records, games, "glicko2-event", dt.date(2025, 4, 5)),
            records=records,
            pool=POOL,
        )
    )
    d = rated.results[0].details
    assert d.periods == 3 and round(d.phi, 7) == 1.1544152 and round(d.phi * 173.7178, 2) == 200.54
    # A draw between equals: Delta = 0, the rating stays 1500.
    assert d.delta == 0 and d.new_rating_unrounded == 1500
    assert rated.records[0].glicko2.last_rated == dt.date(2025, 4, 5)


def test_periods_close_in_order_and_a_catch_up_is_the_close_of_one_record():
    drawn = [(1500, 200.0, 0.06), (1600, 80.0, 0.06)]
    records = records_of(drawn)
    counted = PERIODS.rate_event(
        EventInput(
            event=event(records, [(1, "p0", "p1", 1.0)], "glicko2"), records=records, pool=POOL
        )
    )
    after = {r.id: r for r in counted.records}
    with pytest.raises(EngineRejection) as info:  # March has games: it closes before April
        PERIODS.close_period(
            PeriodClosed(system="glicko2", period="2025-04", pool="blitz"),
            after,
            POOL,
            dt.date(2025, 3, 20),
        )
    assert info.value.reason == "period_not_due"
    listed = PERIODS.close_period(
        PeriodClosed(system="glicko2", period="2025-03", pool="blitz"),
        after,
        POOL,
        dt.date(2025, 3, 20),
    )
    with pytest.raises(EngineRejection) as info:  # April before... May: one after the other
        PERIODS.close_period(
            PeriodClosed(system="glicko2", period="2025-05", pool="blitz"), after, listed.pool
        )
    assert info.value.reason == "period_not_due"
    caught = PERIODS.catch_up(after["p0"], listed.pool)
    assert caught == next(r for r in listed.records if r.id == "p0")
