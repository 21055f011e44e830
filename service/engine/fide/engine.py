"""The FIDE engine (ruleset `fide-2024`): events are rated into monthly periods, and a
`period.closed` publishes the new list (FIDE Rating Regulations 2024, F1-F9).

rate_event: each game uses the list in force when the event started (F1); a rated
player's (score - PD) goes into the open period's exact sum (8.3.4), an unrated
player's games against rated opponents into the initial-rating pool (8.2). Outputs
keep the published rating and carry the projection (F9).

close_period: per active rated player K x sum rounded once (F4) with K from the list
opening the period (F5-F7) and the 700/n cap; below 1400 unrated (7.2.1); the initial
ratings reached (8.2, F8).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Mapping

import msgspec

from schemas.events import EventFinished, PeriodClosed
from schemas.fide import FideDetails, FideState, FirstEvent, InitialGame, InitialRating, PeriodSums, PublishedRating
from schemas.ratings import PlayerResult
from schemas.records import PlayerRecord, PoolState
from service.engine.contract import EngineRejection, EventInput, Outcome
from service.engine.fide.change import base_k, capped_k, game_term, period_change
from service.engine.fide.exact import ratio_text
from service.engine.fide.initial import MIN_PUBLISHED, games_in_window, initial_rating
from service.engine.fide.performance import norms_met, performance
from service.engine.fide.periods import add_months, month_of, rating_in_force, with_new_list

RATED = "established"
UNRATED = "unrated"


@dataclass
class _Tally:
    """One player's games in one event, as they are counted."""

    sum_hundredths: int = 0
    pd_hundredths: int = 0
    rated_games: int = 0
    rated_halves: int = 0
    pooled: list[InitialGame] = field(default_factory=list)
    performance_opponents: list[int] = field(default_factory=list)
    performance_halves: int = 0
    norm_opponents: list[int | None] = field(default_factory=list)
    norm_halves: int = 0


def _state(record: PlayerRecord) -> FideState:
    return record.fide if record.fide is not None else FideState()


def _never_rated(record: PlayerRecord) -> bool:
    """7.1.4's first event applies to a player who has never had a rating or rated game."""
    state = _state(record)
    return record.rating is None and record.games == 0 and all(p.rating is None for p in state.published)


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


