"""`rating-service bench [--json] [--redis-url URL] [--quick] [--profile | --sizing | --cascade]`: what the engines
and the service achieve on this machine, against the product's performance goals.

Four groups of figures, each the median of several runs (ratios from the same run):

- `engines`: rated games per second of the CFC, FIDE and Glicko-2 (`glicko2-event`: the
  event one rating period, steps 1-8 per player) engines on a 1,000-player,
  9-round Swiss-like event among an imported rated list; the time of the NASPA engine on
  a 300-player, 31-round event with 60 newcomers; the time of a FIDE period close for
  20,000 players (service/bench/workloads.py builds them, deterministically).
- `service`: the real service (`python -m service serve`, its default settings) in a
  subprocess: (a) `two_player` online games among 10,000 rated CFC players and (b)
  `swiss_64x7` events of 64 players and 7 rounds. `events_per_second`: a backlog is
  appended, timed until the output stream holds its last `ratings.updated`.
  `latency_ms`: a producer paced at half that rate stamps each entry's send time; the
  latency is until its `ratings.updated` is read (XREAD BLOCK), p50 / p99.
- `ceiling`: service/bench/ceiling.py (XREADGROUP in batches of the service's
  RATING_BATCH_SIZE, one XADD per entry, XACK; no rating, no state) in a subprocess on
  the same two-player backlog; `ratio` = service (a) / ceiling.
- `reads`: the read API on a 100,000-player pool with 1,000,000 history lines (10,000 and
  100,000 with `--quick`): latency per kind of request at 200 requests/s, and the two-player
  throughput with and without that load (service/bench/readload.py).
- `cluster`: one partition's throughput on a local 3-master Redis Cluster against the same
  on a standalone server of the same binary, the commits on the slot owner (the service's
  way) and through redis-py's cluster transaction pipeline, alternated runs, medians
  (service/bench/cluster.py; it starts and stops its own servers, whatever `--redis-url`).
- `scale_out`: service/bench/scaleout.py: real `serve` replicas, one against two on one
  partition (RATING_PARTITIONS=single), and on two busy partitions (RATING_PARTITIONS=domains:
  cfc.regular and fide.rapid, one replica each) against one replica, with the CPU per event of
  the service and of Redis; configurations alternated run by run, medians and the median of
  each run's own ratio.
- `memory`: the service process's peak RSS (VmHWM) and the Redis bytes per stored player
  record (INFO memory `used_memory` before and after importing minimal established CFC
  records into a fresh key prefix: 1,000,000, or 100,000 with `--quick`).

`--json` prints one object with exactly those keys plus `targets` (a list of `name`,
`value`, `target`, `met`; a figure the product sets no goal for has comparison "", target
"none" and `met` null), `machine` (cores, load average, the CPU other processes used
while the bench ran, and warnings when the machine was busy: service/bench/machine.py) and
`settings` (runs, sizes, quick). Without `--redis-url` a
private server is started on a free loopback port (the embedded server's binary,
service/runtime/embedded.py, without persistence) and stopped at the end; with one, every key the bench writes carries a fresh
`bench-<hex>` prefix and is removed at the end.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, cast

import msgspec
import redis
import redis.asyncio as aioredis

from schemas.events import PeriodClosed
from schemas.records import PlayerRecord, PoolState
from schemas.validation import decode_input
from service.bench.apply import bench_apply
from service.bench.cascade import bench_cascade
from service.bench.cluster import CLUSTER_KEYS, bench_cluster, render_cluster
from service.bench.machine import Neighbours, cpu_seconds, redis_cpu_seconds, stderr_tail
from service.bench.readload import bench_reads
from service.bench.scaleout import bench_scale_out
from service.bench.workloads import (
    encode,
    fide_pool_before_close,
    minimal_records,
    rated_list,
    swiss_event,
    two_player_event,
)
from service.engine.contract import EventInput
from service.engine.registry import default_registry
from service.runtime.embedded import EmbeddedError, EmbeddedServer
from service.runtime.keys import StreamKeys
from service.runtime.records_io import import_records
from service.runtime.settings import Settings, redact, redact_error
from service.runtime.store import DATA_FIELD

BATCH_SIZE = Settings().batch_size  # the service's RATING_BATCH_SIZE default, for the ceiling

# The product's performance goals: (name, group, key, comparison, bound, unit); comparison
# "": a figure shown beside the goals without one (issue 35 sets no Glicko-2 speed; issue 32
# withdrew the two-player event through apply under 10 µs and service / ceiling >= 0.5: no
# native extension, D1).
TARGETS: tuple[tuple[str, str, str, str, float, str], ...] = (
    ("CFC engine", "engines.cfc", "games_per_second", ">=", 200_000, "rated games/s"),
    ("FIDE engine", "engines.fide", "games_per_second", ">=", 200_000, "rated games/s"),
    ("Glicko-2 engine", "engines.glicko2", "games_per_second", "", 0, "rated games/s"),
    ("NASPA 300x31, 60 newcomers", "engines.naspa", "seconds", "<", 0.5, "s"),
    ("FIDE close, 20,000 players", "engines.fide_close", "seconds", "<", 2.0, "s"),
    ("two-player event through apply", "engines.apply", "us_per_event", "", 0, "µs"),
    (
        "service (a) two-player events",
        "service.two_player",
        "events_per_second",
        ">=",
        5_000,
        "events/s",
    ),
    ("service (a) / ceiling", "ceiling", "ratio", "", 0, ""),
    ("service (a) p99 at half load", "service.two_player", "p99_ms", "<", 50, "ms"),
    ("service (b) 64x7 events", "service.swiss_64x7", "events_per_second", ">=", 300, "events/s"),
    ("Redis per player record", "memory", "redis_bytes_per_record", "<=", 300, "bytes"),
    ("service peak RSS", "memory", "service_peak_rss_mb", "<", 200, "MB"),
    ("correction of the first event", "date_order.correction", "seconds", "<", 1, "s"),
    ("RSS through that cascade", "date_order.correction", "service_peak_rss_mb", "<", 500, "MB"),
    ("archive per two-player event", "date_order.archive", "bytes_per_event", "<=", 400, "bytes"),
    (
        "history per player-event",
        "date_order.archive",
        "bytes_per_player_event",
        "<=",
        120,
        "bytes",
    ),
    ("player lookup p99 at 200 req/s", "reads.player", "p99_ms", "<", 10, "ms"),
    ("history of 200 events p99", "reads.history", "p99_ms", "<", 20, "ms"),
    ("ranked list first page p99", "reads.list", "p99_ms", "<", 20, "ms"),
    ("throughput under read load", "reads.throughput", "ratio", ">=", 0.9, "x without"),
    ("one partition on a cluster", "cluster", "ratio", ">=", 0.9, "x standalone"),
    (
        "two replicas on one partition",
        "scale_out.one_partition",
        "ratio_of_runs",
        ">=",
        0.95,
        "x one replica",
    ),
    (
        "two replicas, two busy partitions",
        "scale_out.two_partitions",
        "ratio_of_runs",
        ">=",
        1.6,
        "x one replica on one",
    ),
)


@dataclass(frozen=True)
class Sizes:
    """How big and how often: the full run, or `--quick`."""

    runs: int
    engine_runs: int
    two_player_events: int
    swiss_events: int
    latency_seconds: float
    memory_records: int
    platform_players: int = 10_000
    cascade_players: int = 20_000
    cascade_events: int = 10_000
    cluster_events: int = 200  # per run of each way (service/bench/cluster.py)
    cluster_runs: int = 1
    cluster_players: int = 2_000
    scale_runs: int = 5
    scale_events: int = 5_000  # per busy partition and drain
    scale_players: int = 2_000  # per busy pool

    @staticmethod
    def of(quick: bool) -> Sizes:
        if quick:
            return Sizes(
                runs=2,
                engine_runs=3,
                two_player_events=1_500,
                swiss_events=150,
                latency_seconds=2.0,
                memory_records=100_000,
                cascade_players=2_000,
                cascade_events=1_000,
                cluster_events=1_000,
                cluster_runs=3,
                scale_runs=2,
                scale_events=1_500,
            )
        return Sizes(
            runs=5,
            engine_runs=9,
            two_player_events=8_000,
            swiss_events=800,
            latency_seconds=8.0,
            memory_records=1_000_000,
            cluster_events=3_000,
            cluster_runs=7,
        )


def _median_time(work: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


# ------------------------------------------------------------------ engines
def engine_input(
    system: str,
    players: int,
    rounds: int,
    newcomers: int = 0,
    draws: float = 0.2,
    ruleset: str | None = None,
) -> EventInput:
    """The Swiss-like event among an imported list, decoded as the service decodes it."""
    records = rated_list(system, players, newcomers=newcomers)
    message = swiss_event(system, records, rounds, draws=draws)
    if ruleset is not None:
        message["ruleset"] = ruleset
    event = decode_input(encode(message))
    return EventInput(event, {r.id: r for r in records}, PoolState(system=system, pool=event.pool))  # type: ignore[arg-type]  # system is a System name


def bench_engines(runs: int, progress: Callable[[str], None] = lambda _: None) -> dict:
    registry = default_registry()
    out: dict[str, dict] = {}
    for system, players, rounds, newcomers, draws, ruleset in (
        ("cfc", 1000, 9, 0, 0.2, None),
        ("fide", 1000, 9, 0, 0.2, None),
        ("naspa", 300, 31, 60, 0.01, None),
        # Glicko-2: the event rated on arrival as one rating period (steps 1-8 per player).
        ("glicko2", 1000, 9, 0, 0.2, "glicko2-event"),
    ):
        progress(f"engines: {system.upper()} {players:,} players x {rounds} rounds, {runs} runs")
        data = engine_input(system, players, rounds, newcomers, draws, ruleset)
        engine = registry.get(system, data.event.ruleset or "")
        assert engine is not None
        seconds = _median_time(lambda: engine.rate_event(data), runs)
        games = sum(1 for g in data.event.games if not g.forfeit)
        out[system] = {
            "players": players,
            "rounds": rounds,
            "newcomers": newcomers,
            "games": games,
            "seconds": seconds,
            "games_per_second": games / seconds,
        }
    progress("engines: FIDE period close, 20,000 players")
    records = {r.id: r for r in fide_pool_before_close(20_000)}
    fide = registry.get("fide", "fide-2024")
    close = PeriodClosed(system="fide", pool="standard", period="2025-11", ruleset="fide-2024")
    pool = PoolState(system="fide", pool="standard")
    seconds = _median_time(lambda: fide.close_period(close, records, pool), max(3, runs // 2))  # type: ignore[union-attr]  # the registry has fide-2024
    out["fide_close"] = {"players": len(records), "seconds": seconds}
    progress("engines: two-player events through apply")
    out["apply"] = bench_apply("cfc", runs=max(3, runs // 2), registry=registry)
    return out


# ------------------------------------------------------------------ Redis
def private_server() -> EmbeddedServer:
    """The bench's own server: the embedded server's binary (runtime/embedded.py) on a free
    loopback port, without persistence; stopped (and its directory removed) at the end."""
    return EmbeddedServer(persistent=False).start()


@dataclass(frozen=True)
class Names:
    """The streams and group of one bench run, under a fresh prefix."""

    prefix: str

    @property
    def input(self) -> str:
        return f"{self.prefix}.events"

    @property
    def output(self) -> str:
        return f"{self.prefix}.ratings"

    @property
    def dead_letter(self) -> str:
        return f"{self.prefix}.rejected"

    @property
    def group(self) -> str:
        return f"{self.prefix}.group"

    @property
    def ceiling_input(self) -> str:
        return f"{self.prefix}.ceiling-in"

    @property
    def ceiling_output(self) -> str:
        return f"{self.prefix}.ceiling-out"


def _append(client: redis.Redis, stream: str, payloads: list[bytes], chunk: int = 500) -> None:
    for start in range(0, len(payloads), chunk):
        with client.pipeline(transaction=False) as pipe:
            for data in payloads[start : start + chunk]:
                pipe.xadd(stream, {DATA_FIELD: data})
            pipe.execute()


def drain_rate(
    client: redis.Redis, stream: str, output: str, payloads: list[bytes], timeout: float = 120.0
) -> float:
    """Append `payloads` as a backlog and time until `output` holds one more entry per
    payload (polled with XLEN); returns entries per second."""
    before = client.xlen(output)
    start = time.perf_counter()
    _append(client, stream, payloads)
    want = before + len(payloads)
    while client.xlen(output) < want:
        if time.perf_counter() - start > timeout:
            raise RuntimeError(
                f"{output}: {client.xlen(output) - before} of {len(payloads)} outputs after {timeout:.0f} s"
            )
        time.sleep(0.002)
    return len(payloads) / (time.perf_counter() - start)


class _Seen(msgspec.Struct):
    event_id: str | None = None


def paced_latency(
    client: redis.Redis,
    reader: redis.Redis,
    stream: str,
    output: str,
    payloads: Iterator[tuple[str, bytes]],
    rate: float,
    seconds: float,
) -> dict:
    """Send entries at `rate` per second for `seconds`, stamping each send time; a
    reader thread XREADs the output stream (BLOCK) and stamps each `ratings.updated`.
    Returns p50 / p99 latency in ms."""
    decoder = msgspec.json.Decoder(_Seen)
    sent: dict[str, float] = {}
    arrived: dict[str, float] = {}
    count = max(1, int(rate * seconds))
    last = client.xinfo_stream(output)["last-generated-id"] if client.exists(output) else b"0-0"
    done = threading.Event()

    def read() -> None:
        cursor = last
        while not done.is_set():
            # redis-py's sync client types its replies as Any or an Awaitable.
            reply = cast(
                list[tuple[bytes, list[tuple[bytes, dict[bytes, bytes]]]]] | None,
                reader.xread({output: cursor}, count=1000, block=200),
            )
            now = time.perf_counter()
            for _, entries in reply or []:
                for entry_id, fields in entries:
                    cursor = entry_id
                    event_id = decoder.decode(fields[DATA_FIELD.encode()]).event_id
                    if event_id is not None:
                        arrived[event_id] = now
            if len(arrived) >= count:
                return

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    start = time.perf_counter()
    for i in range(count):
        due = start + i / rate
        delay = due - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        event_id, data = next(payloads)
        sent[event_id] = time.perf_counter()
        client.xadd(stream, {DATA_FIELD: data})
    thread.join(timeout=30)
    done.set()
    thread.join(timeout=5)  # its read blocks for at most 200 ms
    latencies = sorted((arrived[e] - t) * 1000 for e, t in sent.items() if e in arrived)
    if len(latencies) < len(sent):
        raise RuntimeError(
            f"{len(sent) - len(latencies)} of {len(sent)} paced events got no ratings.updated"
        )
    return {
        "rate": rate,
        "samples": len(latencies),
        "p50_ms": _percentile(latencies, 50),
        "p99_ms": _percentile(latencies, 99),
    }


def _percentile(sorted_values: list[float], pct: float) -> float:
    """Nearest-rank percentile of sorted values."""
    rank = max(1, -(-len(sorted_values) * pct // 100))
    return sorted_values[int(rank) - 1]


# ------------------------------------------------------------------ workloads
class Workloads:
    """The service workloads: fresh event ids every time (each event is new)."""

    def __init__(self, prefix: str, platform: list[PlayerRecord]):
        self.prefix = prefix
        self.platform = platform
        self.rng = random.Random(17)
        self.serial = 0

    def _id(self, kind: str) -> str:
        self.serial += 1
        return f"{self.prefix}-{kind}-{self.serial}"

    def two_player(self) -> tuple[str, bytes]:
        a, b = self.rng.sample(self.platform, 2)
        event_id = self._id("g")
        return event_id, encode(two_player_event("cfc", a, b, event_id, self.rng))

    def swiss(self) -> tuple[str, bytes]:
        players = self.rng.sample(self.platform, 64)
        event_id = self._id("s")
        return event_id, encode(swiss_event("cfc", players, 7, event_id=event_id, seed=self.serial))

    def stream(self, make: Callable[[], tuple[str, bytes]]) -> Iterator[tuple[str, bytes]]:
        while True:
            yield make()


# ------------------------------------------------------------------ processes
def _start(args: list[str], env: dict[str, str], launcher: Sequence[str] = ()) -> subprocess.Popen:
    """A bench process (`launcher`: what runs Python, e.g. valgrind); its standard error goes
    to a temporary file (a pipe nobody reads would fill with the service's log lines and stop
    it), read back by `stderr_tail`. The bench's servers are throwaway: a `serve` creates
    its stores' records (RATING_CREATE_STORE, docs/operations/upgrades.md)."""
    log = tempfile.TemporaryFile()
    process = subprocess.Popen(
        [*launcher, sys.executable, *args],
        env={**os.environ, "RATING_CREATE_STORE": "true", **env},
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    process.log_file = log  # type: ignore[attr-defined]  # our attribute on the Popen object
    return process


def _stop(process: subprocess.Popen, timeout: float = 30) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    log = getattr(process, "log_file", None)
    if log is not None:
        log.close()


def peak_rss_mb(pid: int) -> float:
    """VmHWM of a live process, in MB (MiB)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for pid {pid}")


def _wait_for_group(
    client: redis.Redis, stream: str, group: str, process: subprocess.Popen, timeout: float = 30
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the process exited ({process.returncode}): {stderr_tail(process)}")
        try:
            if any(g["name"].decode() == group for g in client.xinfo_groups(stream)):
                return
        except redis.ResponseError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"no consumer group {group} on {stream} after {timeout:.0f} s")


# ------------------------------------------------------------------ the run
def _server(url: str | None) -> tuple[EmbeddedServer | None, str]:
    """The bench's Redis: `url`, or a private server (then returned, for the caller to stop)."""
    if url is not None:
        return None, url
    try:
        private = private_server()
    except EmbeddedError as exc:
        raise LookupError(f"{exc}; or pass --redis-url URL") from None
    return private, private.url


def redis_problem(exc: Exception, url: str | None) -> str:
    """A Redis failure during a bench, in one line (a given URL's password hidden)."""
    if url is None:
        return f"the bench's private Redis: {exc}"
    return f"Redis at {redact(url)}: {redact_error(exc, url)}"


def _redis_cpu(private: EmbeddedServer | None, client: redis.Redis) -> Callable[[], float]:
    """Redis's CPU seconds so far: the private server's /proc/<pid>/stat, or INFO on a given one."""
    if private is not None and private.pid is not None:
        pid = private.pid
        return lambda: cpu_seconds(pid)
    return lambda: redis_cpu_seconds(client)


def _platform(url: str, names: Names, players: int) -> Workloads:
    """The online platform's rated CFC players, imported into the bench's input stream's store,
    and the workloads among them."""
    platform = rated_list("cfc", players, prefix=f"{names.prefix}-p")
    asyncio.run(_import(url, StreamKeys(names.input), platform))
    return Workloads(names.prefix, platform)


def _service_env(url: str, names: Names, **extra: str) -> dict[str, str]:
    """The environment of a bench `serve` on the bench's streams."""
    return {
        "RATING_REDIS_URL": url,
        "RATING_INPUT_STREAMS": names.input,
        "RATING_OUTPUT_STREAM": names.output,
        "RATING_DEAD_LETTER_STREAM": names.dead_letter,
        "RATING_GROUP": names.group,
        **extra,
    }


def _none_dead_lettered(client: redis.Redis, names: Names) -> None:
    """Every bench event is valid: a dead letter means the bench (or the service) is wrong."""
    rejected = client.xlen(names.dead_letter) if client.exists(names.dead_letter) else 0
    if rejected:
        raise RuntimeError(
            f"{rejected} bench events were dead-lettered: {client.xrange(names.dead_letter, count=1)}"
        )


def bench_service(
    url: str, names: Names, sizes: Sizes, progress: Callable[[str], None] = lambda _: None
) -> tuple[dict, dict, float]:
    """Service (a) and (b), the ceiling, and the service's peak RSS."""
    client = redis.Redis.from_url(url)
    reader = redis.Redis.from_url(url)
    work = _platform(url, names, sizes.platform_players)
    service = _start(
        ["-m", "service", "serve"],
        _service_env(url, names, RATING_HTTP_PORT="0", RATING_LOG_LEVEL="WARNING"),
    )
    ceiling = _start_ceiling(url, names)
    try:
        _wait_for_group(client, names.input, names.group, service)
        _wait_for_group(client, names.ceiling_input, names.group, ceiling)
        drain_rate(
            client, names.input, names.output, [work.two_player()[1] for _ in range(200)]
        )  # warm-up
        drains = _drain_runs(client, names, work, sizes, progress)
        two_latency, swiss_latency = _half_load_latency(
            client, reader, names, work, sizes, drains, progress
        )
        rss = peak_rss_mb(service.pid)
        _none_dead_lettered(client, names)
    finally:
        _stop(service)
        _stop(ceiling)
        client.close()
        reader.close()
    service_figures = {
        "two_player": {
            "events": sizes.two_player_events,
            "events_per_second": drains.two_rate,
            **_latency(two_latency),
        },
        "swiss_64x7": {
            "events": sizes.swiss_events,
            "events_per_second": drains.swiss_rate,
            **_latency(swiss_latency),
        },
    }
    ceiling_figures = {
        "events_per_second": statistics.median(drains.ceiling),
        "ratio": statistics.median(drains.ratios),
        "batch_size": BATCH_SIZE,
    }
    return service_figures, ceiling_figures, rss


def _start_ceiling(url: str, names: Names) -> subprocess.Popen:
    """service/bench/ceiling.py on the bench's ceiling streams, in batches of BATCH_SIZE."""
    return _start(
        [
            "-m",
            "service.bench.ceiling",
            url,
            names.ceiling_input,
            names.group,
            names.ceiling_output,
            str(BATCH_SIZE),
        ],
        {},
    )


@dataclass
class _Drains:
    """bench_service's backlogs, run by run: events per second of the service on two-player
    events, of the ceiling on the same payloads, the two's ratio, and of the service on
    64x7 events."""

    two: list[float] = field(default_factory=list)
    ceiling: list[float] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)
    swiss: list[float] = field(default_factory=list)

    @property
    def two_rate(self) -> float:
        return statistics.median(self.two)

    @property
    def swiss_rate(self) -> float:
        return statistics.median(self.swiss)


