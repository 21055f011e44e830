"""One partition on a Redis Cluster against the same on a standalone server, for
`rating-service bench` (docs/design/decisions.md, D11; target: the cluster at least 0.9x).

Three ways of committing, measured in turn (standalone, cluster, cluster pipeline, then
again, `runs` times: alternated, so that the machine's drift hits all three alike), medians:

    standalone         a standalone server: the processor's commits as they always were
    cluster            a local 3-master cluster (service/bench/localcluster.py), the service's
                       way: each commit's WATCH / reads / MULTI / EXEC on a plain client of the
                       master that owns the partition's slot (runtime/connection.py)
    cluster_pipeline   the same cluster, the commits through redis-py's own cluster transaction
                       pipeline (ClusterPipeline, TransactionStrategy): what the service avoids

One run: `events` two-player CFC events (among `players` imported players) appended to the
cfc.regular partition's input stream of the domains layout, then applied by the processor
(StreamProcessor.handle: XRANGE from the cursor in batches of RATING_BATCH_SIZE, one
WATCH/MULTI/EXEC per batch, XACK inside it): the service's commit path without its read
loop, timed; events per second. Both servers run the same binary, without persistence, on
loopback. The measuring runs in a subprocess of its own (`python -m service.bench.cluster
STANDALONE_URL CLUSTER_URL EVENTS PLAYERS RUNS` prints JSON), as the service would.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

import structlog

from service.bench.localcluster import LocalCluster
from service.bench.workloads import encode, rated_list, two_player_event
from service.engine.registry import default_registry
from service.runtime.connection import Cluster, connect
from service.runtime.embedded import EmbeddedServer, find_binary
from service.runtime.keys import StreamKeys
from service.runtime.processor import StreamProcessor
from service.runtime.records_io import import_records
from service.runtime.settings import load_settings
from service.runtime.store import DATA_FIELD

WAYS = ("standalone", "cluster", "cluster_pipeline")
CLUSTER_KEYS = {"events", "players", "runs", *WAYS, "ratio", "pipeline_ratio", "redis"}


class PipelineCommits(Cluster):
    """The cluster client with the commits through redis-py's cluster transaction pipeline:
    the owner of every slot is the cluster client itself (connection.on_owner)."""

    async def owner(self, key: str) -> Any:
        return self


async def one_run(
    client: Any, url: str, events: int, players: int, seed: int, importer: Any = None
) -> float:
    """Apply a backlog of `events` on a fresh partition: events per second. The list is
    imported by `importer` (default `client`): an import sends its transactions on a
    connection of the owner's pool (D130), which PipelineCommits, its own owner, has not."""
    prefix = f"bench-cl-{uuid.uuid4().hex[:8]}"
    settings = load_settings(
        {},
        redis_url=url,
        partitions="domains",
        input_streams=(f"{prefix}.events",),
        output_stream=f"{prefix}.ratings",
        dead_letter_stream=f"{prefix}.rejected",
        group=f"{prefix}.group",
        log_level="WARNING",
    )
    stream = settings.layout.route("cfc", "regular").input
    records = rated_list("cfc", players, prefix=f"{prefix}-p")
    await import_records(importer or client, StreamKeys(stream), records)
    rng = random.Random(seed)
    last = ""
    for start in range(0, events, 500):
        async with client.pipeline(transaction=False) as pipe:
            for n in range(start, min(events, start + 500)):
                a, b = rng.sample(records, 2)
                pipe.xadd(
                    stream,
                    {DATA_FIELD: encode(two_player_event("cfc", a, b, f"{prefix}-{n}", rng))},
                )
            last = (await pipe.execute())[-1].decode()
    processor = StreamProcessor(client, settings, stream, default_registry())
    began = time.perf_counter()
    await processor.handle(last)
    seconds = time.perf_counter() - began
    written = await client.xlen(settings.layout.of_stream(stream).output)
    if written != events:
        raise RuntimeError(f"{stream}: {written} outputs for {events} events")
    for key in [key async for key in client.scan_iter(match=f"*{prefix}*", count=1_000)]:
        await client.unlink(key)
    return events / seconds


async def measure(
    standalone_url: str, cluster_url: str, events: int, players: int, runs: int
) -> dict:
    """The three ways, alternated `runs` times: each way's events/s (median and every run)."""
    structlog.configure(
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING)
    )  # no line per event
    clients = {
        "standalone": await connect(standalone_url),
        "cluster": await connect(cluster_url),
        "cluster_pipeline": PipelineCommits.connect(cluster_url),
    }
    urls = {"standalone": standalone_url, "cluster": cluster_url, "cluster_pipeline": cluster_url}
    rates: dict[str, list[float]] = {way: [] for way in WAYS}
    try:
        await one_run(
            clients["standalone"], standalone_url, min(events, 200), players, 0
        )  # warm-up
        for run in range(runs):
            for way in WAYS:
                importer = clients["cluster"] if way == "cluster_pipeline" else None
                rates[way].append(
                    await one_run(clients[way], urls[way], events, players, run, importer)
                )
    finally:
        for client in clients.values():
            await client.aclose()
    out: dict[str, Any] = {"events": events, "players": players, "runs": runs}
    for way in WAYS:
        out[way] = {"events_per_second": statistics.median(rates[way]), "runs": rates[way]}
    base = out["standalone"]["events_per_second"]
    out["ratio"] = out["cluster"]["events_per_second"] / base
    out["pipeline_ratio"] = out["cluster_pipeline"]["events_per_second"] / base
    return out


def bench_cluster(
    events: int, players: int, runs: int, progress: Callable[[str], None] = lambda _: None
) -> dict:
    """Start a standalone server and a 3-master cluster of the same binary, measure (in a
    subprocess), stop them."""
    binary = find_binary()
    standalone = EmbeddedServer(persistent=False, binary=binary).start()
    cluster = LocalCluster(3, binary=binary.path)
    try:
        progress("cluster: starting a local 3-master cluster")
        cluster.start()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "service.bench.cluster",
                standalone.url,
                cluster.url,
                str(events),
                str(players),
                str(runs),
            ],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise RuntimeError(f"the cluster bench failed: {done.stderr[-2000:]}")
        report = json.loads(done.stdout)
    finally:
        cluster.stop()
        standalone.stop()
    report["redis"] = binary.describe()
    return report


def render_cluster(figures: dict) -> list[str]:
    """The report's lines (benchmark.render)."""
    return [
        f"one partition, standalone vs a 3-master cluster ({figures['redis']}; {figures['events']:,} two-player "
        f"events a run, median of {figures['runs']} alternated runs)   events/s",
        f"  standalone                      {figures['standalone']['events_per_second']:>10,.0f}",
        f"  cluster, commits on the owner   {figures['cluster']['events_per_second']:>10,.0f}  "
        f"({figures['ratio']:.2f}x standalone)",
        f"  cluster, redis-py's pipeline    {figures['cluster_pipeline']['events_per_second']:>10,.0f}  "
        f"({figures['pipeline_ratio']:.2f}x standalone)",
    ]


if __name__ == "__main__":
    standalone_url, cluster_url, count, size, repeats = sys.argv[1:6]
    print(
        json.dumps(
            asyncio.run(measure(standalone_url, cluster_url, int(count), int(size), int(repeats)))
        )
    )
