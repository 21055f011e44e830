"""FIDE parts of the contract: the record's accumulators and the per-player details.

Rules: FIDE Rating Regulations (2024, 8.3.1 as amended 2025-10-01), resolutions F1-F9
in rules-fide.md.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

import msgspec

from schemas.common import EventId, Exact, Period, Rating


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


class FideDetails(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True, tag_field="system", tag="fide"):
    """F9: FIDE's output. Kind `event`: the published rating stays; `event_change` is
    K x this event's sum (exact), `projected_rating` the published rating plus the
    period's rounded change so far (`projection` true). Kind `list`: `k` is the K for
    the next period, `k_applied` the K of the closed period."""

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
