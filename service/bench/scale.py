"""`rating-service bench --scale`: the stages of issue 32 that take minutes, not part of the
quick run or the default one (docs/performance.md "At scale").

- `bulk`: the `import` and `export` of a FIDE-like list of 1,000,000 players (100,000
  with `--quick`), service/bench/bulk.py.
- `close`: a FIDE `period.closed` of a pool of `close_players` (1,000,000; 20,000 with
  `--quick`), every player with games in the period (95 % rated with the period's sums, 5 %
  unrated with pooled games, service/bench/workloads.py), imported a page at a time into the
  bench's Redis; a fresh `serve` (its default settings) closes it, a page of
  RATING_CLOSE_PLAYERS players a commit (D60). Measured: the time from the close's XADD to
  its last list message and the cursor past it; Redis's longest block (the largest of the
  latency monitor's `command` event and the slow log's longest command, so a transaction's
  EXEC as a whole); `serve`'s peak RSS (VmHWM); the commits, commands and bytes Redis
  received per page (INFO commandstats and stats).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import msgspec
import redis
import redis.asyncio as aioredis

from schemas.records import PlayerRecord
from service.bench import benchmark as bench
from service.bench.bulk import bench_bulk, drop_keys, render_bulk
from service.bench.machine import Neighbours, redis_cpu_seconds, stderr_tail
from service.bench.workloads import fide_pool_before_close
from service.closeindex import BUILT
from service.runtime.keys import StreamKeys
from service.runtime.records_io import import_records
from service.runtime.settings import Settings
from service.runtime.store import DATA_FIELD

# (name, group, key, comparison, bound, unit), as benchmark.TARGETS.
SCALE_TARGETS: tuple[tuple[str, str, str, str, float, str], ...] = (
    (
        "a close of 1M players: Redis's longest block",
        "close",
        "redis_longest_block_ms",
        "<",
        50,
        "ms",
    ),
    ("a close of 1M players: serve's peak RSS", "close", "service_peak_rss_mb", "<", 300, "MB"),
    (
        "a FIDE decade bulk-loaded: time (extrapolated)",
        "load",
        "decade_minutes",
        "<",
        15,
        "min",
    ),
    ("a FIDE decade bulk-loaded: peak RSS", "load", "peak_rss_mb", "<", 2_000, "MB"),
    ("an import of 1M players: wall time", "bulk", "import_seconds", "<", 20, "s"),
    ("an import of 1M players: peak RSS", "bulk", "import_peak_rss_mb", "<", 500, "MB"),
    ("an export of 1M players: peak RSS", "bulk", "export_peak_rss_mb", "<", 200, "MB"),
)
STAGES = ("bulk", "close", "load")
PAGE = 50_000  # records generated and imported at a time


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value or "")


def pool_pages(players: int) -> Iterator[list[PlayerRecord]]:
    """A FIDE standard pool at the end of 2025-11 (workloads.fide_pool_before_close), `PAGE`
    records at a time, ids `f0000001`..."""
    for first in range(0, players, PAGE):
        size = min(PAGE, players - first)
        page = fide_pool_before_close(size, seed=11 + first // PAGE)
        yield [msgspec.structs.replace(r, id=f"f{first + n + 1:07d}") for n, r in enumerate(page)]


def _command_counts(client: redis.Redis) -> tuple[int, int, int, float, dict[str, float]]:
    """(commands, EXECs, bytes received, CPU seconds, µs by command) Redis counted so far."""
    stats = client.info("commandstats")
    calls = sum(int(v["calls"]) for v in stats.values())
    execs = int(stats.get("cmdstat_exec", {}).get("calls", 0))
    usec = {name.removeprefix("cmdstat_"): float(v["usec"]) for name, v in stats.items()}
    received = int(client.info("stats")["total_net_input_bytes"])
    return calls, execs, received, redis_cpu_seconds(client), usec


def _watch_blocks(client: redis.Redis) -> bool:
    """Turn on the latency monitor (1 ms) and the slow log (1 ms, 10,000 entries), emptied;
    False when the server refuses CONFIG (a managed Redis): no block figure then."""
    try:
        client.config_set("latency-monitor-threshold", 1)
        client.config_set("slowlog-log-slower-than", 1_000)
        client.config_set("slowlog-max-len", 10_000)
    except redis.ResponseError:
        return False
    client.execute_command("LATENCY", "RESET")
    client.slowlog_reset()
    return True


def _longest_block_ms(client: redis.Redis) -> tuple[float, str, list[str]]:
    """The longest time Redis spent on one command since `_watch_blocks` (ms), which, and
    the slow log's five longest (ms and command)."""
    longest, what = 0.0, "none over 1 ms"
    for row in client.execute_command("LATENCY", "LATEST"):  # event, time, latest, max, ...
        event, worst = row[0], row[3]
        if float(worst) > longest:
            longest, what = float(worst), f"latency event {_text(event)}"
    slow = []
    for entry in client.slowlog_get(10_000):
        command = entry["command"]
        words = (command if isinstance(command, bytes) else str(command).encode()).split()
        slow.append((entry["duration"] / 1000, b" ".join(words[:2])[:60].decode(errors="replace")))
    slow.sort(reverse=True)
    if slow and slow[0][0] > longest:
        longest, what = slow[0][0], f"slow log: {slow[0][1]}"
    return longest, what, [f"{ms:.1f} ms {command}" for ms, command in slow[:5]]


