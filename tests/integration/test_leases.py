"""One owner per input stream (service/runtime/leases.py): the fencing token checked inside
every commit, a paused former owner that cannot commit, the handover on SIGTERM, never two
owners at once, and the leases spread over the replicas. Real Redis; the service runs as
separate processes (processes.Services)."""

from __future__ import annotations

import asyncio
import json
import random
import signal
import time

import pytest
import redis
import redis.asyncio as aioredis

import service.runtime.processor as processor_module
from service.entryids import entry_order
from service.runtime.keys import StreamKeys
from service.runtime.leases import LeaseLost, StreamLease, token_of
from service.runtime.processor import StreamProcessor
from tests.engines import counting_registry
from tests.integration.helpers import outputs, publish, settings_for
from tests.integration.processes import (
    Services,
    check_final_state,
    load_club,
    log_containing,
    random_events,
)

pytestmark = [pytest.mark.integration]


def held(value: str) -> StreamLease:
    lease = StreamLease("unused")
    lease.value = lease.held = value
    lease.owned.set()
    return lease


async def own_lease(client, settings, value: str) -> StreamProcessor:
    """A processor whose replica holds the lease `value` ("<token> <consumer>")."""
    stream = settings.input_streams[0]
    lease = held(value)
    lease.key, lease.fence_key = StreamKeys(stream).lease, StreamKeys(stream).lease_fence
    await client.set(lease.key, value, px=60_000)
    await client.set(lease.fence_key, value)
    processor = StreamProcessor(client, settings, stream, counting_registry(), lease=lease)
    await processor.ensure_group()
    return processor


async def nothing_committed(client, settings) -> None:
    keys = StreamKeys(settings.input_streams[0])
    assert await client.get(keys.cursor) is None
    assert await outputs(client, settings) == []
    assert await client.hlen(keys.attempts) == 0  # the attempt's count is taken back


async def test_a_commit_under_another_owners_lease_writes_nothing(client, redis_url, key_prefix):
    settings = settings_for(redis_url, key_prefix)
    await load_club(client, settings)
    processor = await own_lease(client, settings, "1 paused-replica")
    ids = await publish(client, settings, *random_events(3, 1))
    await client.set(
        StreamKeys(settings.input_streams[0]).lease_fence, "2 new-owner"
    )  # taken over meanwhile
    with pytest.raises(LeaseLost):
        await processor.handle(*ids)
    await nothing_committed(client, settings)


async def test_a_lease_taken_between_the_check_and_exec_aborts_the_commit(
    client, redis_url, key_prefix, monkeypatch
):
    """The interleaving the GET alone cannot catch: the lease changes after this replica read
    its own value and before its EXEC. WATCH on the lease key aborts the EXEC; the retry then
    reads the new owner's value and stops."""
    settings = settings_for(redis_url, key_prefix)
    await load_club(client, settings)
    processor = await own_lease(client, settings, "1 paused-replica")
    ids = await publish(client, settings, *random_events(3, 2))
    other = redis.Redis.from_url(redis_url)  # another replica's connection
    queue_reads = processor_module.queue_ledger_reads

    def reads_then_taken_over(reads, keys, wants):
        build = queue_reads(reads, keys, wants)

        def build_ledger(replies):
            other.set(
                StreamKeys(settings.input_streams[0]).lease_fence, "2 new-owner"
            )  # after the check
            return build(replies)

        return build_ledger

    monkeypatch.setattr(processor_module, "queue_ledger_reads", reads_then_taken_over)
    try:
        with pytest.raises(LeaseLost):
            await processor.handle(*ids)
    finally:
        other.close()
    await nothing_committed(client, settings)
    assert (
        processor.metrics.retries.labels(settings.input_streams[0])._value.get() == 1
    )  # the aborted EXEC


