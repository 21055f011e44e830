"""Player records (player.record/v1) in and out of a stream's store, outside the stream and
its cursor: `rating-service import` writes a rating list into its pools, `export` reads a pool
back (service/cli/data.py); the tests and benches start from a list the same way. A commit
that read a pool an import writes retries: it watches the pool's hash (store.watched_keys).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from operator import itemgetter
from typing import Any, Protocol, runtime_checkable

import msgspec

from schemas.common import PERIOD_SYSTEMS
from schemas.records import PlayerRecord
from service.closeindex import BUILT
from service.runtime.store import (
    Command,
    StreamKeys,
    active_writes,
    decode_record,
    encode,
    index_writes,
    queue,
)

EXPORT_PAGE = 2_000  # records per HMGET of an export
MAKE_SLICE = 500  # an import's rows made between turns of the event loop (D134)


class _Period(msgspec.Struct, gc=False):
    period: str


class _Fide(msgspec.Struct, gc=False):
    periods: list[_Period] = []
    initial_games: list[_Period] = []


class _Indexed(msgspec.Struct, gc=False):
    """What the indexes read of a record (index_writes: its ranking score, labels, name
    words and close index members), decoded unchecked from a list's packed record (D111):
    the reader checked it. The other fields are left out."""

    system: str
    pool: str
    id: str
    name: str | None = None
    titles: list[str] = []
    federation: str | None = None
    rating: int | None = None
    k: int | None = None
    fide: _Fide | None = None


def _stored_type() -> type:
    """PlayerRecord's fields, in its order, with its defaults, tag and omit_defaults, each of
    any type (D132): decoded from a packed record unchecked (the reader checked it) and
    encoded as JSON, the same bytes `encode` writes of the record (a nested state stays the
    packed map, in its fields' order without their defaults, as D111's untyped map)."""
    fields: list[Any] = []
    for field in msgspec.structs.fields(PlayerRecord):
        if field.default is not msgspec.NODEFAULT:
            fields.append((field.name, Any, field.default))
        elif field.default_factory is not msgspec.NODEFAULT:
            fields.append((field.name, Any, msgspec.field(default_factory=field.default_factory)))
        else:
            fields.append((field.name, Any))
    config = PlayerRecord.__struct_config__
    return msgspec.defstruct(
        "_Stored",
        fields,
        tag_field=config.tag_field,
        tag=config.tag,
        omit_defaults=config.omit_defaults,
        gc=False,
    )


_indexed = msgspec.msgpack.Decoder(_Indexed)
_stored: msgspec.msgpack.Decoder[Any] = msgspec.msgpack.Decoder(_stored_type())
_json = msgspec.json.Encoder()
Row = tuple[bytes, PlayerRecord, tuple[str, str], str]  # stored JSON, record (or view), pool, id
Item = tuple[Any, tuple[str, str], str]  # a packed record (bytes) or a record, pool, id


@runtime_checkable
class Packed(Protocol):
    """Records kept packed (service.formats.ratinglists.PackedRecords, which this layer may
    not import): each as MessagePack with its (system, pool) and id."""

    def packed(self) -> Iterator[tuple[bytes, tuple[str, str], str]]: ...


def _chunks(records: Sequence[PlayerRecord], batch: int) -> Iterator[list[Item]]:
    """The records `batch` at a time, each with its pool and id: a list's packed records as
    they are packed (D111), others as records."""
    if isinstance(records, Packed):
        packed = records.packed()
        while chunk := list(itertools.islice(packed, batch)):
            yield chunk
        return
    for start in range(0, len(records), batch):
        yield [(r, (r.system, r.pool), r.id) for r in records[start : start + batch]]


def _rows(items: list[Item]) -> list[Row]:
    """Items as rows. A list's packed record is not made into a record (D111): it is decoded
    once, unchecked, as a `_Stored` (D132), whose JSON is the stored record and which the
    indexes read (an `_Indexed` view for a record with a FIDE state, whose periods the
    close index reads)."""
    rows: list[Row] = []
    for item, where, pid in items:
        if isinstance(item, bytes):
            view = _stored.decode(item)
            stored = _json.encode(view)
            if view.fide is not None:
                view = _indexed.decode(item)
            rows.append((stored, view, where, pid))
        else:
            rows.append((encode(item), item, where, pid))
    return rows


async def _made(items: list[Item]) -> list[Row]:
    """`_rows` a slice at a time, the event loop run between slices: the transaction in
    flight goes on being written to Redis meanwhile (D134)."""
    rows: list[Row] = []
    for first in range(0, len(items), MAKE_SLICE):
        rows += _rows(items[first : first + MAKE_SLICE])
        await asyncio.sleep(0)
    return rows


class _Held:
    """A chunk's held-records read: the records its pools hold of its players (None: new)
    and which of its pools no chunk before it has and do not exist yet (a new pool's close
    index is marked built, D60). Read alone (a chunk before any write), or carried by a
    chunk's transaction, answered right after its EXEC (D130). `result` is its answer."""

    def __init__(self, keys: StreamKeys, items: list[Item], earlier: set[tuple[str, str]]):
        self.by_pool: dict[tuple[str, str], list[int]] = {}
        for n, (_, where, _) in enumerate(items):
            self.by_pool.setdefault(where, []).append(n)
        self.unseen = [where for where in self.by_pool if where not in earlier]
        self.size = len(items)
        self.commands: list[Command] = [
            ("HMGET", keys.players(*where), *[items[n][2] for n in mine])
            for where, mine in self.by_pool.items()
        ]
        self.commands += [("EXISTS", keys.players(*where)) for where in self.unseen]
        self.requested = False
        self.result: asyncio.Future[tuple[list[PlayerRecord | None], list[tuple[str, str]]]]
        self.result = asyncio.get_running_loop().create_future()

    def answered(self, replies: list[Any]) -> None:
        olds: list[PlayerRecord | None] = [None] * self.size
        for mine, raws in zip(self.by_pool.values(), replies):
            for n, raw in zip(mine, raws):
                if raw is not None:
                    olds[n] = decode_record(raw)
        held = replies[len(self.by_pool) :]
        if not self.result.done():
            self.result.set_result((olds, [w for w, there in zip(self.unseen, held) if not there]))

    def failed(self, exc: BaseException) -> None:
        if not self.result.done():
            self.result.set_exception(exc)