def bench_close(
    url: str, prefix: str, players: int, progress: Callable[[str], None]
) -> dict[str, Any]:
    """The `close` stage (the module's docstring)."""
    names = bench.Names(f"{prefix}.close")
    keys = StreamKeys(names.input)
    client = redis.Redis.from_url(url)
    try:
        progress(f"scale: importing a FIDE pool of {players:,} players, all active in 2025-11")
        started = time.perf_counter()
        asyncio.run(_import_pool(url, keys, players))
        imported = time.perf_counter() - started
        # The import kept the close index of what it wrote (D60): a new pool's is complete.
        client.zadd(keys.due("fide", "standard"), {BUILT: 0})
        env = {
            "RATING_REDIS_URL": url,
            "RATING_INPUT_STREAMS": names.input,
            "RATING_OUTPUT_STREAM": names.output,
            "RATING_DEAD_LETTER_STREAM": names.dead_letter,
            "RATING_GROUP": names.group,
            "RATING_HTTP_PORT": "0",
            "RATING_LOG_LEVEL": "WARNING",
            "RATING_CONSUMER": f"scale-{uuid.uuid4().hex[:8]}",
        }
        service = bench._start(["-m", "service", "serve"], env)
        try:
            _wait_owner(client, keys, env["RATING_CONSUMER"], service)
            idle = bench.peak_rss_mb(service.pid)
            watched = _watch_blocks(client)
            calls0, execs0, bytes0, cpu0, usec0 = _command_counts(client)
            neighbours = Neighbours()
            progress(f"scale: closing 2025-11 of {players:,} players")
            close = {"schema": "period.closed/v1", "system": "fide", "period": "2025-11"}
            started = time.perf_counter()
            entry = client.xadd(names.input, {DATA_FIELD: msgspec.json.encode(close)})
            while client.get(keys.cursor) != entry:
                if service.poll() is not None:
                    raise RuntimeError(f"the service exited: {stderr_tail(service)}")
                time.sleep(0.05)
            seconds = time.perf_counter() - started
            rss = bench.peak_rss_mb(service.pid)
            calls1, execs1, bytes1, cpu1, usec1 = _command_counts(client)
            machine = neighbours.report()
            block, what, slowest = (
                _longest_block_ms(client) if watched else (None, "CONFIG refused", [])
            )
        finally:
            bench._stop(service)
        lists = client.xlen(names.output)
        rejected = client.xlen(names.dead_letter) if client.exists(names.dead_letter) else 0
        if rejected:
            raise RuntimeError(f"the close was dead-lettered: {client.xrange(names.dead_letter)}")
        pages = max(1, execs1 - execs0)
        spent = {name: (usec1[name] - usec0.get(name, 0.0)) / pages / 1000 for name in usec1}
        top = sorted(spent.items(), key=lambda kv: -kv[1])[:6]
        return {
            "players": players,
            "import_seconds": imported,
            "seconds": seconds,
            "list_messages": lists,
            "commits": execs1 - execs0,
            "commands_per_commit": (calls1 - calls0) / pages,
            "bytes_per_commit": (bytes1 - bytes0) / pages,
            "redis_cpu_ms_per_commit": (cpu1 - cpu0) / pages * 1000,
            "command_ms_per_commit": {name: round(ms, 3) for name, ms in top},
            "machine": machine,
            "redis_longest_block_ms": block,
            "longest_block": what,
            "slowest": slowest,
            "service_idle_rss_mb": idle,
            "service_peak_rss_mb": rss,
            "close_players": Settings().close_players,
        }
    finally:
        drop_keys(client, prefix)
        client.close()