def _check_open(period: str, pool: PoolState) -> None:
    if pool.closed_through is not None and period <= pool.closed_through:
        raise EngineRejection(
            "period_closed",
            f"period {period} of fide/{pool.pool} is closed (closed through {pool.closed_through})",
            "$.period",
        )


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
        _check_open(period, data.pool)
        start_month = month_of(event.start_date)
        if period < start_month:
            raise EngineRejection(
                "unratable", f"period {period} is before the event's start month {start_month}", "$.period"
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
        for ref in event.players:
            record = data.records[ref.id]
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
            pid: (None if r.rating is None else at_start[pid] if at_start[pid] is not None else r.rating)
            for pid, r in records.items()
        }

        tallies = {pid: _Tally() for pid in records}
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
                if mine is not None:
                    term, pd = game_term(mine, opponent, halves, event.start_date, pool_name)
                    tally.sum_hundredths += term
                    tally.pd_hundredths += pd
                    tally.rated_games += 1
                    tally.rated_halves += halves
                else:
                    tally.pooled.append(
                        InitialGame(
                            period=period,
                            event_id=event.event_id,
                            start_date=event.start_date,
                            opponent_rating=opponent,
                            score_halves=halves,
                        )
                    )

        results = []
        new_records = []
        for ref in event.players:
            record, tally = records[ref.id], tallies[ref.id]
            record = self._record_event(record, tally, period, event)
            results.append(self._event_result(record, tally, period, own[ref.id]))
            new_records.append(record)
        return Outcome(results=results, records=new_records, pool=data.pool)

    @staticmethod
    def _record_event(record: PlayerRecord, tally: _Tally, period: str, event: EventFinished) -> PlayerRecord:
        state = _state(record)
        changes: dict = {}
        if tally.rated_games:
            sums = {s.period: s for s in state.periods}
            old = sums.get(period) or PeriodSums(period=period, sum_hundredths=0, games=0)
            sums[period] = PeriodSums(
                period=period,
                sum_hundredths=old.sum_hundredths + tally.sum_hundredths,
                games=old.games + tally.rated_games,
                points_halves=old.points_halves + tally.rated_halves,
            )
            changes["periods"] = [sums[p] for p in sorted(sums)]
        if tally.pooled:
            changes["initial_games"] = [*state.initial_games, *tally.pooled]
            if _never_rated(record):
                candidate = FirstEvent(start_date=event.start_date, event_id=event.event_id)
                first = state.first_event
                if first is None or (candidate.start_date, candidate.event_id) < (first.start_date, first.event_id):
                    changes["first_event"] = candidate
        if not changes:
            return record
        return msgspec.structs.replace(record, fide=msgspec.structs.replace(state, **changes))

    @staticmethod
    def _event_result(record: PlayerRecord, tally: _Tally, period: str, own: int | None) -> PlayerResult:
        state = _state(record)
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
            projected = record.rating + period_change(k, period_sum) if record.rating is not None else None
            details = FideDetails(
                period=period,
                k=k,
                event_change=ratio_text(k * tally.sum_hundredths, 100),
                projected_rating=projected if projected is not None and projected >= MIN_PUBLISHED else None,
                projection=True,
                games_counted=tally.rated_games,
                rating_used=own,
                event_sum=ratio_text(tally.sum_hundredths, 100),
                period_games=sums.games if sums else 0,
                period_sum=ratio_text(period_sum, 100),
                performance=rp,
                norms=norms,
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
        )
        return PlayerResult(
            event_games=len(tally.pooled),
            score=sum(g.score_halves for g in tally.pooled) / 2,
            details=details,
            **common,
        )

    # ------------------------------------------------------------------ lists
    def close_period(self, message: PeriodClosed, records: Mapping[str, PlayerRecord], pool: PoolState) -> Outcome:
        period = message.period
        _check_open(period, pool)
        closed = pool.closed_through
        for record in records.values():
            state = record.fide
            if state is None:
                continue
            for p in [s.period for s in state.periods] + [g.period for g in state.initial_games]:
                if p < period and (closed is None or p > closed):
                    raise EngineRejection(
                        "unratable",
                        f"period {p} of fide/{pool.pool} has rated games and is not closed: close it before {period}",
                        "$.period",
                    )
        pool_name = message.pool or pool.pool
        results = []
        changed = []
        for record in records.values():
            state = record.fide
            if state is None:
                continue
            sums = next((s for s in state.periods if s.period == period), None)
            if sums is not None:
                record, result = self._publish_rated(record, state, sums, period)
            elif any(g.period == period for g in state.initial_games):
                record, result = self._publish_initial(record, state, period, pool_name)
            else:
                continue
            results.append(result)
            changed.append(record)
        results.sort(key=lambda r: r.id)
        changed.sort(key=lambda r: r.id)
        return Outcome(results=results, records=changed, pool=msgspec.structs.replace(pool, closed_through=period))

    @staticmethod
    def _next_k(record: PlayerRecord, period: str) -> int | None:
        """F5: the K of the next period, from the list just published."""
        if record.rating is None:
            return None
        return k_for_period(record, add_months(period, 1))

    def _publish_rated(
        self, record: PlayerRecord, state: FideState, sums: PeriodSums, period: str
    ) -> tuple[PlayerRecord, PlayerResult]:
        """8.3: old list rating + K x sum, rounded once (F4); under 1400 unrated (7.2.1)."""
        old = record.rating
        remaining = [s for s in state.periods if s.period != period]
        expected = (sums.points_halves * 50 - sums.sum_hundredths) / 100
        if old is None:
            # The player left the list after these games were counted: nothing to change.
            record = msgspec.structs.replace(record, fide=msgspec.structs.replace(state, periods=remaining))
            details = FideDetails(
                period=period, k=None, event_change=None, projected_rating=None, games_counted=0, period_games=0
            )
            result = PlayerResult(
                id=record.id, old_rating=None, new_rating=None, change=None, old_status=record.status,
                status=record.status, games=record.games, event_games=0, score=0.0, details=details,
            )
            return record, result
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
        next_k = self._next_k(updated, period)
        lists = with_new_list(
            state.published, period, old, k_used, PublishedRating(period=add_months(period, 1), rating=new, k=next_k)
        )
        updated = msgspec.structs.replace(
            updated, fide=msgspec.structs.replace(state, periods=remaining if new is not None else [], published=lists)
        )
        details = FideDetails(
            period=period,
            k=next_k,
            event_change=None,
            projected_rating=None,
            games_counted=sums.games,
            rating_used=old,
            period_games=sums.games,
            period_sum=ratio_text(sums.sum_hundredths, 100),
            k_applied=k,
            period_change=ratio_text(k * sums.sum_hundredths, 100),
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

    def _publish_initial(
        self, record: PlayerRecord, state: FideState, period: str, pool_name: str
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
            next_k = self._next_k(updated, period)
            lists = with_new_list(
                state.published, period, None, None, PublishedRating(period=add_months(period, 1), rating=rating, k=next_k)
            )
            # Games of later open periods, played before this list: the player is rated in
            # them with the new rating; their opponents counted them as unrated (F2).
            periods = {s.period: s for s in state.periods}
            for game in later:
                term, _ = game_term(rating, game.opponent_rating, game.score_halves, game.start_date, pool_name)
                old = periods.get(game.period) or PeriodSums(period=game.period, sum_hundredths=0, games=0)
                periods[game.period] = PeriodSums(
                    period=game.period,
                    sum_hundredths=old.sum_hundredths + term,
                    games=old.games + 1,
                    points_halves=old.points_halves + game.score_halves,
                )
            new_state = FideState(published=lists, periods=[periods[p] for p in sorted(periods)])
            updated = msgspec.structs.replace(updated, fide=new_state)
            new_rating: int | None = rating
        else:
            next_k = None
            new_rating = None
            updated = msgspec.structs.replace(record, fide=msgspec.structs.replace(state, initial_games=pooled + later))
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