def _drain_runs(
    client: redis.Redis,
    names: Names,
    work: Workloads,
    sizes: Sizes,
    progress: Callable[[str], None],
) -> _Drains:
    """`sizes.runs` runs, each a two-player backlog through the service and then the same
    payloads through the ceiling, and a 64x7 backlog through the service."""
    drains = _Drains()
    for run in range(sizes.runs):
        progress(
            f"service and ceiling: run {run + 1} of {sizes.runs} ({sizes.two_player_events:,} two-player "
            f"events each, {sizes.swiss_events:,} 64x7 events)"
        )
        payloads = [work.two_player()[1] for _ in range(sizes.two_player_events)]
        service_rate = drain_rate(client, names.input, names.output, payloads)
        ceiling_rate = drain_rate(client, names.ceiling_input, names.ceiling_output, payloads)
        drains.two.append(service_rate)
        drains.ceiling.append(ceiling_rate)
        drains.ratios.append(service_rate / ceiling_rate)
        drains.swiss.append(
            drain_rate(
                client,
                names.input,
                names.output,
                [work.swiss()[1] for _ in range(sizes.swiss_events)],
            )
        )
    return drains


def _half_load_latency(
    client: redis.Redis,
    reader: redis.Redis,
    names: Names,
    work: Workloads,
    sizes: Sizes,
    drains: _Drains,
    progress: Callable[[str], None],
) -> tuple[dict, dict]:
    """paced_latency of the two-player and then the 64x7 workload, each at half the
    service's median drain rate."""
    progress(
        f"service and ceiling: latency at half load ({sizes.latency_seconds:.0f} s per workload)"
    )
    two_latency = paced_latency(
        client,
        reader,
        names.input,
        names.output,
        work.stream(work.two_player),
        drains.two_rate / 2,
        sizes.latency_seconds,
    )
    swiss_latency = paced_latency(
        client,
        reader,
        names.input,
        names.output,
        work.stream(work.swiss),
        drains.swiss_rate / 2,
        sizes.latency_seconds,
    )
    return two_latency, swiss_latency


