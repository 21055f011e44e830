"""Corrections, withdrawals and late events through the service (design "Order (v1.1)"):
the StreamProcessor in-process on a real Redis, and the service as its own process.

A random mix of three cases in one input stream (CFC; FIDE with a period closed between
two; NASPA nwl + csw): the store, the archive, timelines and histories, the output stream
and the dead letters equal the offline twin of the same entries in the same arrival order
(and `rating-service rate`), and the date-order fold of the final events. A cascade of
hundreds of revisions is seen whole or not at all, and `replay` of such a stream equals
the live state.
"""

from __future__ import annotations

import asyncio
import random

import msgspec
import pytest
import redis.asyncio as aioredis

from schemas import PlayerRecord, RatingsUpdated
from service.cli.main import main
from service.engine.registry import default_registry
from service.formats.ratinglists import render_jsonl
from service.runtime.keys import StreamKeys
from service.runtime.processor import StreamProcessor
from service.runtime.records_io import import_records
from tests.integration.corrections import (
    check_against_offline_and_fold,
    load_lists,
    mixed,
    publish_all,
    redis_structures,
)
from tests.integration.helpers import rejections, settings_for
from tests.integration.processes import Services, stored_records, wait_until_applied

pytestmark = pytest.mark.integration


def invalid_corrections() -> list[dict]:
    """A correction that moves an event to another pool, and one of an event never rated."""
    base = {
        "schema": "event.corrected/v1",
        "system": "cfc",
        "name": "Club night",
        "start_date": "2025-11-04",
        "end_date": "2025-11-04",
        "rounds": 1,
        "players": [{"id": "cfc.c0"}, {"id": "cfc.c1"}],
        "games": [{"round": 1, "a": "cfc.c0", "b": "cfc.c1", "score": 1}],
    }
    return [
        dict(base, event_id="cfc.e0", pool="active"),
        dict(base, event_id="no-such-event", pool="regular"),
    ]


async def run_in_process(client, settings, messages, seed: int) -> list[str]:
    """Publish in chunks of random size, applying each chunk before the next arrives (so
    that late events and corrections find their pool already rated)."""
    rng = random.Random(seed)
    stream = settings.input_streams[0]
    processor = StreamProcessor(client, settings, stream, default_registry())
    await processor.ensure_group()
    ids: list[str] = []
    at = 0
    while at < len(messages):
        size = rng.randint(1, 40)
        chunk = await publish_all(client, stream, messages[at : at + size])
        await client.xreadgroup(settings.group, "c1", {stream: ">"}, count=1_000)
        await processor.handle(chunk[-1])
        ids += chunk
        at += size
    return ids


async def test_a_mixed_stream_ends_as_offline_and_as_the_date_order_fold(
    client, redis_url, key_prefix, tmp_path
):
    settings = settings_for(redis_url, key_prefix, batch_size=16)
    stream = settings.input_streams[0]
    m = mixed(seed=11)
    m.messages += invalid_corrections()
    m.expected += [("rejected", "invalid", "$.pool"), ("rejected", "invalid", "$.event_id")]
    await load_lists(client, stream, m)
    await run_in_process(client, settings, m.messages, seed=11)
    twin = await check_against_offline_and_fold(client, settings, m, tmp_path)

    kinds = {(o.kind, o.cause.type if o.cause else None, o.withdrawn) for o in twin.outputs}
    assert {
        ("revision", "inserted", False),
        ("revision", "corrected", False),
        ("revision", "withdrawn", True),
        ("revision", "withdrawn", False),
        ("event", None, False),
        ("list", None, False),
    } <= kinds
    dead = await rejections(client, settings)
    by_path = {(r.reason, r.path) for r in dead}
    assert {
        ("invalid", "$.pool"),
        ("invalid", "$.event_id"),
        ("conflict", "$"),
        ("period_closed", "$.period"),
    } <= by_path
    pool, unknown = dead[-2:]
    assert "pool 'regular'" in pool.message and pool.event_id == "cfc.e0"
    assert (
        "'no-such-event' is not a rated event" in unknown.message
        and unknown.event_id == "no-such-event"
    )


