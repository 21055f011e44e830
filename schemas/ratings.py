"""Output message `ratings.updated/v1`: one per rated event, or per chunk of a new list."""

from __future__ import annotations

from typing import Literal, Union

import msgspec

from schemas.cfc import CfcDetails
from schemas.common import Count, Period, PlayerId, Status, System
from schemas.fide import FideDetails
from schemas.naspa import NaspaDetails

Details = Union[CfcDetails, FideDetails, NaspaDetails]


class PlayerResult(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One player's outcome. `new_rating` is null for a player who stays unrated."""

    id: PlayerId
    old_rating: int | None
    new_rating: int | None
    change: int | None
    old_status: Status
    status: Status
    games: Count
    event_games: Count
    score: float
    expected: float | None = None
    performance: float | None = None
    details: Details | None = None


class RatingsUpdated(
    msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="schema", tag="ratings.updated/v1"
):
    """New ratings: of one event (`kind` event) or one chunk of a published list (`list`)."""

    kind: Literal["event", "list"]
    system: System
    pool: str
    ruleset: str
    source_id: str
    players: list[PlayerResult]
    event_id: str | None = None
    period: Period | None = None
    chunk: int = 1
    chunks: int = 1
