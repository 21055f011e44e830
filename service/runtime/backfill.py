"""The back-fill of the read model: the rankings, name indexes and catalog entries of pools
whose records were stored before the read model existed, built at start-up before a replica
consumes."""

from __future__ import annotations

import time
from typing import Any

import structlog

from schemas.common import POOLS, SYSTEMS
from schemas.records import PlayerRecord
from service.runtime.connection import on_owner
from service.runtime.store import StreamKeys, decode_record, queue_indexes

log = structlog.get_logger("rating.consumer")


async def index_stream(client: Any, stream: str, keys: StreamKeys) -> None:
    """Index every pool of every system stored under `keys` (the keys of input stream
    `stream`) before the read model existed, and say which."""
    pools = [(system, pool) for system in SYSTEMS for pool in POOLS[system]]
    indexed = await index_existing(client, keys, pools)
    if indexed:
        log.warning(
            "indexed the pools stored before the read model",
            stream=stream,
            pools=[f"{system}/{pool}" for system, pool in indexed],
        )


async def index_existing(
    client: Any, keys: StreamKeys, pools: list[tuple[str, str]]
) -> list[tuple[str, str]]:
    """Build the ranking, name index and catalog entry of every pool in `pools` (system,
    pool) that has records but no ranking (data written before the read model existed); returns the pools
    indexed. Run at start-up, before this replica consumes."""
    done = []
    for system, pool in pools:
        if await client.exists(keys.ranking(system, pool)) or not await client.exists(
            keys.players(system, pool)
        ):
            continue
        batch: list[PlayerRecord] = []
        async for _, raw in client.hscan_iter(keys.players(system, pool), count=1_000):
            batch.append(decode_record(raw))
            if len(batch) == 1_000:
                await _index(client, keys, batch)
                batch = []
        if batch:
            await _index(client, keys, batch)
        await client.hsetnx(keys.catalog, f"{system}:{pool}", time.time_ns() // 1_000_000)
        done.append((system, pool))
    return done


async def _index(client: Any, keys: StreamKeys, records: list[PlayerRecord]) -> None:
    async def write(owner: Any) -> None:
        async with owner.pipeline(transaction=True) as pipe:
            queue_indexes(pipe, keys, ((None, r) for r in records))
            await pipe.execute()

    await on_owner(client, keys.catalog, write)
