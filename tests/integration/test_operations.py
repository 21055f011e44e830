"""What operators watch and rely on: the health endpoint, the metrics, the AsyncAPI document
served; a start-up that cannot work exits at once; SIGTERM is honoured at every stage."""

from __future__ import annotations

import asyncio
import errno
import importlib.metadata
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import time

import pytest
import redis
import redis.asyncio as aioredis

from service.engine.registry import Registry
from service.runtime.app import ServiceFailed, build_app, serve
from service.runtime.embedded import free_port
from service.runtime.health import Health
from service.runtime.metrics import Metrics
from service.runtime.processor import StreamProcessor
from service.web.app import create_app
from service.web.server import HttpServer
from tests.engines import CountingEngine, counting_registry
from tests.fakereads import FakeReads
from tests.integration.helpers import outputs, publish, settings_for
from tests.integration.processes import (
    ROOT,
    PrivateRedis,
    Services,
    http_get,
    load_club,
    log_containing,
    random_events,
)
from tests.integration.tcpproxy import CuttingProxy
from tests.messages import event

pytestmark = pytest.mark.integration


@pytest.fixture
async def private_redis():
    server = PrivateRedis()
    server.start()
    await server.wait_ready()
    yield server
    server.remove()


async def ready_status(port: int, wanted: int, timeout: float = 60.0) -> bytes:
    """The body of /health/ready once it answers `wanted`: each answer takes a PING of up to
    a second, which a loaded machine can outrun, so the flip is awaited, not timed."""
    deadline = time.monotonic() + timeout
    while True:
        status, body = await http_get(port, "/health/ready")
        if status == wanted:
            return body
        assert time.monotonic() < deadline, (
            f"/health/ready not {wanted} in {timeout} s; last {status} {body!r}"
        )
        await asyncio.sleep(0.1)


async def test_readiness_flips_when_redis_stops_and_comes_back(private_redis):
    port = free_port()
    settings = settings_for(private_redis.url, "ops", http_port=port, http_host="127.0.0.1")
    app = build_app(settings, counting_registry())
    async with app:
        assert await http_get(port, "/health/live") == (200, b'{"status":"live"}')
        await ready_status(port, 200)
        private_redis.stop()
        body = await ready_status(port, 503)
        assert json.loads(body)["status"] == "unready"
        assert (await http_get(port, "/health/live"))[0] == 200  # alive, just not ready
        private_redis.start()
        await private_redis.wait_ready()
        await ready_status(port, 200)
        status, body = await http_get(port, "/asyncapi.json")
        assert status == 200 and json.loads(body)["asyncapi"].startswith("3.")
        status, body = await http_get(port, "/openapi.json")
        assert status == 200 and json.loads(body)["openapi"].startswith("3.1")
        assert (await http_get(port, "/docs"))[0] == 200
        assert (await http_get(port, "/nope")) == (
            404,
            b'{"error":"not_found","message":"no such path: /nope"}',
        )


