"""Output message `ratings.updated/v1`: one per rated event, per chunk of a new list, and one
per revision of an already-published event (design: "v1.1 additions")."""

from __future__ import annotations

import datetime as dt
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
    name: str | None = None


class Cause(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What set off a revision: the correction, withdrawal or late arrival of `event_id`."""

    type: Literal["corrected", "withdrawn", "inserted"]
    event_id: str


class RatingsUpdated(
    msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="schema", tag="ratings.updated/v1"
):
    """New ratings: of one event (`kind` event), one chunk of a published list (`list`), or
    the complete new result of an already-published event (`revision`, with `revision`
    counting 1, 2, ... and the `cause`; a withdrawn event's revision has `withdrawn` and no
    players). A consumer that keeps the last message per `event_id` holds the current results.

    A FIDE list message says which list it is: `list_period` is the month the list is in
    force from (the records' `fide.published[].period`, e.g. `2025-12`) and `period` the
    rating period it closes (`2025-11`)."""

    kind: Literal["event", "list", "revision"]
    system: System
    pool: str
    ruleset: str
    source_id: str
    players: list[PlayerResult]
    event_id: str | None = None
    period: Period | None = None
    chunk: int = 1
    chunks: int = 1
    name: str | None = None
    start_date: dt.date | None = None
    end_date: dt.date | None = None
    revision: int | None = None
    cause: Cause | None = None
    withdrawn: bool = False
    list_period: Period | None = None
