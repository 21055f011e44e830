"""Player records (player.record/v1) in and out of a stream's store, outside the stream and
its cursor: `rating-service import` writes a rating list into its pools, `export` reads a pool
back (service/cli/data.py); the tests and benches start from a list the same way. A commit
that read a pool an import writes retries: it watches the pool's hash (store.watched_keys).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

from schemas.common import PERIOD_SYSTEMS
from schemas.records import PlayerRecord
from service.closeindex import BUILT
from service.runtime.store import (
    StreamKeys,
    active_writes,
    decode_record,
    encode,
    queue,
    queue_indexes,
)

EXPORT_PAGE = 2_000  # records per HMGET of an export


async def import_records(
    client: Any,
    keys: StreamKeys,
    records: Sequence[PlayerRecord],
    stamp: int | None = None,
    batch: int = 5_000,
) -> tuple[int, int]:
    """Write records into their pools (replacing what is there), with their rankings and
    name indexes and the lists' (D46: a new pool gets its list date and, with periods, its
    close index marked built (D60), so the start-up back-fill leaves it alone); `stamp` (ms, default now) is the pools' last update. Returns (new, replaced)."""
    from service.runtime.connection import on_owner  # imports redis: not for the offline commands

    stamp = time.time_ns() // 1_000_000 if stamp is None else stamp
    new = replaced = 0
    touched: set[tuple[str, str]] = set()
    for start in range(0, len(records), batch):
        chunk = list(records[start : start + batch])
        by_pool: dict[tuple[str, str], list[PlayerRecord]] = {}
        for record in chunk:
            by_pool.setdefault((record.system, record.pool), []).append(record)
        unseen = [where for where in by_pool if where not in touched]
        async with client.pipeline(transaction=False) as pipe:
            for (system, pool), mine in by_pool.items():
                pipe.hmget(keys.players(system, pool), [r.id for r in mine])
            for where in unseen:
                pipe.exists(keys.players(*where))
            replies = await pipe.execute()
        new_pools = [w for w, held in zip(unseen, replies[len(by_pool) :]) if not held]
        replies = replies[: len(by_pool)]
        olds = {
            (r.system, r.pool, r.id): decode_record(raw) if raw is not None else None
            for mine, raws in zip(by_pool.values(), replies)
            for r, raw in zip(mine, raws)
        }
        replaced += sum(old is not None for old in olds.values())
        new += sum(old is None for old in olds.values())

        async def write(
            owner: Any,
            by_pool: dict = by_pool,
            chunk: list[PlayerRecord] = chunk,
            olds: dict = olds,
            new_pools: list = new_pools,
        ) -> None:
            async with owner.pipeline(transaction=True) as pipe:
                for system, pool in new_pools:  # D60: every record of it indexed from here on
                    if system in PERIOD_SYSTEMS:
                        pipe.zadd(keys.due(system, pool), {BUILT: 0})
                for (system, pool), mine in by_pool.items():
                    fields = [x for r in mine for x in (r.id, encode(r))]
                    pipe.hset(keys.players(system, pool), items=fields)
                queue_indexes(pipe, keys, ((olds[(r.system, r.pool, r.id)], r) for r in chunk))
                pipe.hset(keys.catalog, mapping={f"{s}:{p}": stamp for s, p in by_pool})
                await pipe.execute()

        await on_owner(client, keys.catalog, write)
        touched.update(by_pool)

    async def list_dates(owner: Any) -> None:  # the rankings' scores: index_writes (ZADD XX)
        async with owner.pipeline(transaction=True) as pipe:
            for system, pool in sorted(touched):
                queue(pipe, active_writes(keys, system, pool, "-", []))
            await pipe.execute()

    if touched:
        await on_owner(client, keys.catalog, list_dates)
    return new, replaced


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
