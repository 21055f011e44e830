"""The use case: apply one input message to a ledger by the engines' rules, in date order
(docs/design/guarantees.md "Order").

An event that arrives in date order is rated at the end of its domain's timeline
(`_append`). A late event, a correction or a withdrawal re-rates from its place
(service/rating/cascade.py). A period's close asks the engine for the list; a reopen undoes
the latest close (service/rating/periods.py). Raises Rejected
when the message is not applied; then the ledger is as it was.
"""

from __future__ import annotations

from schemas.events import (
    EventCorrected,
    EventFinished,
    EventWithdrawn,
    InputMessage,
    PeriodClosed,
    PeriodReopened,
)
from schemas.ratings import RatingsUpdated
from schemas.records import unrated_record
from service.engine.contract import Engine, EventInput
from service.engine.registry import Registry
from service.rating.cascade import Change, cascade, named, rated
from service.rating.effects import Applied, Duplicate, Rejected
from service.rating.ledger import MemoryLedger
from service.rating.needs import content_digest, engine_for, marker_key
from service.rating.outputs import event_output
from service.rating.periods import close, reopen
from service.timeline import (
    Archived,
    as_finished,
    order_key,
    results_digest,
    timeline_member,
)


def in_order(ledger: MemoryLedger, message: InputMessage, arrival: int, registry: Registry) -> bool:
    """Whether the message is rated at the end of its timeline (no cascade)."""
    if isinstance(message, PeriodClosed):
        return True
    if isinstance(message, PeriodReopened):
        return False  # it reads every player's state before the close (service/rating/periods.py)
    if not isinstance(message, EventFinished):
        return False
    tail = ledger.tail(registry.domains.of(message.system, message.pool or ""))
    if tail is None:
        return True
    try:
        prefix = engine_for(message, registry).order_prefix(message)
    except Rejected:
        return True  # no engine rates it: apply_message rejects it, wherever it would go
    return order_key(message, arrival, prefix) > tail


def apply_message(
    ledger: MemoryLedger,
    message: InputMessage,
    registry: Registry,
    source_id: str,
    arrival: int | None = None,
    max_cascade: int = 0,
) -> Applied | Duplicate:
    """Apply one message and commit its effect to the ledger (raises Rejected: then nothing
    changed). `arrival` orders events with equal dates (the service: the entry id);
    `max_cascade` (0: none) is the most later events one message may re-rate."""
    if arrival is None:
        ledger.arrivals += 1
        arrival = ledger.arrivals
    else:
        ledger.arrivals = max(ledger.arrivals, arrival)
    if isinstance(message, PeriodClosed):
        return close(ledger, message, registry, source_id)
    if isinstance(message, PeriodReopened):
        return reopen(ledger, message, registry, source_id)
    if isinstance(message, EventFinished):
        return _finished(ledger, message, registry, source_id, arrival, max_cascade)
    return _revise(ledger, message, registry, source_id, arrival, max_cascade)


def _seen(ledger: MemoryLedger, key: str, digest: str, event_id: str | None) -> bool:
    """True when this content was applied already; Rejected (conflict) for other content."""
    known = ledger.markers.get(key)
    if known is None:
        return False
    if known == digest:
        return True
    hint = " (to change a rated event, publish event.corrected/v1)" if event_id else ""
    raise Rejected("conflict", f"{key} was already applied with other content{hint}", "$", event_id)


def _finished(
    ledger: MemoryLedger,
    message: EventFinished,
    registry: Registry,
    source_id: str,
    arrival: int,
    max_cascade: int,
) -> Applied | Duplicate:
    """A new event: appended when it comes last in date order, else inserted by a cascade."""
    key, digest = marker_key(message), content_digest(message)
    if _seen(ledger, key, digest, message.event_id):
        return Duplicate(key)
    engine = engine_for(message, registry)
    order = order_key(message, arrival, engine.order_prefix(message))
    domain = registry.domains.of(message.system, message.pool or "")
    tail = ledger.tail(domain)
    if tail is None or order > tail:
        outputs = _append(ledger, message, engine, order, domain, source_id)
        rerated = 0
    else:
        change = Change(message.event_id, "inserted", None, message, order, arrival)
        outputs, rerated = cascade(ledger, change, registry, source_id, max_cascade)
    ledger.set_marker(key, digest)
    return Applied(outputs, key, digest, rerated)


