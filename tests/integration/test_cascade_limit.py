"""RATING_MAX_CASCADE_EVENTS against a real Redis: a correction, a withdrawal or a late event
re-rating more later events than the limit is dead-lettered too_large, with the same count
as before, without reading the later events' archives or the players' histories (D33: a
refusal costs no memory); one within the limit is applied."""

from __future__ import annotations

import json

import pytest

from schemas.records import PlayerRecord
from service.bench.workloads import rated_list, round_robin_event
from service.engine.registry import default_registry
from service.runtime.keys import StreamKeys
from service.runtime.processor import StreamProcessor
from service.runtime.records_io import import_records
from service.runtime.store import load_cascade
from tests.integration.helpers import outputs, pending, publish, rejections, settings_for
from tests.messages import event

pytestmark = pytest.mark.integration

LIMIT = 3


PLAYERS = [
    PlayerRecord(
        system="cfc", pool="regular", id=pid, rating=rating, status="established", games=40
    )
    for pid, rating in (("p1", 1650), ("p2", 1500), ("p3", 1420))
]


def dated(n: int, **overrides) -> dict:
    """Event n of a club's season: one a day (n = -1 the day before the first), the same
    three rated players."""
    day = f"2025-10-{n + 2:02d}"
    return event(event_id=f"club-{n}", start_date=day, end_date=day, **overrides)


def corrected(n: int) -> dict:
    message = dated(n)
    message["games"][0]["score"] = 0
    return {**message, "schema": "event.corrected/v1", "reason": "result entered wrong"}


@pytest.fixture
async def season(client, redis_url, key_prefix):
    """Six events rated in date order by a processor with the limit."""
    settings = settings_for(redis_url, key_prefix, max_cascade_events=LIMIT)
    processor = StreamProcessor(client, settings, settings.input_streams[0], default_registry())
    await processor.ensure_group()
    await import_records(client, StreamKeys(settings.input_streams[0]), PLAYERS)
    for entry in await publish(client, settings, *(dated(n) for n in range(6))):
        await processor.handle(entry)
    return settings, processor


async def handle(client, settings, processor, message: dict) -> None:
    [entry] = await publish(client, settings, message)
    await processor.handle(entry)


async def test_a_cascade_over_the_limit_is_too_large_and_one_within_it_is_applied(client, season):
    settings, processor = season
    await handle(client, settings, processor, corrected(0))  # 5 later events
    await handle(client, settings, processor, dated(-1, name="Late"))  # inserted first: 6 later
    withdrawn = {"schema": "event.withdrawn/v1", "event_id": "club-1", "system": "cfc"}
    await handle(client, settings, processor, withdrawn)  # 4 later
    refused = await rejections(client, settings)
    assert [(r.reason, r.event_id) for r in refused] == [
        ("too_large", "club-0"),
        ("too_large", "club--1"),
        ("too_large", "club-1"),
    ]
    assert [r.message.split(" of ")[0].split(" re-rates ")[1] for r in refused] == [
        "5 later events",
        "6 later events",
        "4 later events",
    ]
    assert "over the limit of 3 (RATING_MAX_CASCADE_EVENTS)" in refused[0].message
    before = len(await outputs(client, settings))
    await handle(client, settings, processor, corrected(3))  # 2 later events: applied
    published = (await outputs(client, settings))[before:]
    assert published and {o.event_id for o in published} >= {"club-3"}
    assert len(await rejections(client, settings)) == 3
    assert await pending(client, settings) == 0


async def test_a_refused_cascade_reads_only_the_timeline_and_the_pool_states(client, season):
    settings, processor = season
    keys = StreamKeys(settings.input_streams[0])
    entry = processor.decoder.decode("1-0", {b"__data__": json.dumps(corrected(0)).encode()})
    message, want = entry.message, entry.want
    assert message is not None and want is not None
    within = await load_cascade(client, keys, message, want, 1, max_cascade=0)
    refused = await load_cascade(client, keys, message, want, 1, max_cascade=LIMIT)
    assert within.timelines == refused.timelines  # the count the refusal gives
    assert set(within.archives) == set(refused.archives) == {"club-0"}  # the event's own
    assert within.histories and not refused.histories  # its players', the rest when asked (D65)
    assert within.records and not refused.records
    assert within.partial is not None and refused.partial is None


async def test_a_change_to_a_closed_period_is_still_refused_as_closed(
    client, redis_url, key_prefix
):
    """Over the limit too, a correction of a FIDE event in a closed period says so
    (period_closed), as without the limit: the refusal reads the pool states."""
    settings = settings_for(redis_url, key_prefix, max_cascade_events=1)
    processor = StreamProcessor(client, settings, settings.input_streams[0], default_registry())
    await processor.ensure_group()
    players = rated_list("fide", 4)
    await import_records(client, StreamKeys(settings.input_streams[0]), players)

    def fide_event(n: int, day: str) -> dict:
        return {
            **round_robin_event("fide", players, event_id=f"f{n}"),
            "start_date": day,
            "end_date": day,
        }

    messages = [fide_event(n, f"2025-09-{n + 10}") for n in range(3)]
    messages.append(
        {"schema": "period.closed/v1", "system": "fide", "pool": "standard", "period": "2025-09"}
    )
    messages += [fide_event(n, f"2025-10-{n + 10}") for n in range(3, 6)]
    for entry in await publish(client, settings, *messages):
        await processor.handle(entry)
    assert await rejections(client, settings) == []
    correction = {**messages[0], "schema": "event.corrected/v1", "reason": "result entered wrong"}
    correction["games"] = [{**correction["games"][0], "score": 0.5}, *correction["games"][1:]]
    await handle(client, settings, processor, correction)
    [refused] = await rejections(client, settings)
    assert (refused.reason, refused.event_id) == ("period_closed", "f0")