async def test_replay_of_corrections_withdrawals_and_late_events_equals_the_live_state(
    client, redis_url, key_prefix, tmp_path, capsys
):
    settings = settings_for(redis_url, key_prefix, batch_size=32)
    stream = settings.input_streams[0]
    m = mixed(seed=23, events=24, extra=30)
    await load_lists(client, stream, m)
    await run_in_process(client, settings, m.messages, seed=23)
    listing = tmp_path / "start.jsonl"
    listing.write_bytes(render_jsonl(m.start))
    applied = sum(1 for what, _, _ in m.expected if what == "applied")
    duplicates = sum(1 for what, _, _ in m.expected if what == "duplicate")
    capsys.readouterr()
    code = await asyncio.to_thread(
        main,
        [
            "replay",
            "--into",
            "rp",
            "--ratings",
            str(listing),
            "--page",
            "50",
            "--stream",
            stream,
            "--redis-url",
            redis_url,
        ],
    )
    assert code == 0
    report = capsys.readouterr().out
    assert (
        f"replayed {len(m.messages):,} entries: {applied:,} applied, {duplicates:,} duplicates, "
        f"{len(m.messages) - applied - duplicates:,} rejected"
    ) in report
    assert "no differences from the live state" in report, report
    live, replayed = StreamKeys(stream), StreamKeys(stream, namespace="rp")
    ours = await redis_structures(client, live)
    theirs = await redis_structures(client, replayed)
    assert len(ours["events"]) > 40 and len(ours) > 20
    # The archive, the timelines and the histories too: key for key, byte for byte.
    assert {k.replace("rp:", "", 1): v for k, v in theirs.items()} == ours
    assert await client.hgetall(replayed.markers) == await client.hgetall(live.markers)
    assert await client.hgetall(replayed.pools) == await client.hgetall(live.pools)


# ------------------------------------------------------------------ a long cascade, atomic


def club_season(events: int, players: int, seed: int) -> tuple[list[PlayerRecord], list[dict]]:
    """A CFC club's events in date order (three a day), four players each."""
    rng = random.Random(seed)
    ids = [f"k{i}" for i in range(players)]
    start = [
        PlayerRecord(
            system="cfc",
            pool="regular",
            id=p,
            rating=1300 + 25 * i,
            status="established",
            games=40,
            highest=1300 + 25 * i,
        )
        for i, p in enumerate(ids)
    ]
    made = []
    first = __import__("datetime").date(2024, 1, 1)
    for n in range(events):
        day = (first + __import__("datetime").timedelta(days=n // 3)).isoformat()
        four = rng.sample(ids, 4)
        games = [
            {"round": r + 1, "a": a, "b": b, "score": rng.choice([0, 0.5, 1])}
            for r, (a, b) in enumerate(
                [(four[0], four[1]), (four[2], four[3]), (four[0], four[2]), (four[1], four[3])]
            )
        ]
        made.append(
            {
                "schema": "event.finished/v1",
                "event_id": f"k{n}",
                "system": "cfc",
                "name": f"Night {n}",
                "start_date": day,
                "end_date": day,
                "rounds": 4,
                "players": [{"id": p} for p in four],
                "games": games,
            }
        )
    return start, made


def flipped(event: dict) -> dict:
    """A correction of the event: every result reversed (its players' ratings all change)."""
    return dict(
        event,
        schema="event.corrected/v1",
        reason="results entered the wrong way round",
        games=[dict(g, score=1 - g["score"]) for g in event["games"]],
    )


@pytest.mark.slow
async def test_a_cascade_of_hundreds_of_revisions_is_seen_whole_or_not_at_all(
    redis_url, key_prefix, tmp_path
):
    settings = settings_for(redis_url, key_prefix)
    stream = settings.input_streams[0]
    client = aioredis.Redis.from_url(redis_url)
    start, season = club_season(400, 12, seed=5)
    await import_records(client, StreamKeys(stream), start)
    services = Services(settings)
    try:
        services.start()
        await publish_all(client, stream, season)
        await wait_until_applied(client, settings)
        before_records = await stored_records(client, settings)
        before = await client.xlen(settings.output_stream)
        [correction_id] = await publish_all(client, stream, [flipped(season[0])])
        # Poll, as a reader would, until the correction's effect is there: each snapshot (one
        # MULTI) shows either none of its revisions and the old records, or all and the new.
        seen = []
        records_key = StreamKeys(stream).players("cfc", "regular")
        for _ in range(20_000):
            async with client.pipeline(transaction=True) as pipe:
                pipe.xrange(settings.output_stream, min="-", max="+")
                pipe.hgetall(records_key)
                entries, records = await pipe.execute()
            revisions = [
                msgspec.json.decode(f[b"__data__"], type=RatingsUpdated)
                for _, f in entries[before:]
            ]
            mine = [o for o in revisions if o.source_id == correction_id]
            assert len(mine) == len(revisions)
            seen.append((len(mine), records))
            if mine:
                break
            await asyncio.sleep(0.002)
        counts = {n for n, _ in seen}
        final = len(mine)
        assert counts == {0, final} and final > 300, counts  # never a part
        old = {p: r for (_, _, p), r in before_records.items()}
        for n, records in seen:
            decoded = {
                k.decode(): msgspec.json.decode(v, type=PlayerRecord) for k, v in records.items()
            }
            assert (decoded == old) == (n == 0)
        assert len([n for n, _ in seen if n == 0]) >= 3  # the reader did look during the cascade
        assert mine[0].event_id == "k0" and mine[0].cause.type == "corrected"
        assert all(o.cause.event_id == "k0" and o.revision == 1 for o in mine)
        await wait_until_applied(client, settings)
    finally:
        services.stop_all()
        await client.aclose()
