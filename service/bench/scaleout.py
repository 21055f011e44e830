"""Scale-out, part of `rating-service bench` (docs/performance.md;
docs/design/guarantees.md "Replicas: one owner per input stream"): what a second replica
adds, on one partition and on two busy partitions, and the CPU each event costs the service
and Redis.

Every run starts real `rating-service serve` processes (RATING_HTTP_PORT=0, one
RATING_CONSUMER each) on fresh streams, fills each busy partition's store with `players`
rated players, warms up with 200 events per busy partition, then times the drain of a backlog
of `events` two-player events per busy partition, from the first append until every output
is there (as service/bench/benchmark.py `drain_rate` does); its keys are removed after it.
The configurations alternate run by run (one replica first, then two replicas first, ...).

- `one_partition`: RATING_PARTITIONS=single, one input stream, CFC regular events: one
  replica against two (the second stands by: one owner per stream).
- `two_partitions`: RATING_PARTITIONS=domains; busy partitions cfc.regular and the first
  partition the second replica takes. The replicas start one after the other: the first
  takes every lease, and when the second joins the first gives back those over its fair
  share, the last ones in domain order (service/runtime/leases.py), so the second replica
  holds fide.rapid, fide.blitz and naspa, the first both CFC pools and fide.standard. The
  second busy partition is therefore fide.rapid (two-player FIDE rapid events): a backlog on
  cfc.regular and cfc.active (or fide.standard) would sit on one replica, the spread counting
  leases, not load. One replica drains cfc.regular's backlog alone, then the other's alone
  (`one_at_a_time`: both backlogs' events over the two drain times, the same work as the
  two replicas', one partition at a time), then both at once (`both_at_once`); two replicas
  drain both at once.

CPU: each replica's user + system seconds (/proc/<pid>/stat) and Redis's (the private
server's /proc/<pid>/stat, or INFO used_cpu_sys + used_cpu_user, which on a shared server
counts other clients too) over the timed drain, per event in µs, and as cores (seconds per
second of the drain); the bench's own CPU (appending the backlog, polling the outputs) and
everything else's (service/bench/machine.py: other people's work on a shared machine) as cores.
"""

from __future__ import annotations

import asyncio
import math
import random
import statistics
import subprocess
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import msgspec
import redis
import redis.asyncio as aioredis

from schemas.records import PlayerRecord
from service.bench.machine import busy_seconds, cpu_seconds, stderr_tail
from service.bench.workloads import encode, rated_list, two_player_event
from service.runtime.keys import StreamKeys
from service.runtime.partitions import DOMAINS, Partition, layout_of
from service.runtime.records_io import import_records
from service.runtime.store import DATA_FIELD

WARM_UP = 200  # events per busy partition before the timed drain


@dataclass(frozen=True)
class Backlog:
    """What one busy partition gets in one drain."""

    stream: str
    output: str
    payloads: list[bytes]


class Games:
    """Two-player events of one pool among its rated players, fresh ids every time."""

    def __init__(
        self, prefix: str, system: str, pool: str, players: list[PlayerRecord], seed: int = 17
    ):
        self.prefix, self.system, self.pool, self.players = prefix, system, pool, players
        self.rng = random.Random(seed)
        self.serial = 0

    def take(self, count: int) -> list[bytes]:
        out = []
        for _ in range(count):
            self.serial += 1
            a, b = self.rng.sample(self.players, 2)
            message = two_player_event(
                self.system, a, b, f"{self.prefix}-{self.pool}-{self.serial}", self.rng
            )
            out.append(encode({**message, "pool": self.pool}))
        return out


def players_of(system: str, pool: str, count: int, prefix: str) -> list[PlayerRecord]:
    return [msgspec.structs.replace(r, pool=pool) for r in rated_list(system, count, prefix=prefix)]


def drain(
    client: redis.Redis, backlogs: list[Backlog], timeout: float = 300.0
) -> tuple[float, list[float]]:
    """Append every backlog (in chunks, the streams in turn) and time until each output holds
    one more entry per payload; returns (seconds until the last, seconds of each)."""
    before = [client.xlen(b.output) for b in backlogs]
    want = [n + len(b.payloads) for n, b in zip(before, backlogs)]
    done: list[float | None] = [None] * len(backlogs)
    start = time.perf_counter()
    chunk = 500
    for offset in range(0, max(len(b.payloads) for b in backlogs), chunk):
        with client.pipeline(transaction=False) as pipe:
            for b in backlogs:
                for data in b.payloads[offset : offset + chunk]:
                    pipe.xadd(b.stream, {DATA_FIELD: data})
            pipe.execute()
    while True:
        with client.pipeline(transaction=False) as pipe:
            for b in backlogs:
                pipe.xlen(b.output)
            lengths = pipe.execute()
        now = time.perf_counter() - start
        for i, length in enumerate(lengths):
            if done[i] is None and length >= want[i]:
                done[i] = now
        if all(d is not None for d in done):
            seconds = [d for d in done if d is not None]
            return max(seconds), seconds
        if now > timeout:
            got = ", ".join(
                f"{b.output}: {n - m} of {len(b.payloads)}"
                for b, n, m in zip(backlogs, lengths, before)
            )
            raise RuntimeError(f"outputs after {timeout:.0f} s: {got}")
        time.sleep(0.002)


