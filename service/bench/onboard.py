"""The `load` stage of `rating-service bench --scale` (issue 32, D119): a synthetic FIDE
history bulk-loaded by `rating-service load` at two lengths, its time, peak RSS and events/s,
extrapolated to a FIDE decade.

The decade: DECADE_EVENTS Swiss tournaments of 40 players and 7 rounds (140 games each:
15,000,000 games) over 120 monthly periods, each period closed (`period.closed/v1`) after
its events, among a starting list of POOL_PLAYERS rated players (bench.workloads.rated_list).
A run writes `periods` months of it (the decade's events per month) to a JSON Lines file, one
event at a time, and times `rating-service load` of it as a child process against the
bench's Redis: its wall time, user and system CPU, peak RSS (the child's ru_maxrss) and the
CPU Redis spent meanwhile (INFO: the whole server's, so only the load's on the bench's
private server). Two lengths
among the same pool show the memory flat in the history's length; the decade's time is the
shorter run's plus the rest of the decade's events at the marginal rate between the two
(the pool, and so the memory, is the decade's already).
"""

from __future__ import annotations

import datetime as dt
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import redis

from schemas.periods import add_months, first_day
from service.bench.machine import redis_cpu_seconds
from service.bench.sizing import Shape, shape_event
from service.bench.workloads import rated_list

DECADE_EVENTS = 107_143  # 40 players x 7 rounds: 140 games each, 15,000,000 games
DECADE_PERIODS = 120
POOL_PLAYERS = 200_000
SHAPE = Shape("40-player Swiss, 7 rounds", 40, "swiss", 7)
FIRST_PERIOD = "2015-11"  # the decade ends with 2025-10
TARGET_SECONDS = 15 * 60
TARGET_RSS_MB = 2_000

_encoder = msgspec.json.Encoder()


def write_history(path: Path, pool: list[Any], periods: int, seed: int = 29) -> tuple[int, int]:
    """`periods` months of the decade's events (DECADE_EVENTS / DECADE_PERIODS a month) among
    `pool`, each month followed by its close, one line at a time; (events, games)."""
    rng = random.Random(seed)
    per_period = round(DECADE_EVENTS / DECADE_PERIODS)
    events = games = 0
    with path.open("wb") as f:
        for month in range(periods):
            period = add_months(FIRST_PERIOD, month)
            day = (first_day(period) + dt.timedelta(days=14)).isoformat()
            for _ in range(per_period):
                players = rng.sample(pool, SHAPE.players)
                message = shape_event("fide", SHAPE, players, f"decade-{events}", events)
                message.update(start_date=day, end_date=day)
                f.write(_encoder.encode(message) + b"\n")
                events += 1
                games += len(message["games"])
            close = {"schema": "period.closed/v1", "system": "fide", "pool": "standard"}
            f.write(_encoder.encode({**close, "period": period}) + b"\n")
    return events, games


