"""The history chart's numbers (service/web/chart.py, D39): scales, ticks, points, the step
line, and the honest axes' properties: the current rating inside the rating axis, round
ticks, no label outside the viewBox nor over another, date labels only at real dates, one
point and two points readable."""

from __future__ import annotations

import datetime as dt

from schemas.reads import HistoryEntry
from service.web.chart import Chart, Tick, nice_step, placed, rating_chart, rating_range, text_width

D = dt.date


def entry(day: dt.date | None, rating: int | None, kind: str = "event", **more) -> HistoryEntry:
    fields = dict(
        kind=kind,
        event_id=f"e-{day}",
        name=f"Open {day}",
        start_date=day,
        end_date=day,
        period=None,
        list_period=None,
        old_rating=None,
        new_rating=rating,
        change=None,
        old_status="established",
        status="established",
        games=10,
        event_games=5,
        score=2.5,
        expected=None,
        performance=None,
    )
    fields.update(more)
    return HistoryEntry(**fields)  # type: ignore[arg-type]


def test_nice_steps_are_1_2_5_times_a_power_of_ten():
    assert [nice_step(span) for span in (5, 40, 90, 240, 600, 3000)] == [1, 10, 20, 50, 200, 1000]


def test_the_rating_axis_covers_the_ratings_with_round_ends():
    assert rating_range(1523, 1689) == (1500, 1700, 50)
    # One value: a band of at least 50 around it, the value in its middle.
    assert rating_range(1800, 1800) == (1770, 1830, 10)
    assert rating_range(1859, 1859) == (1830, 1890, 10)
    # A small change is not a cliff: 2409.5 +- 25 is 2384..2435, a step of 20 (51 / 5 -> 20).
    assert rating_range(2407, 2412) == (2380, 2440, 20)
    low, high, step = rating_range(-37, 412)
    assert low <= -37 and high >= 412 and low % step == 0 and high % step == 0


def test_points_follow_dates_and_ratings_inside_the_plot():
    chart = rating_chart(
        [
            entry(D(2025, 1, 10), 1500),
            entry(D(2025, 3, 1), None),
            entry(D(2025, 6, 1), 1620),
            entry(D(2025, 9, 1), 1580),
        ],
        name="Ann",
    )
    assert chart is not None
    assert [p.rating for p in chart.points] == [1500, 1620, 1580]  # no point without a rating
    xs, ys = [p.x for p in chart.points], [p.y for p in chart.points]
    assert xs == sorted(xs) and chart.left < xs[0] < xs[1] < xs[-1] < chart.right
    assert abs((xs[0] - chart.left) - (chart.right - xs[-1])) < 0.2  # the same margin on both sides
    assert ys[1] < ys[2] < ys[0]  # higher rating, higher on the page
    assert all(chart.top <= y <= chart.bottom for y in ys)
    assert chart.points[1].title == "Open 2025-06-01, 2025-06-01: rating 1620"
    assert chart.line == " ".join(f"{x},{y}" for x, y in zip(xs, ys))
    assert chart.steps == "" and chart.title == "Rating history of Ann"
    assert "3 rated events from 2025-01-10 to 2025-09-01" in chart.description
    assert all(chart.top <= t.at <= chart.bottom for t in chart.y_ticks)
    assert [t.label for t in chart.y_ticks] == ["1500", "1550", "1600", "1650"]
    # The dates of the events, not month starts (the point without a rating has none).
    assert [t.label for t in chart.x_ticks] == ["2025-01-10", "2025-06-01", "2025-09-01"]
    assert [t.at for t in chart.x_ticks] == xs


def test_fide_lists_are_a_step_line():
    entries = [
        entry(D(2025, 10, 5), 2010, projection=True, period="2025-10"),
        entry(None, 2000, kind="list", period="2025-10", list_period="2025-11", event_id=None),
        entry(D(2025, 11, 20), 2015, projection=True, period="2025-11"),
        entry(None, 2012, kind="list", period="2025-11", list_period="2025-12", event_id=None),
    ]
    chart = rating_chart(entries, name="Bo")
    assert chart is not None and len(chart.points) == 2
    assert chart.points[0].title.endswith("(projected)")
    parts = chart.steps.split()
    assert (
        parts[0].startswith("M")
        and parts[2].startswith("H")
        and parts[3].startswith("V")
        and parts[-1].startswith("H")
    )
    assert float(parts[-1][1:]) == chart.right  # the last list holds to the chart's end
    assert "2 published lists" in chart.description


def test_no_rating_no_chart():
    assert rating_chart([entry(D(2025, 1, 1), None)], name="X") is None
    assert rating_chart([], name="X") is None


def extent(tick: Tick) -> tuple[float, float]:
    width = text_width(tick.label)
    return {
        "start": (tick.at, tick.at + width),
        "middle": (tick.at - width / 2, tick.at + width / 2),
        "end": (tick.at - width, tick.at),
    }[tick.anchor]


