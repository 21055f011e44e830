"""The rating-history chart of a player's page, as numbers for an inline SVG: pure, no I/O.

x is the date (an event's end date; a FIDE list's first month in force), y the rating.
Each event whose `new_rating` is known is a point; FIDE's published lists are a step line
(the rating holds from one list to the next); the events are joined by a thin line.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass

from schemas.periods import first_day, month_index, month_of, period_of
from schemas.reads import HistoryEntry

MONTH_STEPS = (1, 2, 3, 6, 12, 24, 60, 120)
MAX_DATE_TICKS = 6
MIN_RATING_SPAN = 50  # a flat history is not drawn as a cliff


@dataclass(frozen=True)
class Tick:
    at: float  # the coordinate on its axis
    label: str


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    date: dt.date
    rating: int
    title: str  # the event, its date and the rating after it


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    left: float
    top: float
    right: float  # the plot area's right and bottom edges
    bottom: float
    points: list[Point]
    line: str  # polyline "x,y x,y ..." through the events' points ("" for fewer than two)
    steps: str  # path data of the lists' step line ("" without lists)
    x_ticks: list[Tick]
    y_ticks: list[Tick]
    title: str
    description: str


def nice_step(span: float, count: int = 5) -> int:
    """1, 2 or 5 times a power of ten, about span / count (at least 1)."""
    raw = max(span / count, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    return int(next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw))


def rating_range(low: int, high: int, count: int = 5) -> tuple[int, int, int]:
    """The axis from a multiple of the step at or below `low` to one at or above `high`."""
    step = nice_step(max(high - low, MIN_RATING_SPAN), count)
    start, end = math.floor(low / step) * step, math.ceil(high / step) * step
    if start == end:
        start, end = start - step, end + step
    return start, end, step


def months_between(a: dt.date, b: dt.date) -> int:
    return month_index(month_of(b)) - month_index(month_of(a))


def date_ticks(low: dt.date, high: dt.date) -> list[tuple[dt.date, str]]:
    """A few month (or year) starts between the two dates; the two dates themselves when
    fewer than two month starts fall between them."""
    months = months_between(low, high)
    step = next((s for s in MONTH_STEPS if months / s <= MAX_DATE_TICKS), MONTH_STEPS[-1])
    found = []
    index = month_index(month_of(low))
    if low.day != 1:
        index += 1
    while (moment := first_day(period_of(index))) <= high:
        if index % step == 0:
            found.append((moment, str(moment.year) if step >= 12 else moment.strftime("%Y-%m")))
        index += 1
    if len(found) < 2:
        return (
            [(low, low.isoformat()), (high, high.isoformat())]
            if low != high
            else [(low, low.isoformat())]
        )
    return found


def list_date(entry: HistoryEntry) -> dt.date | None:
    period = entry.list_period or entry.period
    if period is None:
        return entry.end_date
    return first_day(period)


def rating_chart(
    entries: Sequence[HistoryEntry], *, name: str, width: int = 640, height: int = 260
) -> Chart | None:
    """The chart of the entries (in date order), or None when no entry has a rating."""
    # (date, rating, entry): the entries that have both.
    events = [
        (day, e.new_rating, e)
        for e in entries
        if e.kind == "event"
        and e.new_rating is not None
        and (day := e.end_date or e.start_date) is not None
    ]
    lists = [
        (day, e.new_rating, e)
        for e in entries
        if e.kind == "list" and e.new_rating is not None and (day := list_date(e)) is not None
    ]
    if not events and not lists:
        return None
    dates = [d for d, _, _ in events + lists]
    ratings = [r for _, r, _ in events + lists]
    first, last = min(dates), max(dates)
    # A margin on both sides: no point sits on the axis, and the last list's step shows.
    margin = dt.timedelta(days=max((last - first).days // 25, 15))
    first, last = first - margin, last + margin
    low, high, step = rating_range(min(ratings), max(ratings))
    left, top, right, bottom = 56.0, 12.0, width - 16.0, height - 36.0

    def x(day: dt.date) -> float:
        return round(left + (day - first).days / (last - first).days * (right - left), 1)

    def y(value: int) -> float:
        return round(top + (high - value) / (high - low) * (bottom - top), 1)

    points = [
        Point(
            x(d),
            y(r),
            d,
            r,
            f"{e.name or e.event_id or 'event'}, {d.isoformat()}: rating {r}"
            + (" (projected)" if e.projection else ""),
        )
        for d, r, e in events
    ]
    line = " ".join(f"{p.x},{p.y}" for p in points) if len(points) > 1 else ""
    steps = ""
    if lists:
        (d0, r0, _), later = lists[0], lists[1:]
        parts = [f"M{x(d0)} {y(r0)}"]
        for d, r, _ in later:  # the rating holds until the next list, then moves to it
            parts += [f"H{x(d)}", f"V{y(r)}"]
        parts.append(f"H{x(last)}")
        steps = " ".join(parts)
    x_ticks = [Tick(x(d), label) for d, label in date_ticks(first, last)]
    y_ticks = [Tick(y(v), str(v)) for v in range(low, high + 1, step)]
    description = (
        f"{len(points)} rated events from {min(dates).isoformat()} to {max(dates).isoformat()}"
        + (f", {len(lists)} published lists" if lists else "")
        + f"; ratings from {min(ratings)} to {max(ratings)}."
    )
    return Chart(
        width,
        height,
        left,
        top,
        right,
        bottom,
        points,
        line,
        steps,
        x_ticks,
        y_ticks,
        title=f"Rating history of {name}",
        description=description,
    )
