"""Glicko-2's calculators (docs/rules/glicko2.md G2-1, G2-3): expected score and rating
change by the engine's own steps (service.engine.glicko2.algorithm), never a second copy.

- Expected score: step 3's E(mu, mu_j, phi_j) = 1 / (1 + exp(-g(phi_j)(mu - mu_j))); it
  depends on the opponent's RD, so each side's E uses the other's RD (and the two need not
  add up to 1).
- Rating change: steps 1-8 over the games as one rating period (what ruleset `glicko2`
  publishes at a close, and `glicko2-event` for one event), beside a sequential projection:
  each game its own rating period from the running state (as a platform rating every game
  as it ends would), never a published figure.

A game is `OPP/RD:SCORE` (the opponent's rating and RD, the player's score: 1, 0.5, 0).
Every result is unrounded, and shown as the engine publishes it: rating and RD to 2
decimals, the volatility to 5 (G2-3).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from service.calculators.games import SCORE_HALVES
from service.calculators.text import table
from service.engine.glicko2.algorithm import (
    Opponent,
    PeriodFigures,
    expected_score,
    g,
    rate_period,
    to_mu,
    to_phi,
    to_rating,
    to_rd,
)
from service.engine.glicko2.figures import five, two
from service.engine.glicko2.settings import DEFAULT

RATING_LOW, RATING_HIGH = 0.0, 4000.0
RD_HIGH = 10_000.0  # schemas.glicko2.Deviation
VOLATILITY_HIGH = 10.0  # schemas.glicko2.Volatility


# ---------------------------------------------------------------- input
def number(text: str, what: str, low: float, high: float, low_open: bool = False) -> float:
    """A finite decimal in low..high (low excluded with `low_open`), or a ValueError."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{what} {text!r} is not a number") from None
    if not math.isfinite(value) or value > high or value < low or (low_open and value == low):
        bound = f"above {low:g}" if low_open else f"{low:g}"
        raise ValueError(f"{what} {text} is outside {bound}..{high:g}")
    return value


def rating(text: str, what: str = "--rating") -> float:
    return number(text, what, RATING_LOW, RATING_HIGH)


def rd(text: str, what: str = "--rd") -> float:
    return number(text, what, 0.0, RD_HIGH, low_open=True)


def volatility(text: str, what: str = "--volatility") -> float:
    return number(text, what, 0.0, VOLATILITY_HIGH, low_open=True)


def tau(text: str) -> float:
    return number(text, "--tau", 0.0, 10.0, low_open=True)


@dataclass(frozen=True)
class Game:
    """One game from the player's side: the opponent's rating and RD, the score."""

    opponent: float
    opponent_rd: float
    score: float


def game(text: str) -> Game:
    """`OPP/RD:SCORE`: the opponent's rating and RD, the player's score."""
    parts = text.split(":")
    if len(parts) != 2 or "/" not in parts[0]:
        raise ValueError(f"--game {text!r}: expected OPP/RD:SCORE (e.g. 1400/30:1)")
    opponent_text, rd_text = (p.strip() for p in parts[0].split("/", 1))
    halves = SCORE_HALVES.get(parts[1].strip())
    if halves is None:
        raise ValueError(f"--game {text!r}: score {parts[1].strip()!r} is not 1, 0.5 or 0")
    return Game(
        rating(opponent_text, f"--game {text!r}: opponent rating"),
        rd(rd_text, f"--game {text!r}: opponent RD"),
        halves / 2,
    )


def games(texts: Sequence[str]) -> list[Game]:
    if not texts:
        raise ValueError("at least one --game OPP/RD:SCORE is needed")
    return [game(t) for t in texts]


# ---------------------------------------------------------------- expected
@dataclass(frozen=True)
class Side:
    """One side's expected score against the other (step 3): the other's mu_j, phi_j, g."""

    rating: float
    rd: float
    mu_j: float
    phi_j: float
    g: float
    expected: float


@dataclass(frozen=True)
class Glicko2Expected:
    you: Side
    opponent: Side


def _side(rating: float, rd: float, other: float, other_rd: float) -> Side:
    mu_j, phi_j = to_mu(other), to_phi(other_rd)
    g_j = g(phi_j)
    return Side(rating, rd, mu_j, phi_j, g_j, expected_score(to_mu(rating), mu_j, g_j))


def glicko2_expected(
    rating: float, rd: float, opponent: float, opponent_rd: float
) -> Glicko2Expected:
    """Step 3's E for each side: yours with the opponent's RD, theirs with yours."""
    return Glicko2Expected(
        _side(rating, rd, opponent, opponent_rd), _side(opponent, opponent_rd, rating, rd)
    )


def expected_text(result: Glicko2Expected) -> str:
    rows = [
        [
            who,
            f"{two(s.rating):.2f}",
            f"{two(s.rd):.2f}",
            f"{s.mu_j:.4f}",
            f"{s.phi_j:.4f}",
            f"{s.g:.4f}",
            f"{s.expected:.4f}",
        ]
        for who, s in (("you", result.you), ("opponent", result.opponent))
    ]
    headers = ["player", "rating", "RD", "opponent's mu", "opponent's phi", "g(phi)", "E"]
    return "\n".join(
        [
            "glicko2 expected score (step 3: E = 1 / (1 + exp(-g(phi_j)(mu - mu_j))))",
            table(headers, rows),
            "each side's E uses the other's RD: the two need not add up to 1",
        ]
    )