@dataclass(frozen=True)
class Drained:
    """One timed drain (or several, added up): events, seconds, and the CPU seconds of the
    replicas, of Redis, of the bench itself (appending, polling the outputs) and of everything
    else on the machine (all CPUs' busy time less those three) over it."""

    events: int
    seconds: float
    service_cpu: float
    redis_cpu: float
    bench_cpu: float
    other_cpu: float

    def __add__(self, other: Drained) -> Drained:
        return Drained(
            self.events + other.events,
            self.seconds + other.seconds,
            self.service_cpu + other.service_cpu,
            self.redis_cpu + other.redis_cpu,
            self.bench_cpu + other.bench_cpu,
            self.other_cpu + other.other_cpu,
        )

    def figures(self) -> dict:
        return {
            "events": self.events,
            "seconds": self.seconds,
            "events_per_second": self.events / self.seconds,
            "service_cpu_us_per_event": self.service_cpu / self.events * 1e6,
            "redis_cpu_us_per_event": self.redis_cpu / self.events * 1e6,
            "service_cores": self.service_cpu / self.seconds,
            "redis_cores": self.redis_cpu / self.seconds,
            "bench_cores": self.bench_cpu / self.seconds,
            "other_cores": self.other_cpu / self.seconds,
        }


def measured(
    client: redis.Redis, pids: list[int], redis_cpu: Callable[[], float], backlogs: list[Backlog]
) -> tuple[Drained, list[float]]:
    """One timed drain with the CPU the replicas (`pids`) and Redis spent on it, and each
    backlog's own seconds."""
    service, server, bench, busy = (
        sum(cpu_seconds(pid) for pid in pids),
        redis_cpu(),
        time.process_time(),
        busy_seconds(),
    )
    seconds, each = drain(client, backlogs)
    bench = time.process_time() - bench
    service = sum(cpu_seconds(pid) for pid in pids) - service
    server = redis_cpu() - server
    busy = (busy_seconds() or 0.0) - (busy or 0.0)
    other = max(0.0, busy - service - server - bench)
    return Drained(
        sum(len(b.payloads) for b in backlogs), seconds, service, server, bench, other
    ), each


class Replicas:
    """The `serve` processes of one run, started one after the other, stopped together."""

    def __init__(
        self,
        client: redis.Redis,
        start_service: Callable[[dict], subprocess.Popen],
        stop: Callable[[subprocess.Popen], None],
        env: dict,
    ):
        self.client, self.start_service, self.stop, self.env = client, start_service, stop, env
        self.processes: list[subprocess.Popen] = []
        self.consumers: list[str] = []

    def add(self, consumer: str) -> subprocess.Popen:
        process = self.start_service({**self.env, "RATING_CONSUMER": consumer})
        self.processes.append(process)
        self.consumers.append(consumer)
        return process

    def owners(self, streams: tuple[str, ...]) -> list[str | None]:
        """The consumer holding each stream's lease (None: nobody)."""
        with self.client.pipeline(transaction=False) as pipe:
            for stream in streams:
                pipe.get(StreamKeys(stream).lease)
            values = pipe.execute()
        return [None if v is None else v.decode().partition(" ")[2] for v in values]

    def settle(self, streams: tuple[str, ...], timeout: float = 60.0) -> list[str]:
        """Wait until every replica is live (its `{S}:replicas` heartbeat), every stream has an
        owner, and each replica holds its fair share: at most ceil(streams / replicas), at least
        the floor of it. Returns each stream's owner."""
        share = math.ceil(len(streams) / len(self.processes))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for process in self.processes:
                if process.poll() is not None:
                    raise RuntimeError(
                        f"a replica exited ({process.returncode}): {stderr_tail(process)}"
                    )
            owners = self.owners(streams)
            held = [owners.count(c) for c in self.consumers]
            live = self.client.zcard(StreamKeys(streams[0]).replicas)
            if (
                None not in owners
                and live >= len(self.processes)
                and max(held) <= share
                and min(held) >= min(share, len(streams) // len(self.processes))
            ):
                return owners  # type: ignore[return-value]  # None not in owners: checked above
            time.sleep(0.05)
        raise RuntimeError(
            f"the leases of {len(streams)} streams did not settle on {len(self.processes)} replicas "
            f"after {timeout:.0f} s: {self.owners(streams)}"
        )

    def close(self) -> None:
        for process in self.processes:
            self.stop(process)

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.processes]


