"""The stream processor against a real Redis: exactly once, in order, bad input
dead-lettered. A test double stands in for the rules (tests/engines.py)."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis

from service.runtime.keys import StreamKeys
from service.runtime.processor import StreamProcessor
from tests.engines import counting_registry
from tests.integration.helpers import outputs, pending, publish, rejections, settings_for
from tests.messages import event

pytestmark = pytest.mark.integration


@pytest.fixture
def settings(redis_url, key_prefix):
    return settings_for(redis_url, key_prefix)


@pytest.fixture
async def processor(client, settings):
    processor = StreamProcessor(client, settings, settings.input_streams[0], counting_registry())
    await processor.ensure_group()
    return processor


async def deliver(client, settings, consumer="c1", count=100):
    """Read new entries for a consumer, as the service's subscriber does."""
    reply = await client.xreadgroup(
        settings.group, consumer, {settings.input_streams[0]: ">"}, count=count
    )
    return [raw_id.decode() for _, entries in reply for raw_id, _ in entries]


async def test_applied_output_records_ack(client, settings, processor):
    [entry] = await publish(client, settings, event())
    assert await deliver(client, settings) == [entry]
    await processor.handle(entry)
    [out] = await outputs(client, settings)
    assert out.kind == "event" and out.event_id == "club-2025-11-a" and out.source_id == entry
    assert [p.new_rating for p in out.players] == [
        1021,
        1018,
        1018,
    ]  # 31000+4+17, 31000+1+17 mod 3000
    raw = await client.hget(StreamKeys(settings.input_streams[0]).players("cfc", "regular"), "p1")
    assert b'"rating":1021' in raw  # the read model: one HGET
    assert await pending(client, settings) == 0
    assert (await client.get(StreamKeys(settings.input_streams[0]).cursor)).decode() == entry


async def test_same_event_published_twice_has_one_effect(client, settings, processor):
    first, second = await publish(client, settings, event(), event())
    await deliver(client, settings)
    await processor.handle(first)
    await processor.handle(second)
    assert len(await outputs(client, settings)) == 1
    assert await rejections(client, settings) == []
    assert await pending(client, settings) == 0


async def test_same_entry_delivered_twice_has_one_effect(client, settings, processor):
    [entry] = await publish(client, settings, event())
    await deliver(client, settings)
    await processor.handle(entry)
    await processor.handle(entry)
    await processor.handle(entry)
    assert len(await outputs(client, settings)) == 1


async def test_conflict_is_dead_lettered_and_the_next_event_is_rated(client, settings, processor):
    ids = await publish(client, settings, event(), event(name="Other name"), event(event_id="next"))
    await deliver(client, settings)
    for entry in ids:
        await processor.handle(entry)
    [rejected] = await rejections(client, settings)
    assert (rejected.reason, rejected.source_id, rejected.event_id) == (
        "conflict",
        ids[1],
        "club-2025-11-a",
    )
    assert '"Other name"' in rejected.fields["__data__"]
    assert [o.event_id for o in await outputs(client, settings)] == ["club-2025-11-a", "next"]


BAD_INPUTS = [
    (b"{not json", "malformed", "$"),
    (b"[1, 2, 3]", "malformed", "$"),
    (event(event_id="has space"), "invalid", "$.event_id"),
    (event(games=[{"round": 1, "a": "p1", "b": "p1", "score": 1}]), "invalid", "$.games[0].b"),
    (event(system="go"), "unknown_system", "$.system"),
    (event(ruleset="cfc-2035"), "unknown_system", "$.ruleset"),
    (event(name="refuse"), "unratable", "$.players"),
    (event(players=[{"id": f"x{i}"} for i in range(6)], games=[]), "too_large", "$.players"),
]


@pytest.mark.parametrize("bad,reason,path", BAD_INPUTS)
async def test_bad_input_is_dead_lettered_and_the_next_event_is_rated(
    client, redis_url, key_prefix, bad, reason, path
):
    settings = settings_for(redis_url, key_prefix, max_players=5)
    processor = StreamProcessor(client, settings, settings.input_streams[0], counting_registry())
    await processor.ensure_group()
    ids = await publish(client, settings, bad, event(event_id="good"))
    await deliver(client, settings)
    for entry in ids:
        await processor.handle(entry)
    [rejected] = await rejections(client, settings)
    assert (rejected.reason, rejected.path, rejected.source_id) == (reason, path, ids[0])
    assert rejected.message
    assert rejected.fields["__data__"] == (
        bad.decode() if isinstance(bad, bytes) else rejected.fields["__data__"]
    )
    assert [o.event_id for o in await outputs(client, settings)] == ["good"]
    assert await pending(client, settings) == 0


