"""The history chart's numbers (service/web/chart.py): scales, ticks, points, the step line."""

from __future__ import annotations

import datetime as dt

from schemas.reads import HistoryEntry
from service.web.chart import date_ticks, nice_step, rating_chart, rating_range

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
    assert rating_range(1800, 1800) == (1790, 1810, 10)  # one value: a band around it
    assert rating_range(2407, 2412) == (2400, 2420, 10)  # a small change is not a cliff
    low, high, step = rating_range(-37, 412)
    assert low <= -37 and high >= 412 and low % step == 0 and high % step == 0


def test_date_ticks_are_month_or_year_starts_and_few():
    ticks = date_ticks(D(2025, 1, 15), D(2025, 6, 20))
    assert [label for _, label in ticks] == ["2025-02", "2025-03", "2025-04", "2025-05", "2025-06"]
    years = date_ticks(D(2015, 3, 1), D(2025, 3, 1))
    assert all(len(label) == 4 for _, label in years) and 2 <= len(years) <= 6
    assert [label for _, label in date_ticks(D(2025, 3, 3), D(2025, 3, 20))] == [
        "2025-03-03",
        "2025-03-20",
    ]


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
    assert [t.label for t in chart.x_ticks] == [
        "2025-01",
        "2025-03",
        "2025-05",
        "2025-07",
        "2025-09",
    ]


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


def test_no_rating_no_chart_and_one_event_is_centred():
    assert rating_chart([entry(D(2025, 1, 1), None)], name="X") is None
    assert rating_chart([], name="X") is None
    chart = rating_chart([entry(D(2025, 1, 1), 1500)], name="X")
    assert (
        chart is not None
        and chart.points[0].x == (chart.left + chart.right) / 2
        and chart.line == ""
    )
