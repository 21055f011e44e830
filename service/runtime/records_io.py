"""Player records (player.record/v1) in and out of a stream's store, outside the stream and
its cursor: `rating-service import` writes a rating list into its pools, `export` reads a pool
back (service/cli/data.py); the tests and benches start from a list the same way. A commit
that read a pool an import writes retries: it watches the pool's hash (store.watched_keys).
"""

from __future__ import annotations

import time
from typing import Any

from schemas.records import PlayerRecord
from service.runtime.store import StreamKeys, decode_record, encode, queue_indexes


async def import_records(
    client: Any,
    keys: StreamKeys,
    records: list[PlayerRecord],
    stamp: int | None = None,
    batch: int = 1_000,
) -> tuple[int, int]:
    """Write records into their pools (replacing what is there), with their rankings and
    name indexes; `stamp` (ms, default now) is the pools' last update. Returns (new, replaced)."""
    from service.runtime.connection import on_owner  # imports redis: not for the offline commands

    stamp = time.time_ns() // 1_000_000 if stamp is None else stamp
    new = replaced = 0
    for start in range(0, len(records), batch):
        chunk = records[start : start + batch]
        async with client.pipeline(transaction=False) as pipe:
            for record in chunk:
                pipe.hget(keys.players(record.system, record.pool), record.id)
            olds = [decode_record(raw) if raw is not None else None for raw in await pipe.execute()]
        replaced += sum(old is not None for old in olds)
        new += sum(old is None for old in olds)

        async def write(owner: Any, chunk: list[PlayerRecord] = chunk, olds: list = olds) -> None:
            async with owner.pipeline(transaction=True) as pipe:
                for record in chunk:
                    pipe.hset(keys.players(record.system, record.pool), record.id, encode(record))
                queue_indexes(pipe, keys, zip(olds, chunk))
                pipe.hset(keys.catalog, mapping={f"{r.system}:{r.pool}": stamp for r in chunk})
                await pipe.execute()

        await on_owner(client, keys.catalog, write)
    return new, replaced


async def export_records(
    client: Any, keys: StreamKeys, system: str, pool: str
) -> list[PlayerRecord]:
    """Every record of one pool, by player id."""
    records = []
    async for _, raw in client.hscan_iter(keys.players(system, pool), count=1_000):
        records.append(decode_record(raw))
    return sorted(records, key=lambda r: r.id)