async def test_oversized_message_and_missing_data_field(client, redis_url, key_prefix):
    settings = settings_for(redis_url, key_prefix, max_bytes=200)
    processor = StreamProcessor(client, settings, settings.input_streams[0], counting_registry())
    await processor.ensure_group()
    stream = settings.input_streams[0]
    big = (await client.xadd(stream, {"__data__": b"{" + b" " * 300 + b"}"})).decode()
    no_data = (await client.xadd(stream, {"payload": b"{}", "bin": b"\xff\xfe"})).decode()
    await deliver(client, settings)
    await processor.handle(no_data)  # applies `big` first: order
    first, second = await rejections(client, settings)
    assert (first.reason, first.source_id) == ("too_large", big)
    assert (second.reason, second.source_id) == ("malformed", no_data)
    assert second.fields == {"payload": "{}"} and second.fields_base64 == {"bin": "//4="}


async def test_closed_period(client, settings, processor):
    closing = {"schema": "period.closed/v1", "system": "fide", "period": "2025-11"}
    ids = await publish(
        client,
        settings,
        closing,
        event(system="fide", period="2025-11"),
        event(system="fide", event_id="later", period="2025-12"),
    )
    await deliver(client, settings)
    await processor.handle(ids[-1])
    [rejected] = await rejections(client, settings)
    assert (rejected.reason, rejected.path) == ("period_closed", "$.period")
    assert [(o.kind, o.event_id) for o in await outputs(client, settings)] == [
        ("list", None),
        ("event", "later"),
    ]


async def test_poison_entry_is_dead_lettered_after_max_deliveries(client, redis_url, key_prefix):
    settings = settings_for(redis_url, key_prefix, max_deliveries=3)
    processor = StreamProcessor(client, settings, settings.input_streams[0], counting_registry())
    await processor.ensure_group()
    bad, good = await publish(client, settings, event(name="explode"), event(event_id="good"))
    await deliver(client, settings)
    for _ in range(3):
        with pytest.raises(RuntimeError):
            await processor.handle(good)  # `bad` comes first and fails each time
    assert await outputs(client, settings) == []
    await processor.handle(good)
    [rejected] = await rejections(client, settings)
    assert (rejected.reason, rejected.source_id) == ("poison", bad)
    assert [o.event_id for o in await outputs(client, settings)] == ["good"]
    assert await client.hlen(StreamKeys(settings.input_streams[0]).attempts) == 0


async def test_entry_that_killed_its_consumers_is_poison(client, redis_url, key_prefix):
    # A message that kills its process each time: every attempt was counted before it
    # started, and no commit removed the count (as three SIGKILLed attempts leave it).
    settings = settings_for(redis_url, key_prefix, max_deliveries=3)
    processor = StreamProcessor(client, settings, settings.input_streams[0], counting_registry())
    await processor.ensure_group()
    [entry] = await publish(client, settings, event())
    await deliver(client, settings)
    await client.hset(StreamKeys(settings.input_streams[0]).attempts, entry, 3)
    await processor.handle(entry)
    [rejected] = await rejections(client, settings)
    assert rejected.reason == "poison" and await outputs(client, settings) == []


async def test_out_of_order_delivery_applies_in_stream_order(client, redis_url, key_prefix):
    settings = settings_for(redis_url, key_prefix, batch_size=2)
    processor = StreamProcessor(client, settings, settings.input_streams[0], counting_registry())
    await processor.ensure_group()
    ids = await publish(client, settings, *[event(event_id=f"e{i}") for i in range(5)])
    await deliver(client, settings)
    await processor.handle(ids[2])  # two commits of two entries: up to ids[3]
    assert [o.source_id for o in await outputs(client, settings)] == ids[:4]
    assert await pending(client, settings) == 1
    for entry in reversed(ids):
        await processor.handle(entry)
    assert [o.source_id for o in await outputs(client, settings)] == ids
    assert await pending(client, settings) == 0
    assert await client.hlen(StreamKeys(settings.input_streams[0]).attempts) == 0


