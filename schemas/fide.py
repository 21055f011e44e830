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

    title: Annotated[Literal["GM", "IM", "WGM", "WIM"], msgspec.Meta(title="Title")]
    performance: Annotated[int, msgspec.Meta(title="Performance")]
    required_performance: Annotated[int, msgspec.Meta(title="Required performance")]
    average_opponent: Annotated[int, msgspec.Meta(title="Opponents' average")]
    required_average: Annotated[int, msgspec.Meta(title="Required average")]
    games: Annotated[int, msgspec.Meta(title="Games")]
    points: Annotated[float, msgspec.Meta(title="Points")]
    p_percent: Annotated[int, msgspec.Meta(title="Score (%)")]
    dp: Annotated[int, msgspec.Meta(title="dp")]
    floor: Annotated[int, msgspec.Meta(title="Rating floor")]
    raised_from: Annotated[int | None, msgspec.Meta(title="Raised from")] = None
    unrated_opponents: Annotated[int, msgspec.Meta(title="Unrated opponents")] = 0


class InitialRating(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """FIDE 8.2 (F8): how an unrated player's initial rating was (or was not yet) reached."""

    games: Annotated[int, msgspec.Meta(title="Games")]
    points: Annotated[float, msgspec.Meta(title="Points")]
    opponents_sum: Annotated[int, msgspec.Meta(title="Sum of opponents' ratings")]
    ra: Annotated[
        float | None,
        msgspec.Meta(
            title="Ra",
            description="Ra = (opponents' ratings + 2 x 1800) / (n + 2), unrounded, 2 decimals (exact: `ra_exact`).",
        ),
    ] = None
    ra_exact: Annotated[
        Exact | None, msgspec.Meta(title="Ra, exact", description="`ra`, exact.")
    ] = None
    p_hundredths: Annotated[int | None, msgspec.Meta(title="P (hundredths)")] = None
    dp: Annotated[int | None, msgspec.Meta(title="dp")] = None
    rating: Annotated[int | None, msgspec.Meta(title="Initial rating")] = None
    capped: Annotated[bool, msgspec.Meta(title="Capped")] = False
    disregarded_event: Annotated[EventId | None, msgspec.Meta(title="Event disregarded")] = None
    published: Annotated[bool, msgspec.Meta(title="Published")] = False
    reason: Annotated[str | None, msgspec.Meta(title="Reason")] = None


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

    round: Annotated[Round, msgspec.Meta(title="Round", description="Round of the game.")]
    opponent: Annotated[
        PlayerId, msgspec.Meta(title="Opponent", description="The opponent's player id.")
    ]
    opponent_rating: Annotated[
        Rating,
        msgspec.Meta(
            title="Opponent's rating",
            description="The opponent's rating as used: the list in force when the event started (F1).",
        ),
    ]
    difference: Annotated[
        int | None,
        msgspec.Meta(
            title="D",
            description="D = own rating - opponent's rating after the 400-point rule (FIDE 8.3.1, F3): "
            "|D| > 400 counts as 400, except for a player rated 2650+ in a standard event starting "
            "on or after 2025-10-01. Null for a player without a rating (FIDE 8.2).",
        ),
    ] = None
    expected: Annotated[
        float | None,
        msgspec.Meta(
            title="PD",
            description="PD, the expected score for D from table 8.1.2 (the higher-rated player's column, "
            "the lower-rated player's 1 - it), 2 decimals, exact. Null for a player without a rating (FIDE 8.2).",
        ),
    ] = None
    score: Annotated[
        Score,
        msgspec.Meta(title="W", description="W, the player's score in the game (FIDE 8.3.2)."),
    ]
    change: Annotated[
        float | None,
        msgspec.Meta(
            title="W − We",
            description="W - We: the score minus PD (FIDE 8.3.2), the game's term of the period's sum (8.3.4); "
            "2 decimals, exact.",
        ),
    ] = None
    k: Annotated[
        int | None,
        msgspec.Meta(
            title="K",
            description="K of the period (FIDE 8.3.3, F5-F6), capped by K x n <= 700 over the period's games so far: `details.k`.",
        ),
    ] = None
    rating_change: Annotated[
        float | None,
        msgspec.Meta(
            title="K × (W − We)",
            description="K x (W - We), unrounded (FIDE 8.3.2), 2 decimals, exact; the period's change is "
            "rounded once, over the sum (8.3.4, F4), never per game.",
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

    period: Annotated[Period, msgspec.Meta(title="Rating period")]
    k: Annotated[int | None, msgspec.Meta(title="K")]
    event_change: Annotated[
        float | None,
        msgspec.Meta(
            title="Event's change (K × sum)",
            description="K x `event_sum`, unrounded (FIDE 8.3.2), 2 decimals (exact: `event_change_exact`).",
        ),
    ]
    event_change_exact: Annotated[
        Exact | None,
        msgspec.Meta(title="Event's change, exact", description="`event_change`, exact."),
    ] = None
    projected_rating: Annotated[int | None, msgspec.Meta(title="Projected rating")]
    games_counted: Annotated[int, msgspec.Meta(title="Games counted")]
    projection: Annotated[bool, msgspec.Meta(title="Projection")] = False
    rating_used: Annotated[int | None, msgspec.Meta(title="Rating used")] = None
    event_sum: Annotated[
        float | None,
        msgspec.Meta(
            title="Event's sum of W − We",
            description="The event's sum of W - We (FIDE 8.3.4), 2 decimals (exact: `event_sum_exact`).",
        ),
    ] = None
    event_sum_exact: Annotated[
        Exact | None, msgspec.Meta(title="Event's sum, exact", description="`event_sum`, exact.")
    ] = None
    period_games: Annotated[int, msgspec.Meta(title="Period's games")] = 0
    period_sum: Annotated[
        float | None,
        msgspec.Meta(
            title="Period's sum of W − We",
            description="The period's sum of W - We so far (event) or in all (list) (FIDE 8.3.4), 2 decimals "
            "(exact: `period_sum_exact`).",
        ),
    ] = None
    period_sum_exact: Annotated[
        Exact | None, msgspec.Meta(title="Period's sum, exact", description="`period_sum`, exact.")
    ] = None
    k_applied: Annotated[int | None, msgspec.Meta(title="K applied")] = None
    period_change: Annotated[
        float | None,
        msgspec.Meta(
            title="Period's change (K × sum)",
            description="K x `period_sum`, unrounded: the list's change is this rounded half away from zero "
            "(FIDE 8.3.4, F4); 2 decimals (exact: `period_change_exact`).",
        ),
    ] = None
    period_change_exact: Annotated[
        Exact | None,
        msgspec.Meta(title="Period's change, exact", description="`period_change`, exact."),
    ] = None
    initial: Annotated[InitialRating | None, msgspec.Meta(title="Initial rating (8.2)")] = None
    performance: Annotated[int | None, msgspec.Meta(title="Performance")] = None
    norms: Annotated[list[NormCheck], msgspec.Meta(title="Title norms met")] = []
    games: Annotated[list[FideGame], msgspec.Meta(title="Games")] = []
