"""`rating-service bench --profile`: where one partition's time goes, stage by stage, without a
profiler.

The real service (`python -m service serve`, one replica, its default settings) drains a
backlog of two-player events, then one of 64-player 7-round events, among 10,000 rated CFC
players. The service times each commit's stages into `rating_commit_stage_seconds_total`
(service/runtime/report.py, STAGES): decode (the entries, strictly), read (the entries
when they were not handed over by the subscriber, WATCH, the records, markers and timelines
the batch needs, decoded; Redis's round trips included), rate (the engines in the ledger),
encode (the writes and the outputs), write (MULTI ... EXEC) and report (metrics and logs).
The bench reads those counters from the service's /metrics before and after each drain, and
the service's CPU time (/proc/<pid>/stat), and prints per event: each stage's wall time (a
stage that waits for Redis, `read` and `write`, includes Redis's work), the rest of the wall
time (FastStream, XREADGROUP, the event loop, waiting for entries; below zero if the stages
ever overlap, e.g. a catch-up's decoding while a commit waits), the wall time, the service's
CPU and Redis's CPU.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx
from prometheus_client.parser import text_string_to_metric_families

from service.runtime.report import STAGES

STAGE_LABELS = {
    "decode": "decode the entries",
    "read": "read (Redis round trips included)",
    "rate": "rate (engines, ledger)",
    "encode": "encode writes and outputs",
    "write": "write (MULTI ... EXEC)",
    "report": "report (metrics, logs)",
}


def scrape(base: str, stream: str) -> dict[str, float]:
    """The stage counters and the commit counts of `stream` from a service's /metrics."""
    return stage_counters(httpx.get(f"{base}/metrics", timeout=10).text, stream)


def stage_counters(text: str, stream: str) -> dict[str, float]:
    """The stage counters and the commit counts of `stream` in a /metrics page."""
    out: dict[str, float] = {stage: 0.0 for stage in STAGES}
    out["commits"] = out["entries"] = 0.0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.labels.get("stream") != stream:
                continue
            if sample.name == "rating_commit_stage_seconds_total":
                out[sample.labels["stage"]] = sample.value
            elif sample.name == "rating_entries_per_commit_count":
                out["commits"] = sample.value
            elif sample.name == "rating_entries_per_commit_sum":
                out["entries"] = sample.value
    return out


def profile_drain(
    drain: Callable[[list[bytes]], float],
    payloads: list[bytes],
    base: str,
    stream: str,
    service_cpu: Callable[[], float],
    redis_cpu: Callable[[], float],
) -> dict:
    """Drain `payloads` through the service; per event, microseconds of each stage and the rest."""
    before, cpu0, redis0 = scrape(base, stream), service_cpu(), redis_cpu()
    start = time.perf_counter()
    rate = drain(payloads)
    wall = time.perf_counter() - start
    after, cpu1, redis1 = scrape(base, stream), service_cpu(), redis_cpu()
    events = len(payloads)
    stages = {stage: (after[stage] - before[stage]) / events * 1e6 for stage in STAGES}
    commits = after["commits"] - before["commits"]
    wall_us = wall / events * 1e6
    return {
        "events": events,
        "events_per_second": rate,
        "wall_us_per_event": wall_us,
        "stages_us_per_event": stages,
        "outside_commits_us_per_event": wall_us - sum(stages.values()),
        "service_cpu_us_per_event": (cpu1 - cpu0) / events * 1e6,
        "redis_cpu_us_per_event": (redis1 - redis0) / events * 1e6,
        "entries_per_commit": (after["entries"] - before["entries"]) / commits if commits else 0.0,
    }


def render_profile(profile: dict) -> str:
    """The table: one column per workload, microseconds per event and share of the wall time."""
    kinds = [
        (k, label)
        for k, label in (("two_player", "two-player"), ("swiss_64x7", "64x7"))
        if k in profile
    ]
    head = "".join(f"{label:>22}" for _, label in kinds)
    sizes = ", ".join(f"{profile[k]['events']:,} {label} events" for k, label in kinds)
    lines = [
        f"profile of the commit path: real `serve`, one replica ({sizes})",
        f"  {'microseconds per event (share of wall)':<44}{head}",
    ]

    def row(label: str, values: list[float | None], share: bool = True) -> str:
        cells = []
        for (kind, _), value in zip(kinds, values):
            if value is None:
                cells.append(f"{'':>22}")
                continue
            wall = profile[kind]["wall_us_per_event"]
            cells.append(
                f"{value:>12,.1f} ({value / wall * 100:4.1f}%)"
                if share and wall
                else f"{value:>22,.1f}"
            )
        return f"  {label:<44}{''.join(cells)}"

    for stage in STAGES:
        lines.append(
            row(
                f"  {STAGE_LABELS[stage]}",
                [profile[k]["stages_us_per_event"][stage] for k, _ in kinds],
            )
        )
    lines += [
        row(
            "  the rest (below 0: overlapped)",
            [profile[k]["outside_commits_us_per_event"] for k, _ in kinds],
        ),
        row("wall time", [profile[k]["wall_us_per_event"] for k, _ in kinds], share=False),
        row("service CPU", [profile[k]["service_cpu_us_per_event"] for k, _ in kinds]),
        row("Redis CPU", [profile[k]["redis_cpu_us_per_event"] for k, _ in kinds]),
        row("events/s", [profile[k]["events_per_second"] for k, _ in kinds], share=False),
        row(
            "entries per commit", [profile[k]["entries_per_commit"] for k, _ in kinds], share=False
        ),
    ]
    return "\n".join(lines)


def profile_keys() -> set[str]:
    return {
        "events",
        "events_per_second",
        "wall_us_per_event",
        "stages_us_per_event",
        "outside_commits_us_per_event",
        "service_cpu_us_per_event",
        "redis_cpu_us_per_event",
        "entries_per_commit",
    }
