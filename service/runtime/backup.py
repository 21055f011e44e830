"""A consistent copy of the service's store while it runs (`rating-service backup`,
docs/operations/backups.md; D20, D21).

What is copied, partition by partition (partitions.py): every key under the store's prefix
(found by SCAN MATCH, so a kind of key added later is carried without a change here), the
input, output and dead-letter streams with their entry ids and consumer groups, the redrive
ledger, and the advertised layout. A key with a time to live is not copied: the lease, which
a service takes again when it starts.

How it is consistent (D20): every commit of a partition moves its applied cursor in one
MULTI/EXEC, and every import writes the catalog in its own. Per unit (partitions that share
no stream with another: one partition, or the single layout's input streams and the output
and dead-letter streams they share), on the slot's master: WATCH the cursors and catalogs,
SCAN the keys, then one MULTI that reads every key, each by its type, and for the streams
their ids, counters and consumer groups. A commit or import between the WATCH and the EXEC
aborts the EXEC, and the copy is tried again; so what EXEC returns is the store between two
commits, and the cursor read with it says which entries it holds the effect of. The stream
entries up to the ids read in the transaction are copied after it, in pages: an input
stream's entries never change once added, and entries appended later are not taken.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import msgspec
from redis.exceptions import ResponseError, WatchError

from service.runtime.backupfile import (
    CHUNK,
    Group,
    HashKey,
    Header,
    ListKey,
    PartitionHeader,
    Record,
    SetKey,
    StreamEntries,
    StreamState,
    StringKey,
    Writer,
    ZSetKey,
)
from service.runtime.connection import on_owner
from service.runtime.keys import StreamKeys, layout_key, redriven_key
from service.runtime.partitions import Layout, Partition
from service.runtime.replies import text
from service.runtime.store import scan_store

TRIES = 20
PAGE = 1_000  # stream entries per XRANGE


class BackupFailed(Exception):
    """Why no consistent copy could be taken (one line)."""


class Unit(msgspec.Struct):
    """Partitions whose keys are read in one transaction: those that share a stream."""

    partitions: list[Partition]

    @property
    def streams(self) -> list[str]:
        return sorted({s for p in self.partitions for s in (p.input, p.output, p.dead_letter)})

    @property
    def named(self) -> list[str]:
        """The keys of the unit named rather than found: the streams and redrive ledgers."""
        ledgers = {redriven_key(p.dead_letter) for p in self.partitions}
        return sorted(set(self.streams) | ledgers)

    @property
    def watched(self) -> list[str]:
        """The cursors and catalogs: every commit writes its cursor, every import its catalog."""
        return [k for p in self.partitions for k in (_keys(p).cursor, _keys(p).catalog)]


def _keys(partition: Partition) -> StreamKeys:
    return StreamKeys(partition.input)


def units_of(partitions: list[Partition]) -> list[Unit]:
    """The partitions grouped by the streams they share (the single layout's several input
    streams share their output and dead-letter streams; the domains layout's share none)."""
    units: list[Unit] = []
    for partition in partitions:
        mine = {partition.input, partition.output, partition.dead_letter}
        joined = [u for u in units if mine & set(u.streams)]
        for unit in joined:
            units.remove(unit)
        units.append(Unit([p for u in joined for p in u.partitions] + [partition]))
    return units


class Snapshot(msgspec.Struct):
    """What one unit's transaction read: each key's type and content, in key order (a
    stream's content: its XINFO STREAM and XINFO GROUPS), and the cursors."""

    values: list[tuple[str, str, Any]]
    cursors: dict[str, str | None]


_READS = {
    "string": lambda pipe, key: pipe.get(key),
    "hash": lambda pipe, key: pipe.hgetall(key),
    "zset": lambda pipe, key: pipe.zrange(key, 0, -1, withscores=True),
    "set": lambda pipe, key: pipe.smembers(key),
    "list": lambda pipe, key: pipe.lrange(key, 0, -1),
    "stream": lambda pipe, key: (pipe.xinfo_stream(key), pipe.xinfo_groups(key)),
}
_REPLIES = {"stream": 2}  # replies of a type's reads (others: 1)


class _Changed(Exception):
    """A key changed type between the scan and the transaction: try again."""


async def _types(client: Any, names: list[str]) -> list[str]:
    async with client.pipeline(transaction=False) as pipe:
        for name in names:
            pipe.type(name)
        return [text(t) for t in await pipe.execute()]


async def _read_once(owner: Any, unit: Unit) -> Snapshot:
    """One try: WATCH, SCAN, MULTI (every key read by type), EXEC; WatchError when a commit
    or an import landed in between."""
    async with owner.pipeline(transaction=True) as pipe:
        await pipe.watch(*unit.watched)
        names = set(unit.named)
        for partition in unit.partitions:
            async for key, _ in scan_store(pipe, _keys(partition)):
                names.add(key)
        ordered = sorted(names)
        found = [(k, t) for k, t in zip(ordered, await _types(owner, ordered)) if t in _READS]
        pipe.multi()
        for partition in unit.partitions:
            pipe.get(_keys(partition).cursor)
        for key, kind in found:
            pipe.pttl(key)
            _READS[kind](pipe, key)
        replies = iter(await pipe.execute(raise_on_error=False))
    cursors = {p.input: text(next(replies)) for p in unit.partitions}
    values = []
    for key, kind in found:
        ttl = next(replies)
        read = [next(replies) for _ in range(_REPLIES.get(kind, 1))]
        if ttl == -2 or (isinstance(ttl, int) and ttl >= 0):
            continue  # gone since the scan (PTTL -2), or ephemeral (the lease)
        if any(isinstance(r, ResponseError) for r in read):
            raise _Changed(key)  # another type than the scan found
        values.append((key, kind, read[0] if len(read) == 1 else tuple(read)))
    return Snapshot(values, cursors)


async def read_unit(client: Any, unit: Unit, tries: int = TRIES) -> tuple[Any, Snapshot]:
    """The unit's snapshot, and the client it was read on (the slot's master on a cluster),
    tried again while commits land during the scan (BackupFailed after `tries`)."""

    async def attempt(owner: Any) -> tuple[Any, Snapshot]:
        delay = 0.01
        for _ in range(tries):
            try:
                return owner, await _read_once(owner, unit)
            except (WatchError, _Changed):
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.5)
        names = ", ".join(p.name for p in unit.partitions)
        raise BackupFailed(
            f"partition {names}: a commit or an import landed during each of {tries} tries to copy it "
            "(between its scan and its read): try again, or give more --tries"
        )

    return await on_owner(client, unit.watched[0], attempt)