def timed_load(url: str, stream: str, history: Path, ratings: Path) -> dict[str, Any]:
    """`rating-service load` of the history as a child process: wall seconds, user and
    system CPU, peak RSS (MB, the child's ru_maxrss), Redis's CPU seconds meanwhile."""
    env = dict(os.environ, RATING_REDIS_URL=url, RATING_INPUT_STREAMS=stream)
    client = redis.Redis.from_url(url)
    redis_before = redis_cpu_seconds(client)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "service", "load", str(history), "--ratings", str(ratings)],
        env=env,
        capture_output=True,
        text=True,
    )
    seconds = time.monotonic() - started
    if done.returncode != 0:
        raise RuntimeError(f"rating-service load failed: {done.stderr.strip()[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    redis_cpu = redis_cpu_seconds(client) - redis_before
    client.close()
    return {
        "seconds": seconds,
        "user_cpu_seconds": after.ru_utime - before.ru_utime,
        "system_cpu_seconds": after.ru_stime - before.ru_stime,
        "redis_cpu_seconds": redis_cpu,
        "peak_rss_mb": after.ru_maxrss / 1024,  # the largest child's so far (KiB on Linux)
        "output": done.stdout.strip().splitlines(),
    }


def bench_load(
    url: str, prefix: str, periods: tuple[int, int], progress: Callable[[str], None]
) -> dict[str, Any]:
    """The stage: the pool's list, then a load of each length into a stream of its own
    (the shorter first: ru_maxrss of children is the largest so far)."""
    from service.formats.ratinglists import render_jsonl

    pool = rated_list("fide", POOL_PLAYERS, seed=13, prefix="f")
    runs = []
    with tempfile.TemporaryDirectory(prefix="rating-bench-load-") as folder:
        ratings = Path(folder) / "list.jsonl"
        ratings.write_bytes(render_jsonl(pool))
        for n, months in enumerate(sorted(periods)):
            history = Path(folder) / f"history-{months}.jsonl"
            events, games = write_history(history, pool, months)
            progress(f"load of {events:,} events ({months} periods) among {len(pool):,} players")
            run = timed_load(url, f"{prefix}-load{n}.events", history, ratings)
            run.update(
                periods=months,
                events=events,
                games=games,
                file_mb=history.stat().st_size / 1e6,
                events_per_second=events / run["seconds"],
            )
            runs.append(run)
    return summarise(runs)


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The runs; the decade extrapolated: the shorter run's time (its start, the list read and
    imported, included) plus the rest of the decade's events at the marginal rate between
    the two runs (the events the longer added over the seconds it added); the memory's
    growth with the history's length."""
    short, long = runs[0], runs[-1]
    added = long["seconds"] - short["seconds"]
    marginal = (
        (long["events"] - short["events"]) / added if added > 0 else long["events_per_second"]
    )
    decade_seconds = short["seconds"] + (DECADE_EVENTS - short["events"]) / marginal
    added_events = max(long["events"] - short["events"], 1)

    def marginal_ms(key: str) -> float:
        return 1000 * (long[key] - short[key]) / added_events

    return {
        "pool_players": POOL_PLAYERS,
        "runs": runs,
        "fraction": long["events"] / DECADE_EVENTS,
        "decade_events": DECADE_EVENTS,
        "decade_games": DECADE_EVENTS * SHAPE.players * SHAPE.rounds // 2,
        "marginal_events_per_second": marginal,
        "user_cpu_ms_per_event": marginal_ms("user_cpu_seconds"),
        "system_cpu_ms_per_event": marginal_ms("system_cpu_seconds"),
        "redis_cpu_ms_per_event": marginal_ms("redis_cpu_seconds"),
        "decade_seconds": decade_seconds,
        "decade_minutes": decade_seconds / 60,
        "peak_rss_mb": long["peak_rss_mb"],
        "rss_ratio": long["peak_rss_mb"] / short["peak_rss_mb"],
        "length_ratio": long["events"] / short["events"],
        "load_average": os.getloadavg()[0],
    }


def render_load(load: dict[str, Any]) -> list[str]:
    lines = [
        f"a FIDE history loaded (`rating-service load`) among {load['pool_players']:,} players,"
        " 40-player 7-round Swiss events, each month closed",
    ]
    for r in load["runs"]:
        lines.append(
            f"  {r['periods']:3d} periods, {r['events']:7,} events ({r['games']:,} games,"
            f" {r['file_mb']:,.0f} MB): {r['seconds']:7.1f} s, {r['events_per_second']:6.1f} events/s,"
            f" user CPU {r['user_cpu_seconds']:.1f} s, system {r['system_cpu_seconds']:.1f} s,"
            f" Redis {r['redis_cpu_seconds']:.1f} s, peak RSS {r['peak_rss_mb']:,.0f} MB"
        )
    lines += [
        f"  RSS x{load['rss_ratio']:.2f} for a history x{load['length_ratio']:.1f} as long",
        f"  marginal rate {load['marginal_events_per_second']:.1f} events/s, user CPU"
        f" {load['user_cpu_ms_per_event']:.1f} ms an event, system {load['system_cpu_ms_per_event']:.1f},"
        f" Redis {load['redis_cpu_ms_per_event']:.1f} (load average {load['load_average']:.2f})",
        f"  a decade ({load['decade_events']:,} events, {load['decade_games']:,} games; the longer run"
        f" {load['fraction']:.1%} of it): the shorter run's {load['runs'][0]['seconds']:.0f} s + the"
        f" rest at the marginal rate = {load['decade_minutes']:.1f} min",
    ]
    return lines
