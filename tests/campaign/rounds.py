"""One round of the fault campaign (D95): a workload published while faults are injected, then
every fault healed and the invariants checked.

The workload (tests/integration/corrections.py `mixed`): CFC, FIDE with a period closed (or
closed and reopened), NASPA nwl + csw and Glicko-2 (event periods, or a closed period), each
with late events, corrections, withdrawals, duplicates and messages the design rejects,
interleaved in one input stream. The publisher writes each entry with an id of its own
choosing (XADD with an explicit id), so that one retried after a fault lands once.

The invariants (`check_against_offline_and_fold`): the store, the archive, the timelines, the
histories and the read model equal the offline twin of the same entries; each (event,
revision) published once, in order, with the twin's figures and source entry; every dead
letter the one the design's model expects of its entry (no poison, no lost entry); the final
state equal to the date-order fold of the final events; nothing pending. And: no replica
exited by itself.
"""

from __future__ import annotations

import asyncio
import random
import time
import traceback
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import redis.asyncio as aioredis
from redis.exceptions import RedisError, ResponseError

from schemas import RatingsUpdated
from service.runtime.keys import StreamKeys
from service.runtime.settings import Settings
from service.runtime.store import DATA_FIELD
from tests.campaign.faults import STANDALONE_FAULTS, Injector, StandaloneInjector
from tests.integration.corrections import Mixed, check_against_offline_and_fold, load_lists, mixed
from tests.integration.helpers import settings_for
from tests.integration.processes import PrivateRedis, Services, wait_until_applied

INTERVAL = 0.26  # mean seconds between two faults
AWAY = (OSError, aioredis.ConnectionError, aioredis.TimeoutError, aioredis.BusyLoadingError)


@dataclass
class RoundReport:
    site: str
    seed: int
    cases: tuple[str, ...]
    messages: int
    faults: Counter[str] = field(default_factory=Counter)
    violations: list[str] = field(default_factory=list)
    harness: list[str] = field(default_factory=list)  # faults the harness failed to inject
    seconds: float = 0.0
    settle_seconds: float = 0.0
    outputs_under_faults: int = 0  # ratings.updated published before the faults were healed
    outputs: int = 0
    read: int = 0  # messages the subscriber read while the round ran
    published_again: int = 0  # of them, lost with a commit and published again (a failover)


def cases_of(rng: random.Random) -> tuple[str, ...]:
    return (
        "cfc",
        rng.choice(["fide-close", "fide-reopen"]),
        "naspa",
        rng.choice(["glicko2-event", "glicko2-close"]),
    )


class Publisher:
    """Tournament software that waits out a Redis outage, each entry at an id of its own (a
    retry after an unanswered XADD finds its entry there instead of adding a second)."""

    def __init__(self, client: aioredis.Redis, stream: str):
        self.client = client
        self.stream = stream
        self.last_ms = 0

    def next_id(self) -> str:
        self.last_ms = max(int(time.time() * 1000), self.last_ms + 1)
        return f"{self.last_ms}-0"

    async def replicated(self) -> None:
        """Until what was written before is where a fault cannot take it (standalone: the
        server's AOF, fsync always, already has it)."""

    async def add(self, message: dict) -> None:
        data = msgspec.json.encode(message)
        entry_id = self.next_id()
        while True:
            try:
                await self.client.xadd(self.stream, {DATA_FIELD: data}, id=entry_id)
                return
            except ResponseError as exc:
                if "equal or smaller" not in str(exc):
                    raise
                found = await self.client.xrange(self.stream, entry_id, entry_id)
                assert found and found[0][1][DATA_FIELD.encode()] == data, (
                    f"entry {entry_id} is another's"
                )
                return  # the first try landed; its answer was lost
            except AWAY:
                await asyncio.sleep(0.05)


async def _publish(
    rng: random.Random, publisher: Publisher, messages: list[dict], seconds: float
) -> None:
    """Batches of 1-8 messages spread over about `seconds` (the time the round's faults take),
    so that the faults meet the service at work."""
    pause = 2 * seconds / max(1, len(messages) / 4.5)
    at = 0
    while at < len(messages):
        size = rng.randint(1, 8)
        for message in messages[at : at + size]:
            await publisher.add(message)
        at += size
        await asyncio.sleep(rng.uniform(0.0, pause))


