"""Benchmark: rate 200,000 games of 20,000 players into one FIDE period, then close it.

Run: python tests/bench_fide.py  (prints the median of several runs of each step)
"""

from __future__ import annotations

import datetime as dt
import random
import statistics
import time

from schemas.events import EventFinished, Game, PeriodClosed, PlayerRef
from schemas.fide import FideState, InitialGame, PeriodSums
from schemas.records import PlayerRecord, PoolState
from service.engine.contract import EventInput
from service.engine.fide import FideEngine

PLAYERS = 20_000
GAMES = 200_000
UNRATED = 1_000  # of the players, unrated with pooled games
PERIOD = "2025-11"
RUNS = 5


def built_records(rng: random.Random) -> dict[str, PlayerRecord]:
    """The pool as it stands before the close: 200,000 games' sums built directly."""
    games = [0] * PLAYERS
    for _ in range(GAMES):
        a, b = rng.sample(range(PLAYERS), 2)
        games[a] += 1
        games[b] += 1
    records = {}
    for i in range(PLAYERS):
        pid = f"p{i:05d}"
        if i < UNRATED:
            pooled = [
                InitialGame(
                    period=PERIOD,
                    event_id=f"e{i}",
                    start_date=dt.date(2025, 11, 3),
                    opponent_rating=rng.randint(1400, 2400),
                    score_halves=rng.randint(0, 2),
                )
                for _ in range(min(games[i], 8))
            ]
            records[pid] = PlayerRecord(
                system="fide", pool="standard", id=pid, fide=FideState(initial_games=pooled)
            )
        else:
            n = games[i]
            sums = PeriodSums(
                period=PERIOD, sum_hundredths=rng.randint(-50 * n, 50 * n), games=n, points_halves=n
            )
            records[pid] = PlayerRecord(
                system="fide",
                pool="standard",
                id=pid,
                rating=rng.randint(1400, 2800),
                status="established",
                games=rng.randint(0, 500),
                birth_year=rng.randint(1950, 2015),
                fide=FideState(periods=[sums]),
            )
    return records


def events(rng: random.Random) -> list[EventFinished]:
    """2,000 events of 100 games among 100 players each: 200,000 games."""
    out = []
    for e in range(2_000):
        ids = [f"p{i:05d}" for i in rng.sample(range(PLAYERS), 100)]
        games = [
            Game(
                round=r // 50 + 1,
                a=ids[(2 * r) % 100],
                b=ids[(2 * r + 1 + r // 50 * 2) % 100],
                score=rng.choice([0.0, 0.5, 1.0]),
            )
            for r in range(100)
        ]
        out.append(
            EventFinished(
                event_id=f"ev{e}",
                system="fide",
                name="bench",
                start_date=dt.date(2025, 11, 1),
                end_date=dt.date(2025, 11, 3),
                rounds=2,
                players=[PlayerRef(id=p) for p in ids],
                games=games,
                pool="standard",
                ruleset="fide-2024",
                period=PERIOD,
            )
        )
    return out


def time_rating(engine: FideEngine, rng: random.Random) -> float:
    store = {
        f"p{i:05d}": PlayerRecord(
            system="fide",
            pool="standard",
            id=f"p{i:05d}",
            rating=None if i < UNRATED else rng.randint(1400, 2800),
            status="unrated" if i < UNRATED else "established",
            games=100,
        )
        for i in range(PLAYERS)
    }
    pool = PoolState(system="fide", pool="standard")
    batch = events(rng)
    start = time.perf_counter()
    for event in batch:
        outcome = engine.rate_event(
            EventInput(event, {p.id: store[p.id] for p in event.players}, pool)
        )
        for record in outcome.records:
            store[record.id] = record
    return time.perf_counter() - start


def main() -> None:
    engine = FideEngine()
    rng = random.Random(2025)
    records = built_records(rng)
    pool = PoolState(system="fide", pool="standard")
    message = PeriodClosed(system="fide", pool="standard", period=PERIOD, ruleset="fide-2024")
    closes = []
    for _ in range(RUNS):
        start = time.perf_counter()
        outcome = engine.close_period(message, records, pool)
        closes.append(time.perf_counter() - start)
    rates = [time_rating(engine, random.Random(run)) for run in range(3)]
    print(
        f"close_period: {PLAYERS:,} players, {GAMES:,} games, {len(outcome.results):,} listed: "
        f"median {statistics.median(closes):.3f} s over {RUNS} runs"
    )
    print(
        f"rate_event: 2,000 events, {GAMES:,} games: median {statistics.median(rates):.3f} s over 3 runs"
    )


if __name__ == "__main__":
    main()
