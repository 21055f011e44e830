"""The CFC engine (ruleset `cfc-2009`, handbook 714-717): records in, results out.

Pure: reads the event and the players' records, runs the calculation of 717
(`order.calculate`), and writes each player's published result and new record.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from schemas.cfc import CfcDetails, CfcState
from schemas.events import PeriodClosed
from schemas.ratings import PlayerResult
from schemas.records import PlayerRecord, PoolState, unrated_record
from tests.previous.arithmetic import decimal_number, ratio_number, to_exact
from tests.previous.cfc_order import Rated, calculate
from tests.previous.cfc_standing import (
    Prior,
    Tally,
    read_priors,
    record_problems,
    status_for,
    tally_games,
)
from tests.previous.contract import EngineRejection, EventInput, Outcome, RecordProblem


class CfcEngine:
    """CFC handbook 714-717 as of 2009, for the `regular` and `active` lists (same rules)."""

    system = "cfc"
    ruleset = "cfc-2009"
    pools = ("regular", "active")
    has_periods = False  # 714-717 rate each event as it is reported

    def __init__(self) -> None:
        self.seed_pools: dict[str, str] = {}

    def rate_event(self, data: EventInput) -> Outcome:
        """Rate one event; a player with no rated game keeps their record unchanged."""
        event = data.event
        priors = read_priors(event, data.records)
        tallies = tally_games(event)
        rated = calculate(priors, tallies, event.rounds)
        results, records = [], []
        for ref in event.players:
            record = data.records.get(ref.id) or unrated_record(
                "cfc", event.pool or "regular", ref.id
            )
            calc = rated.get(ref.id)
            if calc is None:
                results.append(_unchanged(record))
                records.append(record)
                continue
            new_record = _new_record(record, priors[ref.id], calc)
            results.append(_result(record, new_record, priors[ref.id], tallies[ref.id], calc))
            records.append(new_record)
        return Outcome(results=results, records=records, pool=data.pool)

    def record_problems(self, record: PlayerRecord) -> list[RecordProblem]:
        """What read_prior refuses (service.engine.cfc.standing)."""
        return record_problems(record)

    def status_for(self, rating: int | None, games: int) -> str:
        """Unrated, provisional under 25 games, established from 25 (715)."""
        return status_for(rating, games)

    def close_period(
        self,
        message: PeriodClosed,
        records: Mapping[str, PlayerRecord],
        pool: PoolState,
        last_end: object = None,
    ) -> Outcome:
        """CFC rates event by event: there are no rating periods to close (the decode step
        refuses such a message first: schemas.common.PERIOD_SYSTEMS)."""
        raise EngineRejection(
            "unratable", "CFC has no rating periods: rate each event as it finishes", "$.system"
        )


def _new_record(record: PlayerRecord, prior: Prior, calc: Rated) -> PlayerRecord:
    established = prior.category == "established" or calc.became_established
    highest = max(prior.highest if prior.highest is not None else calc.new_rating, calc.new_rating)
    state = None if established else CfcState(provisional_sum=to_exact(calc.provisional_sum))  # type: ignore[arg-type]
    return msgspec.structs.replace(
        record,
        rating=calc.new_rating,
        status="established" if established else "provisional",
        games=calc.total_games,
        highest=highest,
        cfc=state,
    )


def _exact(x) -> str | None:
    return None if x is None else to_exact(x)


# An unrounded value as the output's number (schemas/ratings.py "Numbers").
_number = decimal_number


def _result(
    old: PlayerRecord, new: PlayerRecord, prior: Prior, t: Tally, calc: Rated
) -> PlayerResult:
    performance = _number(calc.performance)
    details = CfcDetails(
        method=calc.method,  # type: ignore[arg-type]
        step=calc.step,  # type: ignore[arg-type]
        became_established=calc.became_established,
        wins=t.wins,
        losses=t.losses,
        draws=t.draws,
        performance=performance,
        performance_exact=to_exact(calc.performance),
        ar=_number(calc.ar),
        ar_exact=_exact(calc.ar),
        pass_1=_number(calc.pass_1),
        pass_1_exact=_exact(calc.pass_1),
        provisional_sum=_number(calc.provisional_sum),
        provisional_sum_exact=_exact(calc.provisional_sum),
        k=calc.k,
        expected_hundredths=calc.expected,
        rating_before_bonus=_number(calc.rating_before_bonus),
        rating_before_bonus_exact=to_exact(calc.rating_before_bonus),
        rule_2199=calc.rule_2199,
        participation_bonus=_number(calc.participation),
        participation_bonus_exact=to_exact(calc.participation),
        result_percent=calc.result_percent,
        highest_before=prior.highest,
        result_bonus=calc.result_bonus,
        rating_before_floor=calc.rating_before_floor,
        floor=calc.floor,  # type: ignore[arg-type]
        opponents=calc.opponents,
    )
    return PlayerResult(
        id=old.id,
        old_rating=old.rating,
        new_rating=new.rating,
        change=None if old.rating is None else new.rating - old.rating,  # type: ignore[operator]
        old_status=old.status,
        status=new.status,
        games=new.games,
        event_games=t.n,
        score=t.halves / 2,
        expected=None if calc.expected is None else ratio_number(calc.expected, 100),
        performance=performance,
        details=details,
    )


def _unchanged(record: PlayerRecord) -> PlayerResult:
    """A player with no rated game (only forfeits and byes, or none): nothing changes."""
    details = CfcDetails(
        method="none",
        step="none",
        became_established=False,
        wins=0,
        losses=0,
        draws=0,
        performance=None,
        performance_exact=None,
        ar=None,
        ar_exact=None,
        pass_1=None,
        pass_1_exact=None,
        provisional_sum=None,
        provisional_sum_exact=None,
        k=None,
        expected_hundredths=None,
        rating_before_bonus=None,
        rating_before_bonus_exact=None,
        rule_2199=False,
        participation_bonus=0.0,
        participation_bonus_exact="0",
        result_percent=None,
        highest_before=None,
        result_bonus=0,
        rating_before_floor=None,
        floor=None,
        opponents=[],
    )
    return PlayerResult(
        id=record.id,
        old_rating=record.rating,
        new_rating=record.rating,
        change=None if record.rating is None else 0,
        old_status=record.status,
        status=record.status,
        games=record.games,
        event_games=0,
        score=0.0,
        details=details,
    )


__all__ = ["CfcEngine"]
