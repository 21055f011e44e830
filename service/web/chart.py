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
    return (b.year - a.year) * 12 + b.month - a.month


def date_ticks(low: dt.date, high: dt.date) -> list[tuple[dt.date, str]]:
    """A few month (or year) starts between the two dates; the two dates themselves when
    fewer than two month starts fall between them."""
    months = months_between(low, high)
    step = next((s for s in MONTH_STEPS if months / s <= MAX_DATE_TICKS), MONTH_STEPS[-1])
    found = []
    index = low.year * 12 + low.month - 1
    if low.day != 1:
        index += 1
    while True:
        year, month = divmod(index, 12)
        moment = dt.date(year, month + 1, 1)
        if moment > high:
            break
        if index % step == 0:
            found.append((moment, str(year) if step >= 12 else moment.strftime("%Y-%m")))
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
    year, month = (int(part) for part in period.split("-"))
    return dt.date(year, month, 1)


def rating_chart(
    entries: Sequence[HistoryEntry], *, name: str, width: int = 640, height: int = 260
) -> Chart | None:
    """The chart of the entries (in date order), or None when no entry has a rating."""
    events = [
        (e.end_date or e.start_date, e)
        for e in entries
        if e.kind == "event" and e.new_rating is not None and (e.end_date or e.start_date)
    ]
    lists = [
        (list_date(e), e)
        for e in entries
        if e.kind == "list" and e.new_rating is not None and list_date(e)
    ]
    if not events and not lists:
        return None
    dates = [d for d, _ in events + lists]
    ratings = [e.new_rating for _, e in events + lists]
    first, last = min(dates), max(dates)  # type: ignore[type-var]
    # A margin on both sides: no point sits on the axis, and the last list's step shows.
    margin = dt.timedelta(days=max((last - first).days // 25, 15))
    first, last = first - margin, last + margin
    low, high, step = rating_range(min(ratings), max(ratings))  # type: ignore[type-var]
    left, top, right, bottom = 56.0, 12.0, width - 16.0, height - 36.0

    def x(day: dt.date) -> float:
        return round(left + (day - first).days / (last - first).days * (right - left), 1)

    def y(value: int) -> float:
        return round(top + (high - value) / (high - low) * (bottom - top), 1)

    points = [
        Point(
            x(d),
            y(e.new_rating),
            d,
            e.new_rating,  # type: ignore[arg-type]
            f"{e.name or e.event_id or 'event'}, {d.isoformat()}: rating {e.new_rating}"
            + (" (projected)" if e.projection else ""),
        )
        for d, e in events
    ]
    line = " ".join(f"{p.x},{p.y}" for p in points) if len(points) > 1 else ""
    steps = ""
    if lists:
        (d0, e0), later = lists[0], lists[1:]
        parts = [f"M{x(d0)} {y(e0.new_rating)}"]  # type: ignore[arg-type]
        for d, e in later:  # the rating holds until the next list, then moves to it
            parts += [f"H{x(d)}", f"V{y(e.new_rating)}"]  # type: ignore[arg-type]
        parts.append(f"H{x(last)}")
        steps = " ".join(parts)
    x_ticks = [Tick(x(d), label) for d, label in date_ticks(first, last)]
    y_ticks = [Tick(y(v), str(v)) for v in range(low, high + 1, step)]
    description = (
        f"{len(points)} rated events from {min(dates).isoformat()} to {max(dates).isoformat()}"  # type: ignore[type-var]
        + (f", {len(lists)} published lists" if lists else "")
        + f"; ratings from {min(ratings)} to {max(ratings)}."  # type: ignore[type-var]
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
