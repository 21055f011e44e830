"""A FIDE close a page at a time through the running service (D60, D61): the same records,
list and changes as the offline fold of the same close (`apply_message` on the whole pool,
what `rating-service rate` runs), the list's messages once each, in order, also when the
service is SIGKILLed between two pages and restarted; a store written before the close index
gets it at start-up, and its close finds its players."""

from __future__ import annotations

import asyncio
import json

import msgspec
import pytest

from schemas import PlayerRecord
from schemas.records import PoolState
from schemas.validation import decode_input
from service.bench.workloads import fide_pool_before_close
from service.closeindex import BUILT, due_members
from service.engine.registry import default_registry
from service.rating import MemoryLedger, apply_message
from service.runtime.closes import CloseProgress
from service.runtime.keys import StreamKeys
from service.runtime.records_io import import_records
from tests.integration.helpers import outputs, publish, rejections, settings_for
from tests.integration.processes import Services, log_containing, stored_records, wait_until_applied

pytestmark = pytest.mark.integration

CLOSE = {"schema": "period.closed/v1", "system": "fide", "pool": "standard", "period": "2025-11"}


def pool(players: int) -> list[PlayerRecord]:
    """A pool at the end of 2025-11 (every player with games in it, 5 % unrated with pooled
    games), every 7th with an imported K, and 30 idle players with one (F5: the list ends it)."""
    records = [
        msgspec.structs.replace(r, k=20) if n % 7 == 0 and r.rating is not None else r
        for n, r in enumerate(fide_pool_before_close(players))
    ]
    idle = [
        PlayerRecord(
            system="fide",
            pool="standard",
            id=f"idle{n:02d}",
            rating=1800 + n,
            status="established",
            games=50,
            k=40,
        )
        for n in range(30)
    ]
    return records + idle


def folded(records: list[PlayerRecord], source_id: str) -> tuple[MemoryLedger, list]:
    """The offline fold of the close over the whole pool (the `rate` command's path)."""
    ledger = MemoryLedger(records)
    message = decode_input(json.dumps(CLOSE).encode())
    applied = apply_message(ledger, message, default_registry(), source_id)
    return ledger, applied.outputs  # type: ignore[union-attr]  # Applied, not a duplicate


async def check_equals_fold(client, settings, records: list[PlayerRecord], page: int) -> None:
    """Records, the list's players and messages, the changes, the close index and the pool
    state equal the fold's; nothing of the close is left in progress."""
    keys = StreamKeys(settings.input_streams[0])
    [(close_id, _)] = await client.xrange(settings.input_streams[0])
    ledger, offline = folded(records, close_id.decode())
    assert await rejections(client, settings) == []
    stored = await stored_records(client, settings)
    assert stored == {(r.system, r.pool, r.id): r for r in ledger.all_records()}
    lists = [o for o in await outputs(client, settings) if o.kind == "list"]
    listed = [p for o in offline for p in o.players]
    chunks = -(-len(listed) // page)
    assert [(o.chunk, o.chunks) for o in lists] == [(n, chunks) for n in range(1, chunks + 1)]
    assert [p for o in lists for p in o.players] == listed
    assert {o.source_id for o in lists} == {close_id.decode()}
    moves = await client.zrange(keys.moves("fide", "standard"), 0, -1, withscores=True)
    assert {m.decode(): int(s) for m, s in moves} == {p.id: p.change for p in listed if p.change}
    due = set(await client.zrange(keys.due("fide", "standard"), 0, -1))
    assert due == {BUILT} | {m for r in stored.values() for m in due_members(r)}
    raw = await client.hget(keys.pools, "fide:standard")
    assert msgspec.json.decode(raw, type=PoolState).closed_through == "2025-11"
    assert not await client.exists(keys.closing, keys.nextmoves("fide", "standard"))


async def test_a_close_in_pages_equals_the_fold(client, redis_url, key_prefix):
    settings = settings_for(redis_url, key_prefix)
    records = pool(400)
    await import_records(client, StreamKeys(settings.input_streams[0]), records)
    services = Services(settings)
    services.env["RATING_CLOSE_PLAYERS"] = "50"
    try:
        services.start()
        await publish(client, settings, CLOSE)
        await wait_until_applied(client, settings)
    finally:
        services.stop_all()
    await check_equals_fold(client, settings, records, 50)


async def test_a_close_killed_between_pages_resumes_where_it_stopped(client, redis_url, key_prefix):
    settings = settings_for(redis_url, key_prefix)
    keys = StreamKeys(settings.input_streams[0])
    records = pool(1_000)
    await import_records(client, keys, records)
    services = Services(settings)
    services.env["RATING_CLOSE_PLAYERS"] = "10"
    try:
        first = services.start()
        await publish(client, settings, CLOSE)
        # Wait for the condition, not a time: three pages committed, the close not done.
        progress = None
        for _ in range(200_000):
            raw = await client.get(keys.closing)
            progress = msgspec.json.decode(raw, type=CloseProgress) if raw else None
            if progress is not None and progress.published >= 3:
                break
            assert first.poll() is None, services.logs(first)[-3000:]
            await asyncio.sleep(0.001)
        services.kill(first)
        assert progress is not None and progress.published < progress.chunks
        # Half closed: not closed to readers (the pool's state, its changes), nothing after it.
        assert await client.hget(keys.pools, "fide:standard") is None
        assert await client.get(keys.cursor) is None
        assert not await client.exists(keys.moves("fide", "standard"))
        published = [o.chunk for o in await outputs(client, settings)]
        assert published == list(range(1, len(published) + 1))
        services.start()
        await wait_until_applied(client, settings)
    finally:
        services.stop_all()
    await check_equals_fold(client, settings, records, 10)


async def test_a_store_from_before_the_close_index_gets_it_at_start(client, redis_url, key_prefix):
    settings = settings_for(redis_url, key_prefix)
    keys = StreamKeys(settings.input_streams[0])
    records = pool(300)
    await import_records(client, keys, records)
    await client.delete(keys.due("fide", "standard"))  # as a store written before it
    services = Services(settings)
    try:
        process = services.start()
        await log_containing(services, process, "built the close index")
        assert await client.zscore(keys.due("fide", "standard"), BUILT) is not None
        await publish(client, settings, CLOSE)
        await wait_until_applied(client, settings)
    finally:
        services.stop_all()
    await check_equals_fold(client, settings, records, 100)
