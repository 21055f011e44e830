"""Small builders for CFC engine tests: records, events, and a one-call `rate`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import msgspec

from schemas.cfc import CfcDetails, CfcState
from schemas.ratings import PlayerResult
from schemas.records import PlayerRecord, PoolState
from schemas.validation import decode_input
from service.engine.cfc import CfcEngine
from service.engine.contract import EventInput, Outcome


@dataclass(frozen=True)
class Spec:
    status: str
    rating: int | None = None
    games: int = 0
    highest: int | None = None
    total: str | None = None


def est(rating: int, highest: int | None = None, games: int = 100) -> Spec:
    """An established player (highest defaults to the rating)."""
    return Spec("established", rating, games, highest if highest is not None else rating)


def prov(rating: int, games: int, total: str | None = None, highest: int | None = None) -> Spec:
    """A provisional player; `total` is the C1 exact running sum (None: imported, rating x games)."""
    return Spec("provisional", rating, games, highest if highest is not None else rating, total)


def new() -> Spec:
    """A player the store has never seen."""
    return Spec("unrated")


def record(pid: str, spec: Spec, pool: str = "regular") -> PlayerRecord:
    return PlayerRecord(
        system="cfc",
        pool=pool,
        id=pid,
        rating=spec.rating,
        status=spec.status,  # type: ignore[arg-type]
        games=spec.games,
        highest=spec.highest,
        cfc=CfcState(provisional_sum=spec.total) if spec.total is not None else None,
    )


def event_message(
    players: Sequence[str],
    games: Sequence[tuple],
    rounds: int | None = None,
    forfeits: Sequence[tuple] = (),
    byes: Sequence[tuple] = (),
    pool: str = "regular",
) -> bytes:
    """An event.finished/v1 message. A game is (a, b, a's score) or (a, b, score, round);
    a bye is (player, score, round)."""

    def game(g: tuple, forfeit: bool) -> dict:
        a, b, score = g[:3]
        out = {"round": g[3] if len(g) > 3 else 1, "a": a, "b": b, "score": score}
        if forfeit:
            out["forfeit"] = True
        return out

    all_games = [game(g, False) for g in games] + [game(g, True) for g in forfeits]
    last = max([g["round"] for g in all_games] + [b[2] for b in byes] + [1])
    return msgspec.json.encode(
        {
            "schema": "event.finished/v1",
            "event_id": "test-event",
            "system": "cfc",
            "pool": pool,
            "name": "Test event",
            "start_date": "2009-05-01",
            "end_date": "2009-05-03",
            "rounds": rounds if rounds is not None else last,
            "players": [{"id": p} for p in players],
            "games": all_games,
            "byes": [{"player": p, "score": s, "round": r} for p, s, r in byes],
        }
    )


@dataclass(frozen=True)
class Rated:
    outcome: Outcome

    @property
    def result(self) -> dict[str, PlayerResult]:
        return {r.id: r for r in self.outcome.results}

    @property
    def record(self) -> dict[str, PlayerRecord]:
        return {r.id: r for r in self.outcome.records}

    def new(self, pid: str) -> int | None:
        return self.result[pid].new_rating

    def details(self, pid: str) -> CfcDetails:
        d = self.result[pid].details
        assert isinstance(d, CfcDetails)
        return d

    def values(self, pid: str) -> list[tuple[str, str, str]]:
        """(opponent, value, basis) of each game in the player's calculation."""
        return [(o.opponent, o.value_exact, o.basis) for o in self.details(pid).opponents]


def rate(
    players: dict[str, Spec],
    games: Sequence[tuple],
    rounds: int | None = None,
    forfeits: Sequence[tuple] = (),
    byes: Sequence[tuple] = (),
    pool: str = "regular",
) -> Rated:
    """Rate one event (validated as the service does) with the given starting records."""
    event = decode_input(event_message(list(players), games, rounds, forfeits, byes, pool))
    records = {
        pid: record(pid, spec, pool) for pid, spec in players.items() if spec.status != "unrated"
    }
    for pid, spec in players.items():
        records.setdefault(pid, record(pid, spec, pool))
    pool_state = PoolState(system="cfc", pool=pool)
    return Rated(CfcEngine().rate_event(EventInput(event, records, pool_state)))  # type: ignore[arg-type]
