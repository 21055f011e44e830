"""Rating change: per game and in total, "official-style" versus a sequential projection.

Official-style is how the system rates the games together:
- FIDE 8.3.2-8.3.4: K x sum(S - PD) over the period, rounded once, 0.5 away from zero
  (F4), D under the 400-point rule (8.3.1), K from 8.3.3 with the 700 cap;
- CFC 714b: Rn = Ro + K(S - Sx) with the 2199 rule, rounded half up once (C11);
- NASPA N5: the band walk over the event's excess wins, plus acceleration, rounded half up.
The sequential projection rates each game alone from the running rating, rounded per game
(as a "live rating" would): a projection, never what the federation publishes.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from service.calculators.games import Game
from service.engine.arithmetic import half_up
from service.engine.cfc.formulas import established_rating, k_factor
from service.engine.fide.change import (
    base_k,
    capped_k,
    exact_change,
    game_figures,
    game_term,
    period_change,
)
from service.engine.fide.initial import MIN_PUBLISHED
from service.engine.naspa.expected import expected_wins
from service.engine.naspa.rated import acceleration, band_walk, multiplier
from service.engine.tables import cfc_expected

Number = Fraction | float


@dataclass(frozen=True)
class GameChange:
    """One game: D (FIDE: after the 400-point rule), the expected score, S - E and
    K x (S - E) (NASPA: the starting multiplier x (S - E)), unrounded."""

    opponent: int
    halves: int
    difference: int
    expected: Number
    change: Number

    @property
    def excess(self) -> Number:
        return (
            Fraction(self.halves, 2) - self.expected
            if isinstance(self.expected, Fraction)
            else self.halves / 2 - self.expected
        )


@dataclass(frozen=True)
class Step:
    """One game of the sequential projection: the running rating before, the game's
    change rounded alone, the rating after."""

    before: int
    change: int
    after: int


@dataclass(frozen=True)
class RatingChange:
    system: str
    rating: int
    k: int  # FIDE / CFC: K used; NASPA: the multiplier at the starting rating
    k_note: str
    games: list[GameChange]
    exact: Number  # official-style change before rounding
    change: int  # official-style change, rounded once
    sequential: list[Step]
    notes: list[str] = field(default_factory=list)

    @property
    def new_rating(self) -> int:
        return self.rating + self.change

    @property
    def score(self) -> float:
        return sum(g.halves for g in self.games) / 2

    @property
    def expected_total(self) -> Number:
        if self.system == "naspa":
            return math.fsum(float(g.expected) for g in self.games)
        return sum((Fraction(g.expected) for g in self.games), Fraction(0))


@dataclass(frozen=True)
class FideK:
    """What FIDE 8.3.3 needs: K given outright, or the player's state on the list."""

    k: int | None = None
    games_before: int = 30
    birth_year: int | None = None
    ever_2300: bool = False
    ever_2400: bool = False


def fide_k(rating: int, given: FideK, list_year: int) -> tuple[int, str]:
    """FIDE 8.3.3: K given outright, or from the player's state on the list (F5-F7)."""
    if given.k is not None:
        return given.k, f"K {given.k} (given)"
    k = base_k(
        rating, given.games_before, given.birth_year, given.ever_2300, given.ever_2400, list_year
    )
    state = [f"rating {rating}", f"{given.games_before} rated games before"]
    if given.birth_year is not None:
        state.append(f"born {given.birth_year}, list year {list_year}")
    state.append(
        "ever 2400+" if given.ever_2400 else "ever 2300+" if given.ever_2300 else "never 2300+"
    )
    return k, f"K {k} (FIDE 8.3.3: {', '.join(state)})"


