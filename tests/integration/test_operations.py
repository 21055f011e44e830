"""What operators watch: the health endpoint, the metrics, the AsyncAPI document served."""

from __future__ import annotations

import json

import pytest
import redis
import redis.asyncio as aioredis

from service.runtime.app import build_app
from service.runtime.processor import StreamProcessor
from service.runtime.metrics import Metrics
from tests.engines import counting_registry
from tests.integration.helpers import outputs, publish, settings_for
from tests.integration.processes import PrivateRedis, free_port, http_get
from tests.messages import event

pytestmark = pytest.mark.integration


@pytest.fixture
async def private_redis():
    server = PrivateRedis()
    server.start()
    await server.wait_ready()
    yield server
    server.remove()


async def test_readiness_flips_when_redis_stops_and_comes_back(private_redis):
    port = free_port()
    settings = settings_for(private_redis.url, "ops", http_port=port, http_host="127.0.0.1")
    app = build_app(settings, counting_registry())
    async with app:
        assert await http_get(port, "/health/live") == (200, b'{"status":"live"}')
        assert (await http_get(port, "/health/ready"))[0] == 200
        private_redis.stop()
        status, body = await http_get(port, "/health/ready")
        assert status == 503 and json.loads(body)["status"] == "unready"
        assert (await http_get(port, "/health/live"))[0] == 200  # alive, just not ready
        private_redis.start()
        await private_redis.wait_ready()
        assert (await http_get(port, "/health/ready"))[0] == 200
        status, body = await http_get(port, "/asyncapi.json")
        assert status == 200 and json.loads(body)["asyncapi"].startswith("3.")
        assert (await http_get(port, "/nope"))[0] == 404


def sample(metrics: Metrics, name: str, **labels) -> float:
    value = metrics.registry.get_sample_value(name, labels)
    return value or 0.0


async def test_each_metric_moves_when_its_event_happens(redis_url, key_prefix):
    client = aioredis.Redis.from_url(redis_url)
    settings = settings_for(redis_url, key_prefix)
    stream = settings.input_streams[0]
    metrics = Metrics()
    processor = StreamProcessor(client, settings, stream, counting_registry(), metrics)
    await processor.ensure_group()
    ids = await publish(client, settings, event(), event(), b"nonsense", event(event_id="x", system="go"))
    await processor.observe_group()
    assert sample(metrics, "rating_consumer_group_lag", stream=stream) == 4
    assert sample(metrics, "rating_consumer_group_pending", stream=stream) == 0
    await client.xreadgroup(settings.group, "c", {stream: ">"})
    await processor.observe_group()
    assert sample(metrics, "rating_consumer_group_lag", stream=stream) == 0
    assert sample(metrics, "rating_consumer_group_pending", stream=stream) == 4
    await processor.handle(*ids)
    await processor.observe_group()
    assert sample(metrics, "rating_consumer_group_pending", stream=stream) == 0
    assert sample(metrics, "rating_events_rated_total", stream=stream, system="cfc") == 1
    assert sample(metrics, "rating_events_duplicate_total", stream=stream) == 1
    assert sample(metrics, "rating_events_rejected_total", stream=stream, reason="malformed") == 1
    assert sample(metrics, "rating_events_rejected_total", stream=stream, reason="unknown_system") == 1
    assert sample(metrics, "rating_commit_seconds_count", stream=stream) == 1  # one batch of four
    assert sample(metrics, "rating_entries_per_commit_sum", stream=stream) == 4
    assert sample(metrics, "rating_transaction_retries_total", stream=stream) == 0

    # Another replica commits between this one's read and its EXEC: a WatchError, retried.
    [late] = await publish(client, settings, event(event_id="late"))
    racing = StreamProcessor(client, settings, stream, counting_registry(), metrics)
    original = racing._apply
    winner = redis.Redis.from_url(redis_url)

    def apply_then_lose_the_race(entries, ledger):
        decisions = original(entries, ledger)
        winner.set(processor.keys.cursor, late)  # as the winning replica's commit does
        return decisions

    racing._apply = apply_then_lose_the_race
    await racing.handle(late)
    winner.close()
    assert sample(metrics, "rating_transaction_retries_total", stream=stream) == 1
    assert [o.event_id for o in await outputs(client, settings)] == ["club-2025-11-a"]  # the loser wrote nothing
    await client.aclose()