async def test_the_http_server_serves_in_the_loop_and_leaves_the_signals_to_the_service(redis_url):
    """uvicorn on a socket bound by the service: the read API over real HTTP, SIGTERM and
    SIGINT untouched, a taken port an OSError (not uvicorn's sys.exit), a clean stop."""
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    metrics = Metrics()
    client = aioredis.Redis.from_url(redis_url)
    server = HttpServer(
        create_app(FakeReads(), Health(client, metrics, redis_url), metrics), "127.0.0.1", 0
    )
    await server.start()
    try:
        assert server.port != 0
        status, body = await http_get(server.port, "/v1/pools/cfc/regular/players/100001")
        assert status == 200 and json.loads(body)["name"] == "Anne Tremblay"
        assert await http_get(server.port, "/health/ready") == (
            200,
            b'{"status":"ready","redis":"ok"}',
        )
        status, body = await http_get(server.port, "/pools/cfc/regular")
        assert status == 200 and b"Anne Tremblay" in body
        assert {sig: signal.getsignal(sig) for sig in before} == before
        with pytest.raises(OSError) as taken:
            await HttpServer(create_app(None, None, None), "127.0.0.1", server.port).start()
        assert taken.value.errno == errno.EADDRINUSE
    finally:
        await server.stop()
        await client.aclose()
    with pytest.raises(OSError):
        await asyncio.open_connection("127.0.0.1", server.port)
    assert {sig: signal.getsignal(sig) for sig in before} == before


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
    ids = await publish(
        client, settings, event(), event(), b"nonsense", event(event_id="x", system="go")
    )
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
    assert (
        sample(metrics, "rating_events_rejected_total", stream=stream, reason="unknown_system") == 1
    )
    assert sample(metrics, "rating_commit_seconds_count", stream=stream) == 1  # one batch of four
    assert sample(metrics, "rating_entries_per_commit_sum", stream=stream) == 4
    assert sample(metrics, "rating_transaction_retries_total", stream=stream) == 0

    # Another replica commits between this one's read and its EXEC: a WatchError, retried.
    [late] = await publish(client, settings, event(event_id="late"))
    racing = StreamProcessor(client, settings, stream, counting_registry(), metrics)
    original = racing.apply_entries
    winner = redis.Redis.from_url(redis_url)

    def apply_then_lose_the_race(entries, ledger):
        decisions = original(entries, ledger)
        winner.set(processor.keys.cursor, late)  # as the winning replica's commit does
        return decisions

    racing.apply_entries = apply_then_lose_the_race
    await racing.handle(late)
    winner.close()
    assert sample(metrics, "rating_transaction_retries_total", stream=stream) == 1
    assert [o.event_id for o in await outputs(client, settings)] == [
        "club-2025-11-a"
    ]  # the loser wrote nothing
    await client.aclose()


async def test_lag_in_seconds_dead_letters_and_a_recreated_group_move(redis_url, key_prefix):
    client = aioredis.Redis.from_url(redis_url)
    settings = settings_for(redis_url, key_prefix, batch_size=1)  # one entry per commit
    stream = settings.input_streams[0]
    metrics = Metrics()
    processor = StreamProcessor(client, settings, stream, counting_registry(), metrics)
    await processor.ensure_group()
    assert await processor.observe_group()
    assert sample(metrics, "rating_consumer_lag_seconds", stream=stream) == 0
    assert (
        sample(metrics, "rating_dead_letter_stream_length", stream=settings.dead_letter_stream) == 0
    )
    # Entries waiting (nobody consumes): the lag is the age of the oldest one not applied.
    first, second = await publish(client, settings, event(), b"nonsense")
    await asyncio.sleep(0.3)
    await processor.observe_group()
    assert 0.3 <= sample(metrics, "rating_consumer_lag_seconds", stream=stream) < 30
    await processor.handle(first)
    await asyncio.sleep(0.1)
    await processor.observe_group()
    assert (
        sample(metrics, "rating_consumer_lag_seconds", stream=stream) >= 0.3
    )  # the second still waits
    await processor.handle(second)
    await processor.observe_group()
    assert sample(metrics, "rating_consumer_lag_seconds", stream=stream) == 0
    assert (
        sample(metrics, "rating_dead_letter_stream_length", stream=settings.dead_letter_stream) == 1
    )
    # The group is lost (XGROUP DESTROY of this test's own group): found missing, created
    # again at the applied cursor, counted.
    await client.xgroup_destroy(stream, settings.group)
    assert not await processor.observe_group()
    assert await processor.recover_group()
    assert not await processor.recover_group()  # another replica's attempt: already there
    assert sample(metrics, "rating_consumer_group_recreated_total", stream=stream) == 1
    [group] = await client.xinfo_groups(stream)
    assert group["last-delivered-id"].decode() == second and group["lag"] == 0
    await client.aclose()


def scrape(text: str) -> dict[tuple, float]:
    """The samples of a Prometheus text page: (name, sorted labels) -> value."""
    from prometheus_client.parser import text_string_to_metric_families

    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