def fide_change(
    rating: int, played: Sequence[Game], given: FideK, start_date: dt.date, pool: str
) -> RatingChange:
    """FIDE 8.3: K from 8.3.3 (or given), capped by K x n <= 700 over these games (the
    period's games, 8.3.3); D under the 400-point rule for an event starting on
    `start_date` in `pool`; the change rounded once (8.3.4, F4)."""
    k_base, k_note = fide_k(rating, given, start_date.year)
    k = capped_k(k_base, len(played))
    notes = []
    if k != k_base:
        notes.append(
            f"K {k_base} x {len(played)} games > 700: K = floor(700 / {len(played)}) = {k} (FIDE 8.3.3)"
        )
    rows, total = [], 0
    for g in played:
        assert g.opponent is not None
        difference, pd, term = game_figures(
            rating, g.opponent, g.halves, start_date, pool
        )  # the engine's
        total += term
        rows.append(
            GameChange(g.opponent, g.halves, difference, Fraction(pd, 100), exact_change(k, term))
        )
        if abs(rating - g.opponent) > 400 and abs(rows[-1].difference) == 400:
            notes.append(
                f"D {rating - g.opponent:+d} against {g.opponent} counts as {rows[-1].difference:+d} (FIDE 8.3.1)"
            )
    change = period_change(k, total)
    if rating + change < MIN_PUBLISHED:
        notes.append(
            f"{rating + change} is under {MIN_PUBLISHED}: the player would leave the list (FIDE 7.2.1)"
        )
    steps, running = [], rating
    for g in played:
        assert g.opponent is not None
        term, _ = game_term(running, g.opponent, g.halves, start_date, pool)
        delta = period_change(k, term)
        steps.append(Step(running, delta, running + delta))
        running += delta
    return RatingChange(
        "fide", rating, k, k_note, rows, exact_change(k, total), change, steps, notes
    )


def cfc_change(rating: int, played: Sequence[Game]) -> RatingChange:
    """CFC 714b (established players): K 32, or 16 from 2199; the 2199 rule; C11."""
    k = k_factor(rating)
    rows = []
    for g in played:
        assert g.opponent is not None
        sx = cfc_expected(rating, g.opponent)
        rows.append(
            GameChange(
                g.opponent,
                g.halves,
                rating - g.opponent,
                Fraction(sx, 100),
                Fraction(k * (g.halves * 50 - sx), 100),
            )
        )
    halves = sum(g.halves for g in played)
    sx_total = sum(cfc_expected(rating, g.opponent) for g in played if g.opponent is not None)
    rn, _, cut = established_rating(rating, halves, sx_total)
    notes = ["714b only: no 714c bonus points, no 716 floor"]
    if cut:
        notes.append(f"2199 rule (714b): the gain over 2199 is halved, Rn = {float(rn):.2f}")
    steps, running = [], rating
    for g in played:
        assert g.opponent is not None
        after, _, _ = established_rating(running, g.halves, cfc_expected(running, g.opponent))
        rounded = half_up(after)
        steps.append(Step(running, rounded - running, rounded))
        running = rounded
    return RatingChange(
        "cfc",
        rating,
        k,
        f"K {k} (714b: 32, or 16 from 2199)",
        rows,
        rn - rating,
        half_up(rn) - rating,
        steps,
        notes,
    )


def naspa_change(rating: int, played: Sequence[Game], career_games: int) -> RatingChange:
    """NASPA N5 for a rated player: excess = S - sum E (N1), the band walk, acceleration
    (A = new - old - 5 x games when positive), rounded half up."""
    m = multiplier(career_games, rating)
    rows = []
    for g in played:
        assert g.opponent is not None
        e = expected_wins(rating, g.opponent)
        rows.append(
            GameChange(g.opponent, g.halves, rating - g.opponent, e, m * (g.halves / 2 - e))
        )
    excess = math.fsum(g.halves / 2 for g in played) - math.fsum(float(r.expected) for r in rows)
    walk = band_walk(rating, career_games, excess)
    gain = acceleration(rating, walk.rating, len(played))
    unrounded = walk.rating + gain
    notes = [f"band walk multipliers {', '.join(map(str, walk.multipliers))}: {walk.rating:.2f}"]
    if gain:
        notes.append(f"acceleration +{gain:.2f} (N5: new - old - 5 x {len(played)} games)")
    notes.append(
        "not included: feedback from opponents' acceleration, the nsa2008 floor of 1, one-third-rated events"
    )
    steps, running, g_career = [], rating, career_games
    for g in played:
        assert g.opponent is not None
        one = band_walk(running, g_career, g.halves / 2 - expected_wins(running, g.opponent))
        after = half_up(Fraction(one.rating + acceleration(running, one.rating, 1)))
        steps.append(Step(running, after - running, after))
        running, g_career = after, g_career + 1
    return RatingChange(
        "naspa",
        rating,
        m,
        f"multiplier {m} (N5: {career_games} career games, rating {rating})",
        rows,
        unrounded - rating,
        half_up(Fraction(unrounded)) - rating,
        steps,
        notes,
    )