@dataclass
class Served:
    """One bench `serve` on the bench's streams (`served`)."""

    client: redis.Redis
    names: Names
    work: Workloads
    service: subprocess.Popen
    redis_cpu: Callable[[], float]

    def drain(self, payloads: list[bytes], timeout: float = 120.0) -> float:
        return drain_rate(self.client, self.names.input, self.names.output, payloads, timeout)


@contextmanager
def served(
    url: str | None,
    players: int,
    env: dict[str, str],
    launcher: Sequence[str] = (),
    start_timeout: float = 30.0,
    stop_timeout: float = 30.0,
) -> Iterator[Served]:
    """The bench's Redis (`url`, or a private server), `players` rated CFC players imported
    and `python -m service serve` (run by `launcher`, if any) on the bench's streams with `env`;
    afterwards the service stopped and the keys (or the private server) removed."""
    names = Names(f"bench-{uuid.uuid4().hex[:8]}")
    private, redis_url = _server(url)
    client = redis.Redis.from_url(redis_url)
    service = None
    try:
        work = _platform(redis_url, names, players)
        service = _start(
            ["-m", "service", "serve"], _service_env(redis_url, names, **env), launcher
        )
        _wait_for_group(client, names.input, names.group, service, timeout=start_timeout)
        yield Served(client, names, work, service, _redis_cpu(private, client))
    finally:
        if service is not None:
            _stop(service, stop_timeout)
        client.close()
        if private is not None:
            private.stop()
        else:
            _cleanup(redis_url, names.prefix)