async def test_metrics_page_has_process_build_lag_and_dead_letter_metrics(redis_url, key_prefix):
    port = free_port()
    settings = settings_for(redis_url, key_prefix, http_port=port, http_host="127.0.0.1")
    app = build_app(settings, counting_registry())
    async with app:
        status, body = await http_get(port, "/metrics")
        assert status == 200
        page = scrape(body.decode())
        expected_build = (
            ("python", platform.python_version()),
            ("version", importlib.metadata.version("rating-service")),
        )
        assert page[("rating_service_build_info", expected_build)] == 1
        assert page[("process_resident_memory_bytes", ())] > 10_000_000
        assert ("python_gc_collections_total", (("generation", "0"),)) in page
        cpu = page[("process_cpu_seconds_total", ())]
        sum(i * i for i in range(3_000_000))  # some work: the CPU counter moves
        # The periodic observer (every 2 s) sets the dead-letter length after a malformed entry.
        client = aioredis.Redis.from_url(redis_url)
        await publish(client, settings, b"nonsense")
        await client.aclose()
        dead = ("rating_dead_letter_stream_length", (("stream", settings.dead_letter_stream),))
        for _ in range(100):
            page = scrape((await http_get(port, "/metrics"))[1].decode())
            if page.get(dead) == 1:
                break
            await asyncio.sleep(0.1)
        assert page[dead] == 1
        assert page[("process_cpu_seconds_total", ())] > cpu
        assert page[("rating_consumer_lag_seconds", (("stream", settings.input_streams[0]),))] == 0


async def wait_exit(process: subprocess.Popen, timeout: float = 30.0) -> tuple[int, float]:
    """The exit code and how long the process took to exit (the event loop stays free)."""
    started = time.monotonic()
    while process.poll() is None:
        if time.monotonic() - started > timeout:
            process.kill()
            raise AssertionError(f"still running {timeout}s after SIGTERM")
        await asyncio.sleep(0.02)
    return process.returncode, time.monotonic() - started


@pytest.mark.parametrize(
    ("environment", "code", "line"),
    [
        (
            {"RATING_HTTP_HOST": "127.0.0.1", "RATING_HTTP_PORT": "{port}"},
            1,
            "rating-service serve: HTTP port 127.0.0.1:{port} is already in use (RATING_HTTP_PORT)",
        ),
        (
            {"RATING_HTTP_PORT": "eighty"},
            2,
            "rating-service serve: RATING_HTTP_PORT='eighty': must be a positive whole number",
        ),
    ],
    ids=["http-port-in-use", "bad-setting"],
)
def test_a_start_up_that_retrying_cannot_fix_exits_at_once_with_one_line(environment, code, line):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "RATING_LOG_JSON": "true",
            # No Redis there: the service fails before it would wait for one.
            "RATING_REDIS_URL": f"redis://127.0.0.1:{free_port()}/0",
            **{k: v.format(port=port) for k, v in environment.items()},
        }
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "service", "serve"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert (done.returncode, done.stderr) == (code, line.format(port=port) + "\n")
    assert time.monotonic() - started < 10


STAGES = [
    "at-once",
    "waiting-for-redis",
    "between-start-up-tries",
    "during-faststream-start",
    "right-after-ready",
    "redis-away-after-ready",
]
# FastStream's own XGROUP CREATE (at "$"); the service's own creates the group at 0 or the cursor.
FASTSTREAM_XGROUP = b"$1\r\n$\r\n"


