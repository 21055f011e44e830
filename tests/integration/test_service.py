"""The whole service as separate processes against a real Redis: SIGKILL at random points,
several replicas, reclaiming a dead consumer's entries, SIGTERM. Whatever happens, the final
records equal an offline re-rate of the same entries in the same order, every event has
exactly one output, and nothing is left pending."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest
import redis.asyncio as aioredis

from schemas import PlayerRecord
from schemas.validation import InvalidMessage, decode_input
from service.rating import Duplicate, MemoryLedger, Rejected
from service.store import StreamKeys
from tests.engines import counting_registry
from tests.integration.helpers import outputs, pending, publish, rejections, settings_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]


def random_events(count: int, seed: int, players: int = 24) -> list[dict]:
    """Events among a small club, so that ratings carry from one event to the next."""
    rng = random.Random(seed)
    events = []
    for n in range(count):
        ids = rng.sample([f"p{i}" for i in range(players)], 4)
        games = [
            {"round": r + 1, "a": a, "b": b, "score": rng.choice([0, 0.5, 1])}
            for r, (a, b) in enumerate([(ids[0], ids[1]), (ids[2], ids[3]), (ids[0], ids[2]), (ids[1], ids[3])])
        ]
        events.append({
            "schema": "event.finished/v1", "event_id": f"ev-{seed}-{n}", "system": "cfc",
            "name": f"Club night {n}", "start_date": "2025-11-01", "end_date": "2025-11-01",
            "rounds": 4, "players": [{"id": i} for i in ids], "games": games,
        })
    return events


class Services:
    """Service processes on one set of settings (the environment they read)."""

    def __init__(self, settings, engines: str = "counting"):
        self.env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "RATING_REDIS_URL": settings.redis_url,
            "RATING_INPUT_STREAMS": ",".join(settings.input_streams),
            "RATING_OUTPUT_STREAM": settings.output_stream,
            "RATING_DEAD_LETTER_STREAM": settings.dead_letter_stream,
            "RATING_GROUP": settings.group,
            "RATING_CLAIM_IDLE_MS": str(settings.claim_idle_ms),
            "RATING_POLL_MS": str(settings.poll_ms),
            "RATING_LOG_JSON": "true",
            "RATING_LOG_LEVEL": "WARNING",
        }
        self.env.pop("RATING_CONSUMER", None)
        self.engines = engines
        self.running: list[subprocess.Popen] = []

    def start(self) -> subprocess.Popen:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.integration.service_runner", self.engines],
            cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        self.running.append(process)
        return process

    def kill(self, process: subprocess.Popen, sig: int = signal.SIGKILL) -> int:
        process.send_signal(sig)
        code = process.wait(timeout=40)
        self.running.remove(process)
        return code

    def stop_all(self) -> None:
        for process in list(self.running):
            self.kill(process, signal.SIGTERM)


def offline_records(entries, registry) -> dict[str, PlayerRecord]:
    """The offline twin over the stream's own entries, in order (rate --keep-going)."""
    ledger = MemoryLedger()
    for raw_id, fields in entries:
        try:
            ledger.process(decode_input(fields[b"__data__"]), registry, raw_id.decode())
        except (InvalidMessage, Rejected):
            continue
    return {r.id: r for r in ledger.all_records()}


async def stored_records(client, settings) -> dict[str, PlayerRecord]:
    raw = await client.hgetall(StreamKeys(settings.input_streams[0]).players("cfc", "regular"))
    return {k.decode(): msgspec.json.decode(v, type=PlayerRecord) for k, v in raw.items()}


async def wait_until_applied(client, settings, timeout: float = 60.0) -> None:
    stream = settings.input_streams[0]
    [(last_id, _)] = await client.xrevrange(stream, count=1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        cursor = await client.get(StreamKeys(stream).cursor)
        if cursor == last_id and await pending(client, settings) == 0:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"not applied in {timeout}s: cursor {cursor!r}, last {last_id!r}")


