"""The processor's report of a commit (service/runtime/report.py `CommitReport.committed`): one
`committed` line with what the commit did, rejections on their own lines, metrics per commit."""

from __future__ import annotations

import logging

import structlog
from structlog.testing import capture_logs

from service.engine.registry import default_registry
from service.rating import Applied, Duplicate, Rejected
from service.runtime import report as report_module
from service.runtime.entries import Decision, Entry
from service.runtime.processor import StreamProcessor
from service.runtime.settings import Settings


def entry(entry_id: str, event_id: str | None) -> Entry:
    return Entry(entry_id, {}, None, None, None, event_id)


def test_one_committed_line_names_the_events_and_periods_and_counts(monkeypatch):
    processor = StreamProcessor(object(), Settings(), "events.finished", default_registry())
    decisions = [
        Decision(entry("1-0", "open-a"), Applied([], "event:open-a", "d1")),
        Decision(entry("1-1", None), Applied([], "period:fide:standard:2025-11", "d2")),
        Decision(entry("1-2", "open-a"), Duplicate("event:open-a")),
        Decision(entry("1-3", "bad"), Rejected("invalid", "no players", "$.players")),
    ]
    before = structlog.get_config()
    try:  # whatever logging earlier tests configured (or cached): DEBUG, a fresh logger
        structlog.configure(
            wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG),
            cache_logger_on_first_use=False,
        )
        monkeypatch.setattr(report_module, "log", structlog.get_logger("rating.consumer"))
        with capture_logs() as logs:
            processor.report.committed(decisions, 0.0042, 7)
    finally:
        structlog.configure(**before)
    committed = [line for line in logs if line["event"] == "committed"]
    assert committed == [
        {
            "event": "committed",
            "log_level": "info",
            "stream": "events.finished",
            "lease_token": 7,
            "entries": 4,
            "applied": 2,
            "duplicates": 1,
            "rejected": 1,
            "first_id": "1-0",
            "last_id": "1-3",
            "event_ids": ["open-a"],
            "periods": ["period:fide:standard:2025-11"],
            "commit_ms": 4.2,
        }
    ]
    [rejected] = [line for line in logs if line["event"] == "rejected"]
    assert (
        rejected["stream_id"] == "1-3"
        and rejected["reason"] == "invalid"
        and rejected["log_level"] == "warning"
    )
    assert [line["stream_id"] for line in logs if line["event"] == "applied"] == [
        "1-0",
        "1-1",
    ]  # at DEBUG
    metrics = processor.metrics.registry
    assert (
        metrics.get_sample_value(
            "rating_events_rejected_total", {"stream": "events.finished", "reason": "invalid"}
        )
        == 1
    )
    assert (
        metrics.get_sample_value("rating_events_duplicate_total", {"stream": "events.finished"})
        == 1
    )
    assert (
        metrics.get_sample_value("rating_entries_per_commit_count", {"stream": "events.finished"})
        == 1
    )