async def test_racing_replicas_apply_each_entry_once_in_order(
    redis_url, client, settings, processor
):
    ids = await publish(
        client, settings, *[event(event_id=f"e{i}", name=f"Event {i}") for i in range(60)]
    )
    delivered = await deliver(client, settings, count=1000)
    assert delivered == ids
    replicas = []
    for _ in range(3):
        own = aioredis.Redis.from_url(redis_url)
        replicas.append(
            (own, StreamProcessor(own, settings, settings.input_streams[0], counting_registry()))
        )

    async def run(processor, order):
        for entry in order:
            await processor.handle(entry)

    await asyncio.gather(
        *(run(p, ids[i::3] if i != 1 else list(reversed(ids))) for i, (_, p) in enumerate(replicas))
    )
    for own, _ in replicas:
        await own.aclose()
    assert [o.source_id for o in await outputs(client, settings)] == ids
    assert await pending(client, settings) == 0
    assert await client.hlen(StreamKeys(settings.input_streams[0]).attempts) == 0


async def test_a_failing_entry_inside_a_batch_does_not_hold_back_the_others(
    client, redis_url, key_prefix
):
    settings = settings_for(redis_url, key_prefix, max_deliveries=2)
    processor = StreamProcessor(client, settings, settings.input_streams[0], counting_registry())
    await processor.ensure_group()
    ids = await publish(
        client,
        settings,
        event(event_id="one"),
        event(event_id="bad", name="explode"),
        event(event_id="two"),
    )
    await deliver(client, settings)
    for _ in range(2):
        with pytest.raises(RuntimeError):
            await processor.handle(ids[-1])
    assert [o.event_id for o in await outputs(client, settings)] == [
        "one"
    ]  # committed before the failure
    await processor.handle(ids[-1])
    [rejected] = await rejections(client, settings)
    assert (rejected.reason, rejected.event_id) == ("poison", "bad")
    assert [o.event_id for o in await outputs(client, settings)] == ["one", "two"]
    assert await pending(client, settings) == 0


async def read_group(client, settings, count=100):
    """A subscriber's read: the ids and the bodies (fields), as FastStream hands them over."""
    reply = await client.xreadgroup(
        settings.group, "c1", {settings.input_streams[0]: ">"}, count=count
    )
    entries = [(raw_id.decode(), fields) for _, batch in reply for raw_id, fields in batch]
    return [i for i, _ in entries], [f for _, f in entries]


class CountingReads:
    """Counts the processor's XRANGE reads of its input stream (the real client underneath)."""

    def __init__(self, client, stream):
        self.client, self.stream, self.reads = client, stream, 0

    def __getattr__(self, name):
        return getattr(self.client, name)

    async def xrange(self, stream, *args, **kwargs):
        if (
            stream == self.stream and kwargs.get("max", "+") == "+"
        ):  # an entries read, not a gap check
            self.reads += 1
        return await self.client.xrange(stream, *args, **kwargs)


async def test_handed_bodies_that_follow_the_cursor_are_not_read_again(client, settings):
    stream = settings.input_streams[0]
    spy = CountingReads(client, stream)
    processor = StreamProcessor(spy, settings, stream, counting_registry())
    await processor.ensure_group()
    await publish(client, settings, event(event_id="e1"), event(event_id="e2"))
    ids, bodies = await read_group(client, settings)
    await processor.handle(*ids, bodies=bodies)
    assert spy.reads == 0
    assert [o.event_id for o in await outputs(client, settings)] == ["e1", "e2"]
    assert await pending(client, settings) == 0


async def test_handed_entries_the_stream_lost_are_not_committed(client, settings, processor):
    """D97: a failover can take the last entries along (the master died before its replica
    had them) while a replica holds them, read: the commit checks, under its WATCH, that its
    last entry is still in the stream, and applies only what the stream holds (played here
    by deleting the entry after it was read)."""
    await publish(client, settings, event(event_id="e1"), event(event_id="e2"))
    ids, bodies = await read_group(client, settings)
    await client.xdel(settings.input_streams[0], ids[1])
    await processor.handle(*ids, bodies=bodies)
    assert [o.event_id for o in await outputs(client, settings)] == ["e1"]
    cursor = await client.get(StreamKeys(settings.input_streams[0]).cursor)
    assert cursor.decode() == ids[0]
    assert await pending(client, settings) == 0