def _append(
    ledger: MemoryLedger,
    event: EventFinished,
    engine: Engine,
    key: bytes,
    domain: str,
    source_id: str,
) -> list[RatingsUpdated]:
    """Rate an event that comes last in date order: the players' current records. Each
    player's record before it is appended to their history (the hot path: no search)."""
    system, pool = event.system, event.pool or ""
    seed_pool = engine.seed_pools.get(pool)
    current = ledger.records.get((system, pool), {})
    records = {}
    for p in event.players:
        record = current.get(p.id)
        if record is None:
            record = unrated_record(system, pool, p.id)
        records[p.id] = named(record, p.name) if p.name else record
    seeds = {}
    if seed_pool is not None:
        seeded = ledger.records.get((system, seed_pool), {})
        seeds = {p.id: seeded[p.id] for p in event.players if p.id in seeded}
    data = EventInput(event, records, ledger.pool_state(system, pool), seeds)
    results, changed = rated(engine, data, event.event_id, own=True)
    ledger.append_histories(system, pool, key, records)
    ledger.store_records(changed)
    ledger.timeline_change(domain).add(timeline_member(key, event.event_id))
    ledger.archive(Archived(key, event, 0, results_digest(results)))
    output = event_output(event, engine, results, source_id, records)
    ledger.publish(output, key)
    return [output]


def _revise(
    ledger: MemoryLedger,
    message: EventCorrected | EventWithdrawn,
    registry: Registry,
    source_id: str,
    arrival: int,
    max_cascade: int,
) -> Applied | Duplicate:
    """A correction or withdrawal of an archived event (its `arrival` and `reason` go in the
    revision log, D43)."""
    marker = marker_key(message)
    archived = _archived(ledger, message, marker)
    if isinstance(message, EventWithdrawn):
        if archived.withdrawn:
            return Duplicate(marker)
        change = Change(
            message.event_id, "withdrawn", archived, None, None, arrival, message.reason
        )
    else:
        event = as_finished(message)
        if not archived.withdrawn and event == archived.event:
            return Duplicate(marker)
        engine = engine_for(event, registry)
        kept = int.from_bytes(archived.key[9:], "big")  # its arrival stays
        key = order_key(event, kept, engine.order_prefix(event))
        change = Change(
            message.event_id, "corrected", archived, event, key, arrival, message.reason
        )
    outputs, rerated = cascade(ledger, change, registry, source_id, max_cascade)
    return Applied(outputs, marker, ledger.markers.get(marker, ""), rerated)


def _archived(
    ledger: MemoryLedger, message: EventCorrected | EventWithdrawn, marker: str
) -> Archived:
    """The archived event a correction or withdrawal revises (Rejected: none, or it would
    change the event's system or pool)."""
    archived = ledger.archives.get(message.event_id)
    if archived is None:
        rated_before = (
            " (it was rated before the archive began: re-rate offline and import)"
            if marker in ledger.markers
            else ""
        )
        raise Rejected(
            "invalid",
            f"event {message.event_id!r} is not a rated event of this stream{rated_before}",
            "$.event_id",
            message.event_id,
        )
    old = archived.event
    for field in ("system", "pool"):
        if getattr(message, field) != getattr(old, field):
            raise Rejected(
                "invalid",
                f"event {message.event_id!r} was rated in {field} {getattr(old, field)!r};"
                f" a correction cannot change its {field}",
                f"$.{field}",
                message.event_id,
            )
    return archived
