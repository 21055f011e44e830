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
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from operator import attrgetter

import msgspec

from schemas.events import EventFinished, PeriodClosed
from schemas.fide import FideDetails, FideGame, FirstEvent, InitialGame, PeriodSums
from schemas.ratings import PlayerResult
from schemas.records import PlayerRecord, PoolState
from tests.previous.arithmetic import hundredths_number, ratio_text
from tests.previous.contract import (
    EngineRejection,
    EventInput,
    Outcome,
    RecordProblem,
    record_rejection,
)
from tests.previous.fide_change import capped_k, game_figures, period_change
from tests.previous.fide_initial import MIN_PUBLISHED, games_in_window, initial_rating
from tests.previous.fide_lists import close_period
from tests.previous.fide_performance import norms_met, performance
from tests.previous.fide_periods import add_months, month_of, rating_in_force
from tests.previous.fide_records import (
    check_open,
    fide_state,
    k_for_period,
    never_rated,
    record_problems,
    status_for,
)


class _Game(msgspec.Struct, frozen=True, gc=False):
    """One counted game of a player, as it entered the sums: for a rated player the very
    D, PD and W - We (`game_figures`) summed into the tally; none of them for a game pooled
    for an initial rating (8.2). Not tracked by the garbage collector: one per game and side."""

    round: int
    opponent: str
    opponent_rating: int
    score_halves: int
    difference: int | None = None
    pd: int | None = None
    term: int | None = None


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


@dataclass(slots=True)
class _Tally:
    """One player's games in one event, as they are counted; `games` lists them one by
    one, with the very figures summed into `sum_hundredths` and `pd_hundredths`."""

    sum_hundredths: int = 0
    pd_hundredths: int = 0
    rated_games: int = 0
    rated_halves: int = 0
    pooled: list[InitialGame] = field(default_factory=list)
    counted: list[InitialGame] = field(default_factory=list)  # a rated player's counted games
    performance_opponents: list[int] = field(default_factory=list)
    performance_halves: int = 0
    norm_opponents: list[int | None] = field(default_factory=list)
    norm_halves: int = 0
    games: list[_Game] = field(default_factory=list)


