"""A season of mixed events: CFC club nights, FIDE events closed month by month, NASPA
club sessions with newcomers - the traffic the soak test sends."""

from __future__ import annotations

import random

from schemas import PlayerRecord
from schemas.periods import add_months

CFC_PLAYERS = [f"cfc{i}" for i in range(40)]
FIDE_PLAYERS = [f"fide{i}" for i in range(40)]
FIDE_NEWCOMERS = [f"fnew{i}" for i in range(12)]
NASPA_PLAYERS = [f"naspa{i}" for i in range(30)]
NASPA_NEWCOMERS = [f"nnew{i}" for i in range(20)]


def starting_lists() -> list[PlayerRecord]:
    """The three federations' lists before the season."""
    records = [
        PlayerRecord(
            system="cfc",
            pool="regular",
            id=pid,
            rating=1000 + 30 * i,
            status="established",
            games=40,
            highest=1000 + 30 * i,
        )
        for i, pid in enumerate(CFC_PLAYERS)
    ]
    records += [
        PlayerRecord(
            system="fide",
            pool="standard",
            id=pid,
            rating=1600 + 25 * i,
            status="established",
            games=60 + i,
            birth_year=1960 + i,
        )
        for i, pid in enumerate(FIDE_PLAYERS)
    ]
    records += [
        PlayerRecord(
            system="naspa",
            pool="nwl",
            id=pid,
            rating=900 + 40 * i,
            status="established",
            games=20 + 5 * i,
        )
        for i, pid in enumerate(NASPA_PLAYERS)
    ]
    return records


def _round_robin(rng: random.Random, ids: list[str], rounds: int) -> list[dict]:
    games = []
    for r in range(rounds):
        order = ids[:]
        rng.shuffle(order)
        for a, b in zip(order[0::2], order[1::2]):
            games.append({"round": r + 1, "a": a, "b": b, "score": rng.choice([0, 0.5, 1])})
    return games


def season(count: int, seed: int, per_month: int = 120) -> list[dict]:
    """`count` events (and a FIDE period close after each month), in publishing order."""
    rng = random.Random(seed)
    messages: list[dict] = []
    made = 0
    month = 0
    while made < count:
        period = add_months("2024-01", month)
        for _ in range(min(per_month, count - made)):
            system = rng.choice(["cfc", "fide", "naspa"])
            day = rng.randint(1, 25)
            if system == "cfc":
                ids = rng.sample(CFC_PLAYERS, rng.choice([4, 6]))
            elif system == "fide":
                ids = rng.sample(FIDE_PLAYERS, 4) + rng.sample(
                    FIDE_NEWCOMERS, rng.choice([0, 0, 2])
                )
            else:
                ids = rng.sample(NASPA_PLAYERS, 4) + rng.sample(
                    NASPA_NEWCOMERS, rng.choice([0, 0, 2])
                )
            rounds = rng.randint(2, 4)
            messages.append(
                {
                    "schema": "event.finished/v1",
                    "event_id": f"s{seed}-{made}",
                    "system": system,
                    "name": f"{system} event {made}",
                    "start_date": f"{period}-{day:02d}",
                    "end_date": f"{period}-{day + 2:02d}",
                    "rounds": rounds,
                    "players": [{"id": i} for i in ids],
                    "games": _round_robin(rng, ids, rounds),
                }
            )
            made += 1
        messages.append(
            {"schema": "period.closed/v1", "system": "fide", "pool": "standard", "period": period}
        )
        month += 1
    return messages
