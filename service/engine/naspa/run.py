"""One rating run: a whole short event, or one segment of a long one (docs/rules/naspa.md).

Newcomers first (the seed's algorithm, N2-N4), then rated players against the
newcomers' unrounded new ratings (N5); everything stays unrounded until the end, then
ratings are rounded half up (floor(x + 0.5)).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from service.engine.arithmetic import half_up
from service.engine.naspa.expected import ExpectedWins
from service.engine.naspa.newcomers import Newcomer, rate_newcomers
from service.engine.naspa.rated import FEEDBACK_SHARE, Walk, acceleration, band_walk

ONE_THIRD_CLIP = 50  # one-third-rated events: the rounded change is clipped to +/-50


@dataclass(frozen=True)
class RatedGame:
    """A game that counts (not a forfeit, not a bye): `score` is a's earned wins."""

    a: str
    b: str
    score: float
    round: int


@dataclass(frozen=True)
class GameFigures:
    """One counted game of a player as the run rated it: the opponent's value used (N5:
    pre-run rating, or a newcomer's unrounded new rating), the earned wins and the
    expected wins (N1) that the run sums into the player's expected wins."""

    round: int
    opponent: str
    opponent_rating: float
    score: float
    expected: float


@dataclass(frozen=True)
class Policy:
    """What differs between rulesets and events within one run."""

    floor_of_one: bool  # nsa2008: the rating never goes below 1 (before feedback)
    one_third: bool  # one-third-rated event: change / 3, no acceleration, clip +/-50


@dataclass(frozen=True)
class Figures:
    """One player's figures in one run (a player with no counted game has none)."""

    old_rating: int | None
    new_rating: int | None
    games: int
    earned: float
    expected: float | None
    newcomer: bool
    unrounded: float | None = None
    career_games: int | None = None
    multipliers: tuple[int, ...] = ()
    walked: float | None = None
    acceleration: float = 0.0
    feedback: float = 0.0
    clipped: bool = False
    iterations: int | None = None
    averaged: bool = False
    opponents: tuple[GameFigures, ...] = ()  # in round order


# A rated player after the band walk and acceleration, before feedback (N5): old rating,
# career games, earned and expected wins, the walk, the acceleration, the rating before
# feedback, the games' figures.
_Walked = tuple[int, int, float, float, Walk, float, float, tuple[GameFigures, ...]]


def rate_run(
    games: Sequence[RatedGame],
    ratings: Mapping[str, int | None],
    career_games: Mapping[str, int],
    policy: Policy,
) -> dict[str, Figures]:
    """Rate one run. `ratings` holds each player's rating before the run (None for a
    newcomer); the answer has the figures of every player with a counted game."""
    expected = ExpectedWins()
    played: dict[str, list[tuple[str, float, int]]] = {}
    for game in games:
        played.setdefault(game.a, []).append((game.b, game.score, game.round))
        played.setdefault(game.b, []).append((game.a, 1.0 - game.score, game.round))

    # Newcomers (seed, N2-N4): a newcomer with no counted game gets no rating.
    newcomer_ids = [p for p in played if ratings.get(p) is None]
    newcomers = _newcomers(newcomer_ids, played, ratings)
    solved = rate_newcomers(newcomers, expected)
    value: dict[str, float] = {p: float(ratings[p]) for p in played if ratings.get(p) is not None}  # type: ignore[arg-type]  # filtered on ratings.get(p) is not None
    value.update(zip(newcomer_ids, solved.ratings))  # N5: newcomers count unrounded

    figures: dict[str, Figures] = {}
    for p, nc in zip(newcomer_ids, newcomers):
        mine = value[p]
        opponents = _per_game(played[p], value, expected, mine)
        figures[p] = Figures(
            old_rating=None,
            new_rating=half_up(mine),
            games=nc.games,
            earned=nc.earned,
            expected=math.fsum(g.expected for g in opponents),
            newcomer=True,
            unrounded=mine,
            iterations=solved.passes,
            averaged=solved.averaged,
            opponents=opponents,
        )
    walked, feedback = _walk_rated(played, ratings, career_games, policy, value, expected)
    _add_rated_figures(figures, walked, feedback, played, policy)
    return figures


