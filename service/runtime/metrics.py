"""Prometheus metrics of one service process (a registry of its own: no global state)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest


class Metrics:
    """The service's metrics; every one is labelled by input stream where it applies."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.rated = Counter("rating_events_rated", "Events (and period closings) applied", ["stream", "system"], registry=r)
        self.rejected = Counter("rating_events_rejected", "Entries dead-lettered, by reason", ["stream", "reason"], registry=r)
        self.duplicates = Counter("rating_events_duplicate", "Entries already applied (same content)", ["stream"], registry=r)
        self.commit_seconds = Histogram(
            "rating_commit_seconds",
            "Time of one commit (read, rate, MULTI/EXEC)",
            ["stream"],
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
            registry=r,
        )
        self.entries_per_commit = Histogram(
            "rating_entries_per_commit", "Input entries applied by one commit", ["stream"],
            buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256), registry=r,
        )
        self.retries = Counter("rating_transaction_retries", "Commits retried after a WatchError", ["stream"], registry=r)
        self.lag = Gauge("rating_consumer_group_lag", "Entries not yet delivered to the group", ["stream"], registry=r)
        self.pending = Gauge("rating_consumer_group_pending", "Entries delivered but not acknowledged", ["stream"], registry=r)
        self.redis_up = Gauge("rating_redis_up", "1 when the last Redis check answered", registry=r)

    def render(self) -> bytes:
        return generate_latest(self.registry)
