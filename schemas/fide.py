"""FIDE parts of the contract: the record's accumulators and the per-player details.

Rules: FIDE Rating Regulations (2024, 8.3.1 as amended 2025-10-01), resolutions F1-F9
in docs/rules/fide.md.

Numbers (schemas/ratings.py, "Numbers"): every FIDE figure of a game is a whole number of
hundredths (table 8.1.2 is in hundredths, K is a whole number), so PD, W - We and
K x (W - We) are exact as 2-decimal numbers (PD 0.76, W - We -0.26). The sums a rating
officer checks the rounding of (8.3.4) - `event_sum`, `period_sum`, `event_change`,
`period_change` - are numbers with their exact value next to them (`<field>_exact`, an
`Exact` string: "-49/100"), as is 8.2's unrounded Ra (`initial.ra_exact`).
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
    ra: Annotated[
        float | None,
        msgspec.Meta(
            description="Ra = (opponents' ratings + 2 x 1800) / (n + 2), unrounded, 2 decimals (exact: `ra_exact`)."
        ),
    ] = None
    ra_exact: Annotated[Exact | None, msgspec.Meta(description="`ra`, exact.")] = None
    p_hundredths: int | None = None
    dp: int | None = None
    rating: int | None = None
    capped: bool = False
    disregarded_event: EventId | None = None
    published: bool = False
    reason: str | None = None


class FideGame(
    msgspec.Struct,
    frozen=True,
    forbid_unknown_fields=True,
    omit_defaults=True,
    kw_only=True,
    gc=False,
):
    """One rated game of the player in the event, as FIDE's rating calculator lists it:
    opponent's rating, D, PD, W, W - We and K x (W - We) (FIDE 8.3.1-8.3.2).

    The figures are the engine's own: the same per-game values it sums into
    `event_sum` (so the `change`s add up exactly to `event_sum`, the `rating_change`s to
    `event_change`). They are whole numbers of hundredths, exact as 2-decimal numbers
    (PD 0.76, W - We -0.26).

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
        msgspec.Meta(
            description="The opponent's rating as used: the list in force when the event started (F1)."
        ),
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
        float | None,
        msgspec.Meta(
            description="PD, the expected score for D from table 8.1.2 (the higher-rated player's column, "
            "the lower-rated player's 1 - it), 2 decimals, exact. Null for a player without a rating (FIDE 8.2)."
        ),
    ] = None
    score: Annotated[
        Score, msgspec.Meta(description="W, the player's score in the game (FIDE 8.3.2).")
    ]
    change: Annotated[
        float | None,
        msgspec.Meta(
            description="W - We: the score minus PD (FIDE 8.3.2), the game's term of the period's sum (8.3.4); "
            "2 decimals, exact."
        ),
    ] = None
    k: Annotated[
        int | None,
        msgspec.Meta(
            description="K of the period (FIDE 8.3.3, F5-F6), capped by K x n <= 700 over the period's games so far: `details.k`."
        ),
    ] = None
    rating_change: Annotated[
        float | None,
        msgspec.Meta(
            description="K x (W - We), unrounded (FIDE 8.3.2), 2 decimals, exact; the period's change is "
            "rounded once, over the sum (8.3.4, F4), never per game."
        ),
    ] = None


class FideDetails(
    msgspec.Struct,
    frozen=True,
    forbid_unknown_fields=True,
    omit_defaults=True,
    kw_only=True,
    tag_field="system",
    tag="fide",
):
    """F9: FIDE's output. Kind `event`: the published rating stays; `event_change` is
    K x this event's sum, `projected_rating` the published rating plus the period's
    rounded change so far (`projection` true), `games` the counted games one by one
    (FideGame). Kind `list`: `k` is the K for the next period, `k_applied` the K of the
    closed period (no `games`). The sums and changes are 2-decimal numbers (exact: they
    are whole hundredths) with their exact `Exact` strings next to them (`<field>_exact`)
    to compute with."""

    period: Period
    k: int | None
    event_change: Annotated[
        float | None,
        msgspec.Meta(
            description="K x `event_sum`, unrounded (FIDE 8.3.2), 2 decimals (exact: `event_change_exact`)."
        ),
    ]
    event_change_exact: Annotated[
        Exact | None, msgspec.Meta(description="`event_change`, exact.")
    ] = None
    projected_rating: int | None
    games_counted: int
    projection: bool = False
    rating_used: int | None = None
    event_sum: Annotated[
        float | None,
        msgspec.Meta(
            description="The event's sum of W - We (FIDE 8.3.4), 2 decimals (exact: `event_sum_exact`)."
        ),
    ] = None
    event_sum_exact: Annotated[Exact | None, msgspec.Meta(description="`event_sum`, exact.")] = None
    period_games: int = 0
    period_sum: Annotated[
        float | None,
        msgspec.Meta(
            description="The period's sum of W - We so far (event) or in all (list) (FIDE 8.3.4), 2 decimals "
            "(exact: `period_sum_exact`)."
        ),
    ] = None
    period_sum_exact: Annotated[Exact | None, msgspec.Meta(description="`period_sum`, exact.")] = (
        None
    )
    k_applied: int | None = None
    period_change: Annotated[
        float | None,
        msgspec.Meta(
            description="K x `period_sum`, unrounded: the list's change is this rounded half away from zero "
            "(FIDE 8.3.4, F4); 2 decimals (exact: `period_change_exact`)."
        ),
    ] = None
    period_change_exact: Annotated[
        Exact | None, msgspec.Meta(description="`period_change`, exact.")
    ] = None
    initial: InitialRating | None = None
    performance: int | None = None
    norms: list[NormCheck] = []
    games: list[FideGame] = []
