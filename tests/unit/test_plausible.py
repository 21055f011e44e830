"""Plausible dates (docs/design/decisions.md "D14 Plausible dates"): each boundary, with a
fixed `today` (the clock is a parameter: no test here reads it)."""

from __future__ import annotations

import datetime as dt

import msgspec
import pytest

from schemas.plausible import LONG_EVENT_DAYS, round_date_problems
from schemas.validation import InvalidMessage, Limits, decode_input

TODAY = dt.date(2025, 12, 10)


def event(start: str, end: str, **extra: object) -> bytes:
    return msgspec.json.encode(
        {
            "schema": "event.finished/v1",
            "event_id": "e1",
            "system": "fide",
            "name": "Open",
            "start_date": start,
            "end_date": end,
            "rounds": 1,
            "players": [{"id": "1"}, {"id": "2"}],
            "games": [{"round": 1, "a": "1", "b": "2", "score": 1}],
            **extra,
        }
    )


def problems(raw: bytes, today: dt.date | None = TODAY, limits: Limits = Limits()) -> list:
    try:
        decode_input(raw, limits, today)
    except InvalidMessage as exc:
        return [(p.path, p.reason) for p in exc.problems]
    return []


def test_an_event_may_end_one_day_ahead_of_the_utc_clock():
    assert problems(event("2025-12-09", "2025-12-11")) == []


def test_an_event_ending_two_days_ahead_is_implausible_naming_the_end_date():
    assert problems(event("2025-12-09", "2025-12-12")) == [("$.end_date", "implausible")]


def test_without_a_clock_no_date_is_judged():
    assert problems(event("2025-12-09", "2052-12-12"), today=None) == []


def test_a_span_at_the_limit_passes_one_day_over_is_implausible():
    limits = Limits(max_event_days=30)
    assert problems(event("2025-11-01", "2025-12-01"), limits=limits) == []
    assert problems(event("2025-10-31", "2025-12-01"), limits=limits) == [
        ("$.end_date", "implausible")
    ]


def test_the_default_limit_is_90_days():
    assert problems(event("2025-09-01", "2025-11-30")) == []  # 90 days
    assert problems(event("2025-08-31", "2025-11-30")) == [("$.end_date", "implausible")]


def test_a_long_event_may_last_a_year_and_no_more():
    start = dt.date(2024, 12, 1)
    at_limit = str(start + dt.timedelta(days=LONG_EVENT_DAYS))
    over = str(start + dt.timedelta(days=LONG_EVENT_DAYS + 1))
    assert problems(event(str(start), at_limit)) == [("$.end_date", "implausible")]
    assert problems(event(str(start), at_limit, long_event=True)) == []
    assert problems(event(str(start), over, long_event=True)) == [("$.end_date", "implausible")]


def test_a_long_event_flag_absent_keeps_the_message_bytes():
    message = decode_input(event("2025-12-01", "2025-12-02"))
    assert b"long_event" not in msgspec.json.encode(message)


def test_the_2052_typo_is_refused_twice_in_the_future_and_too_long():
    found = problems(event("2025-12-01", "2052-12-09"))
    assert found == [("$.end_date", "implausible"), ("$.end_date", "implausible")]


def close(period: str) -> bytes:
    return msgspec.json.encode({"schema": "period.closed/v1", "system": "fide", "period": period})


def test_a_period_may_be_closed_from_its_last_day_by_the_utc_clock():
    assert problems(close("2025-11"), today=dt.date(2025, 11, 30)) == []
    assert problems(close("2025-11"), today=dt.date(2025, 11, 29)) == [("$.period", "implausible")]
    assert problems(close("2025-12")) == [("$.period", "implausible")]


@pytest.mark.parametrize(
    ("day", "outside"),
    [("2025-11-30", True), ("2025-12-01", False), ("2025-12-09", False), ("2025-12-10", True)],
)
def test_a_round_date_outside_the_event_is_implausible(day: str, outside: bool):
    start, end = dt.date(2025, 12, 1), dt.date(2025, 12, 9)
    found = round_date_problems(start, end, [(3, dt.date.fromisoformat(day))])
    assert [n for n, _ in found] == ([3] if outside else [])
