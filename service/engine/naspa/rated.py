"""Rated players' update (docs/rules/naspa.md#n5): multiplier, band walk, acceleration."""

from __future__ import annotations

from dataclasses import dataclass

EXPERIENCED = 50  # N5: career games from which the lower multiplier applies
ACCELERATION_PER_GAME = 5  # N5: A = new - old - 5 x rated games
FEEDBACK_SHARE = 20  # N5: each rated opponent receives A / 20 per game
MAX_WALK_STEPS = 8  # the walk crosses at most three boundaries; a guard, not a rule


def multiplier(career_games: int, rating: float) -> int:
    """N5: by career games before the event and the current rating."""
    experienced = career_games >= EXPERIENCED
    if rating < 1800:
        return 20 if experienced else 30
    if rating < 2000:
        return 16 if experienced else 24
    return 10 if experienced else 15


def _boundary(current: float, excess: float) -> int:
    """N5: 1800 from below 1800; 2000 up / 1799 down from 1800-1999; 1999 from 2000+."""
    if current < 1800:
        return 1800
    if current < 2000:
        return 2000 if excess > 0 else 1799
    return 1999


@dataclass(frozen=True)
class Walk:
    """The walked (unrounded) rating and the multipliers used, in order."""

    rating: float
    multipliers: tuple[int, ...]


def band_walk(old: float, career_games: int, excess: float) -> Walk:
    """N5: cur = old; while excess != 0: m = M(g, cur); r = cur + m x excess; stop if
    M(g, r) == m, else move to the band's boundary, taking (boundary - cur) / m off the
    excess. With no excess, the multiplier at the old rating is reported."""
    current = float(old)
    used: list[int] = []
    for _ in range(MAX_WALK_STEPS):
        if excess == 0:
            return Walk(current, tuple(used) or (multiplier(career_games, old),))
        m = multiplier(career_games, current)
        used.append(m)
        walked = current + m * excess
        if multiplier(career_games, walked) == m:
            return Walk(walked, tuple(used))
        boundary = _boundary(current, excess)
        excess -= (boundary - current) / m
        current = boundary
    raise AssertionError(f"band walk from {old} did not settle")  # pragma: no cover


def acceleration(old: float, walked: float, games: int) -> float:
    """N5: A = new - old - 5 x rated games in the segment when positive, else 0."""
    gain = walked - old - ACCELERATION_PER_GAME * games
    return gain if gain > 0 else 0.0
