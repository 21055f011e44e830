"""hiredis packing and grouped sending (service/runtime/packing.py) against a real Redis: a
transaction of many MB, sent in groups, arrives whole and in order."""

from __future__ import annotations

import pytest
import redis.asyncio as aioredis

from service.runtime.packing import SEND_GROUP, use_hiredis_packing

pytestmark = pytest.mark.integration


async def test_a_transaction_larger_than_a_send_group_arrives_whole(redis_url, key_prefix):
    client = use_hiredis_packing(aioredis.Redis.from_url(redis_url))
    big = bytes(range(256)) * (SEND_GROUP // 256 + 1)  # more than one group on its own
    try:
        async with client.pipeline(transaction=True) as pipe:
            for i in range(300):  # many small commands between the big ones
                pipe.hset(f"{key_prefix}:h", f"f{i}", i)
                if i % 100 == 0:
                    pipe.set(f"{key_prefix}:big{i}", big)
            pipe.xadd(f"{key_prefix}:s", {"__data__": b"last"})
            replies = await pipe.execute()
        assert len(replies) == 304
        assert await client.hlen(f"{key_prefix}:h") == 300
        for i in (0, 100, 200):
            assert await client.get(f"{key_prefix}:big{i}") == big
        assert [f[b"__data__"] for _, f in await client.xrange(f"{key_prefix}:s")] == [b"last"]
    finally:
        keys = [k async for k in client.scan_iter(match=f"{key_prefix}:*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()
