"""The NASPA engines (rulesets nsa2008, naspa-csw, naspa2024): an event in, results out.

Rules: docs/rules/naspa.md (N1-N6) and the newcomer seed quoted there. Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import msgspec

from schemas.events import EventFinished, PeriodClosed
from schemas.naspa import NaspaDetails, NaspaOpponent, NaspaSegment
from schemas.ratings import PlayerResult
from schemas.records import PlayerRecord, PoolState
from service.engine.arithmetic import decimal_number
from service.engine.contract import (
    EngineRejection,
    EventInput,
    Outcome,
    RecordProblem,
    WithoutPeriods,
    record_rejection,
)
from service.engine.naspa.run import Figures, Policy, RatedGame, rate_run
from service.engine.naspa.segments import segment_rounds

# A figure as the output writes it: 2 decimals (schemas/naspa.py "Numbers"); the engine's
# own arithmetic keeps the float.
_number = decimal_number


@dataclass(frozen=True)
class Segment:
    """One run of the event: its rounds, the ratings it started from, its figures."""

    first: int
    last: int
    ratings: Mapping[str, int | None]
    figures: Mapping[str, Figures]


@dataclass(frozen=True)
class NaspaEngine(WithoutPeriods):
    """One NASPA ruleset.

    `floor_of_one`: nsa2008's floor of 1. `advance_career_games`: naspa2024 counts the
    games of a segment in the career games of the next. `seed_pools`: the pool whose
    rating a player's first event in a pool starts from (CSW from NWL, career games 0).
    """

    ruleset: str
    pools: tuple[str, ...]
    floor_of_one: bool = False
    advance_career_games: bool = False
    seed_pools: Mapping[str, str] = field(default_factory=dict)
    system: str = "naspa"

    def rate_event(self, data: EventInput) -> Outcome:
        event = data.event
        games = counted_games(event, data.records)
        ratings: dict[str, int | None] = {}
        career: dict[str, int] = {}
        seeded: dict[str, str] = {}
        playing = {g.a for _, g in games} | {g.b for _, g in games}
        for i, player in enumerate(event.players):
            record = data.records[player.id]
            problems = record_problems(record)
            if problems:
                raise record_rejection(record, problems, f"$.players[{i}]")
            ratings[player.id] = record.rating
            career[player.id] = record.games
            # No rating without a rated game: a seed is taken only by a player who plays.
            seed = (
                self._seed(event.pool, player.id, record, data.seed_records)
                if player.id in playing
                else None
            )
            if seed is not None:
                ratings[player.id] = seed
                career[player.id] = 0  # naspa-csw: career games restart at 0 (N5's g)
                seeded[player.id] = self.seed_pools[event.pool or ""]
        start = dict(ratings)
        policy = Policy(floor_of_one=self.floor_of_one, one_third=event.one_third_rated)
        per_segment: list[Segment] = []
        for first, last in segment_rounds(event.rounds):
            segment_games = [g for r, g in games if first <= r <= last]
            figures = rate_run(segment_games, ratings, career, policy)
            per_segment.append(Segment(first, last, dict(ratings), figures))
            for p, f in figures.items():
                ratings[p] = f.new_rating
                if self.advance_career_games:
                    career[p] += f.games
        results, records = [], []
        written: dict[float, float] = {}  # opponents' ratings as written, shared by their opponents
        for player in event.players:
            record = data.records[player.id]
            result = _result(
                player.id,
                record,
                start[player.id],
                ratings[player.id],
                per_segment,
                seeded.get(player.id),
                written,
            )
            results.append(result)
            records.append(_record(record, result))
        return Outcome(results=results, records=records, pool=data.pool)

    def record_problems(self, record: PlayerRecord) -> list[RecordProblem]:
        return record_problems(record)

    def status_for(self, rating: int | None, games: int) -> str:
        return status_for(rating, games)

    def close_period(
        self,
        message: PeriodClosed,
        records: Mapping[str, PlayerRecord],
        pool: PoolState,
        last_end: object = None,
    ) -> Outcome:
        """No periods (the decode step refuses such a message first: schemas.common.PERIOD_SYSTEMS)."""
        raise EngineRejection(
            "unratable", "NASPA rates each event as it ends: it has no rating periods", "$.system"
        )

    def _seed(
        self, pool: str | None, pid: str, record: PlayerRecord, seeds: Mapping[str, PlayerRecord]
    ) -> int | None:
        """naspa-csw: a player's first CSW event starts from their NWL rating, if any."""
        if record.rating is not None or pool not in self.seed_pools:
            return None
        seed = seeds.get(pid)
        return seed.rating if seed is not None else None


def record_problems(record: PlayerRecord) -> list[RecordProblem]:
    """A player is a newcomer when they have no rating ("Newcomers"), and rated otherwise:
    a record's status says the same as its rating (the rules read the rating; a rated
    player's status, established or provisional, is carried as the list gives it, and
    the engine publishes a new rating as 'established')."""
    if record.status != "unrated" and record.rating is None:
        return [RecordProblem("rating", f"status {record.status!r} needs a rating")]
    if record.status == "unrated" and record.rating is not None:
        return [RecordProblem("status", f"status 'unrated' with rating {record.rating}")]
    return []


