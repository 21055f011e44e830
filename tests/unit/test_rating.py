"""The use case shared by the service and `rate`: idempotency, conflicts, list chunks.

A test double of an engine stands in for the rules here; the real engines have their own tests.
"""

from __future__ import annotations

import pytest

from schemas import PlayerRecord, PoolState, decode_input
from service.rating import Applied, Duplicate, MemoryLedger, Rejected, apply_message
from tests.engines import counting_registry
from tests.messages import encode, event

REGISTRY = counting_registry()


def process(ledger, message: dict, source="s-1"):
    return apply_message(ledger, decode_input(encode(message)), REGISTRY, source)


def test_applied_then_duplicate():
    ledger = MemoryLedger()
    first = process(ledger, event())
    assert isinstance(first, Applied)
    assert [p.new_rating for p in first.outputs[0].players] == [
        (1000 * 31 + 4 + 17) % 3000,
        (31000 + 1 + 17) % 3000,
        (31000 + 1 + 17) % 3000,
    ]
    assert first.outputs[0].source_id == "s-1" and first.outputs[0].kind == "event"
    again = process(ledger, event(), "s-2")
    assert isinstance(again, Duplicate)
    assert (
        ledger.records[("cfc", "regular")]["p1"].rating == 1021
    )  # (31000 + 2 x 2 + 17) mod 3000  # one effect only


def test_defaults_do_not_make_a_conflict():
    ledger = MemoryLedger()
    process(ledger, event())
    assert isinstance(process(ledger, event(pool="regular", ruleset="cfc-2009")), Duplicate)


def test_same_id_other_content_is_a_conflict():
    ledger = MemoryLedger()
    process(ledger, event())
    with pytest.raises(Rejected) as info:
        process(ledger, event(name="Another name"))
    assert info.value.reason == "conflict" and info.value.event_id == "club-2025-11-a"
    assert ledger.records[("cfc", "regular")]["p1"].rating == 1021  # (31000 + 2 x 2 + 17) mod 3000


def test_engine_rejection_becomes_a_rejection_and_changes_nothing():
    ledger = MemoryLedger()
    with pytest.raises(Rejected) as info:
        process(ledger, event(name="refuse"))
    assert (info.value.reason, info.value.path) == ("unratable", "$.players")
    assert ledger.records == {} and ledger.markers == {}


def test_unknown_ruleset_and_system():
    ledger = MemoryLedger()
    with pytest.raises(Rejected) as info:
        process(ledger, event(ruleset="cfc-2012"))
    assert (info.value.reason, info.value.path) == ("unknown_system", "$.ruleset")
    with pytest.raises(Rejected) as info:
        process(ledger, event(system="naspa"))
    assert (info.value.reason, info.value.path) == ("unknown_system", "$.system")


def test_records_stay_in_their_pool():
    ledger = MemoryLedger([PlayerRecord(system="cfc", pool="active", id="p1", rating=1500)])
    process(ledger, event())
    assert ledger.records[("cfc", "active")]["p1"].rating == 1500
    assert ledger.records[("cfc", "regular")]["p1"].rating == 1021  # (31000 + 2 x 2 + 17) mod 3000


def test_a_list_is_published_in_chunks_of_1000():
    records = [
        PlayerRecord(system="fide", pool="standard", id=f"p{i:05d}", rating=1500)
        for i in range(2500)
    ]
    ledger = MemoryLedger(records)
    message = decode_input(b'{"schema":"period.closed/v1","system":"fide","period":"2025-11"}')
    applied = apply_message(ledger, message, REGISTRY, "s-9")
    assert [(o.chunk, o.chunks, len(o.players)) for o in applied.outputs] == [
        (n, 25, 100) for n in range(1, 26)
    ]
    assert (
        applied.outputs[0].players[0].id == "p00000"
        and applied.outputs[24].players[-1].id == "p02499"
    )
    assert ledger.pools[("fide", "standard")] == PoolState(
        system="fide", pool="standard", closed_through="2025-11", reopen_to=[None]
    )
    assert isinstance(apply_message(ledger, message, REGISTRY, "s-10"), Duplicate)