async def _read_alone(client: Any, keys: StreamKeys, held: _Held) -> None:
    """A held-records read on its own (before the import has written anything)."""
    try:
        async with client.pipeline(transaction=False) as pipe:
            queue(pipe, held.commands)
            held.answered(await pipe.execute())
    except BaseException as exc:
        held.failed(exc)
        raise


def _chunk_writes(
    keys: StreamKeys,
    rows: list[Row],
    olds: list[PlayerRecord | None],
    new_pools: list[tuple[str, str]],
    stamp: int,
) -> list[Command]:
    """One chunk's transaction: a new pool's close index marked built (D60), the records,
    their indexes, the pools' last update in the catalog."""
    commands: list[Command] = [
        ("ZADD", keys.due(*where), 0, BUILT) for where in new_pools if where[0] in PERIOD_SYSTEMS
    ]
    fields: dict[tuple[str, str], list[Any]] = {}
    if len({row[2] for row in rows}) == 1:  # one pool (a list's chunk): its fields at once
        fields[rows[0][2]] = [x for stored, _, _, pid in rows for x in (pid, stored)]
    else:
        for stored, _, where, pid in rows:
            fields.setdefault(where, []).extend((pid, stored))
    commands += [("HSET", keys.players(*where), *items) for where, items in fields.items()]
    commands += index_writes(keys, ((old, row[1]) for old, row in zip(olds, rows)))
    catalog = [x for where in fields for x in (f"{where[0]}:{where[1]}", stamp)]
    commands.append(("HSET", keys.catalog, *catalog))
    return commands


