"""A period's close and its undo (docs/rules/fide.md "F11 A close can be undone"): the
engine's list, and what the ledger keeps so that the latest close can be reopened.

The service closes a pool a page at a time (D60: `close_start`, then `close_page` once per
commit, service/runtime/closes.py): the same effect as `close`, which the offline `rate`
applies to the whole pool.

A close stores, in each player's history at the list's order key (readmodel.list_key),
the record before the close of every record it changes, as an event stores the record
before it; no cascade ever reads there (nothing is re-rated in a closed period). A reopen
restores those records, removes them, withdraws the list (one revision, whatever its
chunks) and the players' lines of it, and moves the pool back to its state before the close.
"""

from __future__ import annotations

import msgspec

from schemas.events import PeriodClosed, PeriodReopened
from schemas.periods import month_index
from schemas.ratings import RatingsUpdated
from service.engine.contract import EngineRejection
from service.engine.registry import Registry
from service.rating.effects import Applied, Duplicate, Rejected
from service.rating.ledger import MemoryLedger
from service.rating.needs import content_digest, engine_for, marker_key
from service.rating.outputs import list_message, list_outputs, list_withdrawal
from service.readmodel import list_key
from service.timeline import end_date_of, pack_state, split_member, unpack_state

REOPENED = "reopened:"  # a close's marker once reopened: the reopen's digest follows


def close(
    ledger: MemoryLedger, message: PeriodClosed, registry: Registry, source_id: str
) -> Applied | Duplicate:
    """A period's close: the engine decides whether it is due, from the pool's records
    and the end date of the pool's last rated event (its timeline's tail). The records are
    the pool's, or those of the close index a streamed load keeps in memory (D142: the same
    outcome, as the service's paged close reads only the index's players, D60)."""
    key, digest = marker_key(message), content_digest(message)
    known = ledger.markers.get(key)
    if known == digest:
        return Duplicate(key)
    if known is not None and not known.startswith(REOPENED):
        raise Rejected("conflict", f"{key} was already applied with other content", "$")
    engine = engine_for(message, registry)
    system, pool = message.system, message.pool or ""
    tail = ledger.tail(registry.domains.of(system, pool))
    state = ledger.pool_state(system, pool)
    try:
        outcome = engine.close_period(
            message,
            ledger.closing_records(system, pool),  # D142: the close index's, when kept
            state,
            end_date_of(tail) if tail else None,
        )
    except EngineRejection as exc:
        raise Rejected(exc.reason, exc.message, exc.path) from None
    at = list_key(message.period)
    for record in outcome.records:
        before = ledger.record(record.system, record.pool, record.id)
        if before is not None:
            who = (record.system, record.pool, record.id)
            ledger.history_change(who).add(at + pack_state(before))
    ledger.store_records(outcome.records)
    # What a reopen restores: the pool closed through what it was before this close.
    reopen_to = [*state.reopen_to, state.closed_through]
    ledger.set_pool(msgspec.structs.replace(outcome.pool, reopen_to=reopen_to))
    ledger.set_marker(key, digest)
    ledger.closed(system, pool)
    outputs = list_outputs(message, engine, outcome.results, source_id)
    for output in outputs:
        ledger.publish(output, at)
    return Applied(outputs, key, digest)


def close_start(
    ledger: MemoryLedger,
    message: PeriodClosed,
    registry: Registry,
    periods: set[str],
) -> Duplicate | None:
    """The first commit of a paged close (D60): Duplicate, Rejected (raised), or None when it
    may start. `ledger` holds the pool state, the close's marker and the domain's timeline
    tail; `periods` the earliest and the latest open period with counted games (the close
    index's), which is all `check_due` needs of the records."""
    key, digest = marker_key(message), content_digest(message)
    known = ledger.markers.get(key)
    if known == digest:
        return Duplicate(key)
    if known is not None and not known.startswith(REOPENED):
        raise Rejected("conflict", f"{key} was already applied with other content", "$")
    engine = engine_for(message, registry)
    system, pool = message.system, message.pool or ""
    tail = ledger.tail(registry.domains.of(system, pool))
    try:
        engine.check_close(
            message, periods, ledger.pool_state(system, pool), end_date_of(tail) if tail else None
        )
    except EngineRejection as exc:
        raise Rejected(exc.reason, exc.message, exc.path) from None
    return None