def honest(chart: Chart, entries: list[HistoryEntry], current: int | None = None) -> None:
    """The properties every chart keeps (D39)."""
    values = [int(t.label) for t in chart.y_ticks]
    step = values[1] - values[0]
    assert nice_step(step, 1) == step  # 1, 2 or 5 times a power of ten
    assert all(v % step == 0 for v in values) and values == sorted(values) and step > 0
    rated = [e.new_rating for e in entries if e.new_rating is not None]
    shown = rated + ([current] if current is not None else [])
    assert min(values) <= min(shown) and max(shown) <= max(values)
    # Date labels: at real dates only (a point's or a list's x), inside the viewBox, apart.
    real = {p.x for p in chart.points} | {p.x for p in chart.lists}
    assert chart.x_ticks and all(t.at in real for t in chart.x_ticks)
    spans = [extent(t) for t in chart.x_ticks]
    assert all(0 <= a and b <= chart.width for a, b in spans), spans
    assert all(b1 < a2 for (_, b1), (a2, _) in zip(spans, spans[1:])), spans
    # Rating labels end at left - 6 and fit before it; the latest value's label fits.
    assert all(chart.left - 6 - text_width(t.label) >= 0 for t in chart.y_ticks)
    label = chart.label
    start, end = extent(Tick(label.x, label.text, label.anchor))
    assert 0 <= start and end <= chart.width and 12 <= label.y <= chart.height
    # The latest dated point is marked with its rating.
    latest = max(chart.points + chart.lists, key=lambda p: (p.date, p in chart.lists))
    assert label.text == str(latest.rating)


def test_one_event_is_a_marked_point_with_its_rating_and_its_date():
    entries = [entry(D(2025, 1, 1), 1500)]
    chart = rating_chart(entries, name="X")
    assert chart is not None and chart.line == "" and len(chart.points) == 1
    [point] = chart.points
    assert point.x == (chart.left + chart.right) / 2  # centred
    assert chart.top < point.y < chart.bottom  # inside the axis, not on its edge
    assert chart.label.text == "1500" and abs(chart.label.x - point.x) <= 8
    assert [(t.at, t.label) for t in chart.x_ticks] == [(point.x, "2025-01-01")]
    honest(chart, entries)


def test_two_events_are_joined_and_both_dated():
    entries = [entry(D(2024, 3, 2), 1480), entry(D(2025, 9, 14), 1532)]
    chart = rating_chart(entries, name="X")
    assert chart is not None and len(chart.line.split()) == 2
    assert [t.label for t in chart.x_ticks] == ["2024-03-02", "2025-09-14"]
    honest(chart, entries)
    # Two days apart the labels would overlap: the latest date keeps its label.
    close = [entry(D(2025, 9, 13), 1480), entry(D(2025, 9, 14), 1532)]
    chart = rating_chart(close, name="X")
    assert chart is not None and [t.label for t in chart.x_ticks] == ["2025-09-14"]
    honest(chart, close)


def test_the_current_rating_is_always_inside_the_axis():
    entries = [entry(D(2025, 1, 10), 1500), entry(D(2025, 2, 10), 1520)]
    chart = rating_chart(entries, name="X", current=1710)  # a record imported above its history
    assert chart is not None and chart.current is not None
    assert chart.top <= chart.current <= chart.bottom and "current rating 1710" in chart.description
    honest(chart, entries, 1710)
    same = rating_chart(entries, name="X", current=1520)
    assert same is not None and same.current is None  # the latest point shows it already


def test_the_last_date_label_at_the_right_edge_ends_inside_the_viewbox():
    # A long history: the margin is small, a centred label on the last date would cross
    # the right edge of a narrow chart.
    entries = [entry(D(2005 + n, 6, 1), 1500 + 10 * n) for n in range(20)]
    chart = rating_chart(entries, name="X", width=390)
    assert chart is not None
    last = chart.x_ticks[-1]
    assert last.label == "2024-06-01" and last.anchor == "end" and last.at == chart.points[-1].x
    assert 2 <= len(chart.x_ticks) <= 6
    honest(chart, entries)


def test_labels_are_placed_inside_the_width():
    assert placed(5, "2025-01-01", 640) == ("start", 5, 5 + text_width("2025-01-01"))
    assert placed(630, "2025-01-01", 640)[0] == "end"
    assert placed(320, "2025-01-01", 640)[0] == "middle"


def test_many_events_many_lists_keep_every_property():
    entries = []
    for n in range(36):
        month = f"{2023 + n // 12}-{n % 12 + 1:02d}"
        entries.append(
            entry(
                D(2023 + n // 12, n % 12 + 1, 20),
                2000 + (n * 37) % 90,
                projection=True,
                period=month,
            )
        )
        entries.append(entry(None, 2000 + (n * 41) % 80, kind="list", period=month, event_id=None))
    chart = rating_chart(entries, name="X", current=entries[-1].new_rating)
    assert chart is not None and len(chart.lists) == 36 and chart.current is None
    honest(chart, entries)