class _Commit:
    """A chunk's MULTI/EXEC in flight (D110, D130): `sent` once its bytes are in the socket,
    `done` once Redis has run it. Sent and answered on a connection of its own from the
    owner's pool, so that the client can make the next chunk while Redis runs this one:
    a redis-py pipeline sends only when the event loop runs it, which a chunk's making
    (CPU, no await) holds off until the client waits for the reply, and the two CPUs add up."""

    def __init__(
        self, client: Any, keys: StreamKeys, commands: list[Command], reads: list[_Held]
    ) -> None:
        from service.runtime.connection import on_owner  # redis: not for the offline commands

        self.commands = commands
        self.reads = reads  # answered after the EXEC, on the same connection
        self.sent = asyncio.get_running_loop().create_future()
        self.done = asyncio.ensure_future(on_owner(client, keys.catalog, self._write))

    async def wait_sent(self) -> None:
        """Until the transaction is in the socket (or failed: its error is raised)."""
        await asyncio.wait([self.sent, self.done], return_when=asyncio.FIRST_COMPLETED)
        if self.done.done():
            self.done.result()

    async def _write(self, owner: Any) -> None:
        pool = owner.connection_pool
        conn = await pool.get_connection()
        try:

            async def fail(_error: Exception) -> None:
                await conn.disconnect()  # a half-sent MULTI is dropped with its connection

            await conn.retry.call_with_retry(lambda: self._transaction(conn), fail)
        except BaseException as exc:
            await conn.disconnect()  # cancelled or failed: its replies are not read
            for held in self.reads:
                held.failed(exc)
            raise
        finally:
            await pool.release(conn)

    async def _transaction(self, conn: Any) -> None:
        """MULTI, the commands, EXEC, then the held-records reads it carries; the first
        error raised as a redis-py pipeline does (a command refused when queued: its own
        error, which on_owner tries again on a moving slot)."""
        reads = [command for held in self.reads for command in held.commands]
        await conn.send_packed_command(
            conn.pack_commands([("MULTI",), *self.commands, ("EXEC",), *reads])
        )
        if not self.sent.done():
            self.sent.set_result(None)
        from redis.exceptions import ExecAbortError, ResponseError

        errors: list[ResponseError] = []
        for _ in range(len(self.commands) + 1):  # MULTI's OK, each command's QUEUED
            try:
                await conn.read_response()
            except ResponseError as exc:
                errors.append(exc)
        try:
            replies = await conn.read_response()
        except ExecAbortError as exc:
            if errors:
                raise errors[0] from exc
            raise
        for reply in replies:
            if isinstance(reply, Exception):
                raise reply
        for held in self.reads:
            held.answered([await conn.read_response() for _ in held.commands])


async def import_records(
    client: Any,
    keys: StreamKeys,
    records: Sequence[PlayerRecord],
    stamp: int | None = None,
    batch: int = 5_000,
) -> tuple[int, int]:
    """Write records into their pools (replacing what is there), with their rankings and
    name indexes and the lists' (D46: a new pool gets its list date and, with periods, its
    close index marked built (D60), so the start-up back-fill leaves it alone); `stamp` (ms,
    default now) is the pools' last update. Returns (new, replaced).

    A transaction a chunk of `batch` records, one in flight: the client makes chunk N+1's
    transaction while Redis runs chunk N's (D110); chunk N+2's held records are read right
    after chunk N's EXEC, on its connection (chunk N+1's too when it names a player of
    chunk N); chunk N+1's rows are made while chunk N is written (D134), and chunk N is in
    the socket before chunk N+1's transaction is made (D130)."""
    stamp = time.time_ns() // 1_000_000 if stamp is None else stamp
    new = replaced = 0
    touched: set[tuple[str, str]] = set()  # the pools of the chunks taken so far
    chunks = _chunks(records, batch)

    def take() -> tuple[list[Item], _Held] | None:
        items = next(chunks, None)
        if items is None:
            return None
        held = _Held(keys, items, touched)
        touched.update(held.by_pool)
        return items, held

    current = take()
    following = take() if current is not None else None
    alone = [  # nothing written yet: the first two chunks' reads alone
        asyncio.ensure_future(_read_alone(client, keys, held))
        for held in _carried(current, following)
    ]
    writing: _Commit | None = None
    try:
        rows = _rows(current[0]) if current is not None else []
        while current is not None:
            olds, new_pools = await current[1].result
            commands = _chunk_writes(keys, rows, olds, new_pools, stamp)  # Redis runs N-1
            after = take() if following is not None else None
            if writing is not None:
                await writing.done
            writing = _Commit(client, keys, commands, _carried(following, after))
            rows = await _made(following[0]) if following is not None else []  # N is written
            await writing.wait_sent()
            fresh = olds.count(None)
            new, replaced = new + fresh, replaced + len(olds) - fresh
            current, following = following, after
        if writing is not None:
            await writing.done
    finally:
        await _settled([*alone, *([writing.done] if writing is not None else [])])
        for chunk in (current, following):
            if chunk is not None and chunk[1].result.done() and not chunk[1].result.cancelled():
                chunk[1].result.exception()  # retrieved: a failure is raised once, above

    async def list_dates(owner: Any) -> None:  # the rankings' scores: index_writes (ZADD XX)
        async with owner.pipeline(transaction=True) as pipe:
            for system, pool in sorted(touched):
                queue(pipe, active_writes(keys, system, pool, "-", []))
            await pipe.execute()

    if touched:
        from service.runtime.connection import on_owner

        await on_owner(client, keys.catalog, list_dates)
    return new, replaced


