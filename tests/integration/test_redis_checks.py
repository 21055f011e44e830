"""The Redis the service runs on, checked at start-up and while running (D24, D25), and the
consumer's outage figures (D26): private servers configured as an operator might have
(eviction, a replica, no AOF, a small maxmemory, an ACL without INFO), and real failed
commits (a cut connection, out of memory, a read-only replica)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from urllib.parse import urlsplit

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError, OutOfMemoryError, ReadOnlyError

from service.runtime.embedded import free_port
from service.runtime.keys import StreamKeys
from service.runtime.metrics import Metrics
from service.runtime.processor import StreamProcessor
from service.runtime.redischecks import RedisChecks
from tests.engines import counting_registry
from tests.integration.helpers import outputs, publish, settings_for
from tests.integration.processes import (
    ROOT,
    PrivateRedis,
    Services,
    check_final_state,
    http_get,
    load_club,
    log_containing,
    random_events,
)
from tests.integration.tcpproxy import CuttingProxy
from tests.messages import event
from tests.unit.test_redis_checks import fresh_log

pytestmark = pytest.mark.integration


@pytest.fixture
async def private():
    """Private servers started with extra configuration: `await private(*args)`."""
    servers: list[PrivateRedis] = []

    async def start(*extra: str) -> PrivateRedis:
        server = PrivateRedis(None, *extra)
        server.start()
        await server.wait_ready()
        servers.append(server)
        return server

    yield start
    for server in reversed(servers):
        if server.process is not None:  # throwaway data: no clean shutdown needed (a replica
            server.process.kill()  # resyncing from a master that was out of memory takes its time)
            server.process.wait()
            server.process = None
        server.remove()


def serve_once(url: str, prefix: str, **environment: str) -> subprocess.CompletedProcess:
    """`rating-service serve` on `url` until it exits by itself (a refusal)."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "RATING_REDIS_URL": url,
        "RATING_INPUT_STREAMS": f"{prefix}.events",
        "RATING_OUTPUT_STREAM": f"{prefix}.ratings",
        "RATING_DEAD_LETTER_STREAM": f"{prefix}.rejected",
        "RATING_HTTP_PORT": "0",
        "RATING_LOG_JSON": "true",
        **environment,
    }
    return subprocess.run(
        [sys.executable, "-m", "service", "serve"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def refusal(done: subprocess.CompletedProcess) -> str:
    """The one line a refused start-up ends with (after the JSON log lines, if any)."""
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    last = done.stderr.rstrip("\n").splitlines()[-1]
    assert last.startswith("rating-service serve: Redis at "), done.stderr
    return last


def check_lines(log: str, check: str) -> list[dict]:
    lines = []
    for line in log.splitlines():
        try:
            said = json.loads(line)
        except ValueError:
            continue
        if said.get("check") == check:
            lines.append(said)
    return lines


async def started(services: Services, **environment: str):
    services.env.update(RATING_LOG_LEVEL="INFO", **environment)
    process = services.start()
    await log_containing(services, process, '"event": "ready"')
    return process


async def test_an_evicting_redis_is_refused_at_start_up_unless_allowed(private):
    server = await private("--maxmemory-policy", "allkeys-lru")
    line = refusal(serve_once(server.url, "evict"))
    assert line == (
        f"rating-service serve: Redis at {server.url} is refused: maxmemory-policy allkeys-lru: when "
        "memory is full Redis deletes keys (records, markers, timelines, histories) and every rating "
        "after is wrong; fix: CONFIG SET maxmemory-policy noeviction, and maxmemory-policy noeviction "
        "in redis.conf (or RATING_ALLOW_EVICTION=true to run anyway)"
    )
    services = Services(settings_for(server.url, "evict"), command=("-m", "service", "serve"))
    try:
        process = await started(services, RATING_ALLOW_EVICTION="true")
        [warned] = check_lines(services.logs(process), "eviction")
        assert (warned["event"], warned["level"]) == ("redis check failed", "warning")
        assert warned["fix"].startswith("CONFIG SET maxmemory-policy noeviction")
    finally:
        services.stop_all()


async def test_a_replica_is_refused_at_start_up_naming_its_master(private):
    master = await private()
    replica = await private("--replicaof", "127.0.0.1", str(master.port))
    line = refusal(serve_once(replica.url, "replica"))
    assert f"is refused: a replica of 127.0.0.1:{master.port} (role:slave)" in line
    assert line.endswith(f"fix: point RATING_REDIS_URL at its master (127.0.0.1:{master.port})")


async def test_aof_off_is_one_warning_line_at_start_up_and_refused_when_required(private):
    server = await private("--appendonly", "no")
    settings = settings_for(server.url, "aof")
    services = Services(settings)
    try:
        process = await started(services)
        await asyncio.sleep(6)  # a check while running (every 5 s) says nothing new
        [warned] = check_lines(services.logs(process), "aof")
        assert (warned["event"], warned["level"]) == ("redis check failed", "warning")
        assert warned["problem"].startswith("appendonly no")
        assert warned["fix"] == "CONFIG SET appendonly yes, and appendonly yes in redis.conf"
    finally:
        services.stop_all()
    line = refusal(serve_once(server.url, "aof", RATING_REQUIRE_AOF="true"))
    assert "is refused: appendonly no" in line


async def test_the_memory_ratio_is_a_gauge_and_a_line_per_threshold_crossed(private, monkeypatch):
    server = await private()
    client = aioredis.Redis.from_url(server.url)
    metrics = Metrics()
    checks = RedisChecks(client, settings_for(server.url, "mem"), metrics, {})

    async def at(ratio: float) -> float:
        used = (await client.info("memory"))["used_memory"]
        await client.config_set("maxmemory", int(used / ratio))
        await checks.check()
        return metrics.registry.get_sample_value("rating_redis_memory_used_ratio")

    try:
        with fresh_log(monkeypatch) as logs:
            assert await checks.at_start() is None
            assert metrics.registry.get_sample_value("rating_redis_memory_used_ratio") == 0
            assert 0.82 < await at(0.85) < 0.88
            assert 0.82 < await at(0.86) < 0.88  # still high: nothing said
            assert 0.92 < await at(0.95) < 0.98
            assert 0.4 < await at(0.5) < 0.6
        said = [(line["event"], line["log_level"]) for line in logs]
        assert said == [
            ("redis memory high", "warning"),
            ("redis memory nearly full: commits fail (OOM) when it is", "error"),
            ("redis memory back under 0.8", "warning"),
        ]
        assert all(line["redis"] == server.url for line in logs)
    finally:
        await client.config_set("maxmemory", 0)
        await client.aclose()


async def test_info_refused_by_the_acl_is_one_warning_and_no_refusal(private, monkeypatch):
    server = await private()
    admin = aioredis.Redis.from_url(server.url)
    await admin.execute_command("ACL", "SETUSER", "noinfo", "on", ">pw", "~*", "+@all", "-info")
    url = f"redis://noinfo:pw@127.0.0.1:{server.port}/0"
    client = aioredis.Redis.from_url(url)
    checks = RedisChecks(client, settings_for(url, "acl"), Metrics(), {})
    try:
        with fresh_log(monkeypatch) as logs:
            assert await checks.at_start() is None
            await checks.check()
        [said] = logs
        assert said["event"] == "cannot check the redis configuration"
        assert said["fix"].startswith("allow INFO") and "pw" not in said["redis"]
    finally:
        await client.aclose()
        await admin.aclose()


async def ready_body(port: int, status: int, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    while True:
        code, body = await http_get(port, "/health/ready")
        if code == status:
            return body.decode()
        assert time.monotonic() < deadline, f"/health/ready not {status}: {code} {body!r}"
        await asyncio.sleep(0.1)


async def lag(port: int, stream: str) -> float:
    from tests.integration.test_operations import scrape

    page = scrape((await http_get(port, "/metrics"))[1].decode())
    return page[("rating_consumer_lag_seconds", (("stream", stream),))]


async def test_a_policy_changed_live_stops_consuming_and_the_lag_grows_through_an_outage(
    private, tmp_path
):
    """maxmemory-policy set to allkeys-lru under a running replica: an error line, not ready,
    nothing consumed, the lag growing (also while Redis is down); Redis restarted (its
    policy back to noeviction): the replica says so, consumes again, and everything is
    rated exactly once."""
    server = await private()
    port = free_port()
    settings = settings_for(server.url, "live", http_port=port, http_host="127.0.0.1")
    stream = settings.input_streams[0]
    client = aioredis.Redis.from_url(server.url)
    await load_club(client, settings)
    events = random_events(20, 41)
    services = Services(settings)
    services.env.update(RATING_HTTP_PORT=str(port), RATING_HTTP_HOST="127.0.0.1")
    try:
        process = await started(services)
        await publish(client, settings, *events[:5])
        await ready_body(port, 200)
        await client.config_set("maxmemory-policy", "allkeys-lru")
        body = await ready_body(port, 503)
        assert json.loads(body) == {
            "status": "unready",
            "redis": "refused: maxmemory-policy allkeys-lru evicts keys (see the log)",
        }
        log = await log_containing(services, process, "consuming stops until it passes")
        cursor = await client.get(StreamKeys(stream).cursor)
        await publish(client, settings, *events[5:])
        while (held := await lag(port, stream)) < 0.5:  # seen waiting by the 2-second observer
            await asyncio.sleep(0.1)
        assert await client.get(StreamKeys(stream).cursor) == cursor  # nothing consumed
        server.stop()
        outage = [held]
        while len(outage) < 3:
            await asyncio.sleep(1.0)
            outage.append(await lag(port, stream))
        assert outage == sorted(outage) and outage[-1] >= outage[0] + 1.5, outage
        server.start()  # the policy set live is gone with the restart: noeviction again
        await server.wait_ready()
        await client.aclose()
        client = aioredis.Redis.from_url(server.url)
        await check_final_state(client, settings, events, tmp_path, services=services)
        await ready_body(port, 200)
        log = await log_containing(services, process, '"redis check passes again"')
        [failed, passed] = check_lines(log, "eviction")
        assert (failed["level"], passed["level"], passed["consuming"]) == (
            "error",
            "warning",
            "resumes",
        )
        assert "Traceback" not in log, log
        while await lag(port, stream) != 0:  # until the observer has read the cursor again
            await asyncio.sleep(0.1)
    finally:
        services.stop_all()
        await client.aclose()


async def failed_commits(metrics: Metrics, stream: str) -> dict[str, float]:
    return {
        reason: metrics.registry.get_sample_value(
            "rating_commit_failures_total", {"stream": stream, "reason": reason}
        )
        or 0
        for reason in ("connection", "timeout", "readonly", "oom", "other")
    }


async def test_a_commit_cut_off_by_the_connection_is_counted_and_tried_again(redis_url, key_prefix):
    address = urlsplit(redis_url)
    proxy = CuttingProxy(address.hostname, address.port, cut_on=b"EXEC", cut_occurrences={1})
    await proxy.start()
    direct = aioredis.Redis.from_url(redis_url)
    through = aioredis.Redis.from_url(
        f"redis://127.0.0.1:{proxy.port}/{(address.path or '/0').strip('/') or 0}"
    )
    settings = settings_for(redis_url, key_prefix)
    metrics = Metrics()
    stream = settings.input_streams[0]
    processor = StreamProcessor(through, settings, stream, counting_registry(), metrics)
    try:
        await processor.ensure_group()
        [entry] = await publish(direct, settings, event())
        with pytest.raises(ConnectionError):
            await processor.handle(entry)
        assert await failed_commits(metrics, stream) == {
            "connection": 1,
            "timeout": 0,
            "readonly": 0,
            "oom": 0,
            "other": 0,
        }
        await processor.handle(entry)  # as the handler does, after its backoff
        assert [o.event_id for o in await outputs(direct, settings)] == ["club-2025-11-a"]
        assert (await failed_commits(metrics, stream))["connection"] == 1
    finally:
        await through.aclose()
        await direct.aclose()
        await proxy.stop()


async def test_commits_refused_out_of_memory_or_by_a_replica_are_counted_by_reason(private):
    master = await private()
    replica = await private("--replicaof", "127.0.0.1", str(master.port))
    settings = settings_for(master.url, "refused")
    stream = settings.input_streams[0]
    client = aioredis.Redis.from_url(master.url)
    on_replica = aioredis.Redis.from_url(replica.url)
    metrics = Metrics()
    try:
        await StreamProcessor(client, settings, stream, counting_registry()).ensure_group()
        [entry] = await publish(client, settings, event())
        while not await on_replica.xlen(stream):  # replicated
            await asyncio.sleep(0.05)
        readonly = StreamProcessor(on_replica, settings, stream, counting_registry(), metrics)
        with pytest.raises(ReadOnlyError):
            await readonly.handle(entry)
        await client.config_set("maxmemory", 1)  # every write is refused
        full = StreamProcessor(client, settings, stream, counting_registry(), metrics)
        with pytest.raises(OutOfMemoryError):
            await full.handle(entry)
        await client.config_set("maxmemory", 0)
        await full.handle(entry)
        assert await failed_commits(metrics, stream) == {
            "connection": 0,
            "timeout": 0,
            "readonly": 1,
            "oom": 1,
            "other": 0,
        }
        assert len(await outputs(client, settings)) == 1
    finally:
        await client.aclose()
        await on_replica.aclose()


async def test_a_replica_starting_on_a_full_redis_waits_in_place_and_says_it_once(private):
    """Redis full (noeviction) before the replica starts: its start-up's first write (the store
    record, the consumer group) is refused OOM. It waits where it is, with backoff: one "redis
    refuses writes", the checks' lines once, its HTTP side up all along (no uvicorn "Shutting
    down", no "start-up interrupted" per try, as when each try began the start-up again); once
    Redis has room it is ready and rates (D34)."""
    server = await private()
    client = aioredis.Redis.from_url(server.url)
    await client.config_set("maxmemory", 1)
    settings = settings_for(server.url, "fullstart")
    services = Services(settings, command=("-m", "service", "serve"))
    port = free_port()
    services.env.update(
        RATING_LOG_LEVEL="INFO", RATING_HTTP_PORT=str(port), RATING_HTTP_HOST="127.0.0.1"
    )
    try:
        process = services.start()
        await log_containing(services, process, '"redis refuses writes"')
        # Several tries (backoff 0.1, 0.2, 0.4, 0.8 s ...), the HTTP side answering through them.
        for _ in range(6):
            assert (await http_get(port, "/health/live"))[0] == 200
            await asyncio.sleep(0.5)
        await client.config_set("maxmemory", 0)
        log = await log_containing(services, process, '"event": "ready"')
        await load_club(client, settings)
        events = random_events(2, 7)
        await publish(client, settings, *events)
        while len(await outputs(client, settings)) < 2:
            await asyncio.sleep(0.1)
        said = [json.loads(line).get("event") for line in log.splitlines() if line.startswith("{")]
        assert said.count("redis refuses writes") == 1, log
        assert said.count("redis takes writes again") == 1, log
        assert said.count("redis memory nearly full: commits fail (OOM) when it is") == 1, log
        assert "start-up interrupted, starting again" not in said, log
        assert "Shutting down" not in said and "Traceback" not in log, log
    finally:
        services.stop_all()
        await client.aclose()


async def test_a_full_redis_under_a_running_replica_is_said_once_and_waited_out(private, tmp_path):
    """Redis full under noeviction (maxmemory reached) just after an entry is appended: the
    replica's commits are refused OOM; it says so once ("redis refuses writes", no traceback,
    no "entry failed"), consumes nothing, counts the failures, and once Redis has room again
    says so and rates the entry exactly once (D34)."""
    server = await private()
    settings = settings_for(server.url, "full")
    stream = settings.input_streams[0]
    client = aioredis.Redis.from_url(server.url)
    await load_club(client, settings)
    events = random_events(6, 43)
    services = Services(settings)
    try:
        process = await started(services)
        await publish(client, settings, *events[:5])
        while len(await outputs(client, settings)) < 5:
            await asyncio.sleep(0.1)
        cursor = await client.get(StreamKeys(stream).cursor)
        async with client.pipeline(transaction=True) as pipe:  # the entry, then no more room
            pipe.xadd(stream, {"__data__": json.dumps(events[5]).encode()})
            pipe.config_set("maxmemory", 1)
            await pipe.execute()
        log = await log_containing(services, process, '"redis refuses writes"')
        await asyncio.sleep(3 * settings.lease_ms / 1000)  # several retries and lease rounds
        assert await client.get(StreamKeys(stream).cursor) == cursor  # nothing consumed
        await client.config_set("maxmemory", 0)
        await check_final_state(client, settings, events, tmp_path, services=services)
        log = await log_containing(services, process, '"redis takes writes again"')
        said = [json.loads(line).get("event") for line in log.splitlines() if line.startswith("{")]
        assert said.count("redis refuses writes") == 1, log
        assert "Traceback" not in log and "entry failed" not in said, log
    finally:
        services.stop_all()
        await client.aclose()
