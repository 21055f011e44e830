"""The use case shared by the service and the offline `rate` command: apply one input
message to a snapshot of the store, by the engines' rules.

The caller reads what `needs` asks for (inside its transaction, for the service), calls
`apply`, and writes what comes back. Nothing here does I/O.
"""

from __future__ import annotations

import hashlib
from typing import Iterable, Mapping

import msgspec

from schemas.events import EventFinished, InputMessage, PeriodClosed
from schemas.ratings import RatingsUpdated
from schemas.records import PlayerRecord, PoolState, unrated_record
from service.engine.contract import Engine, EngineRejection, EventInput
from service.engine.registry import Registry

LIST_CHUNK = 1_000  # players per `ratings.updated` message of kind `list` (FIDE)


class Rejected(Exception):
    """An input message that is not applied: a dead-letter `reason`, a message for a
    person, and the JSON path at fault."""

    def __init__(self, reason: str, message: str, path: str = "$", event_id: str | None = None):
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.path = path
        self.event_id = event_id


class Needs(msgspec.Struct, frozen=True):
    """What to read before applying a message: the pool, the player ids (None: all of
    the pool), the seed pool (if any), and the idempotency marker's key."""

    system: str
    pool: str
    player_ids: tuple[str, ...] | None
    seed_pool: str | None
    marker: str


class Snapshot(msgspec.Struct, frozen=True):
    """The part of the store a message needs, as read."""

    records: Mapping[str, PlayerRecord]
    pool: PoolState
    seed_records: Mapping[str, PlayerRecord] = {}
    marker_digest: str | None = None


class Applied(msgspec.Struct, frozen=True):
    """The effect of one message: the output messages, the records and pool state to
    store, and the idempotency marker (key -> content digest)."""

    outputs: list[RatingsUpdated]
    records: list[PlayerRecord]
    pool: PoolState
    marker: str
    digest: str


class Duplicate(msgspec.Struct, frozen=True):
    """The same message was applied before: nothing to do."""

    marker: str


def marker_key(message: InputMessage) -> str:
    """The idempotency key: an event's id; a period's (system, pool, period)."""
    if isinstance(message, EventFinished):
        return f"event:{message.event_id}"
    return f"period:{message.system}:{message.pool}:{message.period}"


def content_digest(message: InputMessage) -> str:
    """A digest of the normalized message: equal content, equal digest."""
    return hashlib.sha256(msgspec.json.encode(message)).hexdigest()


def engine_for(message: InputMessage, registry: Registry) -> Engine:
    engine = registry.get(message.system, message.ruleset or "")
    if engine is None:
        known = ", ".join(registry.rulesets(message.system)) or "none yet"
        raise Rejected(
            "unknown_system",
            f"no engine for system {message.system!r} ruleset {message.ruleset!r} (available: {known})",
            "$.ruleset" if registry.rulesets(message.system) else "$.system",
            getattr(message, "event_id", None),
        )
    if message.pool not in engine.pools:
        raise Rejected("invalid", f"ruleset {engine.ruleset} does not rate pool {message.pool!r}", "$.pool")
    return engine


def needs(message: InputMessage, registry: Registry) -> Needs:
    """What `apply` will need read from the store (raises Rejected for an unknown engine)."""
    engine = engine_for(message, registry)
    assert message.pool is not None  # normalized
    if isinstance(message, EventFinished):
        ids = tuple(p.id for p in message.players)
        return Needs(message.system, message.pool, ids, engine.seed_pools.get(message.pool), marker_key(message))
    return Needs(message.system, message.pool, None, None, marker_key(message))