def _import(url: str, stream: str, records: list[PlayerRecord]) -> None:
    async def write() -> None:
        client = aioredis.Redis.from_url(url)
        try:
            await import_records(client, StreamKeys(stream), records)
        finally:
            await client.aclose()

    asyncio.run(write())


def _cleanup(client: redis.Redis, prefix: str) -> None:
    keys = list(client.scan_iter(match=f"*{prefix}*", count=1000))
    for start in range(0, len(keys), 500):
        client.unlink(*keys[start : start + 500])


@dataclass
class Stage:
    """What one stage's runs share: where, how big, and how to start and measure."""

    url: str
    prefix: str
    players: int
    events: int
    start_service: Callable[[dict], subprocess.Popen]
    stop: Callable[[subprocess.Popen], None]
    redis_cpu: Callable[[], float]

    def env(self, run: str, partitions: str) -> dict:
        return {
            "RATING_REDIS_URL": self.url,
            "RATING_PARTITIONS": partitions,
            "RATING_INPUT_STREAMS": f"{run}.events",
            "RATING_OUTPUT_STREAM": f"{run}.ratings",
            "RATING_DEAD_LETTER_STREAM": f"{run}.rejected",
            "RATING_GROUP": f"{run}.group",
            "RATING_HTTP_PORT": "0",
            "RATING_LOG_LEVEL": "WARNING",
        }

    def run_prefix(self) -> str:
        return f"{self.prefix}.so{uuid.uuid4().hex[:6]}"


def _check_rejected(client: redis.Redis, streams: list[str]) -> None:
    for stream in streams:
        if client.exists(stream) and client.xlen(stream):
            raise RuntimeError(
                f"{client.xlen(stream)} bench events were dead-lettered on {stream}: "
                f"{client.xrange(stream, count=1)}"
            )


def one_partition_run(stage: Stage, replicas: int) -> dict:
    """`replicas` replicas on one input stream (single layout): one timed drain."""
    run = stage.run_prefix()
    env = stage.env(run, "single")
    stream, output = env["RATING_INPUT_STREAMS"], env["RATING_OUTPUT_STREAM"]
    client = redis.Redis.from_url(stage.url)
    group = Replicas(client, stage.start_service, stage.stop, env)
    try:
        players = players_of("cfc", "regular", stage.players, f"{run}-p")
        _import(stage.url, stream, players)
        games = Games(run, "cfc", "regular", players)
        for n in range(replicas):
            group.add(f"{run}-{n + 1}")
            group.settle((stream,))
        drain(client, [Backlog(stream, output, games.take(WARM_UP))])
        drained, _ = measured(
            client, group.pids, stage.redis_cpu, [Backlog(stream, output, games.take(stage.events))]
        )
        _check_rejected(client, [env["RATING_DEAD_LETTER_STREAM"]])
    finally:
        group.close()
        _cleanup(client, run)
        client.close()
    return drained.figures()


def second_partition(partitions: tuple[Partition, ...]) -> Partition:
    """The first partition a second replica takes (the first keeps the first ceil(n/2))."""
    return partitions[math.ceil(len(partitions) / 2)]