def bench_profile(
    url: str | None,
    quick: bool,
    progress: Callable[[str], None] = lambda _: None,
    counts: tuple[int, int] | None = None,
) -> dict:
    """`bench --profile` (service/bench/profile.py): the real service on a two-player backlog
    and a 64x7 one, its commit stages read from its /metrics around each drain (`counts`:
    how many of each, for tests)."""
    from service.bench.profile import profile_drain
    from service.runtime.embedded import free_port

    sizes = Sizes.of(quick)
    port = free_port()
    progress(f"profile: importing {sizes.platform_players:,} players")
    with served(
        url,
        sizes.platform_players,
        {"RATING_HTTP_HOST": "127.0.0.1", "RATING_HTTP_PORT": str(port)},
    ) as serving:
        pid = serving.service.pid
        serving.drain([serving.work.two_player()[1] for _ in range(500)])  # warm-up
        out = {}
        two, swiss = counts or ((5_000, 150) if quick else (20_000, 600))
        for kind, label, make, count in (
            ("two_player", "two-player", serving.work.two_player, two),
            ("swiss_64x7", "64x7", serving.work.swiss, swiss),
        ):
            progress(f"profile: {count:,} {label} events")
            payloads = [make()[1] for _ in range(count)]
            out[kind] = profile_drain(
                serving.drain,
                payloads,
                f"http://127.0.0.1:{port}",
                serving.names.input,
                lambda: cpu_seconds(pid),
                serving.redis_cpu,
            )
        _none_dead_lettered(serving.client, serving.names)
        return out


