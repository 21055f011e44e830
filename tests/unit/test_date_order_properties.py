"""Date order (design "Order (v1.1)"), as properties of the ledger the service and `rate`
share, with the real engines and no I/O.

Random workloads (tests/cascade_workload.py) of finished, late, corrected and withdrawn
events, duplicates and invalid messages, in a random arrival order, for CFC, FIDE (one
open period; a period closed between two; a close reopened, changed and closed again), and
NASPA nwl + csw together. After EVERY
message the ledger must hold what a fresh ledger fed the pool's current events in date
order holds: the records, and the last message per event id (a withdrawn event's: a
revision with `withdrawn` and no players). Each message does what the design says
(applied, duplicate, or rejected at the field named), and a duplicate or a rejection
changes nothing. At the end the ledger's own timelines, histories and archive equal the
fold's too (what later cascades will read).
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.engine.registry import default_registry
from service.rating import Applied, Duplicate, MemoryLedger, Rejected, apply_message
from service.timeline import split_member
from tests.cascade_workload import (
    CASES,
    EARLY,
    Chooser,
    Model,
    Workload,
    check_against_fold,
    check_histories,
    check_revisions,
    current_lists,
    date_order_fold,
    decoded,
    workload,
)

REGISTRY = default_registry()


class Drawn(Chooser):
    """Choices drawn by hypothesis (so that a failing workload shrinks)."""

    def __init__(self, data):
        self.data = data

    def integer(self, lo: int, hi: int) -> int:
        return self.data.draw(st.integers(lo, hi))


def state_of(ledger: MemoryLedger) -> tuple:
    """Everything a message may change (compared before and after one that must not)."""
    return (
        {k: dict(v) for k, v in ledger.records.items()},
        dict(ledger.pools),
        dict(ledger.markers),
        {k: list(v) for k, v in ledger.timelines.items()},
        dict(ledger.archives),
        {k: list(v) for k, v in ledger.histories.items()},
        copy.copy(ledger.changes.records),
        copy.copy(ledger.changes.archives),
        copy.copy(ledger.changes.markers),
    )


def outcome_of(result) -> tuple:
    if isinstance(result, Rejected):
        return ("rejected", result.reason, result.path)
    return ("duplicate", None, None) if isinstance(result, Duplicate) else ("applied", None, None)


def same_structures(ledger: MemoryLedger, fold: MemoryLedger, model: Model) -> None:
    """Timelines, histories and archive equal the fold's, the arrival part of keys aside
    (it numbers messages differently; it only breaks ties of equal dates, in the same order)."""

    def timeline(members):
        return [(m[:9], split_member(m)[1]) for m in members]

    assert {d: timeline(m) for d, m in ledger.timelines.items() if m} == {
        d: timeline(m) for d, m in fold.timelines.items() if m
    }
    assert {w: [(m[:9], m[17:]) for m in h] for w, h in ledger.histories.items() if h} == {
        w: [(m[:9], m[17:]) for m in h] for w, h in fold.histories.items() if h
    }
    for eid, event in model.events.items():
        archived = ledger.archives[eid]
        assert archived.withdrawn == event.withdrawn
        if not event.withdrawn:
            theirs = fold.archives[eid]
            assert (archived.event, archived.key[:9], archived.digest) == (
                theirs.event,
                theirs.key[:9],
                theirs.digest,
            )


def closed_stays_closed(ledger: MemoryLedger) -> None:
    """No record holds games of a closed period: a published list is never revised."""
    for (system, pool), state in ledger.pools.items():
        closed = state.closed_through
        for record in ledger.records.get((system, pool), {}).values():
            if closed is not None and record.fide is not None:
                assert all(s.period > closed for s in record.fide.periods), record
                if record.rating is not None:
                    assert all(g.period > closed for g in record.fide.initial_games), record


def run(w: Workload, every_step: bool = True) -> None:
    if w.case.name == EARLY:
        return run_early(w)
    ledger = MemoryLedger(w.case.start)
    model = Model()
    outputs = []
    for arrival, raw in enumerate(w.messages, 1):
        message = decoded(raw)
        expected = model.apply(message, arrival)
        before = state_of(ledger)
        try:
            result = apply_message(
                ledger, message, REGISTRY, source_id=f"s{arrival}", arrival=arrival
            )
        except Rejected as exc:
            result = exc
        assert outcome_of(result) == expected, (arrival, raw, getattr(result, "message", result))
        if not isinstance(result, Applied):
            assert state_of(ledger) == before, f"{expected[0]} message {arrival} changed the ledger"
            continue
        outputs.extend(result.outputs)
        if every_step or arrival == len(w.messages):
            last = {o.event_id: o for o in outputs if o.kind != "list" and o.event_id}
            fold = date_order_fold(w.case.start, [model], REGISTRY)
            check_against_fold(ledger.all_records(), last, current_lists(outputs), [model], fold)
    check_revisions(outputs)
    fold = date_order_fold(w.case.start, [model], REGISTRY)
    check_against_fold(
        ledger.all_records(),
        {o.event_id: o for o in outputs if o.kind != "list" and o.event_id},
        current_lists(outputs),
        [model],
        fold,
    )
    check_histories(
        ledger.history, [who for who, lines in ledger.projection.entries.items() if lines], fold
    )
    same_structures(ledger, fold.ledger, model)


def run_early(w: Workload) -> None:
    """Events of the next period rated before the closing: each message does what the design
    says, a duplicate or rejection changes nothing, the closed period stays closed."""
    ledger = MemoryLedger(w.case.start)
    model = Model()
    outputs = []
    for arrival, raw in enumerate(w.messages, 1):
        message = decoded(raw)
        expected = model.apply(message, arrival)
        before = state_of(ledger)
        try:
            result = apply_message(
                ledger, message, REGISTRY, source_id=f"s{arrival}", arrival=arrival
            )
        except Rejected as exc:
            result = exc
        assert outcome_of(result) == expected, (arrival, raw, getattr(result, "message", result))
        if isinstance(result, Applied):
            outputs.extend(result.outputs)
        else:
            assert state_of(ledger) == before
        closed_stays_closed(ledger)
    check_revisions(outputs)
    last = {o.event_id: o for o in outputs if o.kind != "list"}
    for eid, event in model.events.items():
        assert last[eid].withdrawn == event.withdrawn


@pytest.mark.parametrize("name", [*CASES, EARLY])
@settings(
    deadline=None,
    max_examples=120,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_every_arrival_order_ends_as_the_date_order_fold(name, data):
    choose = Drawn(data)
    run(workload(choose, name, events=choose.integer(2, 6), extra=choose.integer(0, 9)))


@pytest.mark.parametrize("name", [*CASES, EARLY])
def test_busier_workloads(name):
    """Fewer, larger workloads (checked at the end only): cascades through many events."""
    import random

    for seed in range(3):
        run(
            workload(Chooser(random.Random(f"{name}-{seed}")), name, events=14, extra=16),
            every_step=False,
        )


def _fide_event(rng, event_id: str, day: str, ids: list[str]) -> dict:
    pairs = [(a, b) for i, a in enumerate(ids) for b in ids[i + 1 :]]
    return {
        "schema": "event.finished/v1",
        "event_id": event_id,
        "system": "fide",
        "name": f"Event {event_id}",
        "start_date": day,
        "end_date": day,
        "rounds": len(pairs),
        "players": [{"id": p} for p in ids],
        "games": [
            {"round": r + 1, "a": a, "b": b, "score": rng.choice([0, 0.5, 1])}
            for r, (a, b) in enumerate(pairs)
        ],
    }


@pytest.mark.parametrize("seed", range(8))
def test_a_cascade_over_events_rated_before_an_earlier_period_closed_keeps_the_published_list(seed):
    """November's events reported before October's list is closed (FIDE allows it), then a
    correction of the first of them: re-rated from the players' states with October's list
    applied (as the records have it), never from the states stored before the closing,
    which would open October's sums again and put the ratings back on September's list."""
    import random

    from schemas.records import PlayerRecord
    from tests.cascade_workload import figures

    rng = random.Random(seed)
    players = [f"f{i}" for i in range(6)]
    start = [
        PlayerRecord(
            system="fide",
            pool="standard",
            id=p,
            rating=1800 + 50 * i,
            status="established",
            games=60,
            birth_year=1980,
        )
        for i, p in enumerate(players)
    ]
    october = [
        _fide_event(rng, f"oct{n}", f"2025-10-{10 + n}", rng.sample(players, 4)) for n in range(3)
    ]
    november = [
        _fide_event(rng, f"nov{n}", f"2025-11-{10 + n}", ["f0", *rng.sample(players[1:], 3)])
        for n in range(3)
    ]
    close = {
        "schema": "period.closed/v1",
        "system": "fide",
        "pool": "standard",
        "period": "2025-10",
    }
    first = november[0]
    if seed % 3 == 0:
        change = dict(
            first, schema="event.corrected/v1", name="Renamed"
        )  # the figures' inputs unchanged
    elif seed % 3 == 1:
        change = dict(
            first,
            schema="event.corrected/v1",
            games=[dict(g, score=1 - g["score"]) for g in first["games"]],
        )
    else:
        change = {
            "schema": "event.withdrawn/v1",
            "event_id": first["event_id"],
            "system": "fide",
            "pool": "standard",
        }
    live = MemoryLedger(start)
    outputs = []
    for message in [*october, *november, close, change]:
        outputs += apply_message(live, decoded(message), REGISTRY, "s").outputs  # type: ignore[union-attr]
    for record in live.all_records():
        assert all(s.period > "2025-10" for s in record.fide.periods), (
            record
        )  # October stays closed
        assert [p.period for p in record.fide.published][-1] == "2025-11", (
            record
        )  # its list stays published
    # As if the list had been closed before November's events came: the date-order fold.
    final = (
        november[1:]
        if change["schema"] == "event.withdrawn/v1"
        else [dict(change, schema="event.finished/v1"), *november[1:]]
    )
    fold = MemoryLedger(start)
    last = {}
    for message in [*october, close, *final]:
        for out in apply_message(fold, decoded(message), REGISTRY, "f").outputs:  # type: ignore[union-attr]
            last[out.event_id] = out
    assert live.all_records() == fold.all_records()
    mine = {o.event_id: o for o in outputs if o.kind != "list"}
    for event in final:
        assert figures(mine[event["event_id"]]) == figures(last[event["event_id"]])


def test_a_cascade_over_the_limit_is_rejected_and_changes_nothing():
    """RATING_MAX_CASCADE_EVENTS: a change that would re-rate more later events is refused
    (too_large) whole; one within the limit goes through."""
    import datetime as dt
    import random

    from tests.cascade_workload import Window, case, new_event

    c = case("cfc")
    choose = Chooser(random.Random(3))
    events = [
        new_event(choose, c, f"e{n}", [Window(dt.date(2025, 11, 1 + n), dt.date(2025, 11, 1 + n))])
        for n in range(10)
    ]
    ledger = MemoryLedger(c.start)
    for n, event in enumerate(events, 1):
        apply_message(ledger, decoded(event), REGISTRY, f"s{n}", max_cascade=3)
    before = state_of(ledger)
    late = new_event(choose, c, "late", [Window(dt.date(2025, 10, 30), dt.date(2025, 10, 30))])
    for message in (
        dict(events[0], schema="event.corrected/v1", name="Renamed"),
        late,
        {"schema": "event.withdrawn/v1", "event_id": "e5", "system": "cfc", "pool": "regular"},
    ):
        with pytest.raises(Rejected) as info:
            apply_message(ledger, decoded(message), REGISTRY, "s-x", max_cascade=3)
        assert info.value.reason == "too_large" and "over the limit of 3" in info.value.message
        assert state_of(ledger) == before
    applied = apply_message(
        ledger,
        decoded(
            {"schema": "event.withdrawn/v1", "event_id": "e6", "system": "cfc", "pool": "regular"}
        ),
        REGISTRY,
        "s-y",
        max_cascade=3,
    )
    assert isinstance(applied, Applied) and applied.outputs[0].withdrawn