def _chunks(items: list, size: int = CHUNK) -> Iterator[list]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _records(key: str, kind: str, value: Any) -> Iterator[Record]:
    """The records of one key that is not a stream (a collection in chunks)."""
    name = key.encode()
    if kind == "string":
        yield StringKey(name, value)
    elif kind == "hash":
        pairs = [x for field_value in value.items() for x in field_value]
        for chunk in _chunks(pairs, 2 * CHUNK):
            yield HashKey(name, chunk)
    elif kind == "zset":
        for chunk in _chunks([(m, float(s)) for m, s in value]):
            yield ZSetKey(name, chunk)
    elif kind == "set":
        for chunk in _chunks(sorted(value)):
            yield SetKey(name, chunk)
    else:
        for chunk in _chunks(value):
            yield ListKey(name, chunk)


def stream_state(key: str, info: dict, groups: list[dict]) -> StreamState:
    """XSETID's arguments and the consumer groups, from XINFO STREAM and XINFO GROUPS."""
    return StreamState(
        key.encode(),
        _bytes(info["last-generated-id"]),
        int(info.get("entries-added") or info["length"]),
        _bytes(info.get("max-deleted-entry-id") or b"0-0"),
        [
            Group(_bytes(g["name"]), _bytes(g["last-delivered-id"]), g.get("entries-read"))
            for g in groups
        ],
    )


def _bytes(value: bytes | str) -> bytes:
    return value if isinstance(value, bytes) else value.encode()


async def copy_stream(owner: Any, key: str, state: StreamState, writer: Writer) -> int:
    """The stream's entries up to the id read in the transaction, page by page, then its
    state; the number of entries."""
    count, start = 0, "-"
    while True:
        page = await owner.xrange(key, min=start, max=state.last_id.decode(), count=PAGE)
        if not page:
            break
        writer.write(
            StreamEntries(key.encode(), [(i, [x for fv in f.items() for x in fv]) for i, f in page])
        )
        count += len(page)
        start = "(" + text(page[-1][0])
        if len(page) < PAGE:
            break
    writer.write(state)
    return count


async def write_unit(
    client: Any, unit: Unit, writer: Writer, headers: dict[str, PartitionHeader], tries: int
) -> None:
    """Copy one unit into the backup, counting each key and entry to its partition."""
    owner, snapshot = await read_unit(client, unit, tries)
    for partition in unit.partitions:
        header = headers[partition.name]
        header.cursor = snapshot.cursors[partition.input]
    for key, kind, value in snapshot.values:
        header = headers[_partition_of(key, unit).name]
        if kind == "stream":
            info, groups = value
            state = stream_state(key, info, groups)
            header.entries += await copy_stream(owner, key, state, writer)
            for partition in unit.partitions:
                if partition.input == key:
                    headers[partition.name].last_entry = state.last_id.decode()
        else:
            for record in _records(key, kind, value):
                writer.write(record)
        header.keys += 1
        writer.key_done()


def _partition_of(key: str, unit: Unit) -> Partition:
    """The partition a key is counted under: the one whose store prefix or streams name it
    (a stream the partitions share: the first)."""
    for partition in unit.partitions:
        if key.startswith(_keys(partition).prefix) or key == partition.input:
            return partition
    for partition in unit.partitions:
        if key in (partition.output, partition.dead_letter, redriven_key(partition.dead_letter)):
            return partition
    return unit.partitions[0]


async def server_name(client: Any, key: str) -> str:
    """ "redis 7.0.15", "valkey 9.1.2": the server the copy was read from."""

    async def ask(owner: Any) -> str:
        info = await owner.info("server")
        name = str(info.get("server_name") or "redis")
        return f"{name} {info.get(f'{name}_version') or info.get('redis_version')}"

    return await on_owner(client, key, ask)


async def take_backup(
    client: Any,
    layout: Layout,
    partitions: list[Partition],
    writer: Writer,
    header: Header,
    tries: int,
) -> Header:
    """Copy `partitions` of `layout` (all of them, or one) into `writer`; the header filled."""
    headers = {
        p.name: PartitionHeader(p.name, p.input, p.output, p.dead_letter, None, None)
        for p in partitions
    }
    header.partitions = list(headers.values())
    header.server = await server_name(client, _keys(partitions[0]).cursor)
    advertised = await client.get(layout_key(layout.base))
    if advertised is not None:
        writer.write(StringKey(layout_key(layout.base).encode(), advertised))
        writer.key_done()
    for unit in units_of(partitions):
        await write_unit(client, unit, writer, headers, tries)
    return writer.finish(header)
