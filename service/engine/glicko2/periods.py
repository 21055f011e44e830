"""Closing a Glicko-2 rating period (ruleset `glicko2`, G2-6, G2-7): every player of the
pool through steps 1-8, those without games through step 6 only; and its undo.

A close rates each record from what the record holds (its exact state and the period's
games with the opponents' states), so that a close of one record (`catch_up`) is the close
of the pool restricted to it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

import msgspec

from schemas.events import PeriodClosed, PeriodReopened
from schemas.periods import month_index, month_of, period_of
from schemas.ratings import PlayerResult
from schemas.records import PlayerRecord, PoolState
from service.engine.contract import EngineRejection, Outcome
from service.engine.glicko2.algorithm import (
    Opponent,
    grown,
    rate_period,
    to_mu,
    to_phi,
    to_rating,
    to_rd,
)
from service.engine.glicko2.figures import details, opponent_row, result
from service.engine.glicko2.records import (
    State,
    check_open,
    glicko2_state,
    period_end,
    state_of,
    with_state,
)
from service.engine.glicko2.settings import Glicko2Settings


def check_due(
    period: str,
    records: Mapping[str, PlayerRecord],
    pool: PoolState,
    last_end: dt.date | None,
    settings: Glicko2Settings,
) -> None:
    """G2-7: a close names the last month of a rating period; periods close one after the
    other (a period without games closes too: it grows the RDs), never one in the future
    (after every open period with games, after the period following the pool's last rated
    event and its last close). `period_closed` for a closed one, else `period_not_due`."""
    where = f"glicko2/{pool.pool}"
    n = settings.period_months
    if period_end(period, settings) != period:
        raise EngineRejection(
            "invalid",
            f"period {period} of {where} does not end a rating period: its periods are {n} months"
            f" long, ending {period_end(period, settings)}",
            "$.period",
        )
    check_open(period, pool)
    closed = pool.closed_through
    if closed is not None:
        following = period_of(month_index(closed) + n)
        if period != following:
            raise EngineRejection(
                "period_not_due",
                f"{where} is closed through {closed}: the next period to close is {following}",
                "$.period",
            )
        return
    periods = {g.period for r in records.values() if r.glicko2 for g in r.glicko2.games}
    bounds = set(periods)
    if last_end is not None:
        bounds.add(period_of(month_index(period_end(month_of(last_end), settings)) + n))
    if not bounds:
        raise EngineRejection(
            "period_not_due",
            f"{where} has no rated event and no open games: there is no period {period} to close",
            "$.period",
        )
    if period > max(bounds):
        raise EngineRejection(
            "period_not_due",
            f"period {period} of {where} is in the future: the latest it may close is {max(bounds)}",
            "$.period",
        )
    earlier = sorted(p for p in periods if p < period)
    if earlier:
        raise EngineRejection(
            "period_not_due",
            f"period {earlier[0]} of {where} has rated games and is not closed: close it before {period}",
            "$.period",
        )


def close_record(
    record: PlayerRecord, period: str, settings: Glicko2Settings
) -> tuple[PlayerRecord, PlayerResult] | None:
    """One record through the close of `period` (None: an unrated player without games
    stays unrated and is not on the list)."""
    g2 = glicko2_state(record)
    games = [g for g in g2.games if g.period == period]
    remaining = [g for g in g2.games if g.period != period]
    before = state_of(record, settings)
    if not games and not before.rated:
        return None
    mu, phi = to_mu(before.rating), to_phi(before.rd)
    if not games:  # step 6 only: the RD grows, rating and volatility stay
        after = State(before.rating, to_rd(grown(phi, before.volatility)), before.volatility, True)
        updated = with_state(record, after, record.games, games=remaining, closed_through=period)
        shown = details(period, 1, settings.tau, before, after, mu, phi, None, [])
        return updated, result(record, updated, 0, 0.0, None, shown)
    opponents = []
    rows = []
    states = []
    for game in games:
        other = State(game.opponent_rating, game.opponent_rd, game.opponent_volatility, True)
        states.append(other)
        opponents.append(Opponent(to_mu(other.rating), to_phi(other.rd), game.score))
    figures = rate_period(mu, phi, before.volatility, opponents, settings.tau)
    for game, other, opponent, terms in zip(games, states, opponents, figures.games):
        rows.append(
            opponent_row(
                game.round,
                game.event_id,
                game.opponent,
                other,
                opponent.mu,
                opponent.phi,
                terms,
                game.score,
            )
        )
    after = State(to_rating(figures.mu), to_rd(figures.phi), figures.volatility, True)
    updated = with_state(
        record, after, record.games + len(games), games=remaining, closed_through=period
    )
    shown = details(period, 1, settings.tau, before, after, mu, phi, figures, rows)
    score = sum(g.score for g in games)
    expected = sum(t.expected for t in figures.games)
    return updated, result(record, updated, len(games), score, expected, shown)


def close_period(
    message: PeriodClosed,
    records: Mapping[str, PlayerRecord],
    pool: PoolState,
    last_end: dt.date | None,
    settings: Glicko2Settings,
) -> Outcome:
    """The list closing `message.period`: every record of the pool (G2-6), by id."""
    period = message.period
    check_due(period, records, pool, last_end, settings)
    results, changed = [], []
    for pid in sorted(records):
        closed = close_record(records[pid], period, settings)
        if closed is not None:
            changed.append(closed[0])
            results.append(closed[1])
    return Outcome(
        results=results, records=changed, pool=msgspec.structs.replace(pool, closed_through=period)
    )


def reopen_period(
    message: PeriodReopened, before: Mapping[str, PlayerRecord], pool: PoolState
) -> Outcome:
    """The pool's latest close undone (as FIDE's F11): `before` are the records again."""
    period, closed = message.period, pool.closed_through
    where = f"glicko2/{pool.pool}"
    if closed is None:
        raise EngineRejection("invalid", f"{where} has no closed period to reopen", "$.period")
    if period != closed:
        raise EngineRejection(
            "invalid",
            f"period {period} of {where} is not its latest closed period ({closed}): only the"
            " latest close can be reopened",
            "$.period",
        )
    if not pool.reopen_to:
        raise EngineRejection(
            "invalid",
            f"period {period} of {where} was closed before closes could be undone",
            "$.period",
        )
    records = sorted(before.values(), key=lambda r: r.id)
    state = msgspec.structs.replace(
        pool, closed_through=pool.reopen_to[-1], reopen_to=pool.reopen_to[:-1]
    )
    return Outcome(results=[], records=records, pool=state)


def catch_up(state: PlayerRecord, pool: PoolState, settings: Glicko2Settings) -> PlayerRecord:
    """A stored state with each close of the pool it has not seen applied, in order (G2-7):
    from the close after the state's `closed_through` (a state that never saw one: from
    its oldest open period with games) through the pool's."""
    closed = pool.closed_through
    if closed is None or state.glicko2 is None:
        return state
    seen = state.glicko2.closed_through
    n = settings.period_months
    if seen is not None:
        first = month_index(seen) + n
    elif state.glicko2.games:
        first = min(month_index(g.period) for g in state.glicko2.games)
    else:
        return state
    for index in range(first, month_index(closed) + 1, n):
        closed_state = close_record(state, period_of(index), settings)
        if closed_state is not None:
            state = closed_state[0]
    return state