def bench_read_side(url: str, names: Names, quick: bool, progress: Callable[[str], None]) -> dict:
    """service/bench/readload.py with this module's service process and drain."""
    client = redis.Redis.from_url(url)
    stream, output = f"{names.prefix}.reads", f"{names.prefix}.reads-out"
    env = {"RATING_REDIS_URL": url, "RATING_GROUP": names.group, "RATING_LOG_LEVEL": "WARNING"}

    def start(extra: dict) -> subprocess.Popen:
        process = _start(["-m", "service", "serve"], {**env, **extra})
        _wait_for_group(client, stream, names.group, process)
        return process

    def two_player(records: list[PlayerRecord]) -> Callable[[], bytes]:
        work = Workloads(f"{names.prefix}-reads", records)
        return lambda: work.two_player()[1]

    try:
        return bench_reads(
            url,
            names.prefix,
            quick,
            start,
            _stop,
            lambda payloads: drain_rate(client, stream, output, payloads),
            two_player,
            progress,
        )
    finally:
        client.close()


def bench_scale_out_stage(
    url: str,
    names: Names,
    sizes: Sizes,
    private: EmbeddedServer | None,
    progress: Callable[[str], None],
) -> dict:
    """service/bench/scaleout.py with this module's service processes; Redis's CPU from the
    private server's /proc/<pid>/stat, or INFO on a given one."""
    client = redis.Redis.from_url(url)
    try:
        return bench_scale_out(
            url,
            names.prefix,
            sizes.scale_runs,
            sizes.scale_events,
            sizes.scale_players,
            lambda env: _start(["-m", "service", "serve"], env),
            _stop,
            _redis_cpu(private, client),
            progress,
        )
    finally:
        client.close()


