"""The back-fill of the read model: the rankings, name indexes and catalog entries of pools
whose records were stored before the read model existed, and the lists' indexes (D46-D49:
label rankings, last rated games, events by date, the last list's changes, the active
ranking) of pools stored before those, built at start-up before a replica consumes."""

from __future__ import annotations

import time
from typing import Any

import msgspec
import structlog

from schemas.common import PERIOD_SYSTEMS, POOLS, SYSTEMS
from schemas.records import PlayerRecord, PoolState
from service.closeindex import BUILT, due_members
from service.lists import closed_list_days, pack_card, summary_of
from service.readmodel import list_field, unpack_entry, unpack_message
from service.runtime.connection import on_owner
from service.runtime.replies import text
from service.runtime.store import (
    StreamKeys,
    active_writes,
    decode_record,
    queue,
    queue_indexes,
    recount_played,
)

log = structlog.get_logger("rating.consumer")


async def index_stream(client: Any, stream: str, keys: StreamKeys) -> None:
    """Index every pool of every system stored under `keys` (the keys of input stream
    `stream`) before the read model existed, and the close index of every pool with periods
    stored before it (D61), and say which."""
    known = {(system, pool) for system in SYSTEMS for pool in POOLS[system]}
    # A platform's own pools too: they are in the catalog (every store that has them was
    # written with it), read without SCAN (not in the service's ACL rule, per node on a Cluster).
    listed = [text(field).partition(":") for field in await client.hkeys(keys.catalog)]
    pools = sorted(known | {(s, p) for s, _, p in listed if s in SYSTEMS and p})
    indexed = await index_existing(client, keys, pools)
    if indexed:
        log.warning(
            "indexed the pools stored before the read model",
            stream=stream,
            pools=[f"{system}/{pool}" for system, pool in indexed],
        )
    due = []
    for system, pool in pools:
        if system in PERIOD_SYSTEMS and await index_due(client, keys, system, pool):
            due.append(f"{system}/{pool}")
    if due:
        log.warning("built the close index of the pools stored before it", stream=stream, pools=due)


async def index_due(client: Any, keys: StreamKeys, system: str, pool: str) -> bool:
    """Build the close index of one pool (D60, D61) from its records, a page at a time, when
    it has records and no index yet; True when it did. The index's `.` is written last, so
    a build cut short is done again (its ZADDs are idempotent). A commit meanwhile keeps the
    index of the records it writes: what it removes is removed, what it adds is there."""
    due = keys.due(system, pool)
    if await client.zscore(due, BUILT) is not None:
        return False
    if not await client.exists(keys.players(system, pool)):
        return False
    members: list[bytes] = []
    async for _, raw in client.hscan_iter(keys.players(system, pool), count=1_000):
        members.extend(due_members(decode_record(raw)))
        if len(members) >= 1_000:
            await client.zadd(due, dict.fromkeys(members, 0))
            members = []
    if members:
        await client.zadd(due, dict.fromkeys(members, 0))
    await client.zadd(due, {BUILT: 0})
    return True


async def index_existing(
    client: Any, keys: StreamKeys, pools: list[tuple[str, str]]
) -> list[tuple[str, str]]:
    """Build the ranking, name index, catalog entry and lists' indexes of every pool in
    `pools` (system, pool) that has records but no ranking (data written before the read
    model existed) or no list date (written before the lists' indexes, D46); returns the
    pools indexed. Run at start-up, before this replica consumes; the list date is written
    last, so a back-fill cut short is done again at the next start."""
    done = []
    for system, pool in pools:
        if not await client.exists(keys.players(system, pool)):
            continue
        if await client.exists(keys.ranking(system, pool)) and await client.exists(
            keys.listdate(system, pool)
        ):
            continue
        ids: list[str] = []
        batch: list[PlayerRecord] = []
        async for _, raw in client.hscan_iter(keys.players(system, pool), count=1_000):
            batch.append(decode_record(raw))
            if len(batch) == 1_000:
                await _index(client, keys, batch)
                ids += [r.id for r in batch]
                batch = []
        if batch:
            await _index(client, keys, batch)
            ids += [r.id for r in batch]
        await _index_lists(client, keys, system, pool, ids)
        await client.hsetnx(keys.catalog, f"{system}:{pool}", time.time_ns() // 1_000_000)
        done.append((system, pool))
    return done


async def _index_lists(
    client: Any, keys: StreamKeys, system: str, pool: str, ids: list[str]
) -> None:
    """The lists' indexes of one pool from what the store holds: each player's last rated
    game from their history lines, the events by date from their last messages, a FIDE
    close's changes from its list lines, then the active ranking and the list date."""
    raw_state = await client.hget(keys.pools, f"{system}:{pool}")
    state = msgspec.json.decode(raw_state, type=PoolState) if raw_state is not None else None
    closed = state.closed_through if state is not None else None
    for first in range(0, len(ids), 1_000):
        chunk = ids[first : first + 1_000]
        await _write(client, keys, list(recount_played(keys, system, pool, chunk)))
        if closed is not None:
            async with client.pipeline(transaction=False) as pipe:
                for pid in chunk:
                    pipe.hget(keys.entries(system, pool, pid), list_field(closed))
                lines = await pipe.execute()
            moved = [
                (change, pid)
                for pid, raw in zip(chunk, lines)
                if raw is not None and (change := unpack_entry(raw).change)
            ]
            if moved:
                args = [x for pair in moved for x in pair]
                await _write(client, keys, [("ZADD", keys.moves(system, pool), *args)])
    commands: list[tuple[Any, ...]] = []
    async for event_id, raw in client.hscan_iter(keys.results, count=100):
        message = unpack_message(raw)
        if (message.system, message.pool) != (system, pool) or message.event_id is None:
            continue
        if message.kind == "list" or message.withdrawn:
            continue
        day = message.end_date.toordinal() if message.end_date else 0
        commands.append(("ZADD", keys.dated(system, pool), day, event_id))
        commands.append(
            ("HSET", keys.cards(system, pool), event_id, pack_card(summary_of(message)))
        )
        if len(commands) >= 1_000:
            await _write(client, keys, commands)
            commands = []
    if commands:
        await _write(client, keys, commands)
    spec = "{} {}".format(*closed_list_days(closed)) if closed is not None else "0 0"
    await client.delete(keys.listdate(system, pool))
    await _write(client, keys, list(active_writes(keys, system, pool, spec, [])))


async def _write(client: Any, keys: StreamKeys, commands: list[tuple[Any, ...]]) -> None:
    async def write(owner: Any) -> None:
        async with owner.pipeline(transaction=True) as pipe:
            queue(pipe, commands)
            await pipe.execute()

    await on_owner(client, keys.catalog, write)


async def _index(client: Any, keys: StreamKeys, records: list[PlayerRecord]) -> None:
    async def write(owner: Any) -> None:
        async with owner.pipeline(transaction=True) as pipe:
            queue_indexes(pipe, keys, ((None, r) for r in records))
            await pipe.execute()

    await on_owner(client, keys.catalog, write)
