"""FIDE parts of the contract: the record's accumulators and the per-player details.

Rules: FIDE Rating Regulations (2024, 8.3.1 as amended 2025-10-01), resolutions F1-F9
in rules-fide.md.
"""

from __future__ import annotations

import msgspec

from schemas.common import Exact, Period, Rating


class PublishedRating(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """F1: a rating as published on the list that opened `period` (null: unrated)."""

    period: Period
    rating: Rating | None = None
    k: int | None = None


class PeriodSums(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """FIDE 8.3.4: a rated player's sum of (score - PD) over an open period, in hundredths."""

    period: Period
    sum_hundredths: int
    games: int


class InitialGame(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """FIDE 8.2: one game of an unrated player against a rated opponent, pooled."""

    period: Period
    event_id: str
    opponent_rating: Rating
    score: float


class FideState(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """What the FIDE engine keeps between events and lists."""

    published: list[PublishedRating] = []
    periods: list[PeriodSums] = []
    initial_games: list[InitialGame] = []


class NormCheck(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A title norm benchmark met by the event's performance (reported, never awarded)."""

    title: str
    performance: int
    average_opponent: int
    games: int


class FideDetails(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="system", tag="fide"):
    """F9: FIDE's event output: the published rating and the period's projection."""

    period: Period
    k: int | None
    event_change: Exact | None
    projected_rating: int | None
    games_counted: int
    norms: list[NormCheck] = []
