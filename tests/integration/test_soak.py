"""Soak: a season of mixed events (CFC, FIDE with month-end period closes, NASPA) through
two replicas, one of them SIGKILLed and restarted every few seconds. At the end: the
records equal an offline `rate`, one ratings.updated per event, nothing pending, lag 0.

CI runs 2,000 events; the full 20,000: `python -m pytest -m soak_full --soak-full`."""

from __future__ import annotations

import asyncio
import time

import pytest
import redis.asyncio as aioredis

from service.runtime.keys import StreamKeys
from service.runtime.records_io import import_records
from tests.integration.helpers import publish, settings_for
from tests.integration.mixed_events import season, starting_lists
from tests.integration.processes import Services, check_final_state

pytestmark = [pytest.mark.integration, pytest.mark.slow]


async def soak(redis_url: str, prefix: str, tmp_path, events: int, kill_every: float) -> dict:
    settings = settings_for(redis_url, prefix)
    stream = settings.input_streams[0]
    client = aioredis.Redis.from_url(redis_url)
    await import_records(client, StreamKeys(stream), starting_lists())
    messages = season(events, seed=events)
    services = Services(settings)
    started = time.monotonic()
    kills = 0
    publishing_done = asyncio.Event()

    async def killer(victim) -> None:
        nonlocal kills
        while (
            not publishing_done.is_set() or await client.get(StreamKeys(stream).cursor) != last_id
        ):
            await asyncio.sleep(kill_every)
            services.kill(victim)  # SIGKILL, whatever it is doing
            victim = services.start()
            kills += 1

    try:
        steady = services.start()
        last_id = None
        killing = asyncio.create_task(killer(services.start()))
        for start in range(0, len(messages), 50):
            ids = await publish(client, settings, *messages[start : start + 50])
            last_id = ids[-1].encode()
            await asyncio.sleep(0.1)
        publishing_done.set()
        await asyncio.wait_for(killing, timeout=300)
        await check_final_state(
            client, settings, messages, tmp_path, starting_lists(), services=services
        )
        [group] = [
            g for g in await client.xinfo_groups(stream) if g["name"].decode() == settings.group
        ]
        assert group["lag"] == 0 and group["pending"] == 0
        assert steady.poll() is None
    finally:
        services.stop_all()
        await client.aclose()
    return {"events": events, "seconds": time.monotonic() - started, "kills": kills}


async def test_soak_two_replicas_one_killed_every_few_seconds(redis_url, key_prefix, tmp_path):
    figures = await soak(redis_url, key_prefix, tmp_path, events=2_000, kill_every=1.5)
    assert figures["kills"] >= 2


@pytest.mark.soak_full
async def test_soak_full_size(redis_url, key_prefix, tmp_path, request):
    if not request.config.getoption("--soak-full"):
        pytest.skip("the full-size soak runs with --soak-full")
    figures = await soak(redis_url, key_prefix, tmp_path, events=20_000, kill_every=3.0)
    print(f"soak: {figures}")
