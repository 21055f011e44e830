"""Corrections, withdrawals and late events of Glicko-2 against the date-order fold (design
"Order (v1.1)"), for both rulesets, in platform-named pools (docs/rules/glicko2.md G2-6 ..
G2-8): the workloads of tests/cascade_workload.py (`glicko2-event` over four months, so that
re-rated events grow RDs for other elapsed periods; `glicko2-close` with a period closed
between two, changes to the closed one refused) through the ledger the service and `rate`
share. After every message the records and the last message per event equal a fresh
ledger fed the final events in date order; at the end the timelines, histories and
archive too (tests/unit/test_date_order_properties.py `run`).
"""

from __future__ import annotations

import random

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.engine.registry import default_registry
from service.rating import MemoryLedger, apply_message
from tests.cascade_workload import GLICKO2_CASES, Chooser, decoded, glicko2_start, workload
from tests.unit.test_date_order_properties import Drawn, run

REGISTRY = default_registry()


@pytest.mark.parametrize("name", GLICKO2_CASES)
@settings(
    deadline=None,
    max_examples=60,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_every_arrival_order_ends_as_the_date_order_fold(name, data):
    choose = Drawn(data)
    run(workload(choose, name, events=choose.integer(2, 6), extra=choose.integer(0, 9)))


@pytest.mark.parametrize("name", GLICKO2_CASES)
def test_busier_workloads(name):
    """Fewer, larger workloads (checked at the end only): cascades through many events."""
    for seed in range(3):
        run(
            workload(Chooser(random.Random(f"{name}-{seed}")), name, events=14, extra=16),
            every_step=False,
        )


def g2_event(event_id: str, day: str, games: list[tuple[str, str, float]]) -> dict:
    ids = sorted({p for a, b, _ in games for p in (a, b)})
    return {
        "schema": "event.finished/v1",
        "event_id": event_id,
        "system": "glicko2",
        "pool": "blitz",
        "ruleset": "glicko2-event",
        "name": f"Event {event_id}",
        "start_date": day,
        "end_date": day,
        "rounds": len(games),
        "players": [{"id": p} for p in ids],
        "games": [
            {"round": r + 1, "a": a, "b": b, "score": s} for r, (a, b, s) in enumerate(games)
        ],
    }


def test_a_late_event_moves_the_elapsed_periods_of_the_events_after_it():
    """glicko2-event (G2-8): g1 last played in June (the record's `last_rated`); an event of
    September, then a late one of July. Rated in date order, July's grows g1's RD for no
    period (June to July: the next period) and September's for one (August); rated on
    arrival, September's had grown it for two (July, August). The late event's revision of
    September's says so, and equals the fold."""
    start = glicko2_start("blitz", tuple(f"g{i}" for i in range(8)))
    assert start[1].glicko2 is not None and start[1].glicko2.last_rated.month == 6
    september = g2_event("sep", "2025-09-20", [("g1", "g2", 1.0)])
    july = g2_event("jul", "2025-07-15", [("g1", "g3", 0.5)])
    live = MemoryLedger(start)
    first = apply_message(live, decoded(september), REGISTRY, "s1", arrival=1)
    late = apply_message(live, decoded(july), REGISTRY, "s2", arrival=2)

    def periods(out, pid: str) -> int:
        return next(p for p in out.players if p.id == pid).details.periods

    # Rated on arrival: June -> September, two whole periods between, the rated one third.
    assert periods(first.outputs[0], "g1") == 3  # type: ignore[union-attr]
    july_out, revision = late.outputs  # type: ignore[union-attr]
    assert (july_out.kind, periods(july_out, "g1")) == ("event", 1)
    assert (revision.kind, revision.event_id, revision.cause.type) == (
        "revision",
        "sep",
        "inserted",
    )
    assert periods(revision, "g1") == 2  # July -> September: August between
    fold = MemoryLedger(start)
    folded = [
        apply_message(fold, decoded(m), REGISTRY, f"f{n}", arrival=n).outputs[0]  # type: ignore[union-attr]
        for n, m in enumerate([july, september], 1)
    ]
    assert live.all_records() == fold.all_records()
    assert [p for p in revision.players] == [p for p in folded[1].players]
    g1 = next(r for r in live.all_records() if r.id == "g1")
    assert g1.glicko2 is not None and str(g1.glicko2.last_rated) == "2025-09-20"
    assert msgspec.json.encode(g1) == msgspec.json.encode(
        next(r for r in fold.all_records() if r.id == "g1")
    )
