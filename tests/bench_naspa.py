"""Benchmark: a 300-player, 31-round NASPA event with 60 newcomers (issue 5).

Run: python tests/bench_naspa.py  - prints the median of several runs. The pairing is
a seeded pseudo-random Swiss-like pairing (deterministic; random is used only here).
"""

from __future__ import annotations

import datetime as dt
import random
import statistics
import time

from schemas.events import EventFinished, Game, PlayerRef
from schemas.records import PlayerRecord, PoolState
from service.engine.contract import EventInput
from service.engine.naspa import naspa_engines
from service.engine.naspa.expected import expected_wins

PLAYERS, ROUNDS, NEWCOMERS, RUNS = 300, 31, 60, 7


def build_event(seed: int = 2024) -> EventInput:
    rng = random.Random(seed)
    ids = [f"p{i:03d}" for i in range(PLAYERS)]
    strength = {p: rng.gauss(1400, 350) for p in ids}
    records = {}
    for i, p in enumerate(ids):
        rating = (
            None if i < NEWCOMERS else max(300, min(2200, int(strength[p] + rng.gauss(0, 100))))
        )
        records[p] = PlayerRecord(
            system="naspa",
            pool="nwl",
            id=p,
            rating=rating,
            status="unrated" if rating is None else "established",
            games=0 if rating is None else rng.randrange(0, 500),
        )
    wins = {p: 0.0 for p in ids}
    games = []
    for rnd in range(1, ROUNDS + 1):
        order = sorted(ids, key=lambda p: (-wins[p], rng.random()))
        for a, b in zip(order[::2], order[1::2]):
            roll = rng.random()
            p_a = expected_wins(strength[a], strength[b])
            score = 0.5 if abs(roll - p_a) < 0.01 else (1.0 if roll < p_a else 0.0)
            wins[a] += score
            wins[b] += 1 - score
            games.append(Game(round=rnd, a=a, b=b, score=score))
    event = EventFinished(
        event_id="bench",
        system="naspa",
        name="Bench",
        start_date=dt.date(2024, 7, 1),
        end_date=dt.date(2024, 7, 5),
        rounds=ROUNDS,
        players=[PlayerRef(id=p) for p in ids],
        games=games,
        pool="nwl",
        ruleset="nsa2008",
    )
    return EventInput(event, records, PoolState(system="naspa", pool="nwl"))


def main() -> None:
    data = build_event()
    engine = next(e for e in naspa_engines() if e.ruleset == "nsa2008")
    times = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        outcome = engine.rate_event(data)
        times.append(time.perf_counter() - t0)
    newcomers = [r for r in outcome.results if r.old_rating is None]
    iterations = sorted(
        {s.newcomer_iterations for r in newcomers for s in r.details.segments if s.newcomer}
    )
    print(
        f"naspa nsa2008: {PLAYERS} players, {ROUNDS} rounds, {NEWCOMERS} newcomers, {len(data.event.games)} games: "
        f"median {statistics.median(times) * 1000:.1f} ms over {RUNS} runs "
        f"(min {min(times) * 1000:.1f} ms; newcomer passes per segment {iterations})"
    )


if __name__ == "__main__":
    main()
