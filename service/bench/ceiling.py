"""The ceiling for `rating-service bench`: a bare redis-py asyncio consumer that
does only what any consumer of the input stream must do - XREADGROUP in batches, one
XADD per entry to an output stream, XACK - with no rating and no state.

Run as its own process, as the service is: `python -m service.bench.ceiling URL
STREAM GROUP OUTPUT BATCH`; it stops on SIGTERM.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from service.runtime.store import DATA_FIELD

OUTPUT_MAXLEN = 1_000_000  # as the service's RATING_OUTPUT_MAXLEN default


async def ceiling_consumer(
    client: Any,
    stream: str,
    group: str,
    output: str,
    *,
    batch: int = 64,
    block_ms: int = 100,
    stop: asyncio.Event | None = None,
    stop_after: int | None = None,
    consumer: str = "ceiling",
) -> int:
    """Consume `stream` in batches of `batch`: per entry one XADD of its `__data__` to
    `output`, then one XACK per batch (one pipelined round trip). Returns the entries
    handled; stops when `stop` is set or after `stop_after` entries."""
    try:
        await client.xgroup_create(stream, group, id="0", mkstream=True)
    except RedisError as exc:
        if "BUSYGROUP" not in str(exc):
            raise
    handled = 0
    while not (stop is not None and stop.is_set()) and (stop_after is None or handled < stop_after):
        reply = await client.xreadgroup(group, consumer, {stream: ">"}, count=batch, block=block_ms)
        for _, entries in reply or []:
            if not entries:
                continue
            async with client.pipeline(transaction=False) as pipe:
                for _, fields in entries:
                    pipe.xadd(output, {DATA_FIELD: fields.get(DATA_FIELD.encode(), b"")})
                pipe.xtrim(
                    output, maxlen=OUTPUT_MAXLEN, approximate=True
                )  # bounded, as the service does
                pipe.xack(stream, group, *[entry_id for entry_id, _ in entries])
                await pipe.execute()
            handled += len(entries)
    return handled


async def _main(url: str, stream: str, group: str, output: str, batch: int) -> None:
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    client = aioredis.Redis.from_url(url)
    try:
        await ceiling_consumer(client, stream, group, output, batch=batch, stop=stop)
    finally:
        await client.aclose()


if __name__ == "__main__":
    url, stream, group, output, batch = sys.argv[1:6]
    asyncio.run(_main(url, stream, group, output, int(batch)))