async def _import_pool(url: str, keys: StreamKeys, players: int) -> None:
    client = aioredis.Redis.from_url(url)
    try:
        for page in pool_pages(players):
            await import_records(client, keys, page)
    finally:
        await client.aclose()


def _wait_owner(
    client: redis.Redis, keys: StreamKeys, consumer: str, service: Any, timeout: float = 600
) -> None:
    """Until the `serve` owns the stream's lease (its start-up done: ready to rate)."""
    deadline = time.monotonic() + timeout
    while _text(client.get(keys.lease)).split(" ")[-1] != consumer:
        if service.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the service took no lease: {stderr_tail(service)}")
        time.sleep(0.05)


def run_scale(
    url: str | None,
    quick: bool,
    progress: Callable[[str], None] = lambda _: None,
    stages: tuple[str, ...] = STAGES,
) -> dict[str, Any]:
    """The scale stages asked for (`bulk`: service/bench/bulk.py, the import and export of a
    list, medians of 3 runs; `close`; `load`: service/bench/onboard.py), `targets`,
    `settings`."""
    from service.bench.onboard import bench_load

    players = 20_000 if quick else 1_000_000
    listed = 100_000 if quick else 1_000_000
    private, redis_url = bench._server(url)
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    report: dict[str, Any] = {}
    try:
        if "bulk" in stages:
            report["bulk"] = bench_bulk(redis_url, prefix, listed, progress, runs=3)
        if "close" in stages:
            report["close"] = bench_close(redis_url, prefix, players, progress)
        if "load" in stages:
            periods = (1, 2) if quick else (6, 30)
            try:
                report["load"] = bench_load(redis_url, prefix, periods, progress)
            finally:
                drop_keys(redis.Redis.from_url(redis_url), prefix)
    finally:
        if private is not None:
            private.stop()
    report["targets"] = check_scale_targets(report)
    if quick:  # the figures of smaller runs: beside the targets, but not the targets' size
        for target in report["targets"]:
            target["name"] += " (at --quick's size, not the target's)"
    report["settings"] = {
        "quick": quick,
        "redis": f"private {private.binary.describe()}"
        if private and private.binary
        else "given URL",
    }
    return report


def check_scale_targets(report: dict) -> list[dict]:
    out = []
    for name, group, key, comparison, bound, unit in SCALE_TARGETS:
        if group not in report:
            continue
        value = report[group][key]
        met = value is not None and (value < bound if comparison == "<" else value <= bound)
        target = f"{comparison} {bound:g} {unit}"
        out.append({"name": name, "value": value, "target": target, "met": met})
    return out


def render_scale(report: dict) -> str:
    """The human table."""
    from service.bench.onboard import render_load

    lines = render_bulk(report["bulk"]) if "bulk" in report else []
    if "close" in report:
        lines += render_close(report)
    if "load" in report:
        lines += [*render_load(report["load"]), ""]
    lines.append("targets:")
    for t in report["targets"]:
        value = "n/a" if t["value"] is None else f"{t['value']:,.1f}"
        lines.append(f"  [{'met' if t['met'] else 'MISSED'}] {t['name']}: {value} {t['target']}")
    return "\n".join(lines)


def render_close(report: dict) -> list[str]:
    """The close stage's lines."""
    c = report["close"]
    block = c["redis_longest_block_ms"]
    lines = [
        f"a FIDE close of {c['players']:,} players (all active), {c['close_players']:,} a commit"
        f" ({report['settings']['redis']})",
        f"  imported in                    {c['import_seconds']:8.1f} s",
        f"  closed in                      {c['seconds']:8.1f} s"
        f"  ({c['list_messages']:,} list messages, {c['commits']:,} commits)",
        f"  per commit                     {c['commands_per_commit']:8.1f} command calls"
        " (scripts' included),"
        f" {c['bytes_per_commit'] / 1024:,.0f} KiB",
        f"  Redis's CPU per commit         {c['redis_cpu_ms_per_commit']:8.1f} ms"
        f"  (by command: {', '.join(f'{k} {v:.1f}' for k, v in c['command_ms_per_commit'].items())})",
        f"  load average                   {c['machine']['load_average_at_start']:8.2f} at the start,"
        f" {c['machine']['load_average_at_end']:.2f} at the end",
        f"  Redis's longest block          {block:8.1f} ms  ({c['longest_block']})"
        if block is not None
        else "  Redis's longest block          (CONFIG refused by the server)",
        *(f"    {line}" for line in c["slowest"]),
        f"  serve's peak RSS               {c['service_peak_rss_mb']:8.1f} MB"
        f"  (idle {c['service_idle_rss_mb']:.1f} MB)",
        "",
    ]
    return lines
