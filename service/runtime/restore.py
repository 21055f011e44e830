"""Writing a backup (backupfile.py) into a Redis (`rating-service restore`,
docs/operations/backups.md; D21): onto an empty one (the keys of the backup's stores absent),
with ordinary commands in pipelines, each key by its type; streams with their entry ids, then
XSETID (last id, entries added, greatest deleted id) and their consumer groups at their last
delivered id and entries read. Then each key's type and size are checked against the file.

After it, a service resumes at the restored cursors: its consumer group is there (or is
created at the cursor), and the entries after the cursor are applied in order, once
(docs/design/guarantees.md "Recovery"). Pending entries and consumers are not restored: the
entries delivered and not committed follow the cursor, and are applied from there.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec
from redis.crc import key_slot

from service.runtime.backupfile import (
    End,
    HashKey,
    Header,
    ListKey,
    Record,
    SetKey,
    StreamEntries,
    StreamState,
    StringKey,
    ZSetKey,
    records,
)
from service.runtime.connection import Cluster, on_owner
from service.runtime.keys import StreamKeys, redriven_key
from service.runtime.replies import text
from service.runtime.store import scan_store

BATCH = 1_000  # commands per pipeline
_MAKER = "rating-service-restore"  # a consumer group made and removed to create an empty stream


class RestoreRefused(Exception):
    """Why the restore does not write (one line)."""


class Expected(msgspec.Struct):
    """What the file holds: each key's type and size (fields, members, items, entries; a
    string's length), and the groups of each stream."""

    keys: dict[bytes, tuple[str, int]] = msgspec.field(default_factory=dict)
    groups: dict[bytes, int] = msgspec.field(default_factory=dict)

    def add(self, record: Record) -> None:
        if isinstance(record, End):
            return
        kind, size = _SIZES[type(record)](record)
        _, before = self.keys.get(record.key, (kind, 0))
        self.keys[record.key] = (kind, before + size)
        if isinstance(record, StreamState):
            self.groups[record.key] = len(record.groups)