async def test_a_standby_processor_without_the_lease_commits_nothing(client, redis_url, key_prefix):
    settings = settings_for(redis_url, key_prefix)
    processor = await own_lease(client, settings, "1 me")
    processor.lease.value = None  # stood down (shutdown, or the lease was lost)
    ids = await publish(client, settings, *random_events(1, 3))
    with pytest.raises(LeaseLost):
        await processor.handle(*ids)
    await nothing_committed(client, settings)


async def lease_value(client, settings) -> str | None:
    value = await client.get(StreamKeys(settings.input_streams[0]).lease)
    return value.decode() if value else None


async def owner(client, settings, services: Services, timeout: float = 20.0, other_than=None):
    """The replica (process) that holds the lease, once one (other than `other_than`) does."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = await lease_value(client, settings)
        if value:
            for process in services.running:
                if value.endswith(f"-{process.pid}") and process is not other_than:
                    return process
        await asyncio.sleep(0.02)
    raise AssertionError(
        f"no replica took the lease in {timeout}s; logs:\n{services.logs()[-3000:]}"
    )


async def live_replicas(client, settings, count: int, timeout: float = 20.0) -> None:
    key = "{" + settings.input_streams[0] + "}:replicas"
    deadline = time.monotonic() + timeout
    while await client.zcard(key) < count:
        assert time.monotonic() < deadline, f"{count} replicas not live in {timeout}s"
        await asyncio.sleep(0.02)


async def test_a_paused_owner_resumes_and_cannot_commit(client, redis_url, key_prefix, tmp_path):
    settings = settings_for(redis_url, key_prefix, lease_ms=1000)
    await load_club(client, settings)
    services = Services(settings)
    events = random_events(240, 41)
    try:
        first = services.start()
        assert await owner(client, settings, services) is first
        await publish(client, settings, *events[:80])
        await asyncio.sleep(0.05)  # mid-way through the batch
        first.send_signal(signal.SIGSTOP)  # paused while it owns the stream, past its lease
        paused_value = await lease_value(client, settings)
        second = services.start()
        assert (
            await owner(client, settings, services, other_than=first) is second
        )  # after the lease ran out
        await publish(client, settings, *events[80:160])
        await asyncio.sleep(0.3)  # the new owner commits meanwhile
        first.send_signal(signal.SIGCONT)
        await publish(client, settings, *events[160:])
        await check_final_state(client, settings, events, tmp_path, services=services)
        assert token_of(await lease_value(client, settings)) > token_of(paused_value)
        log = services.logs(first)
        assert '"lease lost"' in log, log[-3000:]
        assert await owner(client, settings, services) is second  # the resumed one stands by
    finally:
        first.send_signal(signal.SIGCONT)
        services.stop_all()


async def test_sigterm_hands_over_at_once(client, redis_url, key_prefix, tmp_path):
    # A crash would leave the lease to run out (60 s); SIGTERM gives it back, and the standby
    # (polling every 0.2 s) takes it at once. The wait's bound, half the lease, tells the
    # two apart however slow the machine is; how fast the handover is, is not timed here.
    settings = settings_for(redis_url, key_prefix, lease_ms=60_000)
    await load_club(client, settings)
    services = Services(settings)
    events = random_events(41, 42)
    try:
        services.start()
        services.start()
        await live_replicas(client, settings, 2)
        first = await owner(client, settings, services)
        owner_name = (await lease_value(client, settings)).partition(" ")[2]
        for start in range(0, 40, 4):
            await publish(client, settings, *events[start : start + 4])
            summary = await client.xpending(settings.input_streams[0], settings.group)
            # The standby reads nothing: nothing is ever pending for it.
            assert {c["name"].decode() for c in summary["consumers"]} <= {owner_name}
            await asyncio.sleep(0.02)
        await check_final_state(client, settings, events[:40], tmp_path, services=services)
        assert services.kill(first, signal.SIGTERM) == 0
        value = await lease_value(client, settings)
        assert value is None or not value.endswith(f"-{first.pid}")  # given back on the way out
        sent = time.monotonic()
        [last] = await publish(client, settings, events[40])
        cursor = StreamKeys(settings.input_streams[0]).cursor
        while (await client.get(cursor)).decode() != last:
            assert time.monotonic() - sent < 30, (
                "the standby did not take over before the lease ran out"
            )
            await asyncio.sleep(0.01)
        await check_final_state(client, settings, events, tmp_path, services=services)
        assert await owner(client, settings, services) is services.running[0]
    finally:
        services.stop_all()


async def test_a_replica_restarted_under_its_own_name_takes_its_lease_at_once(
    client, redis_url, key_prefix, tmp_path
):
    """A container restarted in its pod keeps its name (RATING_CONSUMER): its predecessor's
    lease is taken on start-up, not after it expires, and the new token fences the old one."""
    settings = settings_for(redis_url, key_prefix, lease_ms=10_000)
    await load_club(client, settings)
    services = Services(settings)
    services.env["RATING_CONSUMER"] = f"{key_prefix}-replica"
    events = random_events(20, 43)
    try:
        first = services.start()
        await publish(client, settings, *events[:10])
        await check_final_state(client, settings, events[:10], tmp_path, services=services)
        before = await lease_value(client, settings)
        assert before.endswith(f" {key_prefix}-replica")
        services.kill(first)  # SIGKILL: the lease stays behind
        await client.persist(
            StreamKeys(settings.input_streams[0]).lease
        )  # and would never expire by itself
        services.start()
        await publish(client, settings, *events[10:])
        await check_final_state(client, settings, events, tmp_path, services=services)
        after = await lease_value(client, settings)
        assert token_of(after) > token_of(before) and after.endswith(f" {key_prefix}-replica")
    finally:
        services.stop_all()


async def test_a_replica_waiting_out_a_dead_owners_lease_says_so_once(
    client, redis_url, key_prefix, tmp_path
):
    """After a SIGKILL the restarted service (another name) waits for its predecessor's lease
    to expire: one line says whose lease it is and how long it has left (its PTTL), then the
    lease is taken."""
    settings = settings_for(redis_url, key_prefix, lease_ms=3000)
    services = Services(settings)
    services.env["RATING_LOG_LEVEL"] = "INFO"
    try:
        first = services.start()
        assert await owner(client, settings, services) is first
        services.kill(first)  # SIGKILL: the lease stays behind until it expires
        second = services.start()
        log = await log_containing(services, second, '"lease acquired"')
        lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
        waits = [line for line in lines if line["event"].startswith("lease held by another")]
        assert len(waits) == 1, log[-3000:]
        [wait] = waits
        assert (
            wait["holder"].endswith(f"-{first.pid}") and wait["stream"] == settings.input_streams[0]
        )
        assert 0 < wait["expires_in_s"] <= 3.0
        events = [line["event"] for line in lines]
        assert events.index(wait["event"]) < events.index("lease acquired")
    finally:
        services.stop_all()


def commit_lines(log: str) -> list[dict]:
    """The `committed` lines of a replica's log (one per commit: its first and last entry)."""
    lines = []
    for line in log.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("event") == "committed":
            lines.append(record)
    return lines