async def test_handed_bodies_after_a_gap_wait_for_the_entry_before_them(
    client, settings, processor
):
    """An entry between the cursor and the handed bodies (delivered to another consumer) is
    applied first, read from the stream: nothing skipped, stream order kept."""
    await publish(client, settings, event(event_id="e1"))
    await deliver(client, settings, consumer="someone-else")
    await publish(client, settings, event(event_id="e2"), event(event_id="e3"))
    ids, bodies = await read_group(client, settings)
    await processor.handle(*ids, bodies=bodies)
    assert [o.event_id for o in await outputs(client, settings)] == ["e1", "e2", "e3"]


async def test_a_stale_cursor_guess_never_skips_entries(client, settings, processor):
    """The processor's own idea of the cursor is only a guess: the store wiped under it (the
    cursor gone) means every entry is applied again from the start, not acked unapplied."""
    await publish(client, settings, event(event_id="e1"))
    ids, bodies = await read_group(client, settings)
    await processor.handle(*ids, bodies=bodies)
    tag = StreamKeys(settings.input_streams[0]).cursor.rpartition(":")[0]
    async for key in client.scan_iter(match=tag.replace("{", "\\{").replace("}", "\\}") + ":*"):
        await client.delete(key)  # the store, not the stream
    assert await client.get(StreamKeys(settings.input_streams[0]).cursor) is None
    await publish(client, settings, event(event_id="e2"))
    ids, bodies = await read_group(client, settings)
    await processor.handle(*ids, bodies=bodies)
    assert [o.event_id for o in await outputs(client, settings)] == ["e1", "e1", "e2"]


def with_players(event_id: str, players: int) -> dict:
    """An event of `players` players, each playing the next once (a chain)."""
    ids = [f"{event_id}-p{i}" for i in range(players)]
    return event(
        event_id=event_id,
        rounds=1,
        players=[{"id": pid} for pid in ids],
        games=[{"round": 1, "a": a, "b": b, "score": 1} for a, b in zip(ids[::2], ids[1::2])],
    )


async def test_a_batch_is_committed_in_pieces_of_at_most_the_commit_players(
    client, redis_url, key_prefix
):
    """RATING_COMMIT_PLAYERS: small events share a commit up to the budget, a bigger one is
    committed alone; every entry once, in stream order, the handed bodies not read again."""
    settings = settings_for(redis_url, key_prefix, commit_players=6)
    stream = settings.input_streams[0]
    spy = CountingReads(client, stream)
    processor = StreamProcessor(spy, settings, stream, counting_registry())
    await processor.ensure_group()
    sizes = {
        "a": 2,
        "b": 2,
        "c": 2,
        "d": 8,
        "e": 2,
        "f": 4,
    }  # commits: a b c (6), d (8, alone), e f (6)
    await publish(client, settings, *[with_players(name, n) for name, n in sizes.items()])
    ids, bodies = await read_group(client, settings)
    await processor.handle(*ids, bodies=bodies)
    assert [o.event_id for o in await outputs(client, settings)] == list(sizes)
    assert spy.reads == 0 and await pending(client, settings) == 0
    commits = processor.metrics.registry.get_sample_value(
        "rating_entries_per_commit_count", {"stream": stream}
    )
    assert commits == 3


async def test_entries_read_but_left_by_a_commit_are_not_read_again(client, redis_url, key_prefix):
    """Read from the stream (no bodies handed), a batch bigger than RATING_COMMIT_PLAYERS is
    committed in pieces from that one read: each piece's entries follow the one before (a
    RATING_READ_BYTES that lets the five be read at once: D90)."""
    settings = settings_for(redis_url, key_prefix, commit_players=4, read_bytes=1 << 30)
    stream = settings.input_streams[0]
    spy = CountingReads(client, stream)
    processor = StreamProcessor(spy, settings, stream, counting_registry())
    await processor.ensure_group()
    names = ["a", "b", "c", "d", "e"]  # 2 players each: commits a b, c d, e
    ids = await publish(client, settings, *[with_players(name, 2) for name in names])
    await deliver(client, settings)
    await processor.handle(ids[-1])
    assert [o.event_id for o in await outputs(client, settings)] == names
    assert spy.reads == 1 and await pending(client, settings) == 0
    commits = processor.metrics.registry.get_sample_value(
        "rating_entries_per_commit_count", {"stream": stream}
    )
    assert commits == 3
