"""The read API's answers (`GET /v1/...`, docs/guides/websites.md): msgspec Structs, encoded
as JSON by the HTTP layer and described by its OpenAPI document.

Every field is always present (null when unknown), so a website can rely on the shape.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

import msgspec

from schemas.common import Count, Period, Sex, Status, System
from schemas.records import PlayerRecord


class HistoryEntry(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One line of a player's history in one pool.

    `kind` event: the player's result in one rated event, as last published for it (a
    revision replaces it; a withdrawn event has none). For FIDE, whose rating stays until
    the list, `new_rating` is the projection (the published rating plus the period's change
    so far: the message's `details.projected_rating`), `change` the projection minus the
    rating, `projection` true, and `period` the rating period the event counts in.
    `kind` list: a published FIDE rating list; `list_period` is the month the list is in
    force from (the record's `fide.published[].period`), `period` the rating period it
    closes, `new_rating` the player's rating on it."""

    kind: Literal["event", "list"]
    event_id: str | None
    name: str | None
    start_date: dt.date | None
    end_date: dt.date | None
    period: Period | None
    list_period: Period | None
    old_rating: int | None
    new_rating: int | None
    change: int | None
    old_status: Status
    status: Status
    games: Count
    event_games: Count
    score: float
    expected: float | None
    performance: float | None
    revision: int = 0
    projection: bool = False


class PlayerHistory(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A player's history in one pool, in date order (FIDE lists after their period's events)."""

    system: System
    pool: str
    id: str
    name: str | None
    entries: list[HistoryEntry]


class PlayerView(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A player's current record in one pool, with the rank on the pool's list (null when
    unrated) and the date of their last rated event."""

    system: System
    pool: str
    id: str
    name: str | None
    rating: int | None
    status: Status
    games: Count
    rank: int | None
    last_event_date: dt.date | None
    record: PlayerRecord


class RankedPlayer(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One line of a pool's rating list (`rank` null for an unrated player): `rank` is the
    place on the pool's whole list, `titles` and `federation` the record's labels (D35),
    `active` whether the player is active on the list (D46)."""

    rank: int | None
    id: str
    name: str | None
    rating: int | None
    status: Status
    games: Count
    titles: list[str] = []
    federation: str | None = None
    active: bool = False


class PlayerList(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One page of a pool's rating list, highest rating first (ties by player id). `total`
    counts the players the query matches; `q` searches names (any word's beginning) and ids."""

    system: System
    pool: str
    total: Count
    offset: Count
    limit: Count
    q: str | None
    unrated: bool
    players: list[RankedPlayer]
    active: bool = False
    federation: str | None = None
    title: str | None = None
    list_date: ListDate | None = None
    labels: list[LabelCount] = []


class PoolSummary(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A pool the service rates: its players (all, and rated) and its last update (the
    time of the input entry last applied to it). `stream` is the input stream it is rated
    from; `closed_through` the last closed rating period (FIDE)."""

    system: System
    pool: str
    players: Count
    rated: Count
    last_update: dt.datetime | None
    closed_through: Period | None
    stream: str
    list_date: ListDate | None = None


class PoolList(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    pools: list[PoolSummary]


class ApiError(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The body of every 4xx answer: `error` is `not_found` or `bad_request`; `message`
    says what was not found or which parameter is wrong."""

    error: Literal["not_found", "bad_request"]
    message: str


# ---------------------------------------------------------------- the lists (D46-D49)


class ListDate(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The date a pool's list is of (D46). FIDE after a close: `period` the last closed
    rating period (its list is in force from the month after), `date` the period's last day;
    otherwise `period` null and `date` the end date of the pool's latest event. A player is
    active when their last event with a rated game ended on `active_from` or later: the
    year up to `date` (FIDE: the 12 rating periods up to the close)."""

    period: Period | None
    date: dt.date | None
    active_from: dt.date | None
    active: Count


class LabelCount(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A label the list's players have (`kind` federation or title) and how many have it:
    the choices of the list's filters (D47)."""

    kind: Literal["federation", "title"]
    label: str
    players: Count


class EventSummary(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A rated event as the latest events list it (D48): its pool, name, dates, FIDE rating
    period, number of players and the revision of its last result (0: never revised)."""

    event_id: str
    system: System
    pool: str
    name: str | None
    start_date: dt.date | None
    end_date: dt.date | None
    period: Period | None
    players: Count
    revision: int


class EventList(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The latest rated events, newest first by end date (ties by event id), of one pool or
    of all (`system` and `pool` null); withdrawn events are not listed."""

    system: System | None
    pool: str | None
    total: Count
    offset: Count
    limit: Count
    events: list[EventSummary]


class PlayerChange(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One player's change over the latest list (D49): ratings before and after, the change,
    and (CFC, NASPA) how many of the window's events the player was rated in."""

    id: str
    name: str | None
    titles: list[str]
    federation: str | None
    old_rating: int | None
    new_rating: int | None
    change: int
    events: Count | None


class PoolChanges(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The biggest gains and losses of a pool's latest list (D49). `basis` list (FIDE): the
    last close's list, `period` the period it closed; `basis` days (CFC, NASPA, and FIDE
    before its first close): the events that ended in the 30 days up to the pool's latest
    event, `since` to `through`, `events` of them counted (the latest MAX_CHANGE_EVENTS when
    `truncated`)."""

    system: System
    pool: str
    basis: Literal["list", "days"]
    period: Period | None
    since: dt.date | None
    through: dt.date | None
    events: Count
    truncated: bool
    gains: list[PlayerChange]
    losses: list[PlayerChange]


class LiveRating(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """FIDE while a rating period is open (D40): the player's live rating, the published
    rating plus the period's change so far (the history's last projection line after its
    last list: F9, the rating itself stays until the list); `change` is it minus the
    published rating, `period` the open rating period, `events` its rated events."""

    rating: int | None
    change: int | None
    period: Period
    events: Count


class ProfilePool(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One pool of a player's profile: the record's rating, status and rated games, the rank
    on the pool's list (null when unrated), the last rated event's end date and the pool's
    last update. FIDE: `rating` is the last published list's, `list_period` the month that
    list is in force from (the record's `fide.published`), `live` the projection during an
    open period (null without one); both null in the other systems."""

    pool: str
    rating: int | None
    status: Status
    games: Count
    rank: int | None
    last_event_date: dt.date | None
    last_update: dt.datetime | None
    list_period: Period | None
    live: LiveRating | None


class PlayerProfile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A player across the pools of one system (D38): the labels of the record (D35), each
    from the first pool whose record has it, and one entry per pool the player has a record
    in, in the system's order of pools (FIDE: standard, rapid, blitz)."""

    system: System
    id: str
    name: str | None
    titles: list[str]
    federation: str | None
    sex: Sex | None
    birth_year: int | None
    pools: list[ProfilePool]
