"""The rating-history chart of a player's profile, as numbers for an inline SVG (D39): pure,
no I/O, no JavaScript.

x is the date (an event's end date; a FIDE list's first month in force), y the rating.
Each event whose `new_rating` is known is a point; FIDE's published lists are a step line
(the rating holds from one list to the next); the events are joined by a thin line.

Honest axes: the rating axis runs between round multiples of a 1-2-5 step and always holds
the current rating; the date axis is labelled only at dates something happened (an event's
end, a list), never at a padding date; no label leaves the viewBox (the last date's label is
anchored at its end near the right edge) and no two date labels overlap; the latest value
is labelled by its point, so one point alone still reads as a rating at a date.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from schemas.periods import first_day
from schemas.reads import HistoryEntry

MAX_DATE_TICKS = 6
MIN_RATING_SPAN = 50  # a flat history is not drawn as a cliff
CHAR_WIDTH = 7.5  # px a character of a 12px label takes at most (digits, '-', in sans-serif)
LABEL_GAP = 10.0  # px between two date labels
Anchor = Literal["start", "middle", "end"]


@dataclass(frozen=True)
class Tick:
    at: float  # the coordinate on its axis
    label: str
    anchor: Anchor = "middle"


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    date: dt.date
    rating: int
    title: str  # the event (or list), its date and the rating after it


@dataclass(frozen=True)
class Label:
    """The latest value's label, beside its point."""

    x: float
    y: float
    text: str
    anchor: Anchor


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    left: float
    top: float
    right: float  # the plot area's right and bottom edges
    bottom: float
    points: list[Point]  # the events
    lists: list[Point]  # the FIDE lists (where the steps move)
    line: str  # polyline "x,y x,y ..." through the events' points ("" for fewer than two)
    steps: str  # path data of the lists' step line ("" without lists)
    x_ticks: list[Tick]
    y_ticks: list[Tick]
    label: Label  # the latest value
    current: float | None  # y of the current rating when no point shows it (a dashed line)
    current_rating: int | None
    title: str
    description: str


def nice_step(span: float, count: int = 5) -> int:
    """1, 2 or 5 times a power of ten, about span / count (at least 1)."""
    raw = max(span / count, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    return int(next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw))


def rating_range(low: int, high: int, count: int = 5) -> tuple[int, int, int]:
    """The axis from a multiple of the step at or below `low` to one at or above `high`;
    a span under MIN_RATING_SPAN is widened around its middle first (one point sits in the
    middle of the axis, not on its edge)."""
    if high - low < MIN_RATING_SPAN:
        middle = (low + high) / 2
        low, high = (
            math.floor(middle - MIN_RATING_SPAN / 2),
            math.ceil(middle + MIN_RATING_SPAN / 2),
        )
    step = nice_step(high - low, count)
    start, end = math.floor(low / step) * step, math.ceil(high / step) * step
    if start == end:
        start, end = start - step, end + step
    return start, end, step


def text_width(text: str) -> float:
    return len(text) * CHAR_WIDTH


def placed(at: float, text: str, width: float) -> tuple[Anchor, float, float]:
    """A label's anchor at `at`, centred unless that would cross an edge of [0, width]: then
    it starts (or ends) at `at`; with its extent (from, to)."""
    half = text_width(text) / 2
    if at - half < 0:
        return "start", at, at + 2 * half
    if at + half > width:
        return "end", at - 2 * half, at
    return "middle", at - half, at + half


def date_ticks(candidates: Sequence[tuple[float, str]], width: float) -> list[Tick]:
    """Labels at some of the real dates (x, label), in date order: the last one always (the
    current rating's date), the first one when it has room, then as many of the others as fit
    without overlapping, at most MAX_DATE_TICKS."""
    if not candidates:
        return []
    chosen: list[tuple[float, float, Tick]] = []

    def fits(x: float, label: str) -> tuple[float, float, Tick] | None:
        anchor, start, end = placed(x, label, width)
        if any(start < e + LABEL_GAP and s < end + LABEL_GAP for s, e, _ in chosen):
            return None
        return start, end, Tick(x, label, anchor)

    order = [candidates[-1], candidates[0], *candidates[1:-1]]
    for x, label in order:
        if len(chosen) == MAX_DATE_TICKS:
            break
        if any(t.at == x for _, _, t in chosen):
            continue
        found = fits(x, label)
        if found is not None:
            chosen.append(found)
    return sorted((t for _, _, t in chosen), key=lambda t: t.at)