class FideEngine:
    """FIDE standard, rapid and blitz lists under the 2024 regulations (F1-F9)."""

    system = "fide"
    ruleset = "fide-2024"
    pools = ("standard", "rapid", "blitz")
    seed_pools: Mapping[str, str] = {}
    has_periods = True  # monthly lists ("Rating periods and lists")

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
        # The rating a player's own games are rated from: the list at the start; a player
        # rated since then (an initial rating published before this event is rated) from
        # the current list, while opponents still count them as unrated (F2). A player
        # no longer on the list has no rating to change.
        own = {
            pid: (
                None
                if r.rating is None
                else at_start[pid]
                if at_start[pid] is not None
                else r.rating
            )
            for pid, r in records.items()
        }

        tallies = {pid: _Tally() for pid in records}
        start_date = event.start_date
        for game in event.games:
            if game.forfeit:
                continue  # forfeits are never rated
            a_halves = int(game.score * 2)
            for me, other, halves in ((game.a, game.b, a_halves), (game.b, game.a, 2 - a_halves)):
                tally = tallies[me]
                opponent = at_start[other]
                tally.norm_opponents.append(opponent)
                tally.norm_halves += halves
                if opponent is None:
                    continue  # F2: never rated against an unrated opponent
                tally.performance_opponents.append(opponent)
                tally.performance_halves += halves
                mine = own[me]
                game_played = InitialGame(
                    period=period,
                    event_id=event.event_id,
                    start_date=event.start_date,
                    opponent_rating=opponent,
                    score_halves=halves,
                )
                if mine is not None:
                    difference, pd, term = game_figures(
                        mine, opponent, halves, start_date, pool_name
                    )
                    tally.sum_hundredths += term  # FIDE 8.3.4: the sum of W - We
                    tally.pd_hundredths += pd
                    tally.rated_games += 1
                    tally.rated_halves += halves
                    tally.counted.append(game_played)
                    tally.games.append(
                        _Game(game.round, other, opponent, halves, difference, pd, term)
                    )
                else:
                    tally.pooled.append(game_played)
                    tally.games.append(_Game(game.round, other, opponent, halves))

        results = []
        new_records = []
        for ref in event.players:
            record, tally = records[ref.id], tallies[ref.id]
            record = self._record_event(record, tally, period, event)
            results.append(self._event_result(record, tally, period, own[ref.id]))
            new_records.append(record)
        return Outcome(results=results, records=new_records, pool=data.pool)

    @staticmethod
    def _record_event(
        record: PlayerRecord, tally: _Tally, period: str, event: EventFinished
    ) -> PlayerRecord:
        state = fide_state(record)
        changes: dict = {}
        if tally.rated_games:
            sums = {s.period: s for s in state.periods}
            old = sums.get(period) or PeriodSums(period=period, sum_hundredths=0, games=0)
            sums[period] = PeriodSums(
                period=period,
                sum_hundredths=old.sum_hundredths + tally.sum_hundredths,
                games=old.games + tally.rated_games,
                points_halves=old.points_halves + tally.rated_halves,
                games_played=[*old.games_played, *tally.counted],
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
        state = fide_state(record)
        open_games = sum(s.games for s in state.periods)
        sums = next((s for s in state.periods if s.period == period), None)
        rp = performance(tally.performance_opponents, tally.performance_halves)
        norms = norms_met(tally.norm_opponents, tally.norm_halves)
        common = dict(
            id=record.id,
            old_rating=record.rating,
            new_rating=record.rating,
            change=None,
            old_status=record.status,
            status=record.status,
            games=record.games + open_games,
            performance=float(rp) if rp is not None else None,
        )
        if own is not None:
            k = capped_k(k_for_period(record, period), sums.games if sums else 0)
            period_sum = sums.sum_hundredths if sums else 0
            projected = (
                record.rating + period_change(k, period_sum) if record.rating is not None else None
            )
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
            details = FideDetails(
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
                games=_listed_games(tally.games, k),
            )
            return PlayerResult(
                event_games=tally.rated_games,
                score=tally.rated_halves / 2,
                expected=tally.pd_hundredths / 100 if tally.rated_games else None,
                details=details,
                **common,
            )
        pooled = [g for g in games_in_window(state.initial_games, period)]
        initial = initial_rating(pooled, state.first_event) if tally.pooled or pooled else None
        details = FideDetails(
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
            games=_listed_games(tally.games, None),
        )
        return PlayerResult(
            event_games=len(tally.pooled),
            score=sum(g.score_halves for g in tally.pooled) / 2,
            details=details,
            **common,
        )

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


def _listed_games(games: list[_Game], k: int | None) -> list[FideGame]:
    """The counted games in round order (FideGame): a rated player's with D, PD, W - We
    and K x (W - We) from the figures the engine summed; a player without a rating
    (8.2) with the opponent's rating and the score only."""
    listed = []
    hundredths = _HUNDREDTHS
    k_times = _K_TIMES.get(k) if k is not None else None
    for g in sorted(games, key=_round_of):
        if g.term is None or g.pd is None or k is None:
            listed.append(
                FideGame(
                    round=g.round,
                    opponent=g.opponent,
                    opponent_rating=g.opponent_rating,
                    score=g.score_halves / 2,
                )
            )
            continue
        listed.append(
            FideGame(
                round=g.round,
                opponent=g.opponent,
                opponent_rating=g.opponent_rating,
                difference=g.difference,  # FIDE 8.3.1
                expected=hundredths[g.pd],  # table 8.1.2
                score=g.score_halves / 2,
                change=hundredths[g.term],  # FIDE 8.3.2: W - We
                k=k,
                # K x (W - We), unrounded
                rating_change=k_times[g.term]
                if k_times is not None
                else hundredths_number(k * g.term),
            )
        )
    return listed
