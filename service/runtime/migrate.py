"""Moving a store rated in the single layout into the domains layout's partitions
(`rating-service migrate-partitions`; docs/operations/partitions.md "Moving to the domains layout").

Every key of the old input stream's store goes to the partition of its pool or domain:
the records, histories, history lines, rankings and name indexes (by the key's pool), the
timelines (by domain), and the fields of the shared hashes, split by what each names (pool
states and the catalog by pool; archived events and published results by their event's
pool; idempotency markers by their event's, or a period's, pool). So the partitions go on
where the old stream stopped: a correction, withdrawal or late event of an event rated
before the move is re-rated in its partition as it would have been. The old keys are
copied, not moved (the single layout keeps working on them until they are deleted by
hand); the applied cursor, attempt counts and leases are not copied (the partitions'
streams are new). It runs with the service stopped, against one Redis (not a cluster:
the single layout cannot run on one).

The stores' identity records (storeid.py; docs/operations/upgrades.md): each partition gets
its own, the old store's is marked migrated (written first if it had none), and the domains
layout is advertised, so that a replica started without RATING_PARTITIONS=domains refuses the
old store instead of rating on it, and `publish` routes to the partitions at once.
"""

from __future__ import annotations

from typing import Any

import msgspec

from schemas.common import DEFAULT_POOL
from service.readmodel import unpack_message
from service.runtime import keys
from service.runtime.keys import StreamKeys, untagged
from service.runtime.partitions import DOMAINS, Layout, Partition, advertise, layout_of
from service.runtime.store import scan_store, text
from service.runtime.storeid import StoreRefused, decode, encode, probe, record_for
from service.runtime.storeplans import mark_migrated
from service.timeline import decode_archived


class MigrationRefused(Exception):
    """Why the store cannot be moved now (one line)."""


class Plan(msgspec.Struct):
    """What a migration copies: key copies (old name, new name) and hash fields per new key."""

    copies: list[tuple[str, str]] = msgspec.field(default_factory=list)
    fields: dict[str, dict[bytes, bytes]] = msgspec.field(default_factory=dict)
    counts: dict[str, int] = msgspec.field(
        default_factory=dict
    )  # partition name -> keys and fields
    left: list[str] = msgspec.field(default_factory=list)  # old keys not copied (unknown kinds)

    def copy(self, key: str, partition: Partition, rest: str) -> None:
        """Copy `key` (`rest` after the old store's prefix) into `partition`'s store."""
        self.copies.append((key, StreamKeys(partition.input).prefix + rest))
        self._count(partition)

    def put(self, partition: Partition, kind: str, field: bytes, value: bytes) -> None:
        """Write one field of the shared hash `kind` into `partition`'s."""
        self.fields.setdefault(StreamKeys(partition.input).prefix + kind, {})[field] = value
        self._count(partition)

    def _count(self, partition: Partition) -> None:
        self.counts[partition.name] = self.counts.get(partition.name, 0) + 1


async def plan(client: Any, source: str, layout: Layout) -> Plan:
    """Read the old store and decide where each key and field goes."""
    found = Plan()
    shared = await _plan_copies(client, source, layout, found)
    await _plan_fields(client, shared, layout, found)
    return found


async def _plan_copies(client: Any, source: str, layout: Layout, found: Plan) -> dict[str, str]:
    """The keys of one pool or domain, copied whole (service/runtime/keys.py: the kinds);
    returns the shared hashes, by kind, to split field by field."""
    prefix = StreamKeys(source).prefix
    shared: dict[str, str] = {}
    async for key, kind in scan_store(client, StreamKeys(source)):
        rest = key[len(prefix) :]
        if kind in keys.BY_POOL:
            _, system, pool = rest.split(":", 3)[:3]
            found.copy(key, layout.route(system, pool), rest)
        elif kind in keys.BY_DOMAIN:
            system, pool = DOMAINS.pools(rest.split(":", 1)[1])[0]
            found.copy(key, layout.route(system, pool), rest)
        elif kind in keys.SHARED and rest == kind:
            shared[kind] = key
        elif kind not in keys.PER_STREAM:
            found.left.append(key)
    return shared


