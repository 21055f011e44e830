"""Plausible dates (docs/design/decisions.md "D14 Plausible dates"): what an input's dates
cannot be by the office's clock, reason `implausible`.

Pure: the clock is a parameter (`today`, the UTC date the adapter read), never read here.
A finished or corrected event may not end after tomorrow (one day of tolerance for time
zones), nor last longer than the limit (`RATING_MAX_EVENT_DAYS`; a message with
`long_event: true`, a league, up to a year); a round date may not lie outside the event's
start and end; a period may be closed only once it is over.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from schemas.events import EventContent, InputMessage, PeriodClosed
from schemas.periods import add_months, first_day

TOLERANCE = dt.timedelta(days=1)  # the clock is UTC; an event may end "tomorrow" in UTC+14
DEFAULT_MAX_EVENT_DAYS = 90  # FIDE: a tournament is played within 90 days
LONG_EVENT_DAYS = 366  # a league or season (`long_event`): at most a year
REASON = "implausible"


def date_problems(
    message: InputMessage, today: dt.date, max_event_days: int = DEFAULT_MAX_EVENT_DAYS
) -> list[tuple[str, str]]:
    """Every implausible date of a message, as (JSON path, what is wrong), by `today`."""
    if isinstance(message, PeriodClosed):
        return period_problems(message.period, today)
    if isinstance(message, EventContent):
        return event_problems(message, today, max_event_days)
    return []


def event_problems(
    event: EventContent, today: dt.date, max_event_days: int = DEFAULT_MAX_EVENT_DAYS
) -> list[tuple[str, str]]:
    """An event's end date in the future, beyond a day's tolerance; its span over the limit."""
    problems: list[tuple[str, str]] = []
    if event.end_date > today + TOLERANCE:
        problems.append(
            (
                "$.end_date",
                f"end_date {event.end_date} is in the future (today is {today} UTC): a finished "
                "event has ended (a typo in the year?)",
            )
        )
    limit = span_limit(event, max_event_days)
    days = (event.end_date - event.start_date).days
    if days > limit:
        allow = (
            ""
            if event.long_event is True
            else f"; a league is sent with long_event: true (--long-event for a TRF), up to {LONG_EVENT_DAYS} days"
        )
        problems.append(
            (
                "$.end_date",
                f"the event lasts {days} days from start_date {event.start_date} to end_date "
                f"{event.end_date}, over the limit of {limit}{allow}",
            )
        )
    return problems


def span_limit(event: EventContent, max_event_days: int) -> int:
    """The most days from start to end: the setting, or a year for a `long_event`."""
    return max(max_event_days, LONG_EVENT_DAYS) if event.long_event is True else max_event_days


def period_problems(period: str, today: dt.date) -> list[tuple[str, str]]:
    """A close of a period that is not over by `today` (with a day's tolerance)."""
    after = first_day(add_months(period, 1))
    if after > today + TOLERANCE:
        return [
            (
                "$.period",
                f"period {period} is not over yet (it ends on {after - dt.timedelta(days=1)}; "
                f"today is {today} UTC)",
            )
        ]
    return []


def round_date_problems(
    start: dt.date, end: dt.date, round_dates: Sequence[tuple[int, dt.date]]
) -> list[tuple[int, str]]:
    """Each (round, date) outside the event's start and end, as (round, what is wrong)."""
    return [
        (number, f"round {number} date {day} is outside the event's dates {start} to {end}")
        for number, day in round_dates
        if not start <= day <= end
    ]
