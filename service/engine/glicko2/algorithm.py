"""Steps 1-8 of Glickman's "Example of the Glicko-2 system" (docs/rules/glicko2.md, G2-1,
G2-3, G2-4): one player's rating period, in floats, never rounded.

`rate_period` takes the player's state at the start of the period on the Glicko-2 scale and
the period's games (the opponents' states at the start of the period) and returns every
intermediate the paper names, so that a result can show them (schemas/glicko2.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from service.engine.glicko2.settings import CENTRE, EPSILON, SCALE

_PI2 = math.pi * math.pi


def to_mu(rating: float) -> float:
    """Step 2: mu = (r - 1500) / 173.7178."""
    return (rating - CENTRE) / SCALE


def to_phi(rd: float) -> float:
    """Step 2: phi = RD / 173.7178."""
    return rd / SCALE


def to_rating(mu: float) -> float:
    """Step 8: r' = 173.7178 mu' + 1500."""
    return SCALE * mu + CENTRE


def to_rd(phi: float) -> float:
    """Step 8: RD' = 173.7178 phi'."""
    return SCALE * phi


def g(phi: float) -> float:
    """Step 3: g(phi) = 1 / sqrt(1 + 3 phi^2 / pi^2)."""
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / _PI2)


def expected_score(mu: float, mu_j: float, g_j: float) -> float:
    """Step 3: E(mu, mu_j, phi_j) = 1 / (1 + exp(-g(phi_j) (mu - mu_j)))."""
    return 1.0 / (1.0 + math.exp(-g_j * (mu - mu_j)))


def grown(phi: float, sigma: float, periods: int = 1) -> float:
    """Step 6 for a player without games, `periods` times: phi* = sqrt(phi^2 + sigma^2)
    each period (the volatility stays, so n periods add n sigma^2)."""
    return math.sqrt(phi * phi + periods * sigma * sigma)


@dataclass(frozen=True)
class Opponent:
    """One game of the period: the opponent's mu and phi at the period's start, the score."""

    mu: float
    phi: float
    score: float


@dataclass(frozen=True)
class GameFigures:
    """Step 3's per-game terms."""

    g: float
    expected: float


@dataclass(frozen=True)
class PeriodFigures:
    """Every intermediate of steps 3-8 for one player and one period."""

    v: float
    delta: float
    volatility: float
    iterations: int
    phi_star: float
    phi: float
    mu: float
    games: tuple[GameFigures, ...]


def new_volatility(
    phi: float, sigma: float, v: float, delta: float, tau: float
) -> tuple[float, int]:
    """Step 5: the new volatility sigma' by the Illinois algorithm (5.1-5.5), to the
    convergence tolerance 0.000001; with the passes of 5.4 it took."""
    a = math.log(sigma * sigma)
    delta2, phi2 = delta * delta, phi * phi
    tau2 = tau * tau

    def f(x: float) -> float:
        ex = math.exp(x)
        d = phi2 + v + ex
        return ex * (delta2 - phi2 - v - ex) / (2.0 * d * d) - (x - a) / tau2

    big_a = a
    if delta2 > phi2 + v:
        big_b = math.log(delta2 - phi2 - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    passes = 0
    while abs(big_b - big_a) > EPSILON:
        passes += 1
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a = f_a / 2.0
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2.0), passes


def rate_period(
    mu: float, phi: float, sigma: float, games: Sequence[Opponent], tau: float
) -> PeriodFigures:
    """Steps 3-7 for a player with at least one game in the period."""
    inverse_v = 0.0
    total = 0.0
    figures = []
    for game in games:
        g_j = g(game.phi)
        e = expected_score(mu, game.mu, g_j)
        inverse_v += g_j * g_j * e * (1.0 - e)
        total += g_j * (game.score - e)
        figures.append(GameFigures(g_j, e))
    v = 1.0 / inverse_v  # step 3
    delta = v * total  # step 4
    sigma_new, passes = new_volatility(phi, sigma, v, delta, tau)  # step 5
    phi_star = math.sqrt(phi * phi + sigma_new * sigma_new)  # step 6
    phi_new = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)  # step 7
    mu_new = mu + phi_new * phi_new * total
    return PeriodFigures(v, delta, sigma_new, passes, phi_star, phi_new, mu_new, tuple(figures))
