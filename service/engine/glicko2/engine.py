"""The Glicko-2 engines (rulesets `glicko2` and `glicko2-event`): Glickman's "Example of the
Glicko-2 system", steps 1-8 (docs/rules/glicko2.md, G2-1 .. G2-12). Pure: no I/O.

- `glicko2` (G2-6): an event's games are counted in the pool's open rating period (kept on
  each player's record with the opponent's state); `period.closed` rates every player of
  the pool (service.engine.glicko2.periods).
- `glicko2-event` (G2-8): each event is one rating period for the players who play in it,
  rated on arrival; a player's RD first grows by the whole periods elapsed since their last
  rated event (step 6 for each).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

import msgspec

from schemas.events import EventContent, EventFinished, PeriodClosed, PeriodReopened
from schemas.glicko2 import Glicko2Game
from schemas.periods import month_index, month_of
from schemas.records import PlayerRecord, PoolState
from service.engine.contract import (
    EngineRejection,
    EventInput,
    Outcome,
    RecordProblem,
    record_rejection,
)
from service.engine.glicko2.algorithm import (
    GameFigures,
    Opponent,
    expected_score,
    g,
    grown,
    rate_period,
    to_mu,
    to_phi,
    to_rating,
    to_rd,
)
from service.engine.glicko2.figures import details, opponent_row, result
from service.engine.glicko2.periods import catch_up, close_period, reopen_period
from service.engine.glicko2.records import (
    State,
    check_open,
    glicko2_state,
    period_end,
    period_number,
    record_problems,
    state_of,
    status_for,
    with_state,
)
from service.engine.glicko2.settings import POOL_SETTINGS, Glicko2Settings, settings_for

Played = dict[str, list[tuple[int, str, float]]]  # player -> (round, opponent, score)


_WHOLE_POOL = "a Glicko-2 close rates the whole pool at once, not a page of its players"


@dataclass(frozen=True)
class Glicko2Engine:
    """One Glicko-2 ruleset; `periods`: rated at `period.closed` (`glicko2`) or per event.
    `settings`: each pool's (service.engine.glicko2.settings, G2-2); any pool name."""

    ruleset: str
    periods: bool
    settings: Mapping[str, Glicko2Settings] = field(default_factory=lambda: POOL_SETTINGS)
    system: str = "glicko2"
    pools: tuple[str, ...] = ("standard",)
    seed_pools: Mapping[str, str] = field(default_factory=dict)

    def rate_event(self, data: EventInput) -> Outcome:
        event = data.event
        settings = settings_for(self.settings, event.pool or data.pool.pool)
        played = played_games(event, data.records)
        for i, ref in enumerate(event.players):
            record = data.records[ref.id]
            problems = record_problems(record)
            if problems:
                raise record_rejection(record, problems, f"$.players[{i}]")
        if self.periods:
            return self._count_in_period(data, played, settings)
        return self._rate_as_period(data, played, settings)

    # ------------------------------------------------------------ glicko2-event
    def _rate_as_period(
        self, data: EventInput, played: Played, settings: Glicko2Settings
    ) -> Outcome:
        """G2-8: the event is one rating period for its players; first step 6 for each whole
        period elapsed since a player's last rated event (G2-9), then steps 3-8."""
        event = data.event
        now = period_number(event.end_date, settings)
        start: dict[str, tuple[State, int, float, float]] = {}
        for ref in event.players:
            record = data.records[ref.id]
            state = state_of(record, settings)
            last = glicko2_state(record).last_rated
            elapsed = max(0, now - period_number(last, settings) - 1) if state.rated and last else 0
            phi = to_phi(state.rd)
            if elapsed:
                phi = grown(phi, state.volatility, elapsed)
            start[ref.id] = (state, elapsed, to_mu(state.rating), phi)
        results, records = [], []
        for ref in event.players:
            record = data.records[ref.id]
            state, elapsed, mu, phi = start[ref.id]
            games = played[ref.id]
            if not games:  # G2-9: no game, no rating period: the record stays
                results.append(result(record, record, 0, 0.0, None, None))
                records.append(record)
                continue
            opponents = [Opponent(start[o][2], start[o][3], s) for _, o, s in games]
            figures = rate_period(mu, phi, state.volatility, opponents, settings.tau)
            after = State(to_rating(figures.mu), to_rd(figures.phi), figures.volatility, True)
            rows = [
                opponent_row(rnd, None, o, start[o][0], start[o][2], start[o][3], f, s)
                for (rnd, o, s), f in zip(games, figures.games)
            ]
            shown = details(None, elapsed + 1, settings.tau, state, after, mu, phi, figures, rows)
            updated = with_state(
                record, after, record.games + len(games), last_rated=event.end_date
            )
            score = math.fsum(s for _, _, s in games)
            expected = math.fsum(f.expected for f in figures.games)
            results.append(result(record, updated, len(games), score, expected, shown))
            records.append(updated)
        return Outcome(results=results, records=records, pool=data.pool)

    # ------------------------------------------------------------ glicko2 (periods)
    def _count_in_period(
        self, data: EventInput, played: Played, settings: Glicko2Settings
    ) -> Outcome:
        """G2-6: the games join the open period's (each player's record keeps them, with the
        opponent's state); the ratings change when the period closes."""
        event = data.event
        period = period_end(event.period or month_of(event.end_date), settings)
        check_open(period, data.pool)
        closed = data.pool.closed_through
        if (
            closed is not None
            and month_index(period) > month_index(closed) + settings.period_months
        ):
            raise EngineRejection(
                "unratable",
                f"period {period} of glicko2/{data.pool.pool} is not open yet: the pool is closed through"
                f" {closed}, and the period after it must close first (G2-7)",
                "$.period",
            )
        start = {ref.id: state_of(data.records[ref.id], settings) for ref in event.players}
        results, records = [], []
        for ref in event.players:
            record = data.records[ref.id]
            state = start[ref.id]
            games = played[ref.id]
            if not games:
                results.append(result(record, record, 0, 0.0, None, None))
                records.append(record)
                continue
            kept = [
                Glicko2Game(
                    period,
                    event.event_id,
                    rnd,
                    o,
                    s,
                    start[o].rating,
                    start[o].rd,
                    start[o].volatility,
                )
                for rnd, o, s in games
            ]
            g2 = glicko2_state(record)
            updated = _with_games(record, [*g2.games, *kept], closed)
            mu, phi = to_mu(state.rating), to_phi(state.rd)
            rows, expected = [], 0.0
            for rnd, o, s in games:
                other = start[o]
                mu_j, phi_j = to_mu(other.rating), to_phi(other.rd)
                g_j = g(phi_j)
                e = expected_score(mu, mu_j, g_j)
                expected += e
                rows.append(opponent_row(rnd, None, o, other, mu_j, phi_j, GameFigures(g_j, e), s))
            shown = details(period, 0, settings.tau, state, state, mu, phi, None, rows)
            score = math.fsum(s for _, _, s in games)
            results.append(result(record, updated, len(games), score, expected, shown))
            records.append(updated)
        return Outcome(results=results, records=records, pool=data.pool)

    # ------------------------------------------------------------ the contract's rest
    def record_problems(self, record: PlayerRecord) -> list[RecordProblem]:
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
        if not self.periods:
            raise EngineRejection(
                "unratable",
                "ruleset glicko2-event rates each event as one rating period: it has no periods to close",
                "$.ruleset",
            )
        settings = settings_for(self.settings, message.pool or pool.pool)
        return close_period(message, records, pool, last_end, settings)

    # A Glicko-2 close rates every player of the pool (step 6 for those without games, G2-6),
    # so the service commits it whole, not in pages of the players with games (D60 pages
    # FIDE's: schemas.systems `paged_close`); the page-wise parts of the contract refuse.
    def check_close(
        self,
        message: PeriodClosed,
        periods: AbstractSet[str],
        pool: PoolState,
        last_end: dt.date | None = None,
    ) -> None:
        raise EngineRejection("unratable", _WHOLE_POOL, "$.system")

    def list_players(
        self, message: PeriodClosed, records: Mapping[str, PlayerRecord], pool: PoolState
    ) -> Outcome:
        raise EngineRejection("unratable", _WHOLE_POOL, "$.system")

    def clear_k(
        self, message: PeriodClosed, records: Mapping[str, PlayerRecord]
    ) -> list[PlayerRecord]:
        raise EngineRejection("unratable", _WHOLE_POOL, "$.system")

    def reopen_period(
        self, message: PeriodReopened, before: Mapping[str, PlayerRecord], pool: PoolState
    ) -> Outcome:
        if not self.periods:
            raise EngineRejection(
                "unratable", "ruleset glicko2-event has no rating periods to reopen", "$.system"
            )
        return reopen_period(message, before, pool)

    def order_prefix(self, event: EventContent) -> int:
        """`glicko2`: an event counts in its rating period (G2-5), whose month number leads
        its order key; `glicko2-event`: date order only."""
        if not self.periods:
            return 0
        settings = settings_for(self.settings, event.pool or "standard")
        return month_index(period_end(event.period or month_of(event.end_date), settings))

    def list_period(self, period: str) -> str:
        """The list a close publishes is in force from the month after the period."""
        index = month_index(period) + 1
        return f"{index // 12:04d}-{index % 12 + 1:02d}"

    def catch_up(self, state: PlayerRecord, pool: PoolState) -> PlayerRecord:
        if not self.periods:
            return state
        return catch_up(state, pool, settings_for(self.settings, state.pool))


def _with_games(record: PlayerRecord, games: list[Glicko2Game], closed: str | None) -> PlayerRecord:
    state = msgspec.structs.replace(glicko2_state(record), games=games, closed_through=closed)
    return msgspec.structs.replace(record, glicko2=state)


def played_games(event: EventFinished, records: Mapping[str, PlayerRecord]) -> Played:
    """Each player's games from their side (G2-4): byes are never games, forfeits are never
    rated. An event without a rated game cannot be rated."""
    played: Played = {ref.id: [] for ref in event.players}
    for i, game in enumerate(event.games):
        for side in ("a", "b"):
            if getattr(game, side) not in records:
                raise EngineRejection(
                    "unratable",
                    f"player {getattr(game, side)!r} has no record",
                    f"$.games[{i}].{side}",
                )
        if game.forfeit:
            continue
        score = float(game.score)
        played[game.a].append((game.round, game.b, score))
        played[game.b].append((game.round, game.a, 1.0 - score))
    if not any(played.values()):
        what = "every game is a forfeit" if event.games else "the event has no games"
        raise EngineRejection(
            "unratable",
            f"no game counts for ratings: {what} (byes and forfeits are never rated)",
            "$.games",
        )
    return played
