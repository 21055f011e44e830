"""Expected wins (docs/rules/naspa.md#n1): the logistic curve NASPA adopted in 2009."""

from __future__ import annotations

import math

# N1: E(r, o) = 1 / (1 + exp(-0.0031879 * (r - o))), no clamp.
SLOPE = 0.0031879


def expected_wins(rating: float, opponent: float) -> float:
    """N1: the expected wins of a player rated `rating` in one game against `opponent`."""
    return 1.0 / (1.0 + math.exp(-SLOPE * (rating - opponent)))


class ExpectedWins:
    """N1 memoised by the rating difference, for one rating run (no module-level state).

    E depends on r and o only through the float r - o, so a lookup by that difference
    returns exactly what `expected_wins(r, o)` computes.
    """

    __slots__ = ("_by_difference",)

    def __init__(self) -> None:
        self._by_difference: dict[float, float] = {}

    def __call__(self, rating: float, opponent: float) -> float:
        difference = rating - opponent
        value = self._by_difference.get(difference)
        if value is None:
            value = 1.0 / (1.0 + math.exp(-SLOPE * difference))
            self._by_difference[difference] = value
        return value
