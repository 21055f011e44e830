"""Expected score: the official table beside the continuous curve it approximates.

FIDE: Table 8.1.2 read literally by the true difference, and PD as a rated game reads it
after the 400-point rule (8.3.1). CFC: the 714b table (C3). NASPA: N1's logistic (there
is no table). All tables come from service.engine.tables.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from service.calculators.curves import curve
from service.engine.fide.change import rating_difference
from service.engine.tables import (
    cfc_expected,
    cfc_expected_higher,
    fide_pd,
    fide_pd_higher,
)

TABLE_NAMES = {"fide": "FIDE 8.1.2", "cfc": "CFC 714b table", "naspa": None}


@dataclass(frozen=True)
class ExpectedScore:
    """One player's expected score against one opponent (own perspective)."""

    system: str
    rating: int
    opponent: int
    table: int | None  # hundredths; None for NASPA (no table)
    curve: float
    rated_difference: int | None = None  # FIDE: D after the 400-point rule (8.3.1)
    rated_table: int | None = None  # FIDE: PD as a rated game reads it

    @property
    def difference(self) -> int:
        return self.rating - self.opponent

    @property
    def gap(self) -> float | None:
        """curve - table (None without a table)."""
        return None if self.table is None else self.curve - self.table / 100


def table_higher(system: str, difference: int) -> int | None:
    """The higher-rated player's table value, in hundredths, for |D| (None: no table)."""
    if system == "fide":
        return fide_pd_higher(difference)
    if system == "cfc":
        return cfc_expected_higher(difference)
    return None


def expected_score(
    system: str, rating: int, opponent: int, start_date: dt.date, pool: str
) -> ExpectedScore:
    """The table value and the curve for `rating` against `opponent`; for FIDE also PD as
    rated, with D under the 400-point rule for an event starting on `start_date` in `pool`."""
    difference = rating - opponent
    value = curve(system, difference)
    if system == "fide":
        rated = rating_difference(rating, opponent, start_date, pool)
        return ExpectedScore(
            system, rating, opponent, fide_pd(difference), value, rated, fide_pd(rated)
        )
    if system == "cfc":
        return ExpectedScore(system, rating, opponent, cfc_expected(rating, opponent), value)
    return ExpectedScore(system, rating, opponent, None, value)