@pytest.mark.parametrize("stage", STAGES)
async def test_sigterm_is_honoured_at_every_stage_of_start_up(stage):
    """`rating-service serve` exits 0, within a few seconds and without a traceback, whenever
    SIGTERM comes. (`at-once`: before Python has loaded the service, the signal's default
    action ends it, exit status 128 + 15, which is as clean.)"""
    server = PrivateRedis()  # a redis-server on PATH, else the embedded server's binary
    proxy = None
    if stage != "waiting-for-redis":
        server.start()
        await server.wait_ready()
    if stage == "between-start-up-tries":  # FastStream's start-up is cut, again and again
        proxy = CuttingProxy(
            "127.0.0.1",
            server.port,
            cut_on=FASTSTREAM_XGROUP,
            cut_occurrences=frozenset(range(1, 100)),
        )
    if stage == "during-faststream-start":  # FastStream's first XGROUP is never answered
        proxy = CuttingProxy(
            "127.0.0.1", server.port, cut_on=FASTSTREAM_XGROUP, stall_occurrences=frozenset({1})
        )
    if proxy is not None:
        await proxy.start()
    url = f"redis://127.0.0.1:{proxy.port}/0" if proxy else server.url
    services = Services(settings_for(url, "sigterm"), command=("-m", "service", "serve"))
    services.env["RATING_LOG_LEVEL"] = "INFO"
    try:
        process = services.start()
        if stage == "waiting-for-redis":
            await log_containing(services, process, "waiting for redis")
        elif stage == "between-start-up-tries":
            # The fourth try failed; the next is 0.8 s away.
            deadline = time.monotonic() + 60
            while services.logs(process).count("start-up interrupted, starting again") < 4:
                assert process.poll() is None and time.monotonic() < deadline, (
                    f"no fourth start-up try in 60 s:\n{services.logs(process)[-3000:]}"
                )
                await asyncio.sleep(0.02)
        elif stage == "during-faststream-start":
            await asyncio.wait_for(proxy.stalled.wait(), 30)
        elif stage in ("right-after-ready", "redis-away-after-ready"):
            await log_containing(services, process, '"event": "ready"')
            if stage == "redis-away-after-ready":
                server.stop()
                await log_containing(services, process, "redis unreachable")
        assert process.poll() is None, services.logs(process)
        process.send_signal(signal.SIGTERM)
        code, took = await wait_exit(process)
        services.running.remove(process)
        log = services.logs(process)
        assert took < 5, log
        assert "Traceback" not in log, log
        if stage == "at-once":
            assert code in (0, -signal.SIGTERM), log
        else:
            assert code == 0, log
            assert '"event": "stopped' in log, log  # "stopped" or "stopped during start-up"
    finally:
        services.stop_all()
        if proxy is not None:
            await proxy.stop()
        server.remove()


# FastStream's own runner, as docs/operations/index.md shows it: the app from the factory.
FASTSTREAM_RUN = ("-m", "faststream", "run", "service.app:build_app", "--factory")


async def test_faststream_run_with_the_factory_rates_and_stops_on_sigterm(redis_url, key_prefix):
    """`faststream run service.app:build_app --factory`: the app the factory builds from the
    environment rates an event, and FastStream's signal handling stops it cleanly (exit 0,
    the service's own "stopped" said, no traceback)."""
    settings = settings_for(redis_url, key_prefix)
    services = Services(settings, command=FASTSTREAM_RUN)
    services.env["RATING_LOG_LEVEL"] = "INFO"
    client = aioredis.Redis.from_url(redis_url)
    try:
        await load_club(client, settings)
        [club_night] = random_events(1, seed=28)
        process = services.start()
        await log_containing(services, process, '"event": "starting"')
        await publish(client, settings, club_night)
        deadline = time.monotonic() + 60
        while not await outputs(client, settings):
            assert process.poll() is None and time.monotonic() < deadline, services.logs(process)
            await asyncio.sleep(0.1)
        assert [o.event_id for o in await outputs(client, settings)] == [club_night["event_id"]]
        process.send_signal(signal.SIGTERM)
        code, _ = await wait_exit(process)
        services.running.remove(process)
        log = services.logs(process)
        assert code == 0, log
        assert "Traceback" not in log, log
        assert '"event": "stopped"' in log, log
    finally:
        services.stop_all()
        await client.aclose()


class ExitingEngine(CountingEngine):
    """The test double, whose rating of an event named "exit" raises SystemExit: FastStream
    stops that subscriber for good and asks the app to exit."""

    def rate_event(self, data):
        if data.event.name == "exit":
            raise SystemExit(3)
        return super().rate_event(data)


async def test_a_subscriber_that_stops_for_good_makes_serve_fail(redis_url, key_prefix):
    """`serve` hears the app asked to exit (faststream_seams.ExitAwareApp) and raises
    ServiceFailed (exit 1) rather than returning as it does on SIGTERM."""
    settings = settings_for(redis_url, key_prefix)
    client = aioredis.Redis.from_url(redis_url)
    try:
        await publish(client, settings, event(name="exit"))
        with pytest.raises(ServiceFailed, match="a subscriber stopped for good"):
            await asyncio.wait_for(serve(settings, Registry([ExitingEngine()])), 60)
    finally:
        await client.aclose()