class Page(msgspec.Struct, frozen=True):
    """One commit of a paged close (D60): the list's message `chunk` of `chunks` from the
    players read (phase `list`), or the K overrides ended (phase `k`, no message); `last`:
    the close's last commit (the pool closed, its marker)."""

    phase: str
    chunk: int
    chunks: int
    last: bool


def close_page(
    ledger: MemoryLedger, message: PeriodClosed, registry: Registry, source_id: str, page: Page
) -> Applied:
    """Apply one page of a paged close to `ledger` (the page's records and the pool state):
    what `close` does for the whole pool, a page of players at a time. The same records,
    histories, list lines and messages as `close`, the list's players in the same order (by
    id); the pool is closed, and the marker set, by the last page only."""
    engine = engine_for(message, registry)
    system, pool = message.system, message.pool or ""
    state = ledger.pool_state(system, pool)
    records = dict(ledger.records.get((system, pool), {}))
    outputs: list[RatingsUpdated] = []
    if page.phase == "list":
        outcome = engine.list_players(message, records, state)
        changed, results = outcome.records, outcome.results
        outputs.append(list_message(message, engine, results, source_id, page.chunk, page.chunks))
    else:
        changed = engine.clear_k(message, records)
    at = list_key(message.period)
    for record in changed:
        before = ledger.record(record.system, record.pool, record.id)
        if before is not None:
            ledger.history_change((record.system, record.pool, record.id)).add(
                at + pack_state(before)
            )
    ledger.store_records(changed)
    for output in outputs:
        ledger.publish(output, at)
    key, digest = marker_key(message), content_digest(message)
    if page.last:
        closed = msgspec.structs.replace(state, closed_through=message.period)
        ledger.set_pool(
            msgspec.structs.replace(closed, reopen_to=[*state.reopen_to, state.closed_through])
        )
        ledger.set_marker(key, digest)
    return Applied(outputs, key, digest)


def reopen(
    ledger: MemoryLedger, message: PeriodReopened, registry: Registry, source_id: str
) -> Applied | Duplicate:
    """Undo the pool's latest close (F11): refused (`invalid`) for another period, and while
    events of a later period count in the pool (they were rated from the list it withdraws:
    withdraw them first, then publish them again after the new close)."""
    key, digest = marker_key(message), REOPENED + content_digest(message)
    system, pool, period = message.system, message.pool or "", message.period
    state = ledger.pool_state(system, pool)
    if ledger.markers.get(key) == digest and state.closed_through != period:
        return Duplicate(key)
    engine = engine_for(message, registry)
    at = list_key(period)
    before = {}
    members = {}
    for pid in ledger.records.get((system, pool), {}):
        member = ledger.member_at((system, pool, pid), at)
        if member is not None:
            members[pid] = member
            before[pid] = unpack_state(system, pool, pid, split_member(member)[1])
    try:
        outcome = engine.reopen_period(message, before, state)
    except EngineRejection as exc:
        raise Rejected(exc.reason, exc.message, exc.path) from None
    _check_no_later_events(ledger, registry, message)
    for pid, member in members.items():
        ledger.history_change((system, pool, pid)).remove(member)
    ledger.store_records(outcome.records)
    ledger.set_pool(outcome.pool)
    ledger.set_marker(key, digest)
    ledger.projection.withdraw_list(system, pool, period, sorted(members))
    output = list_withdrawal(message, engine, source_id)
    return Applied([output], key, digest)


def _check_no_later_events(
    ledger: MemoryLedger, registry: Registry, message: PeriodReopened
) -> None:
    """Rejected while an event of a period after the reopened one counts in its domain."""
    domain = registry.domains.of(message.system, message.pool or "")
    timeline = ledger.timelines.get(domain)
    if not timeline:
        return
    last, event_id = split_member(timeline[-1])
    if int.from_bytes(last[:3], "big") > month_index(message.period):
        raise Rejected(
            "invalid",
            f"events of periods after {message.period} count in {domain} (the last in date"
            f" order: {event_id.decode()!r}): they were rated from the list a reopen withdraws;"
            f" withdraw them first, reopen, close again, then publish them again",
            "$.period",
        )
