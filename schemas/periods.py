"""Rating periods (`YYYY-MM`, the contract's `Period`) as month numbers: the arithmetic that
the FIDE engine, the timeline's and read model's keys, the charts and the tests share.

A period's month number counts months from year 0 (`2025-11` is 2025 * 12 + 10), so that
periods add, subtract and compare as integers.
"""

from __future__ import annotations

import datetime as dt


def month_index(period: str) -> int:
    """`2025-11` -> months since year 0 (for arithmetic and comparison)."""
    return int(period[:4]) * 12 + int(period[5:7]) - 1


def period_of(index: int) -> str:
    """The period of a month number: `month_index`'s inverse."""
    return f"{index // 12:04d}-{index % 12 + 1:02d}"


def add_months(period: str, months: int) -> str:
    """The period `months` after `period` (before it, for a negative count)."""
    return period_of(month_index(period) + months)


def month_of(day: dt.date) -> str:
    """The period a day lies in."""
    return f"{day.year:04d}-{day.month:02d}"


def first_day(period: str) -> dt.date:
    """The period's first day."""
    return dt.date(int(period[:4]), int(period[5:7]), 1)
