"""Newcomers' ratings: the seed's iterative algorithm (docs/rules/naspa.md#naspa-newcomers, N2-N4).

All newcomers of one (segment of an) event are solved together: each pass finds, for
every newcomer, the rating whose expected wins match their earned wins against the
opponents' current values, then all newcomers move to their new values at once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

SEARCH_LOW, SEARCH_HIGH = 0, 3000  # N2: an integer r in [0, 3000]
RATING_FLOOR = 500  # N3: r < 500 -> 500, before the cap
CAP_PER_WIN = 400  # N3: cap = M + 400 x earned wins / games
START_WITHOUT_RATED = 1500  # seed: 1500 when no rated opponent
PASSES = 50  # seed: "Repeat 50 times", then 50 more and average

Expected = Callable[[float, float], float]


@dataclass(frozen=True)
class Newcomer:
    """One newcomer's counted games (byes and forfeits already left out).

    `rated` holds the pre-event rating of the opponent of each game against a rated
    player (a repeat opponent once per game); `unrated` the index (into the newcomers
    of the run) of the opponent of each game against another newcomer.
    """

    earned: float
    games: int
    rated: tuple[float, ...] = ()
    unrated: tuple[int, ...] = ()

    @property
    def target(self) -> float:
        """Seed: the earned wins, 5% of the games for none, 95% of the games for all."""
        if self.earned == 0:
            return 0.05 * self.games
        if self.earned == self.games:
            return 0.95 * self.games
        return self.earned

    @property
    def start(self) -> float:
        """Seed / N2: the mean of the rated opponents' ratings per game, else 1500."""
        if not self.rated:
            return START_WITHOUT_RATED
        return math.fsum(self.rated) / len(self.rated)

    @property
    def rated_cap(self) -> float | None:
        """N3: highest rated opponent + 400 x raw earned wins / games, unrounded."""
        if not self.rated:
            return None
        return max(self.rated) + CAP_PER_WIN * self.earned / self.games


@dataclass(frozen=True)
class NewcomerRatings:
    """The newcomers' unrounded new ratings (in input order), the passes run (at most
    50, or 100 when the averaging branch ran) and whether it ran."""

    ratings: tuple[float, ...]
    passes: int
    averaged: bool


# N2 tie: IPR is evaluated in floating point, where a mathematical zero (e.g. a newcomer
# half-way between two opponents with half the games won: E(d) + E(-d) = 1 exactly) comes
# out as +-1e-16 and would be decided by rounding noise. A value within IPR_TIE of zero is
# such a tie and counts as not negative, as in exact arithmetic; a genuine IPR at an
# integer probe is never that close to zero (one rating point moves it by about 8e-4 per game).
IPR_TIE = 1e-9


def search(target: float, opponents: Sequence[float], expected: Expected) -> int:
    """N2: binary search in [0, 3000]; IPR(mid) < 0 moves the low end up, else the high
    end down; stops when high - low <= 1 and returns the last mid probed. A tie (|IPR| <=
    IPR_TIE) is not negative."""
    low, high = SEARCH_LOW, SEARCH_HIGH
    mid = low
    while high - low > 1:
        mid = (low + high) // 2
        ipr = math.fsum([expected(mid, o) for o in opponents]) - target  # seed: IPR(r)
        if ipr < -IPR_TIE:
            low = mid
        else:
            high = mid
    return mid


@dataclass
class _Solver:
    """One run of the seed's loop; memoises each newcomer's pass by its inputs."""

    newcomers: Sequence[Newcomer]
    expected: Expected
    _memo: list[dict] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._memo = [{} for _ in self.newcomers]

    def rate(self, nc: int, current: Sequence[float], converging: bool) -> float:
        """One newcomer's next value: search (N2), floor 500, then the cap (N3, N4)."""
        newcomer = self.newcomers[nc]
        values = tuple(current[j] for j in newcomer.unrated)
        key = (values, converging and not newcomer.rated)
        memo = self._memo[nc]
        if key in memo:
            return memo[key]
        r: float = search(newcomer.target, newcomer.rated + values, self.expected)
        r = max(r, RATING_FLOOR)  # N3: the 500 floor first
        cap = newcomer.rated_cap
        if cap is None and converging:
            # N4: no rated opponent - the highest current value among the unrated ones.
            cap = max(values) + CAP_PER_WIN * newcomer.earned / newcomer.games
        if cap is not None and r > cap:
            r = cap  # N3: the cap, which may pull the rating below 500
        memo[key] = r
        return r

    def next_values(self, current: Sequence[float], converging: bool) -> list[float]:
        return [self.rate(nc, current, converging) for nc in range(len(self.newcomers))]


def rate_newcomers(newcomers: Sequence[Newcomer], expected: Expected) -> NewcomerRatings:
    """The seed's algorithm: up to 50 passes, stopping after the first pass in which no
    value changed (exact comparison); otherwise 50 more passes, averaged (N4: the
    newcomers without a rated opponent are not capped during those)."""
    solver = _Solver(newcomers, expected)
    current: list[float] = [n.start for n in newcomers]
    for passes in range(1, PASSES + 1):
        following = solver.next_values(current, converging=True)
        settled = following == current
        current = following
        if settled:
            return NewcomerRatings(tuple(current), passes, False)
    history: list[list[float]] = [[] for _ in newcomers]
    for _ in range(PASSES):
        current = solver.next_values(current, converging=False)
        for values, value in zip(history, current):
            values.append(value)
    means = tuple(math.fsum(values) / PASSES for values in history)
    return NewcomerRatings(means, 2 * PASSES, True)