async def _retrying(call, *args):
    """`call(*args)` again while Redis is away (a check right after a restart)."""
    for _ in range(600):
        try:
            return await call(*args)
        except AWAY:
            await asyncio.sleep(0.1)
    return await call(*args)


class Subscriber:
    """A website following the output stream while the faults go on (XREAD from the last id
    it read, again after every error): what it read is checked against the final stream."""

    def __init__(self, client, stream: str):
        self.client = client
        self.stream = stream
        self.read: dict[bytes, bytes] = {}  # stream id -> the message's bytes

    async def follow(self, stop: asyncio.Event) -> None:
        last = "0-0"
        while not stop.is_set():
            try:
                found = await self.client.xread({self.stream: last}, count=500, block=100)
            except (*AWAY, RedisError):
                await asyncio.sleep(0.05)
                continue
            for _, entries in found or []:
                for entry_id, fields in entries:
                    self.read[entry_id] = fields[DATA_FIELD.encode()]
                    last = entry_id


def dedup_key(message: RatingsUpdated) -> tuple:
    """D88: what a subscriber deduplicates by."""
    if message.kind == "list" or message.event_id is None:
        return (message.source_id, message.period, message.chunk, message.revision)
    return (message.event_id, message.revision)


async def check_read(client, stream: str, read: dict[bytes, bytes], lost_allowed: bool) -> int:
    """Every message the subscriber read is in the final stream, equal; or (where the site can
    lose a commit: a Cluster failover) gone, and published again with its key, equal (D88).
    Returns how many were published again."""
    final = {
        entry_id: fields[DATA_FIELD.encode()] for entry_id, fields in await client.xrange(stream)
    }
    by_key = {}
    for data in final.values():
        message = msgspec.json.decode(data, type=RatingsUpdated)
        by_key[dedup_key(message)] = message
    again = 0
    for entry_id, data in read.items():
        if entry_id in final:
            assert final[entry_id] == data, f"output {entry_id!r} changed after it was read"
            continue
        message = msgspec.json.decode(data, type=RatingsUpdated)
        assert lost_allowed, f"output {entry_id!r} ({dedup_key(message)}) was read, then lost"
        assert by_key.get(dedup_key(message)) == message, (
            f"output {entry_id!r} was read, then lost, and not published again as it was"
        )
        again += 1
    return again


class StandaloneSite:
    """Where the standalone rounds run: one private Redis (AOF, fsync always) for the campaign."""

    name = "standalone"
    weights = STANDALONE_FAULTS
    loses_commits = False  # appendfsync always, and a SIGKILL loses nothing written

    def __init__(self) -> None:
        self.redis = PrivateRedis()

    async def start(self) -> None:
        self.redis.start()
        await self.redis.wait_ready()

    def stop(self) -> None:
        self.redis.remove()

    @property
    def url(self) -> str:
        return self.redis.url

    def prefix(self, seed: int) -> str:
        return f"c{seed}"

    async def client(self) -> aioredis.Redis:
        return aioredis.Redis.from_url(self.url)

    async def clear(self, client, prefix: str) -> None:
        await _retrying(client.flushall)

    def publisher(self, client, stream: str) -> Publisher:
        return Publisher(client, stream)

    def injector(self, rng: random.Random, services: Services, stream: str) -> Injector:
        return StandaloneInjector(rng, services, self.redis)


