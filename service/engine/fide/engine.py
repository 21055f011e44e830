"""The FIDE engine (ruleset `fide-2024`): events are rated into monthly periods, and a
`period.closed` publishes the new list (FIDE Rating Regulations 2024, F1-F9).

rate_event: each game uses the list in force when the event started (F1); a rated
player's (score - PD) goes into the open period's exact sum (8.3.4), an unrated
player's games against rated opponents into the initial-rating pool (8.2). Outputs
keep the published rating and carry the projection (F9).

close_period: the new list (service.engine.fide.lists).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Set
from functools import lru_cache
from operator import attrgetter

import msgspec

from schemas.events import EventContent, EventFinished, PeriodClosed, PeriodReopened
from schemas.fide import (
    FideDetails,
    FideGame,
    FideState,
    FirstEvent,
    InitialGame,
    NormCheck,
    PeriodSums,
)
from schemas.periods import add_months, month_index, month_of
from schemas.ratings import PlayerResult
from schemas.records import PlayerRecord, PoolState
from service.engine.arithmetic import hundredths_number
from service.engine.contract import (
    EngineRejection,
    EventInput,
    Outcome,
    RecordProblem,
    record_rejection,
)
from service.engine.fide.change import capped_k, game_figures, period_change
from service.engine.fide.exact import ratio_text
from service.engine.fide.initial import MIN_PUBLISHED, games_in_window, initial_rating
from service.engine.fide.lists import (
    check_due,
    clear_k,
    close_period,
    list_players,
    reopen_period,
)
from service.engine.fide.performance import norms_met, performance
from service.engine.fide.periods import rating_in_force
from service.engine.fide.records import (
    check_open,
    fide_state,
    k_for_period,
    never_rated,
    record_problems,
    status_for,
)

# The output's number (schemas/ratings.py "Numbers": 2 decimals, exact for whole hundredths)
# of every value in hundredths that PD and W - We take (-1.00 .. 1.00), and of K x (W - We)
# for the usual K (8.3.3: 10, 20, 40): built once, looked up per game.
_HUNDREDTHS = {n: hundredths_number(n) for n in range(-100, 101)}
_K_TIMES = {k: {n: hundredths_number(k * n) for n in range(-100, 101)} for k in (10, 20, 40)}
_round_of = attrgetter("round")


@lru_cache(maxsize=8192)
def _hundredths_text(n: int) -> str:
    """ratio_text(n, 100), cached: the sums and K x sums of an event's players take few
    values (a gcd per player saved on the hot path)."""
    return ratio_text(n, 100)


# FideDetails has 20 keyword-only fields: msgspec's constructor matches each keyword against
# the fields one by one, `structs.replace` on a blank one does not (three times cheaper for
# an event's 16 figures, once per player). Every call gives `norms` and `games`, so the
# blank's lists are never shared.
_BLANK_DETAILS = FideDetails(
    period="0000-01", k=None, event_change=None, projected_rating=None, games_counted=0
)


class _Tally(msgspec.Struct, gc=False):
    """One player's games in one event, as they are counted: `games` lists them one by one
    (FideGame, in the event's order), with the very figures summed into `sum_hundredths`
    and `pd_hundredths`; `counted` (a rated player's) or `pooled` (8.2) the same games as
    the record keeps them."""

    k: int | None  # a rated player's K for the period, capped with this event's games (8.3.3)
    sum_hundredths: int
    pd_hundredths: int
    rated_games: int
    rated_halves: int
    counted: list[InitialGame]
    pooled: list[InitialGame]
    performance_opponents: list[int]  # the ratings of the rated opponents (F2)
    performance_halves: int
    unrated_games: (
        int  # against an opponent unrated at the start: not rated (F2), a norm counts it (1.4.6)
    )
    unrated_halves: int
    games: list[FideGame]
    in_round_order: bool  # whether `games` are listed in round order already


class FideEngine:
    """FIDE standard, rapid and blitz lists under the 2024 regulations (F1-F9)."""

    system = "fide"
    ruleset = "fide-2024"
    pools = ("standard", "rapid", "blitz")
    seed_pools: Mapping[str, str] = {}

    # ----------------------------------------------------------------- events
    def rate_event(self, data: EventInput) -> Outcome:
        event = data.event
        period = event.period or month_of(event.end_date)
        pool_name = event.pool or "standard"
        check_open(period, data.pool)
        start_month = month_of(event.start_date)
        if period < start_month:
            raise EngineRejection(
                "unratable",
                f"period {period} is before the event's start month {start_month}",
                "$.period",
            )
        closed = data.pool.closed_through
        if closed is not None and start_month > add_months(closed, 1):
            raise EngineRejection(
                "unratable",
                f"start_date {event.start_date}: the list in force then (F1) is published when period "
                f"{add_months(start_month, -1)} closes, and fide/{data.pool.pool} is closed through {closed}",
                "$.start_date",
            )

        records = {}
        for i, ref in enumerate(event.players):
            record = data.records[ref.id]
            problems = record_problems(record)
            if problems:
                raise record_rejection(record, problems, f"$.players[{i}]")
            if ref.birth_year is not None and ref.birth_year != record.birth_year:
                record = msgspec.structs.replace(record, birth_year=ref.birth_year)
            records[ref.id] = record
        # F1: the ratings of the list in force when the event started.
        at_start = {pid: rating_in_force(r, start_month) for pid, r in records.items()}
        unrated = {pid for pid, rating in at_start.items() if rating is None}

        # Each player's games from their side, in the event's order: (round, opponent, score
        # in half points). Forfeits are never rated.
        played: dict[str, list[tuple[int, str, int]]] = {pid: [] for pid in records}
        for game in event.games:
            if game.forfeit:
                continue
            a_halves = int(game.score * 2)
            played[game.a].append((game.round, game.b, a_halves))
            played[game.b].append((game.round, game.a, 2 - a_halves))

        results = []
        new_records = []
        for ref in event.players:
            record = records[ref.id]
            # The rating a player's own games are rated from: the list at the start; a player
            # rated since then (an initial rating published before this event is rated) from
            # the current list, while opponents still count them as unrated (F2). A player
            # no longer on the list has no rating to change.
            mine = at_start[ref.id]
            own = None if record.rating is None else mine if mine is not None else record.rating
            tally = _tally(record, own, played[ref.id], at_start, unrated, period, event, pool_name)
            record = self._record_event(record, tally, period, event)
            results.append(self._event_result(record, tally, period, own))
            new_records.append(record)
        return Outcome(results=results, records=new_records, pool=data.pool)

    @staticmethod
    def _record_event(
        record: PlayerRecord, tally: _Tally, period: str, event: EventFinished
    ) -> PlayerRecord:
        state = fide_state(record)
        changes: dict = {}
        if tally.rated_games:
            if not state.periods:  # the player's first counted games of any open period
                changes["periods"] = [
                    PeriodSums(
                        period,
                        tally.sum_hundredths,
                        tally.rated_games,
                        tally.rated_halves,
                        tally.counted,
                    )
                ]
            else:
                sums = {s.period: s for s in state.periods}
                old = sums.get(period)
                if old is None:
                    sums[period] = PeriodSums(
                        period,
                        tally.sum_hundredths,
                        tally.rated_games,
                        tally.rated_halves,
                        tally.counted,
                    )
                else:
                    sums[period] = PeriodSums(
                        period,
                        old.sum_hundredths + tally.sum_hundredths,
                        old.games + tally.rated_games,
                        old.points_halves + tally.rated_halves,
                        [*old.games_played, *tally.counted],
                    )
                changes["periods"] = [sums[p] for p in sorted(sums)]
        if tally.pooled:
            changes["initial_games"] = [*state.initial_games, *tally.pooled]
            if never_rated(record):
                candidate = FirstEvent(start_date=event.start_date, event_id=event.event_id)
                first = state.first_event
                if first is None or (candidate.start_date, candidate.event_id) < (
                    first.start_date,
                    first.event_id,
                ):
                    changes["first_event"] = candidate
        if not changes:
            return record
        return msgspec.structs.replace(record, fide=msgspec.structs.replace(state, **changes))

    @staticmethod
    def _event_result(
        record: PlayerRecord, tally: _Tally, period: str, own: int | None
    ) -> PlayerResult:
        """The player's output for the event (F9: the published rating stays, the projection
        comes with it): a rated player's by `_rated_result` (8.3.4), a pooled one's by
        `_initial_result` (8.2); the performance and the norms (1.4) of every game."""
        state = fide_state(record)
        open_games = 0
        sums = None
        for s in state.periods:
            open_games += s.games
            if sums is None and s.period == period:
                sums = s
        rp = performance(tally.performance_opponents, tally.performance_halves)
        # Title norms count every game, an unrated opponent's too (1.4.6; None, in any order).
        opponents: list[int | None] = tally.performance_opponents  # type: ignore[assignment]  # list[int] read as list[int | None]: not written to
        if tally.unrated_games:
            opponents = [*opponents, *[None] * tally.unrated_games]
        norms = norms_met(opponents, tally.performance_halves + tally.unrated_halves)
        games = tally.games
        if not tally.in_round_order:
            games.sort(key=_round_of)  # round order, as FIDE's calculator lists them (stable)
        if own is not None:
            return _rated_result(record, tally, period, own, sums, open_games, rp, norms, games)
        return _initial_result(record, state, tally, period, open_games, rp, norms, games)

    def record_problems(self, record: PlayerRecord) -> list[RecordProblem]:
        """A rating goes with 'established', no rating with 'unrated' (service.engine.fide.records)."""
        return record_problems(record)

    def status_for(self, rating: int | None, games: int) -> str:
        return status_for(rating, games)

    def close_period(
        self,
        message: PeriodClosed,
        records: Mapping[str, PlayerRecord],
        pool: PoolState,
        last_end: dt.date | None = None,
    ) -> Outcome:
        """Publish the period's new list (service.engine.fide.lists), when it is due."""
        return close_period(message, records, pool, last_end)

    def check_close(
        self,
        message: PeriodClosed,
        periods: Set[str],
        pool: PoolState,
        last_end: dt.date | None = None,
    ) -> None:
        """Whether the period may close now (service.engine.fide.lists.check_due)."""
        check_due(message.period, periods, pool, last_end)

    def list_players(
        self, message: PeriodClosed, records: Mapping[str, PlayerRecord], pool: PoolState
    ) -> Outcome:
        """The list lines of a page of the pool (service.engine.fide.lists.list_players)."""
        return list_players(message, records, pool)

    def clear_k(
        self, message: PeriodClosed, records: Mapping[str, PlayerRecord]
    ) -> list[PlayerRecord]:
        """F5: the imported K overrides a new list ends (service.engine.fide.lists.clear_k)."""
        return clear_k(message, records)

    def reopen_period(
        self, message: PeriodReopened, before: Mapping[str, PlayerRecord], pool: PoolState
    ) -> Outcome:
        """Undo the latest close (service.engine.fide.lists, F11)."""
        return reopen_period(message, before, pool)

    # ----------------------------------------------------------------- periods
    def order_prefix(self, event: EventContent) -> int:
        """An event counts in its rating period ("Rating periods and lists"): its order key
        starts with the period's month number."""
        return month_index(event.period) if event.period else 0

    def list_period(self, period: str) -> str:
        """The list closing a period is in force from the next month on (F1)."""
        return add_months(period, 1)

    def catch_up(self, state: PlayerRecord, pool: PoolState) -> PlayerRecord:
        """Close on a stored state each closed period it still holds games of, in order, as
        each was closed on the records (F1: the list in force then; 8.3.4: the period's sums
        become the rating)."""
        closed = pool.closed_through
        if state.fide is None or closed is None:
            return state
        periods = {s.period for s in state.fide.periods} | {
            g.period for g in state.fide.initial_games
        }
        for period in sorted(p for p in periods if p <= closed):
            outcome = close_period(
                PeriodClosed(system="fide", pool=state.pool, period=period),
                {state.id: state},
                PoolState(system="fide", pool=state.pool, closed_through=add_months(period, -1)),
            )
            state = next((r for r in outcome.records if r.id == state.id), state)
        return state


def _rated_result(
    record: PlayerRecord,
    tally: _Tally,
    period: str,
    own: int,
    sums: PeriodSums | None,
    open_games: int,
    rp: int | None,
    norms: list[NormCheck],
    games: list[FideGame],
) -> PlayerResult:
    """A rated player's output: the event's and the open period's sums of W - We (8.3.4),
    K x the event's sum, and the projection of the period's change (F9), shown from 1400
    (7.2.1); the rating itself changes when the period closes (F4)."""
    k = tally.k
    assert k is not None
    period_sum = sums.sum_hundredths if sums else 0
    projected = record.rating + period_change(k, period_sum) if record.rating is not None else None
    # The output's numbers of whole hundredths: `hundredths_number` (n / 100), inlined
    # on the engine's hot path, once per player.
    event_sum, event_text = (
        tally.sum_hundredths / 100,
        _hundredths_text(tally.sum_hundredths),
    )
    if period_sum == tally.sum_hundredths:  # the period's first event: the same figures
        period_number, period_text = event_sum, event_text
    else:
        period_number, period_text = (
            hundredths_number(period_sum),
            _hundredths_text(period_sum),
        )
    details = msgspec.structs.replace(  # FideDetails(...): see _BLANK_DETAILS
        _BLANK_DETAILS,
        period=period,
        k=k,
        event_change=k * tally.sum_hundredths / 100,
        event_change_exact=_hundredths_text(k * tally.sum_hundredths),
        projected_rating=projected
        if projected is not None and projected >= MIN_PUBLISHED
        else None,
        projection=True,
        games_counted=tally.rated_games,
        rating_used=own,
        event_sum=event_sum,
        event_sum_exact=event_text,
        period_games=sums.games if sums else 0,
        period_sum=period_number,
        period_sum_exact=period_text,
        performance=rp,
        norms=norms,
        games=games,
    )
    # id, old_rating, new_rating, change, old_status, status, games, event_games, score,
    # expected, performance, details
    return PlayerResult(
        record.id,
        record.rating,
        record.rating,
        None,
        record.status,
        record.status,
        record.games + open_games,
        tally.rated_games,
        tally.rated_halves / 2,
        tally.pd_hundredths / 100 if tally.rated_games else None,
        float(rp) if rp is not None else None,
        details,
    )


def _initial_result(
    record: PlayerRecord,
    state: FideState,
    tally: _Tally,
    period: str,
    open_games: int,
    rp: int | None,
    norms: list[NormCheck],
    games: list[FideGame],
) -> PlayerResult:
    """A pooled player's output: the initial rating the pool of the 26 months ending with
    the period would give (7.1.4, 8.2), shown as the projection when it is published (F9)."""
    pooled = games_in_window(state.initial_games, period)
    initial = initial_rating(pooled, state.first_event) if tally.pooled or pooled else None
    details = msgspec.structs.replace(  # FideDetails(...): see _BLANK_DETAILS
        _BLANK_DETAILS,
        period=period,
        k=None,
        event_change=None,
        projected_rating=initial.rating if initial is not None and initial.published else None,
        projection=True,
        games_counted=len(tally.pooled),
        period_games=sum(1 for g in state.initial_games if g.period == period),
        initial=initial,
        performance=rp,
        norms=norms,
        games=games,
    )
    return PlayerResult(
        record.id,
        record.rating,
        record.rating,
        None,
        record.status,
        record.status,
        record.games + open_games,
        len(tally.pooled),
        sum(g.score_halves for g in tally.pooled) / 2,
        None,
        float(rp) if rp is not None else None,
        details,
    )


def _tally(
    record: PlayerRecord,
    own: int | None,
    played: list[tuple[int, str, int]],
    at_start: Mapping[str, int | None],
    unrated: set[str],
    period: str,
    event: EventFinished,
    pool: str,
) -> _Tally:
    """One player's games as they count (FIDE 8.2, 8.3): against an opponent rated on the
    list in force at the start (F2), each into the sums of a rated player (`own`: the
    rating they are rated from) with D, PD, W - We and K x (W - We) as FIDE's calculator
    lists them (FideGame); else pooled (`_pooled_tally`). `unrated`: unrated at the start."""
    if own is None:  # 8.2: pooled for an initial rating (also off the list since the start, A1)
        return _pooled_tally(played, at_start, period, event)
    event_id, start_date = event.event_id, event.start_date
    unrated_games = unrated_halves = halves_sum = 0
    opponents: list[int] = []
    kept: list[InitialGame] = []
    games: list[FideGame] = []
    sum_hundredths = pd_hundredths = 0
    last_round = 0
    in_round_order = True
    # K for the period (F5-F7), capped by K x n <= 700 over the period's games with these (8.3.3).
    counted = len(played)
    if unrated:
        counted -= sum(1 for _, other, _ in played if other in unrated)
    before = (
        next((s.games for s in record.fide.periods if s.period == period), 0)
        if record.fide is not None
        else 0
    )
    k = capped_k(k_for_period(record, period), before + counted)
    hundredths = _HUNDREDTHS
    k_times = _K_TIMES.get(k)
    for rnd, other, halves in played:
        opponent = at_start[other]
        if opponent is None:  # F2: never rated against an unrated opponent
            unrated_games += 1
            unrated_halves += halves
            continue
        opponents.append(opponent)
        halves_sum += halves
        difference, pd, term = game_figures(own, opponent, halves, start_date, pool)
        sum_hundredths += term  # FIDE 8.3.4: the sum of W - We
        pd_hundredths += pd
        kept.append(InitialGame(period, event_id, start_date, opponent, halves))
        games.append(
            FideGame(
                round=rnd,
                opponent=other,
                opponent_rating=opponent,
                difference=difference,  # FIDE 8.3.1
                expected=hundredths[pd],  # table 8.1.2
                score=halves / 2,
                change=hundredths[term],  # FIDE 8.3.2: W - We
                k=k,
                # K x (W - We), unrounded
                rating_change=k_times[term] if k_times is not None else hundredths_number(k * term),
            )
        )
        if rnd < last_round:
            in_round_order = False
        last_round = rnd
    return _Tally(
        k,
        sum_hundredths,
        pd_hundredths,
        counted,
        halves_sum,
        kept,
        [],
        opponents,
        halves_sum,
        unrated_games,
        unrated_halves,
        games,
        in_round_order,
    )


def _pooled_tally(
    played: list[tuple[int, str, int]],
    at_start: Mapping[str, int | None],
    period: str,
    event: EventFinished,
) -> _Tally:
    """A player without a rating to change (unrated at the start, or off the list since,
    A1): the games against rated opponents (F2) pooled for an initial rating (8.2, 7.1.4),
    with the opponent's rating and the score only; those against unrated opponents only
    counted for the norms (1.4.6)."""
    event_id, start_date = event.event_id, event.start_date
    unrated_games = unrated_halves = 0
    opponents: list[int] = []
    halves_sum = 0
    kept: list[InitialGame] = []
    games: list[FideGame] = []
    last_round = 0
    in_round_order = True
    for rnd, other, halves in played:
        opponent = at_start[other]
        if opponent is None:  # F2: never rated against an unrated opponent
            unrated_games += 1
            unrated_halves += halves
            continue
        opponents.append(opponent)
        halves_sum += halves
        kept.append(InitialGame(period, event_id, start_date, opponent, halves))
        games.append(
            FideGame(round=rnd, opponent=other, opponent_rating=opponent, score=halves / 2)
        )
        if rnd < last_round:
            in_round_order = False
        last_round = rnd
    return _Tally(
        None,
        0,
        0,
        0,
        0,
        [],
        kept,
        opponents,
        halves_sum,
        unrated_games,
        unrated_halves,
        games,
        in_round_order,
    )
