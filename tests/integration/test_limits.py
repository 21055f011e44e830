"""The service's size limits on its own path (docs/operations/limits.md, D90-D92): an entry
whose ratings.updated message or commit is over its limit is dead-lettered `too_large` naming
the figure, the limit and the setting; it is acknowledged, nothing of its event is written,
and the entries after it are rated. A commit of several entries over the commit limit is
split instead."""

from __future__ import annotations

import re

import pytest

from service.engine.registry import default_registry
from service.runtime.keys import StreamKeys
from service.runtime.processor import StreamProcessor
from tests.integration.helpers import outputs, pending, publish, rejections, settings_for
from tests.messages import event

pytestmark = pytest.mark.integration


def with_players(event_id: str, players: int) -> dict:
    """A Glicko-2 event of `players` new players, each playing the next once (a chain)."""
    ids = [f"{event_id}-p{i}" for i in range(players)]
    return event(
        event_id=event_id,
        system="glicko2",
        pool="standard",
        rounds=1,
        players=[{"id": pid} for pid in ids],
        games=[{"round": 1, "a": a, "b": b, "score": 1} for a, b in zip(ids[::2], ids[1::2])],
    )


async def run(client, settings, *messages: dict) -> tuple[StreamProcessor, list[str]]:
    """Publish, then apply the entries as the service's subscriber hands them over."""
    stream = settings.input_streams[0]
    processor = StreamProcessor(client, settings, stream, default_registry())
    await processor.ensure_group()
    ids = await publish(client, settings, *messages)
    reply = await client.xreadgroup(settings.group, "c1", {stream: ">"}, count=100)
    entries = [(i.decode(), f) for _, batch in reply for i, f in batch]
    await processor.handle(*[i for i, _ in entries], bodies=[f for _, f in entries])
    return processor, ids


async def nothing_of(client, settings, event_id: str, players: int) -> bool:
    """No record, marker or archive of the event was written."""
    keys = StreamKeys(settings.input_streams[0])
    records = await client.hmget(
        keys.players("glicko2", "standard"), [f"{event_id}-p{i}" for i in range(players)]
    )
    marker = await client.hget(keys.markers, f"event:{event_id}")
    archived = await client.hget(keys.events, event_id)
    return records == [None] * players and marker is None and archived is None


async def test_a_message_over_the_limit_is_refused_and_the_next_rated(
    client, redis_url, key_prefix
):
    """RATING_MAX_MESSAGE_BYTES 20,000: the 120-player event's message (about 200 kB) is
    refused alone; the two-player events before and after it are rated."""
    settings = settings_for(redis_url, key_prefix, max_message_bytes=20_000)
    messages = [with_players("before", 2), with_players("big", 120), with_players("after", 2)]
    _, ids = await run(client, settings, *messages)
    assert [o.event_id for o in await outputs(client, settings)] == ["before", "after"]
    [letter] = await rejections(client, settings)
    assert (letter.reason, letter.path, letter.source_id) == ("too_large", "$", ids[1])
    assert (
        letter.event_id == "big" and "limit of 20,000 (RATING_MAX_MESSAGE_BYTES)" in letter.message
    )
    figure = int(re.search(r"message would be ([\d,]+) bytes", letter.message)[1].replace(",", ""))
    assert figure > 20_000
    assert await nothing_of(client, settings, "big", 120)
    assert not await nothing_of(client, settings, "after", 2)
    keys = StreamKeys(settings.input_streams[0])
    assert (await client.get(keys.cursor)).decode() == ids[-1]
    assert await pending(client, settings) == 0


async def test_a_commit_over_the_limit_is_split_and_a_lone_one_refused(
    client, redis_url, key_prefix
):
    """RATING_MAX_COMMIT_BYTES: an event whose commit alone is over it is refused, naming the
    bytes; three events of that size under a limit of 1.5 times it are rated, one a commit."""
    tight = settings_for(redis_url, key_prefix, max_commit_bytes=1_000)
    _, [entry] = await run(client, tight, with_players("alone", 4))
    [letter] = await rejections(client, tight)
    assert (letter.reason, letter.path, letter.source_id) == ("too_large", "$", entry)
    assert "over the limit of 1,000 (RATING_MAX_COMMIT_BYTES)" in letter.message
    assert await nothing_of(client, tight, "alone", 4) and await outputs(client, tight) == []
    size = int(re.search(r"would write ([\d,]+) bytes", letter.message)[1].replace(",", ""))

    roomy = settings_for(redis_url, key_prefix + "b", max_commit_bytes=size * 3 // 2)
    names = ["one", "two", "six"]  # the same size as "alone": each fits, two do not
    processor, _ = await run(client, roomy, *[with_players(n, 4) for n in names])
    assert [o.event_id for o in await outputs(client, roomy)] == names
    assert await rejections(client, roomy) == []
    commits = processor.metrics.registry.get_sample_value(
        "rating_entries_per_commit_count", {"stream": roomy.input_streams[0]}
    )
    assert commits == 3 and await pending(client, roomy) == 0