def two_partitions_run(stage: Stage, replicas: int) -> dict:
    """The domains layout with two busy partitions: one replica (one partition at a time, then
    both at once), or two replicas (both at once)."""
    run = stage.run_prefix()
    env = stage.env(run, "domains")
    layout = layout_of(
        "domains",
        (env["RATING_INPUT_STREAMS"],),
        env["RATING_OUTPUT_STREAM"],
        env["RATING_DEAD_LETTER_STREAM"],
    )
    busy = [layout.route("cfc", "regular"), second_partition(layout.partitions)]
    client = redis.Redis.from_url(stage.url)
    group = Replicas(client, stage.start_service, stage.stop, env)
    try:
        games = []
        for partition in busy:
            system, pool = DOMAINS.pools(partition.domains[0])[0]  # type: ignore[index]  # a busy partition has a domain
            players = players_of(system, pool, stage.players, f"{run}-{partition.name}-p")
            _import(stage.url, partition.input, players)
            games.append(Games(run, system, pool, players))

        def backlogs(count: int, which: list[int]) -> list[Backlog]:
            return [Backlog(busy[i].input, busy[i].output, games[i].take(count)) for i in which]

        owners: list[str] = []
        for n in range(replicas):
            group.add(f"{run}-{n + 1}")
            owners = group.settle(layout.inputs)
        owner = dict(zip(layout.inputs, owners))
        if replicas > 1 and owner[busy[0].input] == owner[busy[1].input]:
            raise RuntimeError(
                f"{busy[0].name} and {busy[1].name} are both {owner[busy[0].input]}'s: {owner}"
            )
        drain(client, backlogs(WARM_UP, [0, 1]))
        out: dict = {
            "partitions": [p.name for p in busy],
            "owners": {p.name: owner[p.input] for p in busy},
        }
        if replicas == 1:
            first, _ = measured(client, group.pids, stage.redis_cpu, backlogs(stage.events, [0]))
            second, _ = measured(client, group.pids, stage.redis_cpu, backlogs(stage.events, [1]))
            out["one_at_a_time"] = (first + second).figures()
            out["alone"] = {busy[0].name: first.figures(), busy[1].name: second.figures()}
        drained, each = measured(
            client, group.pids, stage.redis_cpu, backlogs(stage.events, [0, 1])
        )
        figures = drained.figures()
        figures["each_events_per_second"] = {p.name: stage.events / s for p, s in zip(busy, each)}
        out["both_at_once"] = figures
        _check_rejected(client, [p.dead_letter for p in layout.partitions])
    finally:
        group.close()
        _cleanup(client, run)
        client.close()
    return out


FIGURES = (
    "events",
    "seconds",
    "events_per_second",
    "service_cpu_us_per_event",
    "redis_cpu_us_per_event",
    "service_cores",
    "redis_cores",
    "bench_cores",
    "other_cores",
)


def medians(runs: list[dict]) -> dict:
    """The median of each figure over the runs, and each run's events/s (in run order)."""
    return {
        **{key: statistics.median(r[key] for r in runs) for key in FIGURES},
        "runs_events_per_second": [r["events_per_second"] for r in runs],
    }


def bench_scale_out(
    url: str,
    prefix: str,
    runs: int,
    events: int,
    players: int,
    start_service: Callable[[dict], subprocess.Popen],
    stop: Callable[[subprocess.Popen], None],
    redis_cpu: Callable[[], float],
    progress: Callable[[str], None] = lambda _: None,
) -> dict:
    """Both stages (see the module's docstring): `runs` runs of each configuration, alternated."""
    stage = Stage(url, prefix, players, events, start_service, stop, redis_cpu)
    one: dict[int, list[dict]] = {1: [], 2: []}
    for n in range(runs):
        progress(f"scale-out: one partition, run {n + 1} of {runs}")
        for replicas in (1, 2) if n % 2 == 0 else (2, 1):
            one[replicas].append(one_partition_run(stage, replicas))
    two: dict[int, list[dict]] = {1: [], 2: []}
    for n in range(runs):
        progress(f"scale-out: two partitions, run {n + 1} of {runs}")
        for replicas in (1, 2) if n % 2 == 0 else (2, 1):
            two[replicas].append(two_partitions_run(stage, replicas))
    rate = lambda r: r["events_per_second"]  # noqa: E731
    one_partition = {
        "runs": runs,
        "events": events,
        "one_replica": medians(one[1]),
        "two_replicas": medians(one[2]),
        "ratio_of_runs": statistics.median(rate(b) / rate(a) for a, b in zip(one[1], one[2])),
    }
    one_partition["ratio"] = (
        one_partition["two_replicas"]["events_per_second"]
        / one_partition["one_replica"]["events_per_second"]
    )
    single = [r["one_at_a_time"] for r in two[1]]
    both = [r["both_at_once"] for r in two[1]]
    pair = [r["both_at_once"] for r in two[2]]
    names = two[2][0]["partitions"]
    two_partitions = {
        "runs": runs,
        "events": events,
        "partitions": names,
        "owners": two[2][0]["owners"],
        "one_replica_one_at_a_time": medians(single),
        "one_replica_alone": {name: medians([r["alone"][name] for r in two[1]]) for name in names},
        "one_replica_both_at_once": medians(both),
        "two_replicas": {
            **medians(pair),
            "each_events_per_second": {
                name: statistics.median(r["each_events_per_second"][name] for r in pair)
                for name in names
            },
        },
        "ratio_of_runs": statistics.median(rate(b) / rate(a) for a, b in zip(single, pair)),
        "same_work_ratio_of_runs": statistics.median(rate(b) / rate(a) for a, b in zip(both, pair)),
    }
    two_partitions["ratio"] = (
        two_partitions["two_replicas"]["events_per_second"]
        / two_partitions["one_replica_one_at_a_time"]["events_per_second"]
    )
    return {"players": players, "one_partition": one_partition, "two_partitions": two_partitions}