def _carried(
    following: tuple[list[Item], _Held] | None, after: tuple[list[Item], _Held] | None
) -> list[_Held]:
    """The held-records reads to send now, with a chunk's transaction (or, before the
    first, alone): the next chunk's if not yet asked for (it names a player of this
    chunk), and the one after it unless it names a player of the next (then it is read
    after the next one's EXEC). Each sees every chunk written before it."""
    reads = []
    if following is not None and not following[1].requested:
        reads.append(following[1])
    if following is not None and after is not None and not _overlap(following[0], after[0]):
        reads.append(after[1])
    for held in reads:
        held.requested = True
    return reads


async def _settled(pending: list[asyncio.Future]) -> None:
    """The tasks still running cancelled, and each awaited (nothing left in flight)."""
    for task in pending:
        if not task.done():
            task.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)


def _overlap(items: list[Item], later: list[Item]) -> bool:
    """Whether `later` names a player of `items` (the same id in the same pool): the ids
    first, the pools only where an id is in both (rarely: a list's ids are distinct)."""
    if set(map(itemgetter(2), items)).isdisjoint(map(itemgetter(2), later)):
        return False
    players = set(zip(map(itemgetter(1), items), map(itemgetter(2), items)))
    return not players.isdisjoint(zip(map(itemgetter(1), later), map(itemgetter(2), later)))


async def pool_ids(client: Any, keys: StreamKeys, system: str, pool: str) -> list[str]:
    """Every player id of one pool, sorted (HSCAN in pages: Redis is never blocked for long)."""
    ids = []
    async for field, _ in client.hscan_iter(keys.players(system, pool), count=EXPORT_PAGE):
        ids.append(field.decode() if isinstance(field, bytes) else field)
    ids.sort()
    return ids


async def export_pages(
    client: Any, keys: StreamKeys, system: str, pool: str
) -> AsyncIterator[list[PlayerRecord]]:
    """One pool's records by player id, a page at a time: memory holds the ids and one page,
    not the pool (issue 32: a 1M-player export under 200 MB)."""
    ids = await pool_ids(client, keys, system, pool)
    for start in range(0, len(ids), EXPORT_PAGE):
        raws = await client.hmget(keys.players(system, pool), ids[start : start + EXPORT_PAGE])
        yield [decode_record(raw) for raw in raws if raw is not None]  # None: removed meanwhile


async def export_records(
    client: Any, keys: StreamKeys, system: str, pool: str
) -> list[PlayerRecord]:
    """Every record of one pool, by player id."""
    return [record async for page in export_pages(client, keys, system, pool) for record in page]