def _newcomers(
    newcomer_ids: list[str],
    played: Mapping[str, list[tuple[str, float, int]]],
    ratings: Mapping[str, int | None],
) -> list[Newcomer]:
    """Each newcomer's input to the seed's algorithm (N2-N4): earned wins, games, the
    rated opponents' ratings and the unrated opponents (by their place in `newcomer_ids`)."""
    index = {p: i for i, p in enumerate(newcomer_ids)}
    newcomers = []
    for p in newcomer_ids:
        results = played[p]
        rated = tuple(float(ratings[o]) for o, _, _ in results if ratings.get(o) is not None)  # type: ignore[arg-type]  # filtered on ratings.get(o) is not None
        unrated = tuple(index[o] for o, _, _ in results if ratings.get(o) is None)
        newcomers.append(
            Newcomer(math.fsum(s for _, s, _ in results), len(results), rated, unrated)
        )
    return newcomers


def _per_game(
    results: list[tuple[str, float, int]],
    value: Mapping[str, float],
    expected: ExpectedWins,
    rating: float,
) -> tuple[GameFigures, ...]:
    """N1 for each of a player's games from `rating`, against the opponent's value (N5),
    in round order."""
    return tuple(
        GameFigures(r, o, value[o], s, expected(rating, value[o]))
        for o, s, r in sorted(results, key=_round)
    )


def _walk_rated(
    played: Mapping[str, list[tuple[str, float, int]]],
    ratings: Mapping[str, int | None],
    career_games: Mapping[str, int],
    policy: Policy,
    value: Mapping[str, float],
    expected: ExpectedWins,
) -> tuple[dict[str, _Walked], dict[str, list[float]]]:
    """N5 for every rated player: band walk and acceleration (none, and the change / 3, in
    a one-third-rated event), nsa2008's floor of one (N6), and the feedback each rated
    opponent receives, kept apart to be summed afterwards."""
    walked: dict[str, _Walked] = {}
    feedback: dict[str, list[float]] = {}
    for p, results in played.items():
        old = ratings.get(p)
        if old is None:
            continue
        g = career_games.get(p, 0)
        earned = math.fsum(s for _, s, _ in results)
        opponents = _per_game(results, value, expected, old)
        expect = math.fsum(o.expected for o in opponents)
        walk = band_walk(old, g, earned - expect)
        if policy.one_third:
            new, gain = old + (walk.rating - old) / 3, 0.0  # no acceleration
        else:
            gain = acceleration(old, walk.rating, len(results))
            new = walk.rating + gain
            if gain > 0:
                for o, _, _ in results:
                    if ratings.get(o) is not None:  # rated opponents only
                        feedback.setdefault(o, []).append(gain / FEEDBACK_SHARE)
        if policy.floor_of_one:
            new = max(new, 1.0)  # nsa2008: floor of 1, before feedback (none elsewhere, N6)
        walked[p] = (old, g, earned, expect, walk, gain, new, opponents)
    return walked, feedback


def _add_rated_figures(
    figures: dict[str, Figures],
    walked: Mapping[str, _Walked],
    feedback: Mapping[str, list[float]],
    played: Mapping[str, list[tuple[str, float, int]]],
    policy: Policy,
) -> None:
    """N5's last step for every rated player: the feedback received added, the rating
    rounded half up; in a one-third-rated event the change clipped to +/-50."""
    for p, (old, g, earned, expect, walk, gain, new, opponents) in walked.items():
        received = math.fsum(feedback.get(p, ()))
        unrounded = new + received
        rounded = half_up(unrounded)
        clipped = False
        if policy.one_third and abs(rounded - old) > ONE_THIRD_CLIP:
            rounded = old + (ONE_THIRD_CLIP if rounded > old else -ONE_THIRD_CLIP)
            clipped = True
        figures[p] = Figures(
            old_rating=old,
            new_rating=rounded,
            games=len(played[p]),
            earned=earned,
            expected=expect,
            newcomer=False,
            unrounded=unrounded,
            career_games=g,
            multipliers=walk.multipliers,
            walked=walk.rating,
            acceleration=gain,
            feedback=received,
            clipped=clipped,
            opponents=opponents,
        )


def _round(game: tuple[str, float, int]) -> int:
    return game[2]
