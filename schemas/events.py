"""Input messages: `event.finished/v1`, `period.closed/v1` (design: "The wire contract (v1)"),
`event.corrected/v1` and `event.withdrawn/v1` (design: "v1.1 additions"), `period.reopened/v1`
(design: "v1.2 additions").

All travel on the input stream, so a period's closing and a correction are ordered with
the events. They form one tagged union, `InputMessage`, keyed by the `schema` field.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated

import msgspec

from schemas.common import BirthYear, EventId, Period, PlayerId, Round, Score, System


class PlayerRef(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A player of the event: identity only; ratings come from the service's store."""

    id: PlayerId
    name: Annotated[str, msgspec.Meta(max_length=200)] | None = None
    birth_year: BirthYear | None = None


class Game(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One game; `score` is player a's score. A forfeit is reported and never rated."""

    round: Round
    a: PlayerId
    b: PlayerId
    score: Score
    forfeit: bool = False


class Bye(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A bye: reported and never rated."""

    round: Round
    player: PlayerId
    score: Score


class EventContent(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What an event is: its identity, dates, players and results (the fields that
    `event.finished/v1` and `event.corrected/v1` share)."""

    event_id: EventId
    system: System
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
    start_date: dt.date
    end_date: dt.date
    rounds: Annotated[int, msgspec.Meta(ge=1, le=1000, description="Rounds actually played.")]
    players: list[PlayerRef]
    games: list[Game]
    byes: list[Bye] = []
    pool: str | None = None
    ruleset: str | None = None
    period: Period | None = None
    one_third_rated: bool = False
    long_event: (
        Annotated[
            bool,
            msgspec.Meta(
                description="A league or season longer than the service's limit of days from start to end "
                "(RATING_MAX_EVENT_DAYS, 90 by default): allowed up to 366 days. Absent: false."
            ),
        ]
        | msgspec.UnsetType
    ) = msgspec.UNSET


class EventFinished(EventContent, frozen=True, tag_field="schema", tag="event.finished/v1"):
    """A finished event, to be rated once by the rules of `system` / `pool` / `ruleset`."""


Reason = Annotated[str, msgspec.Meta(max_length=500, description="Why, for people (the audit).")]


class EventCorrected(EventContent, frozen=True, tag_field="schema", tag="event.corrected/v1"):
    """Replaces the whole content of the already-rated event with the same `event_id` in the
    same system and pool (results, players, dates; a changed date moves it in date order).
    The event and every later event whose figures change are re-rated and revised."""

    reason: Reason | None = None


class EventWithdrawn(
    msgspec.Struct,
    frozen=True,
    forbid_unknown_fields=True,
    tag_field="schema",
    tag="event.withdrawn/v1",
):
    """The event stops counting, as if it had never been rated; later events are re-rated."""

    event_id: EventId
    system: System
    pool: str | None = None
    reason: Reason | None = None


class PeriodClosed(
    msgspec.Struct,
    frozen=True,
    forbid_unknown_fields=True,
    tag_field="schema",
    tag="period.closed/v1",
):
    """Closes a rating period of one pool (FIDE): the new list is computed and published."""

    system: System
    period: Period
    pool: str | None = None
    ruleset: str | None = None


class PeriodReopened(
    msgspec.Struct,
    frozen=True,
    forbid_unknown_fields=True,
    tag_field="schema",
    tag="period.reopened/v1",
):
    """Undoes the pool's latest close (FIDE): the list it published is withdrawn, each
    player's record is back to what it was before the close, and the period's events count
    as open again (corrections, late events and withdrawals into it are accepted)."""

    system: System
    period: Period
    pool: str | None = None
    reason: Reason | None = None


InputMessage = EventFinished | PeriodClosed | EventCorrected | EventWithdrawn | PeriodReopened