@pytest.mark.slow
async def test_no_stream_is_ever_owned_by_two_replicas(client, redis_url, key_prefix, tmp_path):
    """Two replicas and a third coming and going (SIGKILL, SIGTERM, SIGSTOP past the lease):
    the lease key, sampled every few milliseconds, only ever moves to a greater token; every
    entry is applied once (the `committed` lines' ranges never overlap), and in stream order the commits' tokens
    never go back: no commit of a former owner lands between two of its successor's."""
    settings = settings_for(redis_url, key_prefix, lease_ms=600)
    await load_club(client, settings)
    services = Services(settings)
    services.env["RATING_LOG_LEVEL"] = "INFO"
    rng = random.Random(43)
    events = random_events(300, 43)
    seen: list[str] = []
    sampling = True

    async def sample() -> None:
        sampler = aioredis.Redis.from_url(redis_url)
        try:
            while sampling:
                value = await lease_value(sampler, settings)
                if value and (not seen or seen[-1] != value):
                    seen.append(value)
                await asyncio.sleep(0.002)
        finally:
            await sampler.aclose()

    sampler = asyncio.create_task(sample())
    logs: dict[int, str] = {}
    try:
        services.start()
        services.start()
        sent = 0
        while sent < len(events):
            batch = events[sent : sent + rng.randint(10, 30)]
            await publish(client, settings, *batch)
            sent += len(batch)
            await asyncio.sleep(rng.uniform(0.05, 0.3))
            victim = rng.choice(services.running)
            action = rng.choice(["kill", "term", "stop", "none"])
            if action == "kill":
                services.kill(victim)
            elif action == "term":
                services.kill(victim, signal.SIGTERM)
            elif action == "stop":
                victim.send_signal(signal.SIGSTOP)
                await asyncio.sleep(rng.uniform(0.7, 1.2))  # past its lease
                victim.send_signal(signal.SIGCONT)
            if len(services.running) < 2:
                services.start()
        await check_final_state(client, settings, events, tmp_path, services=services)
        for process in services.running:
            process.send_signal(signal.SIGCONT)
        logs = {pid: path.read_text(errors="replace") for pid, path in services.log_files.items()}
    finally:
        sampling = False
        await sampler
        for process in services.running:
            process.send_signal(signal.SIGCONT)
        services.stop_all()
    tokens = [token_of(v) for v in seen]
    assert len(tokens) >= 3 and tokens == sorted(
        set(tokens)
    )  # a new owner, a new greater token, every time
    owners = {token_of(v): v.partition(" ")[2] for v in seen}
    commits = sorted(
        (c for log in logs.values() for c in commit_lines(log)),
        key=lambda c: entry_order(c["first_id"]),
    )
    assert sum(c["entries"] for c in commits) >= len(events)
    for before, after in zip(commits, commits[1:]):
        assert entry_order(before["last_id"]) < entry_order(after["first_id"]), (
            before,
            after,
        )  # none applied twice
    tokens = [c["lease_token"] for c in commits]
    assert tokens == sorted(tokens)  # terms never interleave
    for pid, log in logs.items():  # a token's commits are its owner's
        assert all(
            owners[c["lease_token"]].endswith(f"-{pid}")
            for c in commit_lines(log)
            if c["lease_token"] in owners
        )


async def test_leases_spread_over_the_replicas_and_rebalance_when_one_joins(
    client, redis_url, key_prefix
):
    """Two input streams: one replica owns both; a second joins and the first gives one back
    (over its fair share ceil(2 / 2) = 1), so each owns one."""
    settings = settings_for(
        redis_url, key_prefix, input_streams=(f"{key_prefix}.a", f"{key_prefix}.b")
    )
    services = Services(settings)
    keys = [StreamKeys(s).lease for s in settings.input_streams]

    async def holders() -> list[str]:
        return [(v or b"").decode().partition(" ")[2] for v in await client.mget(keys)]

    async def until(check, timeout: float = 15.0) -> list[str]:
        deadline = time.monotonic() + timeout
        while not check(found := await holders()):
            assert time.monotonic() < deadline, found
            await asyncio.sleep(0.05)
        return found

    try:
        first = services.start()
        await until(lambda h: all(x.endswith(f"-{first.pid}") for x in h))
        second = services.start()
        found = await until(
            lambda h: (
                sorted(x.rpartition("-")[2] for x in h) == sorted([str(first.pid), str(second.pid)])
            )
        )
        await asyncio.sleep(1.0)  # and it stays so
        assert await holders() == found
    finally:
        services.stop_all()