def list_date(entry: HistoryEntry) -> dt.date | None:
    period = entry.list_period or entry.period
    if period is None:
        return entry.end_date
    return first_day(period)


def rating_chart(
    entries: Sequence[HistoryEntry],
    *,
    name: str,
    current: int | None = None,
    width: int = 480,
    height: int = 230,
) -> Chart | None:
    """The chart of the entries (in date order), or None when no entry has a rating.
    `current`: the player's current rating (the record's), always inside the rating axis.
    480 units wide: a phone's 360 px shows its 12-unit labels at 9 px, not 7."""
    events, lists = dated_ratings(entries)
    if not events and not lists:
        return None
    dates = [d for d, _, _ in events + lists]
    ratings = [r for _, r, _ in events + lists]
    first, last = min(dates), max(dates)
    # A margin on both sides: no point sits on the axis, and the last list's step shows.
    margin = dt.timedelta(days=max((last - first).days // 25, 15))
    start, end = first - margin, last + margin
    low, high, step = rating_range(
        min(ratings + ([current] if current is not None else [])),
        max(ratings + ([current] if current is not None else [])),
    )
    left, top, right, bottom = 56.0, 24.0, width - 16.0, height - 36.0

    def x(day: dt.date) -> float:
        return round(left + (day - start).days / (end - start).days * (right - left), 1)

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
    published = [
        Point(x(d), y(r), d, r, f"List {d.strftime('%Y-%m')}: rating {r}") for d, r, _ in lists
    ]
    line = " ".join(f"{p.x},{p.y}" for p in points) if len(points) > 1 else ""
    steps = step_line(published, right)
    labels = date_labels(events, lists)
    x_ticks = date_ticks([(x(d), text) for d, text in labels.items()], width)
    y_ticks = [Tick(y(v), str(v), "end") for v in range(low, high + 1, step)]
    latest = max(points + published, key=lambda p: (p.date, p in published))
    label = value_label(latest, width, top)
    # The current rating drawn as a line only where neither the latest point nor the last
    # list shows it (a record imported above its history, say).
    shown_current = current is not None and current not in (
        latest.rating,
        published[-1].rating if published else None,
    )
    description = describe(len(points), len(lists), first, last, ratings, current)
    return Chart(
        width,
        height,
        left,
        top,
        right,
        bottom,
        points,
        published,
        line,
        steps,
        x_ticks,
        y_ticks,
        label,
        current=y(current) if shown_current and current is not None else None,
        current_rating=current,
        title=f"Rating history of {name}",
        description=description,
    )


Dated = list[tuple[dt.date, int, HistoryEntry]]


def dated_ratings(entries: Sequence[HistoryEntry]) -> tuple[Dated, Dated]:
    """(date, rating, entry) of the events and of the lists that have both."""
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
    return events, lists


def date_labels(events: Dated, lists: Dated) -> dict[dt.date, str]:
    """The real dates, each once (a list's label is its month), in date order."""
    labels: dict[dt.date, str] = {}
    for d, _, _ in sorted(events + lists, key=lambda item: item[0]):
        labels.setdefault(d, d.isoformat() if any(d == e for e, _, _ in events) else f"{d:%Y-%m}")
    return labels


def step_line(published: list[Point], right: float) -> str:
    """The lists' step path: the rating holds until the next list, then moves to it."""
    if not published:
        return ""
    parts = [f"M{published[0].x} {published[0].y}"]
    for p in published[1:]:
        parts += [f"H{p.x}", f"V{p.y}"]
    parts.append(f"H{right}")
    return " ".join(parts)


def describe(
    events: int, lists: int, first: dt.date, last: dt.date, ratings: list[int], current: int | None
) -> str:
    """The chart's text description (its `<desc>`)."""
    return (
        f"{events} rated events from {first.isoformat()} to {last.isoformat()}"
        + (f", {lists} published lists" if lists else "")
        + f"; ratings from {min(ratings)} to {max(ratings)}"
        + (f"; current rating {current}" if current is not None else "")
        + "."
    )


def value_label(point: Point, width: int, top: float) -> Label:
    """The rating beside its point: above it and to the right, or to the left near the right
    edge."""
    text = str(point.rating)
    above = point.y - 9 if point.y - 9 - 12 >= 0 else point.y + 20
    if point.x + 8 + text_width(text) <= width:
        return Label(point.x + 8, above, text, "start")
    return Label(point.x - 8, above, text, "end")
