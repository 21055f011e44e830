"""Prometheus metrics of one service process (a registry of its own: no global state)."""

from __future__ import annotations

import platform
import time
from importlib import metadata

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)

from service.entryids import entry_ms

DISTRIBUTION = "rating-service"


def version() -> str:
    """The installed version of the service's distribution ("unknown" when not installed)."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown"


class Metrics:
    """The service's metrics; every one is labelled by input stream where it applies."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        # Registered in this order, which is the order of the metrics page.
        self._process()
        self._events()
        self._commits()
        self._backlog()
        self._replica()
        self._outage()
        self._http()
        self._stores()

    def _process(self) -> None:
        """The process and the build."""
        r = self.registry
        # The process (process_resident_memory_bytes, process_cpu_seconds_total, open fds ...),
        # the interpreter (python_info) and its garbage collector, on this registry.
        ProcessCollector(registry=r)
        PlatformCollector(registry=r)
        GCCollector(registry=r)
        self.build_info = Gauge(
            "rating_service_build_info",
            "Always 1: the service's version and the Python running it",
            ["version", "python"],
            registry=r,
        )
        self.build_info.labels(version(), platform.python_version()).set(1)

    def _events(self) -> None:
        """What became of the input entries."""
        r = self.registry
        self.rated = Counter(
            "rating_events_rated",
            "Events (and period closings) applied",
            ["stream", "system"],
            registry=r,
        )
        self.rejected = Counter(
            "rating_events_rejected",
            "Entries dead-lettered, by reason",
            ["stream", "reason"],
            registry=r,
        )
        self.duplicates = Counter(
            "rating_events_duplicate",
            "Entries already applied (same content)",
            ["stream"],
            registry=r,
        )

    def _commits(self) -> None:
        """The commits: their time, by stage, their size, and the ones tried again."""
        r = self.registry
        self.commit_seconds = Histogram(
            "rating_commit_seconds",
            "Time of one commit (read, rate, MULTI/EXEC)",
            ["stream"],
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
            registry=r,
        )
        self.stage_seconds = Counter(
            "rating_commit_stage_seconds",
            "Time the commits spent in each stage: decode, read, rate, encode, write, report (the rest of "
            "the process's CPU is the framework and the event loop; `rating-service bench --profile`)",
            ["stream", "stage"],
            registry=r,
        )
        self.entries_per_commit = Histogram(
            "rating_entries_per_commit",
            "Input entries applied by one commit",
            ["stream"],
            buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256),
            registry=r,
        )
        self.retries = Counter(
            "rating_transaction_retries",
            "Commits retried after a WatchError",
            ["stream"],
            registry=r,
        )
        self.redirects = Counter(
            "rating_transaction_redirects",
            "Commits tried again on a Redis Cluster after a slot moved or a master failed over (nothing was written)",
            ["stream"],
            registry=r,
        )

    def _backlog(self) -> None:
        """What waits: entries not yet delivered, applied or acknowledged; dead letters."""
        r = self.registry
        self.lag = Gauge(
            "rating_consumer_group_lag",
            "Entries not yet delivered to the group",
            ["stream"],
            registry=r,
        )
        self.pending = Gauge(
            "rating_consumer_group_pending",
            "Entries delivered but not acknowledged",
            ["stream"],
            registry=r,
        )
        self.lag_seconds = Gauge(
            "rating_consumer_lag_seconds",
            "Age of the oldest entry not yet applied (after the applied cursor), at each scrape from the "
            "last one read: it keeps growing while Redis is away; 0 when none",
            ["stream"],
            registry=r,
        )
        self.dead_letters = Gauge(
            "rating_dead_letter_stream_length",
            "Entries in the dead-letter stream (XLEN)",
            ["stream"],
            registry=r,
        )
        self.dead_letter_age = Gauge(
            "rating_dead_letter_oldest_age_seconds",
            "Age of the oldest dead letter not redriven (`rating-service rejected redrive`); 0 when none",
            ["stream"],
            registry=r,
        )

    def _replica(self) -> None:
        """This replica's standing: its consumer groups, its leases, its Redis."""
        r = self.registry
        self.groups_recreated = Counter(
            "rating_consumer_group_recreated",
            "Consumer groups found missing (XGROUP DESTROY, FLUSHALL, Redis restarted empty) and created again",
            ["stream"],
            registry=r,
        )
        self.lease_owned = Gauge(
            "rating_lease_owned",
            "1 while this replica holds the stream's lease (reads and rates it); 0 on standby",
            ["stream"],
            registry=r,
        )
        self.redis_up = Gauge("rating_redis_up", "1 when the last Redis check answered", registry=r)

    def _outage(self) -> None:
        """What the consumer sees of its Redis: commits that failed, the checks of its
        configuration (service/runtime/redischecks.py; D24-D26)."""
        r = self.registry
        self.commit_failures = Counter(
            "rating_commit_failures",
            "Commits (a batch's cursor read, round trips, EXEC and XACK) that failed on Redis, by reason: "
            "connection, timeout, readonly, oom, other; the batch is tried again",
            ["stream", "reason"],
            registry=r,
        )
        self.redis_check_failing = Gauge(
            "rating_redis_check_failing",
            "1 while a check of the Redis configuration fails on a node: eviction (maxmemory-policy not "
            "noeviction), replica (role:slave), aof (appendonly no)",
            ["check"],
            registry=r,
        )
        self.consuming_held = Gauge(
            "rating_consuming_held",
            "1 while this replica holds off consuming (and is not ready) because a Redis check refuses "
            "the server: eviction, a replica, or AOF off with RATING_REQUIRE_AOF",
            registry=r,
        )
        self.redis_memory_ratio = Gauge(
            "rating_redis_memory_used_ratio",
            "used_memory / maxmemory of the fullest Redis (master) node, as last read; 0 when no maxmemory",
            registry=r,
        )

    def oldest_unapplied(self, stream: str, entry_id: str | None) -> None:
        """rating_consumer_lag_seconds{stream} from now on: the age of `entry_id`, the oldest
        entry not yet applied as last read (None: none), computed from the clock at each
        scrape, so that it keeps growing while Redis cannot be read (D26)."""
        ms = None if entry_id is None else entry_ms(entry_id)
        self.lag_seconds.labels(stream).set_function(
            lambda: 0.0 if ms is None else max(0.0, time.time() - ms / 1000)
        )

    def _http(self) -> None:
        """The HTTP side (service/web/edge.py): by route template, never the raw path, so that
        the series stay few whatever the requests."""
        r = self.registry
        self.http_requests = Counter(
            "rating_http_requests",
            "HTTP requests answered, by route template (unmatched: no route), method and status class",
            ["route", "method", "status"],
            registry=r,
        )
        self.http_seconds = Histogram(
            "rating_http_request_seconds",
            "Time to answer one HTTP request, to the end of its body",
            ["route"],
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
            registry=r,
        )
        self.http_unavailable = Counter(
            "rating_http_redis_unavailable",
            "HTTP reads answered 503 because Redis did not answer (with Retry-After)",
            registry=r,
        )

    def _stores(self) -> None:
        """The stores' identity records, and entries on streams nobody reads
        (docs/operations/upgrades.md)."""
        r = self.registry
        self.store_ok = Gauge(
            "rating_store_record_ok",
            "1 while the stream's store record is there and agrees with this replica's settings; 0: the "
            "stream is not consumed (a FLUSHALL, a restore that did not load)",
            ["stream"],
            registry=r,
        )
        self.misrouted = Counter(
            "rating_misrouted_entries",
            "Entries appended to an input stream the partition layout does not read (not rated: "
            "`rating-service streams` names the right one)",
            ["stream"],
            registry=r,
        )

    def render(self) -> bytes:
        return generate_latest(self.registry)
