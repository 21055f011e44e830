"""What the CFC calculation reads: each player's standing before the event (from the
record) and their rated games in it (forfeits and byes are not rated and not in N)."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Literal

import msgspec

from schemas.events import EventFinished
from schemas.records import PlayerRecord
from tests.previous.arithmetic import from_exact, score_halves
from tests.previous.contract import RecordProblem, record_rejection

Category = Literal["unrated", "provisional", "established"]


class Prior(msgspec.Struct, frozen=True, gc=False):
    """A player's standing before the event.

    `provisional_sum` is C1's exact running sum (a provisional record imported without
    it uses rating x games); `highest` is the highest rating ever held (714c B), at
    least the current rating.
    """

    category: Category
    rating: int | None
    games: int
    highest: int | None
    provisional_sum: Fraction | None


class PlayedGame(msgspec.Struct, frozen=True, gc=False):
    """One rated game from a player's side: the player's score in half points. (The
    engines' own records are msgspec Structs: the cheapest immutable objects to build.)"""

    round: int
    opponent: str
    halves: int


class Tally(msgspec.Struct, frozen=True, gc=False):
    """A player's rated games of the event: W, L, draws, S (in half points), N."""

    games: tuple[PlayedGame, ...]
    wins: int
    losses: int
    draws: int
    halves: int

    @property
    def n(self) -> int:
        return len(self.games)


ESTABLISHED_AFTER = 25  # CFC 715: provisional for the first 24 games, established from the 25th


def record_problems(record: PlayerRecord) -> list[RecordProblem]:
    """What makes a record unreadable by 714-717: an unrated player has no rating and no
    rated games; a rated (provisional or established) player has a rating, and a
    provisional one is a performance over at least one game (714a, C1's sum / games)."""
    if record.status == "unrated":
        problems = []
        if record.rating is not None:
            problems.append(
                RecordProblem("status", f"status 'unrated' with rating {record.rating}")
            )
        if record.games:
            problems.append(RecordProblem("games", f"status 'unrated' with {record.games} games"))
        return problems
    if record.rating is None:
        return [RecordProblem("rating", f"status {record.status!r} needs a rating")]
    if record.status == "provisional" and record.games < 1:
        return [RecordProblem("games", "a provisional rating needs at least one game")]
    return []


def status_for(rating: int | None, games: int) -> str:
    """A list's player without a status: unrated without a rating; with one, established
    from 25 rated games (715), else provisional."""
    if rating is None:
        return "unrated"
    return "established" if games >= ESTABLISHED_AFTER else "provisional"


def read_prior(record: PlayerRecord, path: str) -> Prior:
    """A record as the rules see it; an inconsistent record cannot be rated."""
    problems = record_problems(record)
    if problems:
        raise record_rejection(record, problems, path)
    if record.status == "unrated":
        return Prior("unrated", None, 0, None, None)
    assert record.rating is not None
    highest = max(record.highest if record.highest is not None else record.rating, record.rating)
    if record.status == "established":
        return Prior("established", record.rating, record.games, highest, None)
    if record.cfc is not None and record.cfc.provisional_sum is not None:
        running = from_exact(record.cfc.provisional_sum)
    else:
        running = Fraction(record.rating * record.games)  # C1: imported with rating and games only
    return Prior("provisional", record.rating, record.games, highest, running)


def tally_games(event: EventFinished) -> dict[str, Tally]:
    """Each player's rated games (not forfeits; byes are never games), in event order."""
    games: dict[str, list[PlayedGame]] = {}
    halves_of = _HALVES.get
    for game in event.games:
        if game.forfeit:
            continue
        halves = halves_of(game.score)
        if halves is None:
            halves = score_halves(game.score)  # raises: not 1, 0.5 or 0
        a, b = game.a, game.b
        if a not in games:
            games[a] = []
        if b not in games:
            games[b] = []
        games[a].append(PlayedGame(game.round, b, halves))
        games[b].append(PlayedGame(game.round, a, 2 - halves))
    tallies = {}
    for pid, played in games.items():
        counts = [0, 0, 0]  # losses, draws, wins: indexed by half points
        for g in played:
            counts[g.halves] += 1
        losses, draws, wins = counts
        tallies[pid] = Tally(tuple(played), wins, losses, draws, 2 * wins + draws)
    return tallies


_HALVES = {1.0: 2, 0.5: 1, 0.0: 0}


def read_priors(event: EventFinished, records: Mapping[str, PlayerRecord]) -> dict[str, Prior]:
    """Every player's prior standing (a player without a record is unrated)."""
    priors = {}
    for i, ref in enumerate(event.players):
        record = records.get(ref.id)
        if record is None:
            priors[ref.id] = Prior("unrated", None, 0, None, None)
        else:
            priors[ref.id] = read_prior(record, f"$.players[{i}]")
    return priors
