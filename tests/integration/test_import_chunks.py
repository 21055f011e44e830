"""How `import_records` writes its chunks (D110, D130): each chunk's transaction is in the
socket before the client makes the next chunk's (else the client's CPU and Redis's add up);
the held records of a chunk are read after every chunk but the one before it is
acknowledged, and after that one too when it names one of its players (a player named
again one or two chunks later is replaced, not taken for new); a
command Redis refuses (a chunk's write or its held-records read) fails the import with its
error and leaves nothing in flight."""

from __future__ import annotations

import asyncio

import msgspec
import pytest
import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from service.bench.workloads import rated_list
from service.runtime import records_io
from service.runtime.keys import StreamKeys
from service.runtime.records_io import import_records

pytestmark = pytest.mark.integration


async def test_each_chunk_is_sent_before_the_next_is_made(redis_url, key_prefix, monkeypatch):
    made: list[bool] = []  # at each chunk's making: is the transaction before it sent?
    commits: list[records_io._Commit] = []
    make, commit = records_io._chunk_writes, records_io._Commit

    def chunk_writes(*args):
        made.append(not commits or commits[-1].sent.done())
        return make(*args)

    def new_commit(*args):
        commits.append(commit(*args))
        return commits[-1]

    monkeypatch.setattr(records_io, "_chunk_writes", chunk_writes)
    monkeypatch.setattr(records_io, "_Commit", new_commit)
    client = aioredis.Redis.from_url(redis_url)
    try:
        records = rated_list("cfc", 1_000, seed=3)
        keys = StreamKeys(f"{key_prefix}.sent")
        assert await import_records(client, keys, records, batch=100) == (1_000, 0)
        assert await client.hlen(keys.players("cfc", "regular")) == 1_000
    finally:
        await client.aclose()
    assert len(made) == 10
    assert all(made), f"chunks made before the one before was sent: {made}"


@pytest.mark.parametrize("apart", [1, 2])  # in the next chunk, in the one after it
async def test_a_player_named_again_a_chunk_or_two_later_is_replaced(redis_url, key_prefix, apart):
    first, other = rated_list("cfc", 2, seed=4)
    first = msgspec.structs.replace(first, name="Alpha Beta")
    again = msgspec.structs.replace(first, name="Quirinus Zbigniew", rating=1234)
    listed = [first, other, again] if apart == 2 else [other, first, again]
    keys = StreamKeys(f"{key_prefix}.again")
    client = aioredis.Redis.from_url(redis_url)
    try:
        for _ in range(5):  # each time into a new pool's keys: a race would show at times
            found = [k async for k in client.scan_iter(match=f"*{key_prefix}*")]
            if found:
                await client.delete(*found)
            counts = await import_records(client, keys, listed, batch=1)
            assert counts == (2, 1)
            names = await client.zrange(keys.names("cfc", "regular"), 0, -1)
            words = {
                member.split(b"\0")[0]
                for member in names
                if member.endswith(b"\0" + first.id.encode())
            }
            assert words == {b"quirinus", b"zbigniew"}  # the first name's words removed
            assert await client.zscore(keys.ranking("cfc", "regular"), first.id) == -1234
    finally:
        await client.aclose()


@pytest.mark.parametrize("wrong", ["ranking", "players"])  # a chunk's write, its held records
async def test_a_refused_command_fails_the_import_with_nothing_in_flight(
    redis_url, key_prefix, wrong
):
    keys = StreamKeys(f"{key_prefix}.refused{wrong}")
    client = aioredis.Redis.from_url(redis_url)
    try:
        await client.set(getattr(keys, wrong)("cfc", "regular"), "not a sorted set or hash")
        with pytest.raises(ResponseError, match="WRONGTYPE"):
            await import_records(client, keys, rated_list("cfc", 500, seed=5), batch=100)
        await asyncio.sleep(0)  # a task cancelled is gone at the next turn of the loop
        left = {t.get_coro().__qualname__ for t in asyncio.all_tasks() if not t.done()}
        assert not left & {"on_owner", "_read_alone"}, left
    finally:
        await client.aclose()
