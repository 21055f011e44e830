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
"""

from __future__ import annotations

from typing import Any

import msgspec

from schemas.common import DEFAULT_POOL
from service.readmodel import unpack_message
from service.runtime.partitions import Layout, Partition, key_prefix
from service.runtime.replies import text
from service.runtime.store import StreamKeys, glob_escape
from service.timeline import decode_archived, domain_pools

# Keys whose name ends in ":<system>:<pool>[:<player id>]" after the store prefix.
_BY_POOL = ("players", "history", "entries", "ranking", "names")
# Hashes with fields of several pools, split field by field.
_SPLIT = ("pools", "catalog", "events", "results", "markers")
# Per stream, not per pool: left behind.
_LEFT = ("cursor", "attempts", "lease", "replicas")


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


async def plan(client: Any, source: str, layout: Layout) -> Plan:  # noqa: C901
    """Read the old store and decide where each key and field goes."""
    prefix = key_prefix(source) + ":"
    found = Plan()
    events_of: dict[
        bytes, Partition
    ] = {}  # event id -> partition (from the archive and the results)

    def target(partition: Partition, kind_and_rest: str) -> str:
        return key_prefix(partition.input) + ":" + kind_and_rest

    def count(partition: Partition) -> None:
        found.counts[partition.name] = found.counts.get(partition.name, 0) + 1

    split: dict[str, str] = {}
    async for raw in client.scan_iter(match=glob_escape(prefix) + "*", count=1_000):
        key = text(raw)
        rest = key[len(prefix) :]
        kind = rest.split(":", 1)[0]
        if kind in _BY_POOL:
            _, system, pool = rest.split(":", 3)[:3]
            partition = layout.route(system, pool)
            found.copies.append((key, target(partition, rest)))
            count(partition)
        elif kind == "timeline":
            system, pool = domain_pools(rest.split(":", 1)[1])[0]
            partition = layout.route(system, pool)
            found.copies.append((key, target(partition, rest)))
            count(partition)
        elif kind in _SPLIT and rest == kind:
            split[kind] = key
        elif kind not in _LEFT:
            found.left.append(key)

    def put(partition: Partition, kind: str, field: bytes, value: bytes) -> None:
        found.fields.setdefault(target(partition, kind), {})[field] = value
        count(partition)

    for kind in ("pools", "catalog"):
        if kind in split:
            for field, value in (await client.hgetall(split[kind])).items():
                system, _, pool = field.decode().partition(":")
                put(layout.route(system, pool), kind, field, value)
    if "events" in split:
        for event_id, value in (await client.hgetall(split["events"])).items():
            event = decode_archived(value).event
            events_of[event_id] = partition = layout.route(
                event.system, event.pool or DEFAULT_POOL[event.system]
            )
            put(partition, "events", event_id, value)
    if "results" in split:
        for event_id, value in (await client.hgetall(split["results"])).items():
            message = unpack_message(value)
            events_of.setdefault(event_id, layout.route(message.system, message.pool))
            put(events_of[event_id], "results", event_id, value)
    if "markers" in split:
        for field, value in (await client.hgetall(split["markers"])).items():
            name = field.decode()
            if name.startswith("period:"):
                _, system, pool, _ = name.split(":", 3)
                put(layout.route(system, pool), "markers", field, value)
            elif name.startswith("event:") and name[6:].encode() in events_of:
                put(events_of[name[6:].encode()], "markers", field, value)
            else:  # an event known only by its marker: kept in every partition (it was rated)
                for partition in layout.partitions:
                    put(partition, "markers", field, value)
    return found


async def check(client: Any, source: str, layout: Layout) -> None:
    """Refuse while a service runs on the old stream, while it has entries not applied yet,
    or when a partition already has a store."""
    old = StreamKeys(source)
    if await client.exists(key_prefix(source) + ":lease"):
        raise MigrationRefused(f"a service holds the lease of {source}: stop it first (SIGTERM)")
    last = await client.xrevrange(source, count=1)
    cursor = text(await client.get(old.cursor))
    if last and cursor != text(last[0][0]):
        raise MigrationRefused(
            f"{source} has entries not applied yet (cursor {cursor or 'none'}, last entry "
            f"{text(last[0][0])}): let the service apply them, then stop it"
        )
    for partition in layout.partitions:
        async for _ in client.scan_iter(
            match=glob_escape(key_prefix(partition.input)) + ":*", count=1_000
        ):
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
