"""What a FIDE record says between events and lists: whether it can be read at all, its
accumulators, whether it was ever rated (7.1.4), its K for a period (F5-F7), and whether
a period is still open."""

from __future__ import annotations

from schemas.fide import FideState
from schemas.records import PlayerRecord, PoolState
from tests.previous.contract import EngineRejection, RecordProblem
from tests.previous.fide_change import base_k
from tests.previous.fide_periods import rating_in_force

RATED = "established"
UNRATED = "unrated"


def record_problems(record: PlayerRecord) -> list[RecordProblem]:
    """A FIDE player is on the list or not ("Rating periods and lists"; 7.2.1: off it, the
    player is unrated): a rating goes with status 'established', no rating with
    'unrated'. FIDE has no provisional rating (8.2: an initial rating is published, or
    nothing is)."""
    if record.status == "provisional":
        return [
            RecordProblem(
                "status",
                "FIDE has no provisional status: 'established' with a rating, else 'unrated'",
            )
        ]
    if record.status == RATED and record.rating is None:
        return [RecordProblem("rating", f"status {RATED!r} needs a rating")]
    if record.status == UNRATED and record.rating is not None:
        return [RecordProblem("status", f"status 'unrated' with rating {record.rating}")]
    return []


def status_for(rating: int | None, games: int) -> str:
    """A list's player without a status: on the list with a rating, else unrated."""
    return RATED if rating is not None else UNRATED


def fide_state(record: PlayerRecord) -> FideState:
    """The record's FIDE accumulators (empty for an imported record)."""
    return record.fide if record.fide is not None else FideState()


def never_rated(record: PlayerRecord) -> bool:
    """7.1.4's first event applies to a player who has never had a rating or rated game."""
    state = fide_state(record)
    return (
        record.rating is None
        and record.games == 0
        and all(p.rating is None for p in state.published)
    )


def k_for_period(record: PlayerRecord, period: str) -> int:
    """F5: K fixed for the period from the list that opens it; the record's `k` (an
    import's K on the current list) overrides the derivation (F6, F7)."""
    if record.k is not None:
        return record.k
    return base_k(
        rating_in_force(record, period),
        record.games,
        record.birth_year,
        record.ever_2300,
        record.ever_2400,
        int(period[:4]),
    )


def check_open(period: str, pool: PoolState) -> None:
    """An event or a list for a period the pool has closed is refused (`period_closed`)."""
    if pool.closed_through is not None and period <= pool.closed_through:
        raise EngineRejection(
            "period_closed",
            f"period {period} of fide/{pool.pool} is closed (closed through {pool.closed_through})",
            "$.period",
        )
