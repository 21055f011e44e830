"""A player's profile across the pools of one system (D38), from what the read model keeps
per pool: the record, the history lines and the rank. Pure: Structs in, a Struct out; the
read model (service/runtime/queries.py) and the tests' fake both build it here.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from schemas.common import System
from schemas.glicko2 import uncertainty
from schemas.reads import HistoryEntry, LiveRating, PlayerProfile, ProfilePool
from schemas.records import PlayerRecord
from schemas.systems import pool_order


@dataclass(frozen=True)
class PoolRead:
    """What the read model holds of one player in one pool."""

    pool: str
    record: PlayerRecord
    entries: Sequence[HistoryEntry]  # in date order (readmodel.sorted_entries)
    rank: int | None
    last_update: dt.datetime | None = None


def last_event_date(entries: Sequence[HistoryEntry]) -> dt.date | None:
    """The end date of the player's last rated event (a list is not an event)."""
    days = [e.end_date for e in entries if e.kind == "event" and e.end_date is not None]
    return max(days) if days else None


def live_rating(entries: Sequence[HistoryEntry], published: int | None) -> LiveRating | None:
    """FIDE: the projection of the open period, from the history's projection lines after
    its last list (a closed period's projections were replaced by its list); the last one
    holds the period's change so far. None when the player has none."""
    since = [e for e in entries[_after_last_list(entries) :] if e.kind == "event"]
    projected = [e for e in since if e.projection and e.period is not None]
    if not projected:
        return None
    last = projected[-1]
    assert last.period is not None  # filtered above
    in_period = [e for e in projected if e.period == last.period]
    change = (
        last.new_rating - published
        if last.new_rating is not None and published is not None
        else None
    )
    return LiveRating(
        rating=last.new_rating, change=change, period=last.period, events=len(in_period)
    )


def _after_last_list(entries: Sequence[HistoryEntry]) -> int:
    lists = [i for i, e in enumerate(entries) if e.kind == "list"]
    return lists[-1] + 1 if lists else 0


def list_period(record: PlayerRecord) -> str | None:
    """FIDE: the month the record's rating is in force from (its newest published list)."""
    if record.fide is None or not record.fide.published:
        return None
    return record.fide.published[-1].period


def pool_of(read: PoolRead) -> ProfilePool:
    record = read.record
    fide = record.system == "fide"
    return ProfilePool(
        pool=read.pool,
        rating=record.rating,
        status=record.status,
        games=record.games,
        rank=read.rank,
        last_event_date=last_event_date(read.entries),
        last_update=read.last_update,
        list_period=list_period(record) if fide else None,
        live=live_rating(read.entries, record.rating) if fide else None,
        rd=record.rd,
        uncertainty=uncertainty(record.rd),
    )


def profile_of(system: str, player_id: str, reads: Sequence[PoolRead]) -> PlayerProfile | None:
    """The profile from the pools the player has a record in (any order: the system's
    order of pools is restored); None when there is none. Each label is the first pool's
    record's that has it."""
    order = pool_order(system, (r.pool for r in reads))  # a platform's own pools too (D70)
    found = sorted(reads, key=lambda r: order.index(r.pool))
    if not found:
        return None
    records = [r.record for r in found]
    return PlayerProfile(
        system=cast(System, system),  # a system of POOLS
        id=player_id,
        name=next((r.name for r in records if r.name), None),
        titles=next((list(r.titles) for r in records if r.titles), []),
        federation=next((r.federation for r in records if r.federation), None),
        sex=next((r.sex for r in records if r.sex), None),
        birth_year=next((r.birth_year for r in records if r.birth_year), None),
        pools=[pool_of(r) for r in found],
    )