def _latency(figures: dict) -> dict:
    return {
        "latency_rate": figures["rate"],
        "latency_samples": figures["samples"],
        "p50_ms": figures["p50_ms"],
        "p99_ms": figures["p99_ms"],
    }


async def _import(url: str, keys: StreamKeys, records: list[PlayerRecord]) -> None:
    client = aioredis.Redis.from_url(url)
    try:
        await import_records(client, keys, records)
    finally:
        await client.aclose()


def bench_memory(url: str, names: Names, count: int) -> dict:
    """Redis bytes per stored player record: INFO used_memory around an import."""
    client = redis.Redis.from_url(url)
    try:
        records = minimal_records(count)
        before = client.info("memory")["used_memory"]
        asyncio.run(_import(url, StreamKeys(f"{names.prefix}.memory"), records))
        after = client.info("memory")["used_memory"]
        client.unlink(StreamKeys(f"{names.prefix}.memory").players("cfc", "regular"))
    finally:
        client.close()
    return {"records": count, "redis_bytes_per_record": (after - before) / count}


def _cleanup(url: str, prefix: str) -> None:
    client = redis.Redis.from_url(url)
    try:
        keys = list(client.scan_iter(match=f"*{prefix}*", count=1000))
        for start in range(0, len(keys), 500):
            client.unlink(*keys[start : start + 500])
    finally:
        client.close()


REPORT_KEYS = {
    "engines": {"cfc", "fide", "glicko2", "naspa", "fide_close", "apply"},
    "service": {"two_player", "swiss_64x7"},
    "ceiling": {"events_per_second", "ratio", "batch_size"},
    "memory": {"records", "redis_bytes_per_record", "service_peak_rss_mb"},
    "date_order": {"archive", "correction"},
    "reads": {
        "players",
        "player_events",
        "history_lines",
        "rate",
        "seconds",
        "player",
        "history",
        "list",
        "throughput",
    },
    "cluster": CLUSTER_KEYS,
    "scale_out": {"players", "one_partition", "two_partitions"},
    "machine": {
        "cores",
        "load_average_at_start",
        "load_average_at_end",
        "other_cpu_cores",
        "busy",
        "warnings",
    },
}
ENGINE_KEYS = {"players", "rounds", "newcomers", "games", "seconds", "games_per_second"}
SERVICE_KEYS = {
    "events",
    "events_per_second",
    "latency_rate",
    "latency_samples",
    "p50_ms",
    "p99_ms",
}


def run(
    url: str | None,
    quick: bool,
    progress: Callable[[str], None] = lambda _: None,
    sizes: Sizes | None = None,
    engines: dict | None = None,
) -> dict:
    """The whole bench: a dict with `engines`, `service`, `ceiling`, `memory`, `date_order`,
    `reads`, `scale_out`, `machine` (REPORT_KEYS), `targets` and `settings`. `sizes` and `engines` (figures measured already) are for tests."""
    sizes = sizes or Sizes.of(quick)
    names = Names(f"bench-{uuid.uuid4().hex[:8]}")
    neighbours = Neighbours()
    progress("engines")
    engines = engines if engines is not None else bench_engines(sizes.engine_runs, progress)
    private, redis_url = _server(url)
    try:
        progress("service and ceiling")
        service, ceiling, rss = bench_service(redis_url, names, sizes, progress)
        scale_out = bench_scale_out_stage(redis_url, names, sizes, private, progress)
        progress(f"memory ({sizes.memory_records:,} player records)")
        memory = bench_memory(redis_url, names, sizes.memory_records)
        memory["service_peak_rss_mb"] = rss
        progress("date order")
        order = bench_cascade(
            redis_url,
            names.prefix,
            sizes.cascade_players,
            sizes.cascade_events,
            lambda env: _start(["-m", "service", "serve"], env),
            _wait_for_group,
            peak_rss_mb,
            progress,
        )
        progress("read side")
        reads = bench_read_side(redis_url, names, quick, progress)
        progress("one partition on a cluster")
        cluster = bench_cluster(
            sizes.cluster_events, sizes.cluster_players, sizes.cluster_runs, progress
        )
    finally:
        if private is not None:
            private.stop()
        else:
            _cleanup(redis_url, names.prefix)
    report: dict[str, Any] = {
        "engines": engines,
        "service": service,
        "ceiling": ceiling,
        "memory": memory,
        "date_order": order,
        "reads": reads,
        "cluster": cluster,
        "scale_out": scale_out,
    }
    report["targets"] = check_targets(report)
    report["machine"] = neighbours.report()
    report["settings"] = _settings(quick, sizes, private, names)
    return report


