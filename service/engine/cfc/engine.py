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
from service.engine.arithmetic import ratio_number, ratio_text
from service.engine.cfc.formulas import Ratio
from service.engine.cfc.order import NO_BONUS, Rated, calculate
from service.engine.cfc.standing import (
    Prior,
    Tally,
    read_priors,
    record_problems,
    status_for,
    tally_games,
)
from service.engine.contract import (
    EngineRejection,
    EventInput,
    Outcome,
    RecordProblem,
    WithoutPeriods,
)


class CfcEngine(WithoutPeriods):
    """CFC handbook 714-717 as of 2009, for the `regular` and `active` lists (same rules)."""

    system = "cfc"
    ruleset = "cfc-2009"
    pools = ("regular", "active")

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
    state = None if established else CfcState(ratio_text(*calc.provisional_sum))  # type: ignore[misc]  # a provisional result has a provisional sum
    return msgspec.structs.replace(
        record,
        rating=calc.new_rating,
        status="established" if established else "provisional",
        games=calc.total_games,
        highest=highest,
        cfc=state,
    )


def _published(value: Ratio | None) -> tuple[float | None, str | None]:
    """An unrounded value as the output writes it (schemas/ratings.py "Numbers"): the
    number to 2 decimals and the exact text; (None, None) for none."""
    if value is None:
        return None, None
    return ratio_number(*value), ratio_text(*value)


def _result(
    old: PlayerRecord, new: PlayerRecord, prior: Prior, t: Tally, calc: Rated
) -> PlayerResult:
    performance, performance_exact = ratio_number(*calc.performance), ratio_text(*calc.performance)
    rating_before_bonus, rating_before_bonus_exact = (
        ratio_number(*calc.rating_before_bonus),
        ratio_text(*calc.rating_before_bonus),
    )
    if calc.participation is NO_BONUS:  # (most events: fewer than 4 rounds, C4)
        participation, participation_exact = 0.0, "0"
    else:
        participation, participation_exact = (
            ratio_number(*calc.participation),
            ratio_text(*calc.participation),
        )
    if calc.method == "established":  # 714b: no AR, pass 1 or 714a sum
        ar = ar_exact = pass_1 = pass_1_exact = provisional_sum = provisional_sum_exact = None
    else:
        ar, ar_exact = _published(calc.ar)
        pass_1, pass_1_exact = _published(calc.pass_1)
        provisional_sum, provisional_sum_exact = _published(calc.provisional_sum)
    # Positional, in CfcDetails' field order (the cheapest way to build a Struct of 27 fields):
    details = CfcDetails(
        calc.method,  # type: ignore[arg-type]  # method is one of CfcDetails' literals
        calc.step,  # type: ignore[arg-type]  # step is one of CfcDetails' literals
        calc.became_established,
        t.wins,
        t.losses,
        t.draws,
        performance,
        performance_exact,
        ar,
        ar_exact,
        pass_1,
        pass_1_exact,
        provisional_sum,
        provisional_sum_exact,
        calc.k,
        calc.expected,  # expected_hundredths
        rating_before_bonus,
        rating_before_bonus_exact,
        calc.rule_2199,
        participation,
        participation_exact,
        calc.result_percent,
        prior.highest,  # highest_before
        calc.result_bonus,
        calc.rating_before_floor,
        calc.floor,  # type: ignore[arg-type]  # floor is one of CfcDetails' literals
        calc.opponents,
    )
    # id, old_rating, new_rating, change, old_status, status, games, event_games, score, expected,
    # performance, details
    return PlayerResult(
        old.id,
        old.rating,
        new.rating,
        None if old.rating is None else new.rating - old.rating,  # type: ignore[operator]  # a rated player has a new rating
        old.status,
        new.status,
        new.games,
        t.n,
        t.halves / 2,
        None if calc.expected is None else ratio_number(calc.expected, 100),
        performance,
        details,
    )


def _unchanged(record: PlayerRecord) -> PlayerResult:
    """A player with no rated game (only forfeits and byes, or none): nothing changes."""
    # method, step, became_established, wins, losses, draws, performance(_exact), ar(_exact),
    # pass_1(_exact), provisional_sum(_exact), k, expected_hundredths, rating_before_bonus(_exact),
    # rule_2199, participation_bonus(_exact), result_percent, highest_before, result_bonus,
    # rating_before_floor, floor, opponents
    details = CfcDetails(
        "none",
        "none",
        False,
        0,
        0,
        0,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        False,
        0.0,
        "0",
        None,
        None,
        0,
        None,
        None,
        [],
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
