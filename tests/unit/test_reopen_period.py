"""A close undone (docs/rules/fide.md "F11 A close can be undone"), on the ledger the service
and `rate` share: close, reopen, close again equals one close; what a reopen refuses."""

from __future__ import annotations

import msgspec
import pytest

from schemas.events import PeriodReopened
from schemas.records import PlayerRecord, PoolState
from schemas.validation import InvalidMessage, decode_input
from service.engine.contract import EngineRejection
from service.engine.fide.lists import reopen_period
from service.engine.registry import default_registry
from service.rating import Applied, Duplicate, MemoryLedger, Rejected, apply_message
from service.readmodel import list_key

REGISTRY = default_registry()


def rec(pid: str, rating: int, k: int | None = None) -> PlayerRecord:
    return PlayerRecord(
        system="fide", pool="standard", id=pid, rating=rating, status="established",
        games=50, birth_year=1990, k=k,
    )  # fmt: skip


START = [rec("A", 2000), rec("B", 1900), rec("C", 1800), rec("D", 2100, k=10)]


def event(eid: str, a: str, b: str, score: float, schema: str = "event.finished/v1") -> dict:
    return {
        "schema": schema, "event_id": eid, "system": "fide", "name": eid,
        "start_date": "2025-11-10", "end_date": "2025-11-10", "rounds": 1,
        "players": [{"id": a}, {"id": b}],
        "games": [{"round": 1, "a": a, "b": b, "score": score}],
    }  # fmt: skip


CLOSE = {"schema": "period.closed/v1", "system": "fide", "period": "2025-11"}
REOPEN = {"schema": "period.reopened/v1", "system": "fide", "period": "2025-11"}


def apply(ledger: MemoryLedger, document: dict):
    return apply_message(ledger, decode_input(msgspec.json.encode(document)), REGISTRY, "s")


def test_close_reopen_close_equals_a_single_close_of_the_corrected_history():
    ledger = MemoryLedger(START)
    apply(ledger, event("e1", "A", "B", 1))
    first = apply(ledger, CLOSE)
    # 8.3: A 2000 beats B 1900: PD 0.64, K 20: A +7 (2007), B -7 (1893); D idle: K dropped.
    assert [(p.id, p.new_rating) for p in first.outputs[0].players] == [("A", 2007), ("B", 1893)]
    assert ledger.record("fide", "standard", "D").k is None
    reopened = apply(ledger, dict(REOPEN, reason="too early"))
    (withdrawal,) = reopened.outputs
    assert (withdrawal.kind, withdrawal.withdrawn, withdrawal.players, withdrawal.revision) == (
        "revision", True, [], 1,
    )  # fmt: skip
    assert withdrawal.cause.type == "reopened" and withdrawal.cause.event_id == "list/2025-11"
    assert withdrawal.list_period == "2025-12"
    # Every record as before the close: rating, K override, the period's sums.
    assert ledger.record("fide", "standard", "A").rating == 2000
    assert ledger.record("fide", "standard", "A").fide.periods[0].sum_hundredths == 36
    assert ledger.record("fide", "standard", "D").k == 10
    assert ledger.pools[("fide", "standard")] == PoolState(system="fide", pool="standard")
    assert all(list_key("2025-11") not in (m[:17] for m in h) for h in ledger.histories.values())
    assert ledger.history("fide", "standard", "A")[-1].kind == "event"  # the list's line gone
    # Corrections are accepted again; a close follows.
    apply(ledger, event("e1", "A", "C", 0, schema="event.corrected/v1"))
    again = apply(ledger, CLOSE)
    fold = MemoryLedger(START)
    apply(fold, event("e1", "A", "C", 0))
    single = apply(fold, CLOSE)
    assert again.outputs == single.outputs
    assert ledger.all_records() == fold.all_records()
    assert ledger.pools == fold.pools
    assert {w: h for w, h in ledger.histories.items() if h} == fold.histories  # B: emptied


def test_a_reopen_refuses_what_it_cannot_undo():
    ledger = MemoryLedger(START)
    with pytest.raises(Rejected, match="has no closed period to reopen"):
        apply(ledger, REOPEN)
    apply(ledger, event("e1", "A", "B", 1))
    apply(ledger, CLOSE)
    with pytest.raises(Rejected, match=r"not its latest closed period \(2025-11\)") as wrong:
        apply(ledger, dict(REOPEN, period="2025-10"))
    assert (wrong.value.reason, wrong.value.path) == ("invalid", "$.period")
    december = dict(event("e2", "A", "C", 1), start_date="2025-12-02", end_date="2025-12-02")
    apply(ledger, december)
    with pytest.raises(Rejected, match="events of periods after 2025-11 count .* 'e2'"):
        apply(ledger, REOPEN)
    apply(ledger, {"schema": "event.withdrawn/v1", "event_id": "e2", "system": "fide"})
    assert isinstance(apply(ledger, REOPEN), Applied)
    assert isinstance(apply(ledger, REOPEN), Duplicate)


def test_a_reopen_of_a_system_without_periods_is_refused_at_decode():
    with pytest.raises(InvalidMessage, match="no period to reopen"):
        decode_input(msgspec.json.encode(dict(REOPEN, system="cfc")))


def test_the_engine_restores_the_records_and_the_pool_before_the_close():
    message = PeriodReopened(system="fide", pool="standard", period="2025-11")
    pool = PoolState(
        system="fide", pool="standard", closed_through="2025-11", reopen_to=["2025-09"]
    )
    outcome = reopen_period(message, {"B": rec("B", 1900), "A": rec("A", 2000)}, pool)
    assert [r.id for r in outcome.records] == ["A", "B"] and outcome.results == []
    assert outcome.pool == PoolState(system="fide", pool="standard", closed_through="2025-09")
    legacy = PoolState(system="fide", pool="standard", closed_through="2025-11")
    with pytest.raises(EngineRejection, match="closed before closes kept"):
        reopen_period(message, {}, legacy)
