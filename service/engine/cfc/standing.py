"""What the CFC calculation reads: each player's standing before the event (from the
record) and their rated games in it (forfeits and byes are not rated and not in N)."""

from __future__ import annotations

from fractions import Fraction
from typing import Literal, Mapping

import msgspec

from schemas.events import EventFinished
from schemas.records import PlayerRecord
from service.engine.arithmetic import from_exact, score_halves
from service.engine.contract import EngineRejection

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


def read_prior(record: PlayerRecord, path: str) -> Prior:
    """A record as the rules see it; an inconsistent record cannot be rated."""

    def reject(problem: str) -> EngineRejection:
        return EngineRejection("unratable", f"record of player {record.id!r}: {problem}", path)

    if record.status == "unrated":
        if record.rating is not None:
            raise reject(f"status 'unrated' with rating {record.rating}")
        if record.games:
            raise reject(f"status 'unrated' with {record.games} games")
        return Prior("unrated", None, 0, None, None)
    if record.rating is None:
        raise reject(f"status {record.status!r} needs a rating")
    highest = max(record.highest if record.highest is not None else record.rating, record.rating)
    if record.status == "established":
        return Prior("established", record.rating, record.games, highest, None)
    if record.games < 1:
        raise reject("a provisional rating needs at least one game")
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
