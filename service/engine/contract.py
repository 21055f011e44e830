"""The engines' contract: pure functions from an event (or a period's closing) and the
players' records to the per-player results and the new records.

No I/O, no clock, no globals: the adapters (the service, the offline `rate` command)
fetch the records, call an engine, and store what it returns.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Set
from typing import Protocol

import msgspec

from schemas.events import EventContent, EventFinished, PeriodClosed, PeriodReopened
from schemas.ratings import PlayerResult
from schemas.records import PlayerRecord, PoolState


class EngineRejection(Exception):
    """The rules cannot rate this input. `reason` is a dead-letter reason
    (`unratable`, `period_closed`, `invalid`) and `path` the JSON path at fault."""

    def __init__(self, reason: str, message: str, path: str = "$"):
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.path = path


class RecordProblem(msgspec.Struct, frozen=True):
    """Why an engine cannot read a player's record: the field at fault and what is wrong."""

    field: str
    message: str


def record_rejection(
    record: PlayerRecord, problems: list[RecordProblem], path: str
) -> EngineRejection:
    """The rejection of an event because of a player's record (its first problem)."""
    return EngineRejection(
        "unratable", f"record of player {record.id!r}: {problems[0].message}", path
    )


class EventInput(msgspec.Struct, frozen=True):
    """What an engine needs to rate one event.

    `records` holds a record for every player of the event in the event's pool (a new
    player comes as an unrated record). `seed_records` holds, where the ruleset names a
    seed pool (NASPA CSW starts from NWL), the players' records in that pool.
    """

    event: EventFinished
    records: Mapping[str, PlayerRecord]
    pool: PoolState
    seed_records: Mapping[str, PlayerRecord] = {}


class Outcome(msgspec.Struct, frozen=True):
    """An engine's answer: the published results, the records to store, the pool state.

    `results` are in the order of the event's players (for a list: by player id) and
    `chunks` groups them into `ratings.updated` messages (one for an event).
    `records` holds the records to store (at least every one that changed); `pool` the pool
    state to store. Every record must be valid `player.record/v1` (the service reads it back).
    """

    results: list[PlayerResult]
    records: list[PlayerRecord]
    pool: PoolState


class Engine(Protocol):
    """One rating system under one ruleset (registered in `service.engine.registry`).

    Its figures are read-only here (properties), so that a frozen dataclass or plain class
    attributes (`pools = ("regular", "active")`) satisfy the protocol."""

    @property
    def system(self) -> str: ...
    @property
    def ruleset(self) -> str: ...
    @property
    def pools(self) -> tuple[str, ...]: ...

    # The pool whose records seed a player's first event in a pool (e.g. csw -> nwl).
    @property
    def seed_pools(self) -> Mapping[str, str]: ...

    def rate_event(self, data: EventInput) -> Outcome:
        """Rate one event. Raises EngineRejection when the rules cannot rate it (among
        others when a player's record has `record_problems`)."""
        ...

    def record_problems(self, record: PlayerRecord) -> list[RecordProblem]:
        """What `rate_event` refuses about a player's record (empty: it can be rated). The
        engine's own input check: an import calls it so that it never stores a record the
        engine would later refuse."""
        ...

    def status_for(self, rating: int | None, games: int) -> str:
        """The status the rules give a record with this rating and career games (for a
        list that does not say); `record_problems` then judges the record."""
        ...

    def close_period(
        self,
        message: PeriodClosed,
        records: Mapping[str, PlayerRecord],
        pool: PoolState,
        last_end: dt.date | None = None,
    ) -> Outcome:
        """Close a rating period: `records` is every record of the pool, `last_end` the end
        date of the pool's last rated event in date order (None: none known). Raises
        EngineRejection for a system without periods, a period already closed, or one
        that is not due (an earlier one is open, or it lies in the future)."""
        ...

    def check_close(
        self,
        message: PeriodClosed,
        periods: Set[str],
        pool: PoolState,
        last_end: dt.date | None = None,
    ) -> None:
        """What `close_period` checks first, from the open periods with counted games
        (`periods`: the earliest and the latest suffice) instead of the records: raises
        EngineRejection when the period may not close now (D60, the service's paged close)."""
        ...

    def list_players(
        self, message: PeriodClosed, records: Mapping[str, PlayerRecord], pool: PoolState
    ) -> Outcome:
        """The list lines of some records of the pool (those with games in the period), by
        id, and their new records; `pool` unchanged. Per record: `close_period` is this over
        the whole pool, then `clear_k` (D60)."""
        ...

    def clear_k(
        self, message: PeriodClosed, records: Mapping[str, PlayerRecord]
    ) -> list[PlayerRecord]:
        """The records a close changes without listing them (FIDE: an imported K removed)."""
        ...

    def reopen_period(
        self,
        message: PeriodReopened,
        before: Mapping[str, PlayerRecord],
        pool: PoolState,
    ) -> Outcome:
        """Undo the pool's latest close (F11): `before` holds each record that close changed,
        as it was before it (the ledger keeps them). Returns them as the records to store and
        the pool with `closed_through` back to before the close; no results (the list is
        withdrawn). Raises EngineRejection (`invalid`) for a period that is not the pool's
        latest close, or one closed before the pool kept what a reopen needs."""
        ...

    def order_prefix(self, event: EventContent) -> int:
        """The leading field of the event's order key (service/timeline.py `order_key`): where
        the rules count an event in a rating period, the period's month number, so that every
        event of a period sorts before the next period's (a closed period is never re-entered);
        0 for a system without periods."""
        ...

    def list_period(self, period: str) -> str:
        """The period from which the list that closing `period` publishes is in force."""
        ...

    def catch_up(self, state: PlayerRecord, pool: PoolState) -> PlayerRecord:
        """A stored state (a player's record as it was before some event) with every closing
        of `pool` it missed applied, in order: the state a re-rate starts from. An event of a
        later period rated before an earlier period was closed kept a state from before that
        closing; re-rating from it as stored would undo the published list."""
        ...


class WithoutPeriods:
    """The period answers of a system that rates each event as it is reported (CFC, NASPA):
    the decode step refuses a `period.closed` or `period.reopened` for it first (schemas.common.PERIOD_SYSTEMS,
    the one list of the systems with periods)."""

    def order_prefix(self, event: EventContent) -> int:
        return 0

    def list_period(self, period: str) -> str:
        raise EngineRejection("unratable", "this system publishes no periodic lists", "$.system")

    def catch_up(self, state: PlayerRecord, pool: PoolState) -> PlayerRecord:
        return state

    def reopen_period(
        self, message: PeriodReopened, before: Mapping[str, PlayerRecord], pool: PoolState
    ) -> Outcome:
        raise EngineRejection(
            "unratable", "this system has no rating periods to reopen", "$.system"
        )

    def check_close(
        self,
        message: PeriodClosed,
        periods: Set[str],
        pool: PoolState,
        last_end: dt.date | None = None,
    ) -> None:
        raise EngineRejection("unratable", "this system has no rating periods", "$.system")

    def list_players(
        self, message: PeriodClosed, records: Mapping[str, PlayerRecord], pool: PoolState
    ) -> Outcome:
        raise EngineRejection("unratable", "this system has no rating periods", "$.system")

    def clear_k(
        self, message: PeriodClosed, records: Mapping[str, PlayerRecord]
    ) -> list[PlayerRecord]:
        raise EngineRejection("unratable", "this system has no rating periods", "$.system")