_SIZES: dict[type, Any] = {
    StringKey: lambda r: ("string", len(r.value)),
    HashKey: lambda r: ("hash", len(r.items) // 2),
    ZSetKey: lambda r: ("zset", len(r.items)),
    SetKey: lambda r: ("set", len(r.members)),
    ListKey: lambda r: ("list", len(r.items)),
    StreamEntries: lambda r: ("stream", len(r.entries)),
    StreamState: lambda r: ("stream", 0),
}


def expected(path: Path) -> Expected:
    """Read the whole body (BackupProblem if it cannot be), and what it would write."""
    found = Expected()
    for record in records(path):
        found.add(record)
    return found


def named_keys(header: Header) -> list[str]:
    """The keys the backup's stores have by name: streams and redrive ledgers (not the
    advertised layout, which the partitions share: a restore writes it over the one there, so
    that the partitions of one-partition backups can be restored one after the other)."""
    names: set[str] = set()
    for p in header.partitions:
        names.update((p.input, p.output, p.dead_letter, redriven_key(p.dead_letter)))
    return sorted(names)


async def occupied(client: Any, header: Header) -> list[str]:
    """The keys of the backup's stores that the target holds already."""
    found: set[str] = set()
    for partition in header.partitions:
        keys = StreamKeys(partition.input)

        async def scan(owner: Any, keys: StreamKeys = keys) -> list[str]:
            return [key async for key, _ in scan_store(owner, keys)]

        found.update(await on_owner(client, keys.cursor, scan))
    for name in named_keys(header):
        if await client.exists(name):
            found.add(name)
    return sorted(found)


async def clear(client: Any, names: Iterable[str]) -> None:
    """Delete keys (`--force`), slot by slot."""
    pipes = Pipes(client)
    for name in names:
        pipes.add(name.encode(), ("DEL", name))
    await pipes.flush()


class Pipes:
    """Commands queued by slot (one queue on a standalone server), sent in pipelines of
    BATCH on the slot's master; a reply that is an error raises it."""

    def __init__(self, client: Any):
        self.client = client
        self.cluster = isinstance(client, Cluster)
        self.queues: dict[int, tuple[bytes, list[tuple]]] = {}

    def add(self, key: bytes, command: tuple) -> None:
        slot = key_slot(key) if self.cluster else 0
        queue = self.queues.setdefault(slot, (key, []))[1]
        queue.append(command)

    async def send(self, limit: int = BATCH) -> None:
        for slot, (key, queue) in list(self.queues.items()):
            if len(queue) >= limit:
                await self._run(key, queue)
                del self.queues[slot]

    async def flush(self) -> None:
        await self.send(limit=1)

    async def _run(self, key: bytes, commands: list[tuple]) -> None:
        async def run(owner: Any) -> None:
            async with owner.pipeline(transaction=False) as pipe:
                for command in commands:
                    pipe.execute_command(*command)
                await pipe.execute()

        await on_owner(self.client, key.decode(), run)


def _score(score: float) -> bytes:
    return repr(score).encode()


def commands(record: Record, streamed: set[bytes]) -> list[tuple]:
    """The commands that write one record (`streamed`: the streams with entries so far)."""
    k = record.key if not isinstance(record, End) else b""
    if isinstance(record, StringKey):
        return [("SET", k, record.value)]
    if isinstance(record, HashKey):
        return [("HSET", k, *record.items)]
    if isinstance(record, ZSetKey):
        return [("ZADD", k, *(x for m, s in record.items for x in (_score(s), m)))]
    if isinstance(record, SetKey):
        return [("SADD", k, *record.members)]
    if isinstance(record, ListKey):
        return [("RPUSH", k, *record.items)]
    if isinstance(record, StreamEntries):
        streamed.add(k)
        return [("XADD", k, i, *fields) for i, fields in record.entries]
    if isinstance(record, StreamState):
        made = (
            []
            if k in streamed
            else [
                ("XGROUP", "CREATE", k, _MAKER, "0", "MKSTREAM"),
                ("XGROUP", "DESTROY", k, _MAKER),
            ]
        )
        state = [
            ("XSETID", k, record.last_id, "ENTRIESADDED", record.entries_added)
            + ("MAXDELETEDID", record.max_deleted)
        ]
        groups = [
            ("XGROUP", "CREATE", k, g.name, g.last_delivered)
            + (() if g.entries_read is None else ("ENTRIESREAD", g.entries_read))
            for g in record.groups
        ]
        return made + state + groups
    return []


async def write(client: Any, path: Path) -> None:
    """Write every record of the file (checked before: `expected`)."""
    pipes = Pipes(client)
    streamed: set[bytes] = set()
    for record in records(path):
        if isinstance(record, End):
            break
        for command in commands(record, streamed):
            pipes.add(record.key, command)
        await pipes.send()
    await pipes.flush()


_SIZE_OF = {
    "string": "STRLEN",
    "hash": "HLEN",
    "zset": "ZCARD",
    "set": "SCARD",
    "list": "LLEN",
    "stream": "XLEN",
}


async def differences(client: Any, wanted: Expected) -> list[str]:
    """The keys whose type or size in Redis is not the file's (at most a few named)."""
    problems: list[str] = []
    names = sorted(wanted.keys)
    for start in range(0, len(names), BATCH):
        chunk = names[start : start + BATCH]
        replies = await _sizes(client, chunk, wanted)
        for name, (kind, size), (found, count) in zip(
            chunk, (wanted.keys[n] for n in chunk), replies
        ):
            if (found, count) != (kind, size):
                problems.append(
                    f"{name.decode(errors='replace')}: {found} of {count}, the backup has {kind} of {size}"
                )
    return problems


async def _sizes(client: Any, names: list[bytes], wanted: Expected) -> list[tuple[str, int]]:
    """Each key's type and size, read slot by slot (one pipeline on a standalone server)."""
    if not isinstance(client, Cluster):
        return await _sizes_on(client, names, wanted)
    out: dict[bytes, tuple[str, int]] = {}
    by_slot: dict[int, list[bytes]] = {}
    for name in names:
        by_slot.setdefault(key_slot(name), []).append(name)
    for group in by_slot.values():

        async def read(owner: Any, group: list[bytes] = group) -> list[tuple[str, int]]:
            return await _sizes_on(owner, group, wanted)

        out.update(zip(group, await on_owner(client, group[0].decode(), read)))
    return [out[n] for n in names]


async def _sizes_on(client: Any, names: list[bytes], wanted: Expected) -> list[tuple[str, int]]:
    """Each key's type and size (a stream with another number of consumer groups than the
    file's: size -1)."""
    async with client.pipeline(transaction=False) as pipe:
        for name in names:
            pipe.type(name)
            pipe.execute_command(_SIZE_OF[wanted.keys[name][0]], name)
            if name in wanted.groups:
                pipe.xinfo_groups(name)
        replies = iter(await pipe.execute(raise_on_error=False))
    found = []
    for name in names:
        kind, size = text(next(replies)), next(replies)
        if name in wanted.groups:
            groups = next(replies)
            if isinstance(groups, Exception) or len(groups) != wanted.groups[name]:
                size = -1
        found.append((kind, size if isinstance(size, int) else -1))
    return found