async def check_final_state(client, settings, events: list[dict]) -> None:
    await wait_until_applied(client, settings)
    entries = await client.xrange(settings.input_streams[0])
    assert await stored_records(client, settings) == offline_records(entries, counting_registry())
    produced = await outputs(client, settings)
    assert [o.event_id for o in produced] == [e["event_id"] for e in events]  # once each, in order
    assert [o.source_id for o in produced] == [raw_id.decode() for raw_id, _ in entries]
    assert await rejections(client, settings) == []
    assert await pending(client, settings) == 0
    assert await client.hlen(StreamKeys(settings.input_streams[0]).attempts) == 0


@pytest.fixture
async def client(redis_url):
    client = aioredis.Redis.from_url(redis_url)
    yield client
    await client.aclose()


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_sigkill_at_random_points_loses_and_doubles_nothing(client, redis_url, key_prefix, seed):
    settings = settings_for(redis_url, key_prefix)
    services = Services(settings)
    rng = random.Random(seed)
    events = random_events(200, seed)
    try:
        process = services.start()
        sent = 0
        while sent < len(events):
            batch = events[sent : sent + rng.randint(5, 30)]
            await publish(client, settings, *batch)
            sent += len(batch)
            await asyncio.sleep(rng.uniform(0.0, 0.3))
            if rng.random() < 0.5:
                services.kill(process)  # SIGKILL: no clean-up at all
                process = services.start()
        await check_final_state(client, settings, events)
    finally:
        services.stop_all()


@pytest.mark.parametrize("replicas", [2, 3])
async def test_replicas_consume_the_same_group(client, redis_url, key_prefix, replicas):
    settings = settings_for(redis_url, key_prefix)
    services = Services(settings)
    events = random_events(200, 10 + replicas)
    try:
        for _ in range(replicas):
            services.start()
        for start in range(0, len(events), 20):
            await publish(client, settings, *events[start : start + 20])
            await asyncio.sleep(0.05)
        await check_final_state(client, settings, events)
    finally:
        services.stop_all()


async def test_replicas_with_sigkill(client, redis_url, key_prefix):
    settings = settings_for(redis_url, key_prefix)
    services = Services(settings)
    rng = random.Random(7)
    events = random_events(200, 7)
    try:
        for _ in range(3):
            services.start()
        for start in range(0, len(events), 25):
            await publish(client, settings, *events[start : start + 25])
            await asyncio.sleep(rng.uniform(0.05, 0.2))
            services.kill(rng.choice(services.running))
            services.start()
        await check_final_state(client, settings, events)
    finally:
        services.stop_all()


async def test_entries_of_a_consumer_that_never_comes_back_are_reclaimed(client, redis_url, key_prefix):
    settings = settings_for(redis_url, key_prefix)
    stream = settings.input_streams[0]
    events = random_events(5, 42)
    await client.xgroup_create(stream, settings.group, id="0", mkstream=True)
    await publish(client, settings, *events)
    # A consumer reads everything, then disappears without acknowledging anything.
    taken = await client.xreadgroup(settings.group, "gone-for-good", {stream: ">"})
    assert len(taken[0][1]) == 5 and await pending(client, settings) == 5
    services = Services(settings)
    try:
        services.start()
        await check_final_state(client, settings, events)
    finally:
        services.stop_all()


async def test_sigterm_finishes_cleanly(client, redis_url, key_prefix):
    settings = settings_for(redis_url, key_prefix)
    services = Services(settings)
    events = random_events(100, 5)
    try:
        process = services.start()
        await publish(client, settings, *events)
        cursor_key = StreamKeys(settings.input_streams[0]).cursor
        while not await client.exists(cursor_key):  # started and consuming
            await asyncio.sleep(0.02)
        code = services.kill(process, signal.SIGTERM)
        stderr = process.stderr.read().decode()
        assert code == 0, stderr
        assert "Traceback" not in stderr
        services.start()
        await check_final_state(client, settings, events)
    finally:
        services.stop_all()
