"""FIDE parts of the contract: the record's accumulators and the per-player details.

Rules: FIDE Rating Regulations (2024, 8.3.1 as amended 2025-10-01), resolutions F1-F9
in rules-fide.md.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

import msgspec

from schemas.common import EventId, Exact, Period, PlayerId, Rating, Round, Score


class PublishedRating(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """F1: the rating on the list in force from `period` on (null: unrated), and the K
    derived for that period (F5). A record keeps its recent lists; the newest one is
    `PlayerRecord.rating`."""

    period: Period
    rating: Rating | None = None
    k: int | None = None


class InitialGame(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """FIDE 8.2 / 7.1.4: one game of an unrated player against a rated opponent, pooled
    across periods (up to 26 months) until an initial rating is published."""

    period: Period
    event_id: EventId
    start_date: dt.date
    opponent_rating: Rating
    score_halves: int


class PeriodSums(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """FIDE 8.3.4 (F4): a rated player's sum of (score - PD) over an open period, in
    exact hundredths, with the period's rated games and points (in half points).

    `games_played` keeps each counted game (the opponent's rating at the event's start):
    if the player leaves the list (7.2.1) at the close of an earlier period, these games
    join the initial-rating pool (8.2), exactly as they would have had the event arrived
    after that close - so the list never depends on the order events arrive in."""

    period: Period
    sum_hundredths: int
    games: int
    points_halves: int = 0
    games_played: list[InitialGame] = []


class FirstEvent(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """FIDE 7.1.4: a never-rated player's first event against rated opponents (earliest
    start, then event id): disregarded if it scores zero."""

    start_date: dt.date
    event_id: EventId


class FideState(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """What the FIDE engine keeps between events and lists."""

    published: list[PublishedRating] = []
    periods: list[PeriodSums] = []
    initial_games: list[InitialGame] = []
    first_event: FirstEvent | None = None


class NormCheck(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """A title norm benchmark met by the event (Title Regulations 1.4; reported, never
    awarded), with the figures behind it: the adjusted opponents' average, the score
    percentage and dp, the performance, and the opponent raised to the floor."""

    title: Literal["GM", "IM", "WGM", "WIM"]
    performance: int
    required_performance: int
    average_opponent: int
    required_average: int
    games: int
    points: float
    p_percent: int
    dp: int
    floor: int
    raised_from: int | None = None
    unrated_opponents: int = 0


class InitialRating(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """FIDE 8.2 (F8): how an unrated player's initial rating was (or was not yet) reached."""

    games: int
    points: float
    opponents_sum: int
    ra: Exact | None = None
    p_hundredths: int | None = None
    dp: int | None = None
    rating: int | None = None
    capped: bool = False
    disregarded_event: EventId | None = None
    published: bool = False
    reason: str | None = None


class FideGame(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True, kw_only=True, gc=False):
    """One rated game of the player in the event, as FIDE's rating calculator lists it:
    opponent's rating, D, PD, W, W - We and K x (W - We) (FIDE 8.3.1-8.3.2).

    The figures are the engine's own: the same per-game values it sums into
    `event_sum` (so the `change`s add up exactly to `event_sum`, the `rating_change`s to
    `event_change`). Exact values are `Exact` strings in lowest terms (PD 0.76 is
    "19/25", W - We -0.26 is "-13/50").

    Only the games that count are listed, in round order, as on FIDE's calculator, which
    takes one rated opponent per game: forfeits (never rated) and games against an
    opponent unrated when the event started (F2) are left out, as are byes (no game);
    `games_counted` is the number of entries. A player being rated for the first time
    (FIDE 8.2) lists the games pooled for the initial rating, with the opponent's rating
    and the score only: no D, PD or K apply to them.
    """

    round: Annotated[Round, msgspec.Meta(description="Round of the game.")]
    opponent: Annotated[PlayerId, msgspec.Meta(description="The opponent's player id.")]
    opponent_rating: Annotated[
        Rating,
        msgspec.Meta(description="The opponent's rating as used: the list in force when the event started (F1)."),
    ]
    difference: Annotated[
        int | None,
        msgspec.Meta(
            description="D = own rating - opponent's rating after the 400-point rule (FIDE 8.3.1, F3): "
            "|D| > 400 counts as 400, except for a player rated 2650+ in a standard event starting "
            "on or after 2025-10-01. Null for a player without a rating (FIDE 8.2)."
        ),
    ] = None
    expected: Annotated[
        Exact | None,
        msgspec.Meta(
            description="PD, the expected score for D from table 8.1.2 (the higher-rated player's column, "
            "the lower-rated player's 1 - it), exact. Null for a player without a rating (FIDE 8.2)."
        ),
    ] = None
    score: Annotated[Score, msgspec.Meta(description="W, the player's score in the game (FIDE 8.3.2).")]
    change: Annotated[
        Exact | None,
        msgspec.Meta(description="W - We: the score minus PD (FIDE 8.3.2), the game's term of the period's sum (8.3.4)."),
    ] = None
    k: Annotated[
        int | None,
        msgspec.Meta(description="K of the period (FIDE 8.3.3, F5-F6), capped by K x n <= 700 over the period's games so far: `details.k`."),
    ] = None
    rating_change: Annotated[
        Exact | None,
        msgspec.Meta(
            description="K x (W - We), unrounded (FIDE 8.3.2); the period's change is rounded once, "
            "over the sum (8.3.4, F4), never per game."
        ),
    ] = None


class FideDetails(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True, tag_field="system", tag="fide"):
    """F9: FIDE's output. Kind `event`: the published rating stays; `event_change` is
    K x this event's sum (exact), `projected_rating` the published rating plus the
    period's rounded change so far (`projection` true), `games` the counted games one by
    one (FideGame). Kind `list`: `k` is the K for the next period, `k_applied` the K of
    the closed period (no `games`)."""

    period: Period
    k: int | None
    event_change: Exact | None
    projected_rating: int | None
    games_counted: int
    projection: bool = False
    rating_used: int | None = None
    event_sum: Exact | None = None
    period_games: int = 0
    period_sum: Exact | None = None
    k_applied: int | None = None
    period_change: Exact | None = None
    initial: InitialRating | None = None
    performance: int | None = None
    norms: list[NormCheck] = []
    games: list[FideGame] = []
