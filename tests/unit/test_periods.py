"""Closing FIDE rating periods: a close must be due (service/engine/fide/lists.py
`check_due`), and only FIDE has periods (schemas.validation, the decode step).

The pool: A and B, established 2000 with 60 games (K 20); one event on 8-9 November 2025
(period 2025-11). A close is refused when the period is already closed, when an earlier
period still has games, when it lies beyond the month after the pool's last event (or the
month after its last close), and when the pool has nothing at all to close.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from schemas import PeriodClosed, PlayerRecord, PoolState, decode_input
from schemas.common import PERIOD_SYSTEMS
from schemas.systems import rates_in_periods
from schemas.validation import InvalidMessage
from service.cli.main import main
from service.engine.contract import EngineRejection
from service.engine.registry import default_registry
from service.rating import Applied, MemoryLedger, Rejected, apply_message

REGISTRY = default_registry()
LIST = [
    PlayerRecord(
        system="fide",
        pool="standard",
        id=pid,
        rating=2000,
        status="established",
        games=60,
        birth_year=1980,
    )
    for pid in ("A", "B")
]


def event(event_id: str, start: str, end: str, score: float = 1, **extra) -> dict:
    return {
        "schema": "event.finished/v1",
        "event_id": event_id,
        "system": "fide",
        "name": event_id,
        "start_date": start,
        "end_date": end,
        "rounds": 1,
        "players": [{"id": "A"}, {"id": "B"}],
        "games": [{"round": 1, "a": "A", "b": "B", "score": score}],
        **extra,
    }


def close(period: str, system: str = "fide") -> dict:
    return {"schema": "period.closed/v1", "system": system, "period": period}


def process(ledger: MemoryLedger, message: dict):
    return apply_message(ledger, decode_input(json.dumps(message)), REGISTRY, "s-1")


def refused(ledger: MemoryLedger, message: dict) -> Rejected:
    with pytest.raises(Rejected) as info:
        process(ledger, message)
    return info.value


def november() -> MemoryLedger:
    ledger = MemoryLedger(LIST)
    process(ledger, event("nov-1", "2025-11-08", "2025-11-09"))
    return ledger


def test_a_typo_in_the_period_is_refused_and_the_pool_goes_on():
    ledger = november()
    rejection = refused(ledger, close("2052-11"))
    assert (rejection.reason, rejection.path) == ("period_not_due", "$.period")
    assert rejection.message == (
        "period 2052-11 of fide/standard is in the future: its last rated event ended 2025-11-09, so the latest"
        " period it may close is 2025-12 (a typo in the period?)"
    )
    assert (
        ledger.pools == {} and "period:fide:standard:2052-11" not in ledger.markers
    )  # nothing changed
    # A later event of November is still rated, and November closes: A 2000 + 20 x (1 - .5) x 2 = 2020.
    later = process(ledger, event("nov-2", "2025-11-22", "2025-11-23"))
    assert isinstance(later, Applied) and later.outputs[0].kind == "event"
    listed = {p.id: p.new_rating for p in process(ledger, close("2025-11")).outputs[0].players}
    assert listed == {"A": 2020, "B": 1980}


def test_a_period_after_an_open_one_with_games_is_not_due():
    rejection = refused(november(), close("2025-12"))
    assert rejection.reason == "period_not_due"
    assert (
        rejection.message
        == "period 2025-11 of fide/standard has rated games and is not closed: close it before 2025-12"
    )


def test_the_month_after_the_last_event_and_after_the_last_close_may_be_closed():
    ledger = november()
    process(ledger, close("2025-11"))
    # December had no event: its list is still published (the month after the last event).
    assert process(ledger, close("2025-12")).outputs[0].players == []
    # The month after the last close: a pool without events for a while steps on month by month.
    process(ledger, close("2026-01"))
    rejection = refused(ledger, close("2026-03"))
    assert rejection.message == (
        "period 2026-03 of fide/standard is in the future: it is closed through 2026-01, so the latest period it"
        " may close is 2026-02 (a typo in the period?)"
    )
    assert ledger.pools[("fide", "standard")] == PoolState(
        system="fide",
        pool="standard",
        closed_through="2026-01",
        reopen_to=[None, "2025-11", "2025-12"],
    )


def test_a_period_with_games_may_be_closed_whatever_the_dates():
    # An event of 28-30 November counted in December (its `period`): December has games.
    ledger = MemoryLedger(LIST)
    process(ledger, event("late-nov", "2025-11-28", "2025-11-30", period="2026-01"))
    assert (
        process(ledger, close("2026-01")).outputs[0].players[0].new_rating == 2010
    )  # 2000 + 20 x .5
    assert refused(ledger, close("2026-03")).reason == "period_not_due"


def test_a_pool_without_any_event_has_nothing_to_close():
    rejection = refused(MemoryLedger(LIST), close("2025-11"))
    assert (rejection.reason, rejection.message) == (
        "period_not_due",
        "fide/standard has no rated event and no open games: there is no period 2025-11 to close",
    )


def test_a_store_without_a_timeline_closes_the_periods_its_records_have_games_in():
    # Records rated before the timeline existed (v1.0): the open games in the records decide.
    rated = november()
    ledger = MemoryLedger(rated.all_records())
    assert refused(ledger, close("2025-12")).reason == "period_not_due"
    assert isinstance(process(ledger, close("2025-11")), Applied)


def test_a_closed_period_stays_closed():
    ledger = november()
    process(ledger, close("2025-11"))
    rejection = refused(ledger, close("2025-10"))
    assert (rejection.reason, rejection.path) == ("period_closed", "$.period")


# --- only FIDE and Glicko-2 (ruleset glicko2) have periods -------------------------------
def test_the_contract_and_the_engines_agree_on_which_systems_have_periods():
    """schemas.systems is the one table (PERIOD_SYSTEMS is read off it); every engine of a
    ruleset without periods refuses a close, and FIDE's and glicko2's engines close one."""
    assert set(PERIOD_SYSTEMS) == {"fide", "glicko2"}
    for engine in REGISTRY:
        pool = engine.pools[0]
        message = PeriodClosed(system=engine.system, pool=pool, period="2025-11")  # type: ignore[arg-type]  # a system of the registry
        state = PoolState(system=engine.system, pool=pool)  # type: ignore[arg-type]  # as above
        if rates_in_periods(engine.system, engine.ruleset):
            ended = dt.date(2025, 11, 30)
            assert engine.close_period(message, {}, state, ended).pool.closed_through == "2025-11"
            assert engine.list_period("2025-11") == "2025-12"
        else:
            with pytest.raises(EngineRejection):
                engine.close_period(message, {}, state)
    assert {e.system for e in REGISTRY if e.system not in PERIOD_SYSTEMS} == {"cfc", "naspa"}
    assert {e.ruleset for e in REGISTRY if rates_in_periods(e.system, e.ruleset)} == {
        "fide-2024",
        "glicko2",
    }


@pytest.mark.parametrize("system", ["cfc", "naspa"])
def test_a_close_for_a_system_without_periods_is_invalid_at_decode(system):
    with pytest.raises(InvalidMessage) as info:
        decode_input(json.dumps(close("2025-11", system)))
    [problem] = info.value.problems
    assert (problem.path, problem.reason) == ("$.system", "invalid")
    assert problem.message.startswith(f"{system} has no rating periods")


def test_validate_fails_a_cfc_close(tmp_path, capsys):
    path = tmp_path / "close.json"
    path.write_text(json.dumps(close("2025-11", "cfc")))
    assert main(["validate", str(path)]) == 1
    assert capsys.readouterr().out == (
        f"{path}:1: $.system: cfc has no rating periods: it rates each event as it ends, so there is no period to"
        " close (the systems with rating periods: fide, glicko2) (invalid)\n"
    )
    path.write_text(json.dumps(close("2025-11")))
    assert main(["validate", str(path)]) == 0


def test_after_a_premature_close_a_locked_out_event_counts_in_the_next_period():
    # December closed on the 5th by mistake (it is allowed: the month after the last event).
    ledger = november()
    process(ledger, close("2025-11"))
    process(ledger, close("2025-12"))
    late = event("dec-open", "2025-12-20", "2025-12-21")
    assert refused(ledger, late).reason == "period_closed"
    # The way back (README "Rating periods"): the same event, counted in the next open
    # period, as FIDE counts a late report in the next list. It is rated from the list in
    # force when it started (F1: December's, A 2010 and B 1990 after November).
    rated = process(ledger, {**late, "period": "2026-01"})
    assert [(p.id, p.old_rating, p.details.period) for p in rated.outputs[0].players] == [
        ("A", 2010, "2026-01"),
        ("B", 1990, "2026-01"),
    ]
    listed = {p.id: p.new_rating for p in process(ledger, close("2026-01")).outputs[0].players}
    assert listed == {"A": 2019, "B": 1981}  # D 20 -> PD .53 (8.1.2): A 20 x .47 = 9.4 -> +9; B -9