def run_cascade(
    url: str | None, quick: bool, progress: Callable[[str], None] = lambda _: None
) -> dict:
    """Only the date-order stage (service/bench/cascade.py): `date_order` (the archive's
    bytes, the correction's seconds, revisions, RSS and counts), its goals as `targets`,
    `machine` and `settings`."""
    sizes = Sizes.of(quick)
    names = Names(f"bench-{uuid.uuid4().hex[:8]}")
    neighbours = Neighbours()
    private, redis_url = _server(url)
    try:
        order = bench_cascade(
            redis_url,
            names.prefix,
            sizes.cascade_players,
            sizes.cascade_events,
            lambda env: _start(["-m", "service", "serve"], env),
            _wait_for_group,
            peak_rss_mb,
            progress,
        )
    finally:
        if private is not None:
            private.stop()
        else:
            _cleanup(redis_url, names.prefix)
    report: dict[str, Any] = {"date_order": order}
    report["targets"] = check_targets(report, [t for t in TARGETS if t[1].startswith("date_order")])
    report["machine"] = neighbours.report()
    report["settings"] = _settings(quick, sizes, private, names)
    return report


def _date_order_lines(d: dict) -> list[str]:
    return [
        "date order",
        f"  archive per two-player event    {d['archive']['bytes_per_event']:>10.1f} bytes  (timeline + archive hash)",
        f"  history per player-event        {d['archive']['bytes_per_player_event']:>10.1f} bytes",
        f"  correction of the first event   {d['correction']['seconds']:>10.2f} s      ({d['correction']['revisions']:,}"
        f" revisions; {d['correction']['later_events']:,} later events, {d['correction']['players']:,} players)",
        f"  service peak RSS through it     {d['correction']['service_peak_rss_mb']:>10.1f} MB",
    ]


def render_cascade(report: dict) -> str:
    """The human table of `run_cascade`."""
    c, h = report["date_order"]["correction"], report["machine"]
    r = c["redis"]
    top = list(r["commands"].items())[:8]
    lines = [
        *(
            f"WARNING: {w}: the seconds are longer than this machine gives alone"
            for w in h["warnings"]
        ),
        *_date_order_lines(report["date_order"]),
        f"  of it, the service's CPU        {c['service_cpu_seconds']['user']:>10.2f} s user,"
        f" {c['service_cpu_seconds']['system']:.2f} s system",
        f"  Redis meanwhile                 {r['cpu_seconds']:>10.2f} s CPU, {r['bytes_in']:,} bytes in,"
        f" {r['bytes_out']:,} out",
        *(f"    {name:<28}{v['calls']:>10,} calls {v['usec'] / 1000:>10.1f} ms" for name, v in top),
        "goals",
        *(
            f"  {t['name']:<60} {t['value']:>10.2f}  {t['target']:<14} {'met' if t['met'] else 'NOT MET'}"
            for t in report["targets"]
        ),
    ]
    return "\n".join(lines)


def _settings(
    quick: bool, sizes: Sizes, private: EmbeddedServer | None, names: Names
) -> dict[str, Any]:
    """The report's `settings`: the sizes, the service's batch size, whose Redis (and how its
    CPU was read), the machine's CPUs and the bench's key prefix."""
    return {
        "quick": quick,
        "runs": sizes.runs,
        "engine_runs": sizes.engine_runs,
        "two_player_events": sizes.two_player_events,
        "swiss_events": sizes.swiss_events,
        "latency_seconds": sizes.latency_seconds,
        "memory_records": sizes.memory_records,
        "platform_players": sizes.platform_players,
        "batch_size": BATCH_SIZE,
        "cascade_players": sizes.cascade_players,
        "cascade_events": sizes.cascade_events,
        "cluster_events": sizes.cluster_events,
        "cluster_runs": sizes.cluster_runs,
        "scale_runs": sizes.scale_runs,
        "scale_events": sizes.scale_events,
        "scale_players": sizes.scale_players,
        "redis_cpu": "/proc/<pid>/stat of the private server"
        if private is not None
        else "INFO used_cpu_sys + used_cpu_user (the whole server: other clients count too)",
        "redis": f"private {private.binary.describe()}"
        if private and private.binary
        else "given URL",
        "cpus": os.cpu_count(),
        "prefix": names.prefix,
    }


def check_targets(report: dict, targets: Sequence[tuple] = TARGETS) -> list[dict]:
    """Each goal (of `targets`) with the measured value and whether it is met."""
    out = []
    for name, group, key, comparison, bound, unit in targets:
        node: Any = report
        for part in group.split("."):
            node = node[part]
        value = node[key]
        if comparison == "":
            out.append({"name": name, "value": value, "target": "none", "met": None})
            continue
        met = (
            value >= bound
            if comparison == ">="
            else value < bound
            if comparison == "<"
            else value <= bound
        )
        out.append(
            {
                "name": name,
                "value": value,
                "target": f"{comparison} {bound:g} {unit}".strip(),
                "met": met,
            }
        )
    return out


