"""Performance rating: FIDE Ra + dp, CFC 714a, NASPA's iterative newcomer rating.

- FIDE (Title Regulations, docs/rules/fide.md#fide-title-1-4): Rp = Ra + dp, no 400-point rule; beside it
  the seed's references: own rating + the same dp, and the linear "algorithm of 400"
  (Ra + 400(W-L)/N, the 714a form, computed by CFC's own 714a function).
- CFC 714a: Rp = Rc + 400(W-L)/N, rounded half up once (C11).
- NASPA: the seed's iterative algorithm for one newcomer (N2-N4) against rated opponents.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from service.calculators.games import Game, wins_losses
from service.engine.arithmetic import half_up
from service.engine.cfc import formulas as cfc
from service.engine.fide.performance import performance_figures
from service.engine.naspa.expected import ExpectedWins
from service.engine.naspa.newcomers import Newcomer, rate_newcomers


@dataclass(frozen=True)
class Performance:
    """`rating` the performance (rounded as the system rounds it); `exact` before
    rounding; `figures`: the named quantities behind it, in order; `references`: other
    readings shown beside it (name -> rating)."""

    system: str
    games: int
    score: float
    rating: int
    exact: Fraction | float
    figures: dict[str, object]
    references: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _opponents(played: Sequence[Game]) -> list[int]:
    return [g.opponent for g in played if g.opponent is not None]


def linear_400(played: Sequence[Game]) -> Fraction:
    """The "algorithm of 400": mean opponent + 400(W-L)/N (CFC 714a's formula)."""
    wins, losses = wins_losses(played)
    return cfc.performance(sum(_opponents(played)), wins, losses, len(played))


def fide_performance(played: Sequence[Game], own: int | None = None) -> Performance:
    """Rp = Ra + dp (Ra mean rounded half up, p whole percent half up, Table 8.1.1)."""
    opponents = _opponents(played)
    halves = sum(g.halves for g in played)
    figures = performance_figures(opponents, halves)
    assert figures is not None
    ra, p, dp = figures
    references = {"algorithm of 400": half_up(linear_400(played))}
    if own is not None:
        references["own rating + dp"] = own + dp
    return Performance(
        "fide",
        len(played),
        halves / 2,
        ra + dp,
        Fraction(ra + dp),
        {"Ra": ra, "p %": p, "dp": dp},
        references,
        ["100% gives dp +800, 0% gives -800 (Table 8.1.1); no 400-point rule"],
    )


def cfc_performance(played: Sequence[Game]) -> Performance:
    """CFC 714a: Rp = Rc + 400(W-L)/N, rounded half up (C11)."""
    wins, losses = wins_losses(played)
    opponents = _opponents(played)
    rp = cfc.performance(sum(opponents), wins, losses, len(played))
    return Performance(
        "cfc",
        len(played),
        sum(g.halves for g in played) / 2,
        half_up(rp),
        rp,
        {"Rc": Fraction(sum(opponents), len(opponents)), "W": wins, "L": losses, "N": len(played)},
        notes=["opponents at the ratings given (717 would fix unrated opponents' values)"],
    )


def naspa_performance(played: Sequence[Game]) -> Performance:
    """The seed's newcomer algorithm (N2-N4) for one newcomer: start at the mean opponent,
    binary search for expected = earned (5% / 95% of games for none / all), floor 500
    then the cap (highest opponent + 400 x wins / games), rounded half up."""
    opponents = tuple(float(r) for r in _opponents(played))
    earned = sum(g.halves for g in played) / 2
    newcomer = Newcomer(earned, len(played), rated=opponents)
    solved = rate_newcomers([newcomer], ExpectedWins())
    value = solved.ratings[0]
    cap = newcomer.rated_cap
    figures: dict[str, object] = {
        "start": newcomer.start,
        "target wins": newcomer.target,
        "cap": cap,
        "passes": solved.passes,
        "averaged": solved.averaged,
    }
    notes = []
    if cap is not None and value == cap:
        notes.append("capped at highest opponent + 400 x wins / games (N3)")
    return Performance(
        "naspa", len(played), earned, half_up(Fraction(value)), value, figures, notes=notes
    )
