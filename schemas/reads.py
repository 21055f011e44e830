"""The read API's answers (`GET /v1/...`, docs/guides/websites.md): msgspec Structs, encoded
as JSON by the HTTP layer and described by its OpenAPI document.

Every field is always present (null when unknown), so a website can rely on the shape.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

import msgspec

from schemas.common import Count, Period, Sex, Status, System
from schemas.ratings import Cause
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
    # Glicko-2 (docs/rules/glicko2.md G2-12): the RD, and 1.96 RD, the rating's uncertainty
    # as a page shows it ("1464 ± 297"); null in the other systems.
    rd: float | None = None
    uncertainty: float | None = None


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
    # Glicko-2 (G2-12): the RD and 1.96 RD, the rating's uncertainty; null elsewhere.
    rd: float | None = None
    uncertainty: float | None = None


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


# ------------------------------------------------------------------ an event's crosstable and
# revisions (issue 31, D42-D43): `GET /v1/events/{event_id}/crosstable`, `.../revisions`


class CrosstableResult(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One result in a player's row, in round order: a game (`kind` game), a forfeit
    (`forfeit`: reported, never rated) or a bye (`bye`: no opponent). `opponent` is the
    opponent's `number` in this table and `opponent_id` their id (null for a bye); `score`
    the player's points in it (1, 0.5, 0); `running` the player's points after it. Colour
    is not in the contract (a game has players `a` and `b`, not White and Black)."""

    round: int
    kind: Literal["game", "forfeit", "bye"]
    opponent: int | None
    opponent_id: str | None
    score: float
    running: float


class CrosstablePlayer(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One row of a crosstable (D42). `number`: the row's number, by which the other rows
    name their opponents; `rank`: 1 + the players with more points (equal points share it).
    `points` counts every result of the event (games, forfeits and byes), as the standings
    do; `score`, `games`, `expected` and `performance` are the rated ones of the event's
    last message (null for a withdrawn event). `rating` is the rating the event was rated
    from (FIDE: the list in force at its start, `details.rating_used`, else `old_rating`);
    `new_rating` and `change` are the message's, except that an open FIDE period's are the
    projection (`projection` true: `details.projected_rating`, and it minus `old_rating`),
    as in a player's history."""

    number: int
    rank: int
    id: str
    name: str | None
    rating: int | None
    new_rating: int | None
    change: int | None
    projection: bool
    points: float
    score: float | None
    games: Count | None
    expected: float | None
    performance: float | None
    results: list[CrosstableResult]


class Crosstable(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An event's crosstable, chess-results style: the players by points, then by the rating
    the event was rated from (higher first, unrated last), then by id (the event's own
    tiebreaks are not in the contract: this is not its official standing); per round each
    one's opponent and result, with the running score. From the event's archived content
    and its last published message; `archived` false: the content was not kept (an event
    rated before the archive), so there are no `results`. `revision` is the last message's
    (0: the first result)."""

    event_id: str
    system: System
    pool: str
    name: str | None
    start_date: dt.date | None
    end_date: dt.date | None
    period: Period | None
    rounds: int
    revision: int
    withdrawn: bool
    archived: bool
    players: list[CrosstablePlayer]


class RevisionLine(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One published result of an event: revision 0 (`kind` rated) is the first; then each
    revision, `corrected` or `withdrawn` (this event's own correction or withdrawal, with
    the input's `reason` when it gave one), or `rerated` (another event, `cause.event_id`,
    was corrected, withdrawn or inserted before it and this event's figures changed). `at`
    is when the input entry that set it off was added (its stream id, `source_id`).
    `known` false (`kind` unknown): a revision published before the service kept the log
    (D43), of which only the number is known (the last one's cause comes from its message)."""

    revision: int
    kind: Literal["rated", "corrected", "withdrawn", "rerated", "unknown"]
    at: dt.datetime | None
    source_id: str | None
    cause: Cause | None
    reason: str | None
    known: bool


class EventRevisions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An event's revision history, oldest first (D43): `revision` is the current one,
    `withdrawn` whether the event counts no longer."""

    event_id: str
    system: System
    pool: str
    name: str | None
    revision: int
    withdrawn: bool
    revisions: list[RevisionLine]
