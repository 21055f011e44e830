"""What a Glicko-2 record says: whether the engine can read it, the player's state at the
start of a rating period (step 1), and the record after a period (G2-10, G2-11)."""

from __future__ import annotations

import msgspec

from schemas.glicko2 import Glicko2State
from schemas.periods import month_index, month_of
from schemas.records import PlayerRecord, PoolState
from service.engine.arithmetic import half_up
from service.engine.contract import EngineRejection, RecordProblem
from service.engine.glicko2.settings import Glicko2Settings

# G2-10: a rating is provisional while its RD is above 110 (lichess's threshold).
PROVISIONAL_RD = 110.0


class State(msgspec.Struct, frozen=True, gc=False):
    """A player's rating, RD and volatility on the Glicko scale, exact; `rated`: whether
    the record had a rating (else step 1's unrated values)."""

    rating: float
    rd: float
    volatility: float
    rated: bool


def record_problems(record: PlayerRecord) -> list[RecordProblem]:
    """G2-11: a rating goes with its RD (and a volatility, else the pool's initial one), no
    rating with status 'unrated' and no RD."""
    if record.rating is None:
        if record.status != "unrated":
            return [RecordProblem("rating", f"status {record.status!r} needs a rating")]
        if record.rd is not None:
            return [RecordProblem("rd", "an RD without a rating")]
        return []
    if record.status == "unrated":
        return [RecordProblem("status", f"status 'unrated' with rating {record.rating}")]
    if record.rd is None:
        return [RecordProblem("rd", f"rating {record.rating} needs its RD (rd)")]
    return []


def status_for(rating: int | None, games: int) -> str:
    """A list's player without a status: rated with a rating (the engine then says
    provisional or established by the RD, G2-10), else unrated."""
    return "established" if rating is not None else "unrated"


def status_of(rd: float) -> str:
    """G2-10: provisional while the RD is above 110, established from there."""
    return "provisional" if rd > PROVISIONAL_RD else "established"


def state_of(record: PlayerRecord, settings: Glicko2Settings) -> State:
    """Step 1: the record's exact rating, RD and volatility, or the pool's unrated values."""
    if record.rating is None or record.rd is None:
        return State(settings.rating, settings.rd, settings.volatility, False)
    exact = record.glicko2.rating if record.glicko2 and record.glicko2.rating is not None else None
    return State(
        exact if exact is not None else float(record.rating),
        float(record.rd),
        float(record.volatility) if record.volatility is not None else settings.volatility,
        True,
    )


def glicko2_state(record: PlayerRecord) -> Glicko2State:
    return record.glicko2 if record.glicko2 is not None else Glicko2State()


def with_state(record: PlayerRecord, state: State, career: int, **changes) -> PlayerRecord:
    """The record with a new exact state: `rating` is it rounded half up to a whole number
    (G2-3), the status by the RD (G2-10), `career` games; `changes` to its Glicko2State."""
    g2 = msgspec.structs.replace(glicko2_state(record), rating=state.rating, **changes)
    return msgspec.structs.replace(
        record,
        rating=half_up(state.rating),
        rd=state.rd,
        volatility=state.volatility,
        status=status_of(state.rd),
        games=career,
        glicko2=g2,
    )


def period_end(month: str, settings: Glicko2Settings) -> str:
    """G2-5: the rating period a month lies in, named by its last month (periods of
    `period_months` months end on the months whose number is a multiple of it)."""
    n = settings.period_months
    index = month_index(month)
    end = index - index % n + n - 1
    return f"{end // 12:04d}-{end % 12 + 1:02d}"


def period_number(day, settings: Glicko2Settings) -> int:
    """The rating period a date lies in, as a count of periods (for elapsed periods)."""
    return month_index(month_of(day)) // settings.period_months


def check_open(period: str, pool: PoolState) -> None:
    """An event or a close for a period the pool has closed is refused (`period_closed`)."""
    if pool.closed_through is not None and period <= pool.closed_through:
        raise EngineRejection(
            "period_closed",
            f"period {period} of glicko2/{pool.pool} is closed (closed through {pool.closed_through})",
            "$.period",
        )
