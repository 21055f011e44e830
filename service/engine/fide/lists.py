"""Closing a FIDE rating period: the new list (8.2, 8.3, 7.2.1, F4-F9), and its undo (F11).

Per active rated player: the list rating in force in the period + K x sum, rounded
once (F4), K from the list opening the period (F5-F7) with the 700/n cap; under 1400 the
player is unrated on the new list (7.2.1). Per unrated player active in the period: the
initial rating from the pooled games (8.2, F8), published from 1400. Results by id.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Set

import msgspec

from schemas.events import PeriodClosed, PeriodReopened
from schemas.fide import FideDetails, FideState, PeriodSums, PublishedRating
from schemas.periods import add_months, month_of
from schemas.ratings import PlayerResult
from schemas.records import PlayerRecord, PoolState
from service.engine.arithmetic import hundredths_number
from service.engine.contract import EngineRejection, Outcome
from service.engine.fide.change import capped_k, game_term, period_change
from service.engine.fide.exact import ratio_text
from service.engine.fide.initial import MIN_PUBLISHED, games_in_window, initial_rating
from service.engine.fide.periods import with_new_list
from service.engine.fide.records import RATED, UNRATED, check_open, k_for_period


def open_periods(records: Mapping[str, PlayerRecord], pool: PoolState) -> set[str]:
    """The periods after the pool's last close in which some player has counted games
    (a rated player's period sums, an unrated player's pooled games)."""
    closed = pool.closed_through
    periods: set[str] = set()
    for record in records.values():
        state = record.fide
        if state is None:
            continue
        periods.update(s.period for s in state.periods)
        periods.update(g.period for g in state.initial_games)
    return {p for p in periods if closed is None or p > closed}


def check_due(period: str, periods: Set[str], pool: PoolState, last_end: dt.date | None) -> None:
    """Whether the pool may close `period` now ("Rating periods and lists": a period's
    events change the list published at its end, one list after the other). Refused:

    - a period already closed (`period_closed`);
    - a period in the future (F10, docs/rules/fide.md#f10): later
      than every open period with games, than the month after the end of the pool's last
      rated event in date order (`last_end`, given by the caller: the engine reads no
      clock and no store), and than the month after the last close. A close of the month after the last event
      is allowed (a month without events still gets its list, and the period of an event
      ending on the last day is closed in the next month); `2052-11` for `2025-11` is not;
    - with no rated event and no open games at all in the pool: nothing to close;
    - while an earlier period with games is still open: the lists are published in order.

    All but the first are `period_not_due`. `periods`: the open periods with counted games
    (`open_periods`; the service reads the earliest and the latest from its close index, D60:
    nothing else here depends on the others).
    """
    check_open(period, pool)
    closed = pool.closed_through
    periods = {p for p in periods if closed is None or p > closed}
    bounds = {f"the period {p} has rated games": p for p in periods}
    if last_end is not None:
        bounds[f"its last rated event ended {last_end.isoformat()}"] = add_months(
            month_of(last_end), 1
        )
    if closed is not None:
        bounds[f"it is closed through {closed}"] = add_months(closed, 1)
    if not bounds:
        raise EngineRejection(
            "period_not_due",
            f"fide/{pool.pool} has no rated event and no open games: there is no period {period} to close",
            "$.period",
        )
    why, latest = max(bounds.items(), key=lambda item: item[1])
    if period > latest:
        raise EngineRejection(
            "period_not_due",
            f"period {period} of fide/{pool.pool} is in the future: {why}, so the latest period it may close is"
            f" {latest} (a typo in the period?)",
            "$.period",
        )
    earlier = sorted(p for p in periods if p < period)
    if earlier:
        raise EngineRejection(
            "period_not_due",
            f"period {earlier[0]} of fide/{pool.pool} has rated games and is not closed: close it before {period}",
            "$.period",
        )


def close_period(
    message: PeriodClosed,
    records: Mapping[str, PlayerRecord],
    pool: PoolState,
    last_end: dt.date | None = None,
) -> Outcome:
    """The list closing `message.period`, from every record of the pool, once `check_due`
    allows it (`last_end`: when the pool's last rated event in date order ended). The same as
    `list_players` over the players with games in the period, then `clear_k` over the rest:
    what the service does a page at a time (D60)."""
    period = message.period
    check_due(period, open_periods(records, pool), pool, last_end)
    listed = list_players(message, records, pool)
    changed = [*listed.records, *clear_k(message, records)]
    changed.sort(key=lambda r: r.id)
    return Outcome(
        results=listed.results,
        records=changed,
        pool=msgspec.structs.replace(pool, closed_through=period),
    )


def counts_in(record: PlayerRecord, period: str) -> bool:
    """Whether the record has games counted in `period` (period sums, or pooled games of an
    unrated player): the players the period's list holds."""
    state = record.fide
    if state is None:
        return False
    return any(s.period == period for s in state.periods) or any(
        g.period == period for g in state.initial_games
    )


def list_players(
    message: PeriodClosed, records: Mapping[str, PlayerRecord], pool: PoolState
) -> Outcome:
    """The list lines of the records with games counted in the period (8.2, 8.3, 7.2.1), by
    id, and their new records; the others are left alone (pure per record: any page of the
    pool gives the lines of its players). `pool` is returned as it is."""
    period = message.period
    pool_name = message.pool or pool.pool
    results = []
    changed = []
    for record in sorted(records.values(), key=lambda r: r.id):
        state = record.fide
        if state is None:
            continue
        sums = next((s for s in state.periods if s.period == period), None)
        if sums is not None:
            record, result = _publish_rated(record, state, sums, period)
        elif any(g.period == period for g in state.initial_games):
            record, result = _publish_initial(record, state, period, pool_name)
        else:
            continue
        results.append(result)
        changed.append(record)
    return Outcome(results=results, records=changed, pool=pool)


def clear_k(message: PeriodClosed, records: Mapping[str, PlayerRecord]) -> list[PlayerRecord]:
    """F5: an imported K override is the K of the list it came with; a new list derives K
    again, for the players idle in the period too (their rating stays as it was). The records
    with a K and no games in the period, K removed, by id (a listed player's K is the
    list's: `list_players`)."""
    return [
        msgspec.structs.replace(record, k=None)
        for record in sorted(records.values(), key=lambda r: r.id)
        if record.k is not None and not counts_in(record, message.period)
    ]


def reopen_period(
    message: PeriodReopened, before: Mapping[str, PlayerRecord], pool: PoolState
) -> Outcome:
    """F11 (docs/rules/fide.md#f11): the pool's latest close undone. `before` holds the
    records that close changed, as they were before it: they are the records again (their
    rating, K, games, the period's sums and pooled games), and the pool is closed through
    what it was before the close. Only the latest close can be undone, and only one that
    kept what a reopen needs (`PoolState.reopen_to`)."""
    period, closed = message.period, pool.closed_through
    where = f"fide/{pool.pool}"
    if closed is None:
        raise EngineRejection("invalid", f"{where} has no closed period to reopen", "$.period")
    if period != closed:
        raise EngineRejection(
            "invalid",
            f"period {period} of {where} is not its latest closed period ({closed}): only the"
            f" latest close can be reopened",
            "$.period",
        )
    if not pool.reopen_to:
        raise EngineRejection(
            "invalid",
            f"period {period} of {where} was closed before closes kept what a reopen needs:"
            " re-rate offline and import",
            "$.period",
        )
    records = sorted(before.values(), key=lambda r: r.id)
    state = msgspec.structs.replace(
        pool, closed_through=pool.reopen_to[-1], reopen_to=pool.reopen_to[:-1]
    )
    return Outcome(results=[], records=records, pool=state)


def _next_k(record: PlayerRecord, period: str) -> int | None:
    """F5: the K of the next period, from the list just published."""
    if record.rating is None:
        return None
    return k_for_period(record, add_months(period, 1))


def _publish_rated(
    record: PlayerRecord, state: FideState, sums: PeriodSums, period: str
) -> tuple[PlayerRecord, PlayerResult]:
    """8.3: old list rating + K x sum, rounded once (F4); under 1400 unrated (7.2.1)."""
    old = record.rating
    remaining = [s for s in state.periods if s.period != period]
    expected = hundredths_number(sums.points_halves * 50 - sums.sum_hundredths)
    if old is None:
        return _left_the_list(record, state, remaining, period)
    k_used = k_for_period(record, period)
    k = capped_k(k_used, sums.games)
    new: int | None = old + period_change(k, sums.sum_hundredths)
    if new is not None and new < MIN_PUBLISHED:
        new = None  # 7.2.1: a rating under 1400 is not published; the player is unrated
    updated = msgspec.structs.replace(
        record,
        rating=new,
        status=RATED if new is not None else UNRATED,
        games=record.games + sums.games,
        ever_2300=record.ever_2300 or (new is not None and new >= 2300),
        ever_2400=record.ever_2400 or (new is not None and new >= 2400),
        k=None,
    )
    next_k = _next_k(updated, period)
    lists = with_new_list(
        state.published,
        period,
        old,
        k_used,
        PublishedRating(period=add_months(period, 1), rating=new, k=next_k),
    )
    if new is not None:
        new_state = msgspec.structs.replace(state, periods=remaining, published=lists)
    else:
        # 7.2.1: off the list. Games of later open periods (events that started while the
        # player was rated and ended after this period) join the initial-rating pool (8.2, A1),
        # as they do when such an event arrives after this close: same list either way.
        later = [game for sums_later in remaining for game in sums_later.games_played]
        new_state = msgspec.structs.replace(
            state, periods=[], published=lists, initial_games=[*state.initial_games, *later]
        )
    updated = msgspec.structs.replace(updated, fide=new_state)
    details = FideDetails(
        period=period,
        k=next_k,
        event_change=None,
        projected_rating=None,
        games_counted=sums.games,
        rating_used=old,
        period_games=sums.games,
        period_sum=hundredths_number(sums.sum_hundredths),
        period_sum_exact=ratio_text(sums.sum_hundredths, 100),
        k_applied=k,
        period_change=hundredths_number(k * sums.sum_hundredths),
        period_change_exact=ratio_text(k * sums.sum_hundredths, 100),
    )
    result = PlayerResult(
        id=record.id,
        old_rating=old,
        new_rating=new,
        change=new - old if new is not None else None,
        old_status=record.status,
        status=updated.status,
        games=updated.games,
        event_games=sums.games,
        score=sums.points_halves / 2,
        expected=expected,
        details=details,
    )
    return updated, result


def _left_the_list(
    record: PlayerRecord, state: FideState, remaining: list[PeriodSums], period: str
) -> tuple[PlayerRecord, PlayerResult]:
    """A player who left the list after the period's games were counted (A1): no rating to
    change (8.3), the period's sums dropped, an output with no games counted."""
    record = msgspec.structs.replace(record, fide=msgspec.structs.replace(state, periods=remaining))
    details = FideDetails(
        period=period,
        k=None,
        event_change=None,
        projected_rating=None,
        games_counted=0,
        period_games=0,
    )
    result = PlayerResult(
        id=record.id,
        old_rating=None,
        new_rating=None,
        change=None,
        old_status=record.status,
        status=record.status,
        games=record.games,
        event_games=0,
        score=0.0,
        details=details,
    )
    return record, result


def _publish_initial(
    record: PlayerRecord, state: FideState, period: str, pool_name: str
) -> tuple[PlayerRecord, PlayerResult]:
    """8.2: the initial rating from the pooled games of the 26 months ending with the
    period, published when it reaches 1400 with at least 5 games."""
    pooled = games_in_window(state.initial_games, period)
    later = [g for g in state.initial_games if g.period > period]
    in_period = [g for g in pooled if g.period == period]
    initial = initial_rating(pooled, state.first_event)
    if initial.published:
        assert initial.rating is not None
        rating = initial.rating
        updated = msgspec.structs.replace(
            record, rating=rating, status=RATED, games=record.games + initial.games, k=None
        )
        next_k = _next_k(updated, period)
        lists = with_new_list(
            state.published,
            period,
            None,
            None,
            PublishedRating(period=add_months(period, 1), rating=rating, k=next_k),
        )
        # Games of later open periods, played before this list: the player is rated in
        # them with the new rating; their opponents counted them as unrated (F2).
        periods = {s.period: s for s in state.periods}
        for game in later:
            term, _ = game_term(
                rating, game.opponent_rating, game.score_halves, game.start_date, pool_name
            )
            old = periods.get(game.period) or PeriodSums(
                period=game.period, sum_hundredths=0, games=0
            )
            periods[game.period] = PeriodSums(
                period=game.period,
                sum_hundredths=old.sum_hundredths + term,
                games=old.games + 1,
                points_halves=old.points_halves + game.score_halves,
                games_played=[*old.games_played, game],
            )
        new_state = FideState(published=lists, periods=[periods[p] for p in sorted(periods)])
        updated = msgspec.structs.replace(updated, fide=new_state)
        new_rating: int | None = rating
    else:
        next_k = None
        new_rating = None
        updated = msgspec.structs.replace(
            record, fide=msgspec.structs.replace(state, initial_games=pooled + later)
        )
    details = FideDetails(
        period=period,
        k=next_k,
        event_change=None,
        projected_rating=None,
        games_counted=len(in_period),
        period_games=len(in_period),
        initial=initial,
    )
    result = PlayerResult(
        id=record.id,
        old_rating=None,
        new_rating=new_rating,
        change=None,
        old_status=record.status,
        status=updated.status,
        games=updated.games,
        event_games=len(in_period),
        score=sum(g.score_halves for g in in_period) / 2,
        details=details,
    )
    return updated, result