async def run_round(
    site,
    seed: int,
    faults: int,
    logs: Path | None = None,
    keep: bool = False,
    tamper: Callable[[Any, Settings], Awaitable[None]] | None = None,
) -> RoundReport:
    """One round on `site` (its keys cleared first): at least `faults` faults, injected while
    the workload of `seed` is published and processed, then healed and checked. `tamper`:
    what the tests of the checks do to the state just before them (a violation of their own)."""
    rng = random.Random(seed)
    cases = cases_of(rng)
    m = mixed(seed, cases=cases, events=rng.randint(8, 16), extra=rng.randint(10, 24))
    report = RoundReport(site.name, seed, cases, len(m.messages))
    client = await site.client()
    prefix = site.prefix(seed)
    settings = settings_for(site.url, prefix, batch_size=rng.choice([1, 4, 16]))
    stream = settings.input_streams[0]
    services = Services(settings, command=("-m", "service", "serve"))
    services.env["RATING_BATCH_SIZE"] = str(settings.batch_size)
    services.env["RATING_COMMIT_PLAYERS"] = str(rng.choice([8, 64, 4096]))
    services.env["RATING_LOG_LEVEL"] = "INFO"
    injector = site.injector(random.Random(seed + 2), services, stream)
    started = time.monotonic()
    stop_following = asyncio.Event()
    following = None
    try:
        await site.clear(client, prefix)
        publisher = site.publisher(client, stream)
        await _seed(site, client, prefix, publisher, m)
        await injector.start_replicas()
        subscriber = Subscriber(await site.client(), settings.output_stream)
        following = asyncio.create_task(subscriber.follow(stop_following))
        publishing = asyncio.create_task(_publish(rng, publisher, m.messages, faults * INTERVAL))
        while not publishing.done() or sum(injector.injected.values()) < faults:
            await asyncio.sleep(injector.rng.uniform(0.02, 2 * INTERVAL - 0.02))
            try:
                await injector.inject()
            except (AssertionError, RedisError) as exc:  # the harness could not inject it
                report.harness.append(str(exc))
                if len(report.harness) >= 3:
                    break
        await publishing
        await injector.heal_all()
        report.outputs_under_faults = await _retrying(client.xlen, settings.output_stream)
        settled = time.monotonic()
        if tamper is not None:
            await _retrying(wait_until_applied, client, settings, 600.0)
            await tamper(client, settings)
        await _check(client, settings, m, injector, report)
        stop_following.set()
        await following
        try:
            report.published_again = await check_read(
                client, settings.output_stream, subscriber.read, site.loses_commits
            )
        except AssertionError as exc:
            report.violations.append(f"subscriber: {exc}")
        report.read = len(subscriber.read)
        await subscriber.client.aclose()
        report.outputs = await client.xlen(settings.output_stream)
        report.settle_seconds = time.monotonic() - settled
    finally:
        stop_following.set()
        if following is not None and not following.done():
            following.cancel()
        report.faults = injector.injected
        report.seconds = time.monotonic() - started
        if (report.violations or keep) and logs is not None:
            logs.mkdir(parents=True, exist_ok=True)
            (logs / f"round-{seed}.log").write_text(services.logs(), errors="replace")
        await injector.stop()
        await site.clear(client, prefix)
        await client.aclose()
    return report


async def _seed(site, client, prefix: str, publisher: Publisher, m: Mixed) -> None:
    """The starting lists imported, on the replica, and there, before any fault. An import is
    acknowledged by the master alone: a master that loses its slot before its replica has
    the lists (or while it still takes writes, a loaded machine's failover of a master slow
    to answer) would leave the round's events rated against a store without them
    (docs/operations/durability.md); the lists are then imported again."""
    keys = StreamKeys(publisher.stream)
    expected = Counter((r.system, r.pool) for r in m.start)
    while True:
        await _retrying(load_lists, client, publisher.stream, m)
        await publisher.replicated()
        held = {pool: await _retrying(client.hlen, keys.players(*pool)) for pool in expected}
        if held == expected:
            return
        await site.clear(client, prefix)


async def _check(client, settings, m: Mixed, injector: Injector, report: RoundReport) -> None:
    try:
        await _retrying(wait_until_applied, client, settings, 600.0)
        await check_against_offline_and_fold(client, settings, m)
    except AssertionError as exc:
        where = traceback.extract_tb(exc.__traceback__)[-1]
        report.violations.append(
            f"{where.filename.rpartition('/')[2]}:{where.lineno}: {str(exc)[:1500]}"
        )
    await injector.check_replicas()
    for pid, code, log in injector.exited:
        report.violations.append(f"replica {pid} exited by itself ({code}): {log[-800:]}")
