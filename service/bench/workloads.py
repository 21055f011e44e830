"""Deterministic workloads for `rating-service bench`: rated lists as a
federation imports them, and Swiss-like events among their players.

Nothing here is timed and nothing does I/O; `random.Random(seed)` makes every workload
the same from run to run. Results follow the players' strengths (a logistic curve with
some draws), so scores spread as in a real event.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Sequence

import msgspec

from schemas.fide import FideState, InitialGame, PeriodSums
from schemas.records import PlayerRecord

_encoder = msgspec.json.Encoder()

EVENT_DATES = {
    "cfc": ("2025-11-01", "2025-11-09"),
    "fide": ("2025-11-01", "2025-11-09"),
    "naspa": ("2025-07-01", "2025-07-05"),
    "glicko2": ("2025-11-01", "2025-11-09"),
}
DEFAULT_POOLS = {"cfc": "regular", "fide": "standard", "naspa": "nwl", "glicko2": "standard"}


def rated_list(
    system: str, count: int, *, seed: int = 7, prefix: str = "p", newcomers: int = 0
) -> list[PlayerRecord]:
    """An imported rated list: ids `<prefix>000001`..., ratings spread around 1500.

    CFC: 90 % established (with `highest`), the rest provisional (C1 imported with rating
    and games only); FIDE: established with a birth year; NASPA: established. The first
    `newcomers` players are unrated (no record fields but the identity)."""
    rng = random.Random(seed)
    pool = DEFAULT_POOLS[system]
    records = []
    for i in range(count):
        pid = f"{prefix}{i + 1:06d}"
        if i < newcomers:
            records.append(PlayerRecord(system=system, pool=pool, id=pid))  # type: ignore[arg-type]  # system is a System name
            continue
        rating = max(100, min(2800, int(rng.gauss(1500, 350))))
        if system == "cfc":
            provisional = rng.random() < 0.1
            games = rng.randint(1, 24) if provisional else rng.randint(25, 900)
            records.append(
                PlayerRecord(
                    system="cfc",
                    pool=pool,
                    id=pid,
                    rating=rating,
                    status="provisional" if provisional else "established",
                    games=games,
                    highest=rating + (0 if provisional else rng.randint(0, 150)),
                )
            )
        elif system == "fide":
            records.append(
                PlayerRecord(
                    system="fide",
                    pool=pool,
                    id=pid,
                    rating=max(1400, rating),
                    status="established",
                    games=rng.randint(0, 600),
                    birth_year=rng.randint(1950, 2014),
                )
            )
        elif system == "glicko2":  # RD 50-350, volatility about 0.06 (G2-11)
            rd = rng.uniform(50, 350)
            records.append(
                PlayerRecord(
                    system="glicko2",
                    pool=pool,
                    id=pid,
                    rating=rating,
                    rd=rd,
                    volatility=rng.uniform(0.04, 0.08),
                    status="provisional" if rd > 110 else "established",
                    games=rng.randint(0, 2000),
                )
            )
        else:
            records.append(
                PlayerRecord(
                    system="naspa",
                    pool=pool,
                    id=pid,
                    rating=rating,
                    status="established",
                    games=rng.randint(0, 2000),
                )
            )
    return records


def _strength(record: PlayerRecord, rng: random.Random) -> float:
    return float(record.rating) if record.rating is not None else rng.gauss(1500, 300)


def swiss_event(
    system: str,
    records: Sequence[PlayerRecord],
    rounds: int,
    *,
    event_id: str = "bench-swiss",
    seed: int = 9,
    draws: float = 0.2,
) -> dict:
    """A Swiss-like `event.finished/v1` (as a JSON-ready dict) among `records`' players:
    each round sorts the players by (score, strength) and pairs them 1-2, 3-4, ... within
    that order (a score-group pairing, rematches allowed); an odd player out gets a bye.
    `draws` is the draw rate (NASPA: ties are rare, pass 0.01)."""
    rng = random.Random(seed)
    ids = [r.id for r in records]
    strength = {r.id: _strength(r, rng) for r in records}
    points = {pid: 0.0 for pid in ids}
    games: list[dict] = []
    byes: list[dict] = []
    for rnd in range(1, rounds + 1):
        order = sorted(ids, key=lambda p: (-points[p], -strength[p], p))
        if len(order) % 2:
            bye = order.pop()
            byes.append({"round": rnd, "player": bye, "score": 1})
            points[bye] += 1
        for a, b in zip(order[::2], order[1::2]):
            p_a = 1 / (1 + 10 ** ((strength[b] - strength[a]) / 400))
            roll = rng.random()
            if roll < draws:
                score = 0.5
            else:
                score = 1.0 if rng.random() < p_a else 0.0
            points[a] += score
            points[b] += 1 - score
            games.append({"round": rnd, "a": a, "b": b, "score": score})
    start, end = EVENT_DATES[system]
    return {
        "schema": "event.finished/v1",
        "event_id": event_id,
        "system": system,
        "pool": DEFAULT_POOLS[system],
        "name": f"Bench {system} {len(ids)}x{rounds}",
        "start_date": start,
        "end_date": end,
        "rounds": rounds,
        "players": [{"id": pid} for pid in ids],
        "games": games,
        "byes": byes,
    }


def two_player_event(
    system: str, a: PlayerRecord, b: PlayerRecord, event_id: str, rng: random.Random
) -> dict:
    """One online game as a platform reports it: an event of two players and one round.
    Its dates are the Swiss events' (EVENT_DATES), so that a workload's events all count
    in arrival order: the bench measures the in-order path, not re-rating."""
    start, end = EVENT_DATES[system]
    return {
        "schema": "event.finished/v1",
        "event_id": event_id,
        "system": system,
        "pool": DEFAULT_POOLS[system],
        "name": "Online game",
        "start_date": start,
        "end_date": end,
        "rounds": 1,
        "players": [{"id": a.id}, {"id": b.id}],
        "games": [{"round": 1, "a": a.id, "b": b.id, "score": rng.choice((0, 0.5, 1))}],
    }


def round_robin_event(
    system: str,
    records: Sequence[PlayerRecord],
    *,
    event_id: str = "bench-rr",
    seed: int = 9,
    draws: float = 0.2,
) -> dict:
    """A round robin `event.finished/v1` among `records`' players (the circle method: each
    plays each once; an odd count gives one bye a round): n - 1 rounds (n for odd n)."""
    rng = random.Random(seed)
    ids = [r.id for r in records]
    strength = {r.id: _strength(r, rng) for r in records}
    seats: list[str | None] = [*ids, None] if len(ids) % 2 else list(ids)
    games: list[dict] = []
    byes: list[dict] = []
    rounds = len(seats) - 1
    for rnd in range(1, rounds + 1):
        for a, b in zip(seats[: len(seats) // 2], reversed(seats[len(seats) // 2 :])):
            if a is None or b is None:
                byes.append({"round": rnd, "player": a or b, "score": 1})
                continue
            p_a = 1 / (1 + 10 ** ((strength[b] - strength[a]) / 400))
            score = 0.5 if rng.random() < draws else (1.0 if rng.random() < p_a else 0.0)
            games.append({"round": rnd, "a": a, "b": b, "score": score})
        seats = [seats[0], seats[-1], *seats[1:-1]]
    start, end = EVENT_DATES[system]
    return {
        "schema": "event.finished/v1",
        "event_id": event_id,
        "system": system,
        "pool": DEFAULT_POOLS[system],
        "name": f"Bench {system} round robin of {len(ids)}",
        "start_date": start,
        "end_date": end,
        "rounds": rounds,
        "players": [{"id": pid} for pid in ids],
        "games": games,
        "byes": byes,
    }


_SURNAMES = ("Tremblay", "Gagnon", "Roy", "Smith", "Nguyen", "Kowalski", "Müller", "Okafor")
_GIVEN = ("Anne", "Marc", "Olga", "Pierre", "Wei", "Sara", "Ivan", "Lucía", "Tomás", "Aiko")


def named(records: Sequence[PlayerRecord], seed: int = 3) -> list[PlayerRecord]:
    """The records with names as federations list them (`Surname, Given`, 15-20 characters:
    two words in the name index)."""
    rng = random.Random(seed)
    return [
        msgspec.structs.replace(
            r, name=f"{rng.choice(_SURNAMES)}-{rng.choice(_SURNAMES)}, {rng.choice(_GIVEN)}"
        )
        for r in records
    ]


def encode(message: dict) -> bytes:
    return _encoder.encode(message)


def fide_pool_before_close(
    players: int, *, period: str = "2025-11", unrated: int | None = None, seed: int = 11
) -> list[PlayerRecord]:
    """A FIDE standard pool at the end of a period, ready for `period.closed`: each rated
    player with the period's sums (about 10 games each), 5 % unrated players with pooled
    initial-rating games (FIDE 8.2)."""
    rng = random.Random(seed)
    unrated = players // 20 if unrated is None else unrated
    records = []
    for i in range(players):
        pid = f"f{i + 1:06d}"
        if i < unrated:
            pooled = [
                InitialGame(
                    period=period,
                    event_id=f"e{i}-{g}",
                    start_date=dt.date(2025, 11, 3),
                    opponent_rating=rng.randint(1400, 2400),
                    score_halves=rng.randint(0, 2),
                )
                for g in range(rng.randint(1, 9))
            ]
            records.append(
                PlayerRecord(
                    system="fide", pool="standard", id=pid, fide=FideState(initial_games=pooled)
                )
            )
            continue
        n = rng.randint(1, 20)
        sums = PeriodSums(
            period=period,
            sum_hundredths=rng.randint(-50 * n, 50 * n),
            games=n,
            points_halves=rng.randint(0, 2 * n),
        )
        records.append(
            PlayerRecord(
                system="fide",
                pool="standard",
                id=pid,
                rating=rng.randint(1400, 2800),
                status="established",
                games=rng.randint(0, 600),
                birth_year=rng.randint(1950, 2014),
                fide=FideState(periods=[sums]),
            )
        )
    return records


def minimal_records(count: int, prefix: str = "m") -> list[PlayerRecord]:
    """The smallest established CFC record an import carries (memory per stored player)."""
    return [
        PlayerRecord(
            system="cfc",
            pool="regular",
            id=f"{prefix}{i:07d}",
            rating=1000 + i % 1500,
            status="established",
            games=25 + i % 500,
            highest=1000 + i % 1500,
        )
        for i in range(count)
    ]