def apply(message: InputMessage, snapshot: Snapshot, registry: Registry, source_id: str) -> Applied | Duplicate:
    """Apply one normalized input message to the snapshot read for `needs(message)`.

    Raises Rejected when the message must go to the dead-letter stream.
    """
    key = marker_key(message)
    digest = content_digest(message)
    event_id = message.event_id if isinstance(message, EventFinished) else None
    if snapshot.marker_digest is not None:
        if snapshot.marker_digest == digest:
            return Duplicate(key)
        raise Rejected("conflict", f"{key} was already applied with other content", "$", event_id)
    engine = engine_for(message, registry)
    try:
        if isinstance(message, EventFinished):
            records = {
                p.id: snapshot.records.get(p.id) or unrated_record(message.system, message.pool or "", p.id)
                for p in message.players
            }
            outcome = engine.rate_event(EventInput(message, records, snapshot.pool, snapshot.seed_records))
        else:
            outcome = engine.close_period(message, snapshot.records, snapshot.pool)
    except EngineRejection as exc:
        raise Rejected(exc.reason, exc.message, exc.path, event_id) from None
    outputs = _outputs(message, engine, outcome.results, source_id)
    return Applied(outputs, outcome.records, outcome.pool, key, digest)


def _outputs(message: InputMessage, engine: Engine, results: list, source_id: str) -> list[RatingsUpdated]:
    common = dict(system=message.system, pool=message.pool, ruleset=engine.ruleset, source_id=source_id)
    if isinstance(message, EventFinished):
        return [RatingsUpdated(kind="event", event_id=message.event_id, period=message.period, players=results, **common)]
    assert isinstance(message, PeriodClosed)
    chunks = [results[i : i + LIST_CHUNK] for i in range(0, len(results), LIST_CHUNK)] or [[]]
    return [
        RatingsUpdated(kind="list", period=message.period, players=chunk, chunk=n, chunks=len(chunks), **common)
        for n, chunk in enumerate(chunks, 1)
    ]


class MemoryLedger:
    """The store kept in memory: the offline `rate` command's twin of the Redis store."""

    def __init__(self, records: Iterable[PlayerRecord] = (), pools: Iterable[PoolState] = (), markers=None):
        self.records: dict[tuple[str, str], dict[str, PlayerRecord]] = {}
        self.pools: dict[tuple[str, str], PoolState] = {(p.system, p.pool): p for p in pools}
        self.markers: dict[str, str] = dict(markers or {})
        # What commits changed since the ledger was made (the service writes only these).
        self.changed_records: dict[tuple[str, str, str], PlayerRecord] = {}
        self.changed_pools: dict[tuple[str, str], PoolState] = {}
        self.changed_markers: dict[str, str] = {}
        for record in records:
            self.records.setdefault((record.system, record.pool), {})[record.id] = record

    def snapshot(self, want: Needs) -> Snapshot:
        pool_records = self.records.get((want.system, want.pool), {})
        if want.player_ids is None:
            records: Mapping[str, PlayerRecord] = dict(pool_records)
        else:
            records = {pid: pool_records[pid] for pid in want.player_ids if pid in pool_records}
        seed: dict[str, PlayerRecord] = {}
        if want.seed_pool is not None and want.player_ids is not None:
            seed_records = self.records.get((want.system, want.seed_pool), {})
            seed = {pid: seed_records[pid] for pid in want.player_ids if pid in seed_records}
        pool = self.pools.get((want.system, want.pool)) or PoolState(system=want.system, pool=want.pool)  # type: ignore[arg-type]
        return Snapshot(records, pool, seed, self.markers.get(want.marker))

    def commit(self, applied: Applied) -> None:
        for record in applied.records:
            self.records.setdefault((record.system, record.pool), {})[record.id] = record
            self.changed_records[(record.system, record.pool, record.id)] = record
        pool_key = (applied.pool.system, applied.pool.pool)
        self.pools[pool_key] = self.changed_pools[pool_key] = applied.pool
        self.markers[applied.marker] = self.changed_markers[applied.marker] = applied.digest

    def process(self, message: InputMessage, registry: Registry, source_id: str) -> Applied | Duplicate:
        """Apply one message and commit its effect (raises Rejected)."""
        result = apply(message, self.snapshot(needs(message, registry)), registry, source_id)
        if isinstance(result, Applied):
            self.commit(result)
        return result

    def all_records(self) -> list[PlayerRecord]:
        return [r for key in sorted(self.records) for _, r in sorted(self.records[key].items())]