async def _plan_fields(client: Any, shared: dict[str, str], layout: Layout, found: Plan) -> None:
    """The fields of the shared hashes, each to the partition of the pool or event it names."""
    events_of: dict[
        bytes, Partition
    ] = {}  # event id -> partition (from the archive and the results)
    for kind in (keys.POOLS, keys.CATALOG):
        if kind in shared:
            for field, value in (await client.hgetall(shared[kind])).items():
                system, _, pool = field.decode().partition(":")
                found.put(layout.route(system, pool), kind, field, value)
    if keys.EVENTS in shared:
        for event_id, value in (await client.hgetall(shared[keys.EVENTS])).items():
            event = decode_archived(value).event
            events_of[event_id] = partition = layout.route(
                event.system, event.pool or DEFAULT_POOL[event.system]
            )
            found.put(partition, keys.EVENTS, event_id, value)
    if keys.RESULTS in shared:
        for event_id, value in (await client.hgetall(shared[keys.RESULTS])).items():
            message = unpack_message(value)
            events_of.setdefault(event_id, layout.route(message.system, message.pool))
            found.put(events_of[event_id], keys.RESULTS, event_id, value)
    if keys.REVISIONS in shared:  # `<event id>/<revision>` (D101): where its event goes
        for field, value in (await client.hgetall(shared[keys.REVISIONS])).items():
            message = unpack_message(value)
            event_id = field.rpartition(b"/")[0]
            partition = events_of.get(event_id) or layout.route(message.system, message.pool)
            found.put(partition, keys.REVISIONS, field, value)
    await _plan_names_and_markers(client, shared, layout, found, events_of)


async def _plan_names_and_markers(
    client: Any,
    shared: dict[str, str],
    layout: Layout,
    found: Plan,
    events_of: dict[bytes, Partition],
) -> None:
    """The events' names (D122) and the idempotency markers, where their events go (a name or
    marker of an event known by nothing else: to every partition)."""
    if keys.EVENT_NAMES in shared:
        for event_id, value in (await client.hgetall(shared[keys.EVENT_NAMES])).items():
            for partition in (events_of[event_id],) if event_id in events_of else layout.partitions:
                found.put(partition, keys.EVENT_NAMES, event_id, value)
    if keys.MARKERS in shared:
        for field, value in (await client.hgetall(shared[keys.MARKERS])).items():
            for partition in _marker_partitions(field.decode(), layout, events_of):
                found.put(partition, keys.MARKERS, field, value)


def _marker_partitions(
    name: str, layout: Layout, events_of: dict[bytes, Partition]
) -> tuple[Partition, ...]:
    """Where an idempotency marker goes: its period's pool, its event's partition, or, for an
    event known only by its marker, every partition (it was rated)."""
    if name.startswith("period:"):
        _, system, pool, _ = name.split(":", 3)
        return (layout.route(system, pool),)
    if name.startswith("event:") and name[6:].encode() in events_of:
        return (events_of[name[6:].encode()],)
    return layout.partitions


async def check(client: Any, source: str, layout: Layout) -> None:
    """Refuse while a service runs on the old stream, while it has entries not applied yet,
    or when a partition already has a store."""
    old = StreamKeys(source)
    if await client.exists(old.lease):
        raise MigrationRefused(f"a service holds the lease of {source}: stop it first (SIGTERM)")
    raw = await client.get(old.store)
    try:
        record = decode(raw, source) if raw is not None else None
    except StoreRefused as exc:
        raise MigrationRefused(str(exc)) from None
    if record is not None and record.migrated_to is not None:
        raise MigrationRefused(
            f"the store of {source} was migrated to the {record.migrated_to} layout already "
            f"({record.migrated_at}): nothing was copied"
        )
    last = await client.xrevrange(source, count=1)
    cursor = text(await client.get(old.cursor))
    if last and cursor != text(last[0][0]):
        raise MigrationRefused(
            f"{source} has entries not applied yet (cursor {cursor or 'none'}, last entry "
            f"{text(last[0][0])}): let the service apply them, then stop it"
        )
    for partition in layout.partitions:
        async for _ in scan_store(client, StreamKeys(partition.input)):
            raise MigrationRefused(
                f"partition {partition.name} has a store already ({partition.input}): "
                f"nothing was copied"
            )


async def apply(client: Any, found: Plan, batch: int = 500) -> None:
    """Copy the keys and write the split hashes (one Redis: COPY keeps each key's type)."""
    for start in range(0, len(found.copies), batch):
        async with client.pipeline(transaction=False) as pipe:
            for old, new in found.copies[start : start + batch]:
                pipe.copy(old, new)
            await pipe.execute()
    for key, mapping in found.fields.items():
        await client.hset(key, mapping=mapping)


async def write_records(client: Any, source: str, layout: Layout) -> None:
    """After the copy: each partition's store record, the old store's marked migrated, the
    domains layout advertised (see the module's docstring)."""
    for partition in layout.partitions:
        record = encode(record_for(layout, partition))
        await client.set(StreamKeys(partition.input).store, record, nx=True)
    first = layout.partitions[0]
    old = layout_of("single", (source,), untagged(first.output), untagged(first.dead_letter))
    try:
        await mark_migrated(client, await probe(client, source), old, layout.layout)
    except StoreRefused as exc:
        raise MigrationRefused(str(exc)) from None
    await advertise(client, layout)