# ------------------------------------------------------------------ output
def render(report: dict) -> str:
    """The human table."""
    e, s, c, m = report["engines"], report["service"], report["ceiling"], report["memory"]
    d, r, o, h = report["date_order"], report["reads"], report["scale_out"], report["machine"]
    lines = [
        *(
            f"WARNING: {w}: the figures are lower than this machine gives alone"
            for w in h["warnings"]
        ),
        f"engines (median of {report['settings']['engine_runs']} runs)",
        f"  CFC  1,000 players x 9 rounds   {e['cfc']['games']:>6} games  {e['cfc']['seconds'] * 1000:8.1f} ms  "
        f"{e['cfc']['games_per_second']:>10,.0f} rated games/s",
        f"  FIDE 1,000 players x 9 rounds   {e['fide']['games']:>6} games  {e['fide']['seconds'] * 1000:8.1f} ms  "
        f"{e['fide']['games_per_second']:>10,.0f} rated games/s",
        f"  Glicko-2 1,000 x 9 rounds       {e['glicko2']['games']:>6} games  {e['glicko2']['seconds'] * 1000:8.1f} ms  "
        f"{e['glicko2']['games_per_second']:>10,.0f} rated games/s  (glicko2-event)",
        f"  NASPA 300 x 31, 60 newcomers    {e['naspa']['games']:>6} games  {e['naspa']['seconds'] * 1000:8.1f} ms",
        f"  FIDE period close, {e['fide_close']['players']:,} players        {e['fide_close']['seconds'] * 1000:8.1f} ms",
        f"  a two-player CFC event through apply       {e['apply']['us_per_event']:8.1f} µs  (in memory, decoded;"
        f" the engine {e['apply']['stages_us']['engine']:.1f} µs of it: python -m service.bench.apply splits the rest)",
        f"service end to end (median of {report['settings']['runs']} runs)   events/s   p50 ms   p99 ms  (latency at half rate)",
    ]
    for key, label in (
        ("two_player", "(a) two-player events"),
        ("swiss_64x7", "(b) 64-player 7-round"),
    ):
        f = s[key]
        lines.append(
            f"  {label:<32}{f['events_per_second']:>10,.0f} {f['p50_ms']:>8.1f} {f['p99_ms']:>8.1f}"
        )
    lines += [
        f"  ceiling (bare consumer, batch {c['batch_size']})  {c['events_per_second']:>10,.0f}",
        f"  service (a) / ceiling           {c['ratio']:>10.2f}",
        "memory",
        f"  service peak RSS (VmHWM)        {m['service_peak_rss_mb']:>10.1f} MB",
        f"  Redis per player record         {m['redis_bytes_per_record']:>10.1f} bytes  ({m['records']:,} records"
        f"{', --quick' if report['settings']['quick'] else ''})",
        *_date_order_lines(d),
        f"read side ({r['players']:,} players, {r['player_events']:,} history lines, {r['rate']:.0f} requests/s"
        f" for {r['seconds']:.0f} s)   requests   p50 ms   p99 ms",
        *(
            f"  {label:<32}{r[k]['requests']:>10,} {r[k]['p50_ms']:>8.1f} {r[k]['p99_ms']:>8.1f}"
            for k, label in (
                ("player", "player lookup"),
                ("history", f"history of {r['history_lines']} events"),
                ("list", "ranked list, first page"),
            )
        ),
        f"  two-player events/s alone       {r['throughput']['events_per_second']:>10,.0f}",
        f"  ... under the read load         {r['throughput']['under_read_load']:>10,.0f}  "
        f"({r['throughput']['ratio']:.2f}x, median of {r['throughput']['runs']} runs)",
        *render_cluster(report["cluster"]),
        *render_scale_out(o, report["settings"]),
        f"machine: {h['cores']} cores; load average {_maybe(h['load_average_at_start'])} before the bench, "
        f"{_maybe(h['load_average_at_end'])} after; other processes used {_maybe(h['other_cpu_cores'])} cores "
        "on average while it ran",
        "targets",
    ]
    for t in report["targets"]:
        value = t["value"]
        shown = f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
        lines.append(
            f"  {'met    ' if t['met'] else 'no goal' if t['met'] is None else 'NOT met'}  {t['name']:<32}"
            f" {shown:>10}  (target {t['target']})"
        )
    return "\n".join(lines)


def _maybe(value: float | None) -> str:
    return "?" if value is None else f"{value:.2f}"


def render_scale_out(o: dict, settings: dict) -> list[str]:
    """The scale-out part of the human table."""
    one, two = o["one_partition"], o["two_partitions"]
    first, second = two["partitions"]
    pair = two["two_replicas"]

    def row(label: str, f: dict) -> str:
        return (
            f"  {label:<40}{f['events_per_second']:>9,.0f} {f['service_cpu_us_per_event']:>9.0f} "
            f"{f['redis_cpu_us_per_event']:>9.0f} {f['service_cores']:>9.2f} {f['redis_cores']:>9.2f} "
            f"{f['bench_cores']:>9.2f} {f['other_cores']:>9.2f}"
        )

    return [
        f"scale-out (real serve replicas, median of {one['runs']} alternated runs, {one['events']:,} two-player events"
        f" per busy partition, {o['players']:,} players per pool)",
        f"  {'':<40}{'events/s':>9} {'service':>9} {'Redis':>9} {'service':>9} {'Redis':>9} {'bench':>9} {'others':>9}",
        f"  {'':<40}{'':>9} {'µs/event':>9} {'µs/event':>9} {'cores':>9} {'cores':>9} {'cores':>9} {'cores':>9}  (CPU)",
        row("1 partition, 1 replica", one["one_replica"]),
        row("1 partition, 2 replicas (1 stands by)", one["two_replicas"]),
        row("2 partitions, 1 replica, one at a time", two["one_replica_one_at_a_time"]),
        row("2 partitions, 1 replica, both at once", two["one_replica_both_at_once"]),
        row("2 partitions, 2 replicas, one each", pair),
        f"  (partitions {first} and {second}: {pair['each_events_per_second'][first]:,.0f} and "
        f"{pair['each_events_per_second'][second]:,.0f} events/s with a replica each; Redis CPU: {settings['redis_cpu']})",
        f"  2 replicas / 1, one partition           {one['ratio_of_runs']:>9.2f}x  (median of the runs' own "
        f"ratios; {one['ratio']:.2f}x of the medians)",
        f"  2 replicas, 2 partitions / 1 on one     {two['ratio_of_runs']:>9.2f}x  ({two['ratio']:.2f}x of the "
        f"medians; {two['same_work_ratio_of_runs']:.2f}x against 1 replica on both at once)",
        f"  on paper: a replica's core rates about {_per_core(pair['service_cpu_us_per_event'])} events/s, "
        f"a Redis core serves about {_per_core(pair['redis_cpu_us_per_event'])}",
    ]


def _per_core(us_per_event: float) -> str:
    """Events per CPU second at that cost ("?" when the drain was too short to see CPU time)."""
    return f"{1e6 / us_per_event:,.0f}" if us_per_event > 0 else "?"
