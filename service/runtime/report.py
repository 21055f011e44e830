"""The report of a stream's commits: their metrics, their log lines, and how long each stage
of a commit took (docs/operations/monitoring.md "Logs", docs/reference/metrics.md)."""

from __future__ import annotations

import time
from typing import Any

import structlog

from service.rating import Applied, Duplicate
from service.runtime.entries import Decision
from service.runtime.metrics import Metrics

log = structlog.get_logger("rating.consumer")
# The stages of a commit, timed into rating_commit_stage_seconds (`rating-service bench --profile`):
# decoding and checking the entries; reading (the entries when not handed, WATCH, the records,
# markers and timelines a batch needs, decoded); rating (the engines, in the ledger); encoding
# the writes and outputs; writing (MULTI ... EXEC); reporting (metrics and logs).
STAGES = ("decode", "read", "rate", "encode", "write", "report")


class CommitClock:
    """The stages of one commit as they end, each timed from the end of the one before."""

    def __init__(self) -> None:
        self.started = self._last = time.perf_counter()
        self.spent: dict[str, float] = {}

    def lap(self, stage: str) -> None:
        """`stage` (one of STAGES) ends now."""
        now = time.perf_counter()
        self.spent[stage] = now - self._last
        self._last = now

    @property
    def elapsed(self) -> float:
        """Seconds from the start to the end of the last stage."""
        return self._last - self.started


class CommitReport:
    """Metrics and logs of one input stream's commits."""

    def __init__(self, metrics: Metrics, stream: str):
        self.metrics = metrics
        self.stream = stream
        self.stages = {name: metrics.stage_seconds.labels(stream, name) for name in STAGES}

    def spent(self, stage: str, seconds: float) -> None:
        """Time spent in `stage` (one of STAGES) outside a commit's clock."""
        self.stages[stage].inc(seconds)

    def timed(self, clock: CommitClock) -> None:
        """The stages of a commit made."""
        for stage, seconds in clock.spent.items():
            self.stages[stage].inc(seconds)

    def committed(self, decisions: list[Decision], seconds: float, token: int | None) -> None:
        """Metrics and logs of a commit, once per commit: a `committed` line at INFO (how many
        entries, applied / duplicate / rejected, the first and last stream ids, the events
        rated), each rejection at WARNING and each duplicate at INFO (both rare, and a reader
        wants them by name), each applied entry at DEBUG."""
        where: dict[str, Any] = {"stream": self.stream}
        if token is not None:
            where["lease_token"] = token
        rated: dict[str, int] = {}
        event_ids: list[str] = []
        periods: list[str] = []
        duplicates = rejected = 0
        for decision in decisions:
            outcome, entry = decision.outcome, decision.entry
            if isinstance(outcome, Applied):
                system: str = entry.message.system if entry.message else ""
                rated[system] = rated.get(system, 0) + 1
                if entry.event_id is not None:
                    event_ids.append(entry.event_id)
                else:  # a period's close: its marker names it (period:<system>:<pool>:<period>)
                    periods.append(outcome.marker)
                log.debug(
                    "applied",
                    stream_id=entry.id,
                    event_id=entry.event_id,
                    marker=outcome.marker,
                    outputs=len(outcome.outputs),
                    **where,
                )
            elif isinstance(outcome, Duplicate):
                duplicates += 1
                log.info(
                    "duplicate, already applied",
                    stream_id=entry.id,
                    event_id=entry.event_id,
                    marker=outcome.marker,
                    **where,
                )
            else:
                rejected += 1
                self.metrics.rejected.labels(self.stream, outcome.reason).inc()
                log.warning(
                    "rejected",
                    stream_id=entry.id,
                    event_id=entry.event_id,
                    reason=outcome.reason,
                    path=outcome.path,
                    detail=outcome.message,
                    **where,
                )
        for system, count in rated.items():
            self.metrics.rated.labels(self.stream, system).inc(count)
        if duplicates:
            self.metrics.duplicates.labels(self.stream).inc(duplicates)
        self.metrics.commit_seconds.labels(self.stream).observe(seconds)
        self.metrics.entries_per_commit.labels(self.stream).observe(len(decisions))
        log.info(
            "committed",
            entries=len(decisions),
            applied=sum(rated.values()),
            duplicates=duplicates,
            rejected=rejected,
            first_id=decisions[0].entry.id,
            last_id=decisions[-1].entry.id,
            event_ids=event_ids,
            commit_ms=round(seconds * 1000, 2),
            **({"periods": periods} if periods else {}),
            **where,
        )