def status_for(rating: int | None, games: int) -> str:
    """A list's player without a status: established with a rating, else a newcomer."""
    return "established" if rating is not None else "unrated"


def counted_games(
    event: EventFinished, records: Mapping[str, PlayerRecord]
) -> list[tuple[int, RatedGame]]:
    """The games that count, with their round: byes are never games, forfeits never
    count (docs/rules/naspa.md#naspa-basics). An event with none cannot be rated."""
    counted = []
    for i, game in enumerate(event.games):
        for side in ("a", "b"):
            if getattr(game, side) not in records:
                raise EngineRejection(
                    "unratable",
                    f"player {getattr(game, side)!r} has no record",
                    f"$.games[{i}].{side}",
                )
        if game.round > event.rounds:
            raise EngineRejection(
                "unratable",
                f"round {game.round} is after the last round {event.rounds}",
                f"$.games[{i}].round",
            )
        if not game.forfeit:
            counted.append((game.round, RatedGame(game.a, game.b, float(game.score), game.round)))
    if not counted:
        what = "every game is a forfeit" if event.games else "the event has no games"
        raise EngineRejection(
            "unratable",
            f"no game counts for ratings: {what} (byes and forfeits are never rated)",
            "$.games",
        )
    return counted


def _result(
    pid: str,
    record: PlayerRecord,
    old: int | None,
    new: int | None,
    per_segment: list[Segment],
    seeded_from: str | None,
    written: dict[float, float],
) -> PlayerResult:
    """The player's result; `written` caches the 2-decimal form of the opponents' ratings
    (the same few values for every player of the event)."""
    mine = [(s, s.figures[pid]) for s in per_segment if pid in s.figures]
    games = sum(f.games for _, f in mine)
    earned = math.fsum(f.earned for _, f in mine)
    expected = math.fsum(f.expected for _, f in mine if f.expected is not None) if mine else None
    newcomer = next((f for _, f in mine if f.newcomer), None)
    segments = []
    if len(per_segment) > 1:
        for s in per_segment:
            f = s.figures.get(pid)
            segments.append(
                _segment(s.first, s.last, f) if f else _idle(s.first, s.last, s.ratings.get(pid))
            )
    details = NaspaDetails(
        earned_wins=earned,
        expected_wins=_number(expected),
        multipliers=[m for _, f in mine for m in f.multipliers],
        acceleration=_number(math.fsum(f.acceleration for _, f in mine)),
        feedback=_number(math.fsum(f.feedback for _, f in mine)),
        newcomer_iterations=newcomer.iterations if newcomer else None,
        averaged=newcomer.averaged if newcomer else False,
        clipped=any(f.clipped for _, f in mine),
        seeded_from=seeded_from,
        unrounded_rating=_number(mine[-1][1].unrounded) if mine else None,
        segments=segments,
        opponents=[
            NaspaOpponent(
                round=g.round,
                opponent=g.opponent,
                opponent_rating=written[g.opponent_rating]
                if g.opponent_rating in written
                else written.setdefault(g.opponent_rating, _number(g.opponent_rating)),
                score=g.score,
                expected=_number(g.expected),
            )
            for _, f in mine
            for g in f.opponents
        ],
    )
    return PlayerResult(
        id=pid,
        old_rating=old,
        new_rating=new,
        change=new - old if new is not None and old is not None else None,
        old_status=record.status,
        status="established" if new is not None else record.status,
        games=(0 if seeded_from else record.games) + games,  # a seeded career starts at 0
        event_games=games,
        score=earned,
        expected=_number(expected),
        details=details,
    )


def _segment(first: int, last: int, f: Figures) -> NaspaSegment:
    return NaspaSegment(
        first_round=first,
        last_round=last,
        old_rating=f.old_rating,
        new_rating=f.new_rating,
        games=f.games,
        earned_wins=f.earned,
        expected_wins=_number(f.expected),
        newcomer=f.newcomer,
        career_games=f.career_games,
        multipliers=list(f.multipliers),
        walked_rating=_number(f.walked),
        acceleration=_number(f.acceleration),
        feedback=_number(f.feedback),
        clipped=f.clipped,
        newcomer_iterations=f.iterations,
        averaged=f.averaged,
        unrounded_rating=_number(f.unrounded),
    )


def _idle(first: int, last: int, rating: int | None) -> NaspaSegment:
    """A segment in which the player had no counted game: the rating carries over."""
    return NaspaSegment(
        first_round=first,
        last_round=last,
        old_rating=rating,
        new_rating=rating,
        games=0,
        earned_wins=0.0,
        expected_wins=None,
    )


def _record(record: PlayerRecord, result: PlayerResult) -> PlayerRecord:
    """The record after the event: rating, status and career games (N5's g)."""
    if result.new_rating is None:
        return record
    return msgspec.structs.replace(
        record, rating=result.new_rating, status=result.status, games=result.games
    )
