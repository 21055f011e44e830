"""Benchmark: two replicas on one input stream against one replica (README "Replicas: one
owner per input stream"): drain rate of a backlog of two-player CFC events, and CPU seconds
per 1000 events (all replicas together), alternated runs, medians.

Run: REDIS_URL=redis://127.0.0.1:6379/0 python tests/bench_replicas.py [RUNS] [EVENTS]
Every run uses keys of its own (a fresh prefix) and deletes them after.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import uuid
from pathlib import Path

import redis

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from service.bench.benchmark import Names, Workloads, _import, _start, _stop, _wait_for_group, drain_rate  # noqa: E402
from service.bench.workloads import rated_list  # noqa: E402
from service.runtime.store import StreamKeys  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def one_run(url: str, replicas: int, events: int) -> tuple[float, float]:
    """(events per second, CPU seconds per 1000 events) for `replicas` replicas."""
    names = Names(f"benchrep{uuid.uuid4().hex[:10]}")
    client = redis.Redis.from_url(url)
    platform = rated_list("cfc", 2000, prefix=f"{names.prefix}-p")
    asyncio.run(_import(url, StreamKeys(names.input), platform))
    work = Workloads(names.prefix, platform)
    env = {"RATING_REDIS_URL": url, "RATING_INPUT_STREAMS": names.input, "RATING_OUTPUT_STREAM": names.output,
           "RATING_DEAD_LETTER_STREAM": names.dead_letter, "RATING_GROUP": names.group, "RATING_HTTP_PORT": "0",
           "RATING_LOG_LEVEL": "WARNING"}
    services = [_start(["-m", "service", "serve"], {**env, "RATING_CONSUMER": f"{names.prefix}-{n}"})
                for n in range(replicas)]
    try:
        for service in services:
            _wait_for_group(client, names.input, names.group, service)
        while client.zcard("{" + names.input + "}:replicas") < replicas:
            pass
        drain_rate(client, names.input, names.output, [work.two_player()[1] for _ in range(200)])  # warm-up
        payloads = [work.two_player()[1] for _ in range(events)]
        before = sum(cpu_seconds(s.pid) for s in services)
        rate = drain_rate(client, names.input, names.output, payloads)
        cpu = sum(cpu_seconds(s.pid) for s in services) - before
    finally:
        for service in services:
            _stop(service)
        keys = list(client.scan_iter(match=f"*{names.prefix}*", count=1000))
        if keys:
            client.delete(*keys)
        client.close()
    return rate, cpu / events * 1000


def main() -> None:
    url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    events = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
    results: dict[int, list[tuple[float, float]]] = {1: [], 2: []}
    for run in range(runs):
        for replicas in ((1, 2) if run % 2 == 0 else (2, 1)):
            results[replicas].append(one_run(url, replicas, events))
            rate, cpu = results[replicas][-1]
            print(f"run {run + 1}: {replicas} replica(s): {rate:8.0f} events/s, {cpu:.3f} CPU s per 1000 events",
                  flush=True)
    one = statistics.median(r for r, _ in results[1])
    two = statistics.median(r for r, _ in results[2])
    cpu_one = statistics.median(c for _, c in results[1])
    cpu_two = statistics.median(c for _, c in results[2])
    print(f"median: 1 replica {one:.0f} events/s, {cpu_one:.3f} CPU s/1000; "
          f"2 replicas {two:.0f} events/s, {cpu_two:.3f} CPU s/1000")
    print(f"two replicas / one replica: throughput {two / one:.2f}x, CPU per event {cpu_two / cpu_one:.2f}x")
    pairs = statistics.median(b[0] / a[0] for a, b in zip(results[1], results[2]))
    print(f"median of the runs' own ratios (two / one, same run): {pairs:.2f}x")


if __name__ == "__main__":
    main()