def expected_json(result: Glicko2Expected) -> dict:
    def side(s: Side) -> dict:
        return {
            "rating": s.rating,
            "rd": s.rd,
            "opponent_mu": s.mu_j,
            "opponent_phi": s.phi_j,
            "g": s.g,
            "expected": s.expected,
        }

    return {"system": "glicko2", "you": side(result.you), "opponent": side(result.opponent)}


# ---------------------------------------------------------------- change
@dataclass(frozen=True)
class State:
    rating: float
    rd: float
    volatility: float


@dataclass(frozen=True)
class Glicko2Change:
    """Steps 1-8 over the games as one period, and the sequential projection's states
    after each game (each game its own period)."""

    before: State
    tau: float
    games: list[Game]
    figures: PeriodFigures
    after: State
    sequential: list[State]

    @property
    def score(self) -> float:
        return math.fsum(game.score for game in self.games)

    @property
    def expected(self) -> float:
        return math.fsum(t.expected for t in self.figures.games)


def _period(state: State, played: Sequence[Game], tau: float) -> tuple[PeriodFigures, State]:
    opponents = [Opponent(to_mu(p.opponent), to_phi(p.opponent_rd), p.score) for p in played]
    figures = rate_period(to_mu(state.rating), to_phi(state.rd), state.volatility, opponents, tau)
    return figures, State(to_rating(figures.mu), to_rd(figures.phi), figures.volatility)


def glicko2_change(
    rating: float,
    rd: float,
    played: Sequence[Game],
    volatility: float = DEFAULT.volatility,
    tau: float = DEFAULT.tau,
) -> Glicko2Change:
    """The games as one rating period (steps 1-8), and each alone from the running state."""
    before = State(rating, rd, volatility)
    figures, after = _period(before, played, tau)
    running, steps = before, []
    for one in played:
        running = _period(running, [one], tau)[1]
        steps.append(running)
    return Glicko2Change(before, tau, list(played), figures, after, steps)


def _shown(state: State) -> str:
    return f"{two(state.rating):.2f} / RD {two(state.rd):.2f} / volatility {five(state.volatility):.5f}"


def change_text(result: Glicko2Change) -> str:
    f = result.figures
    rows = []
    for i, (one, terms, step) in enumerate(zip(result.games, f.games, result.sequential), 1):
        rows.append(
            [
                i,
                f"{two(one.opponent):.2f}",
                f"{two(one.opponent_rd):.2f}",
                f"{one.score:g}",
                f"{terms.g:.4f}",
                f"{terms.expected:.4f}",
                f"{two(step.rating):.2f}",
                f"{two(step.rd):.2f}",
            ]
        )
    headers = ["game", "opponent", "RD", "score", "g(phi_j)", "E", "seq. rating", "seq. RD"]
    change = result.after.rating - result.before.rating
    return "\n".join(
        [
            f"glicko2 rating change from {_shown(result.before)}, tau {result.tau:g}",
            table(headers, rows),
            f"score {result.score:g}, expected {two(result.expected):.2f}",
            f"v {f.v:.4f}, Delta {f.delta:+.4f} (steps 3-4); volatility {f.volatility:.7f} after"
            f" {f.iterations} Illinois passes (step 5); phi* {f.phi_star:.4f} (step 6);"
            f" mu' {f.mu:.4f}, phi' {f.phi:.4f} (step 7)",
            f"one rating period (steps 1-8): {_shown(result.after)} (change {two(change):+.2f};"
            f" unrounded {result.after.rating!r} / {result.after.rd!r} / {result.after.volatility!r})",
            f"sequential projection (each game its own rating period, from the running state):"
            f" {_shown(result.sequential[-1])}",
        ]
    )


def change_json(result: Glicko2Change) -> dict:
    f = result.figures

    def state(s: State) -> dict:
        return {
            "rating": two(s.rating),
            "rd": two(s.rd),
            "volatility": five(s.volatility),
            "rating_unrounded": s.rating,
            "rd_unrounded": s.rd,
            "volatility_unrounded": s.volatility,
        }

    return {
        "system": "glicko2",
        "tau": result.tau,
        "before": state(result.before),
        "games": [
            {
                "opponent": one.opponent,
                "opponent_rd": one.opponent_rd,
                "score": one.score,
                "mu": to_mu(one.opponent),
                "phi": to_phi(one.opponent_rd),
                "g": terms.g,
                "expected": terms.expected,
            }
            for one, terms in zip(result.games, f.games)
        ],
        "score": result.score,
        "expected": result.expected,
        "v": f.v,
        "delta": f.delta,
        "iterations": f.iterations,
        "phi_star": f.phi_star,
        "mu_new": f.mu,
        "phi_new": f.phi,
        "after": state(result.after),
        "sequential": [state(s) for s in result.sequential],
    }
