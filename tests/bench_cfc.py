"""Benchmark: rate one 500-player, 9-round CFC event (ruleset cfc-2009).

Run: python tests/bench_cfc.py. Prints the median of several runs of the pure engine
(and, for reference, of decoding the message as the service does plus the engine).
The event is fixed (seeded): 350 established, 100 provisional, 50 new players, random
pairings each round, about 1 % forfeits and one bye per round (odd player out).
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from schemas.cfc import CfcState  # noqa: E402
from schemas.records import PlayerRecord, PoolState  # noqa: E402
from schemas.validation import decode_input  # noqa: E402
from service.engine.cfc import CfcEngine  # noqa: E402
from service.engine.contract import EventInput  # noqa: E402

PLAYERS, ROUNDS, RUNS = 500, 9, 9


def build(seed: int = 2009) -> tuple[bytes, dict[str, PlayerRecord]]:
    rng = random.Random(seed)
    ids = [f"p{i:03d}" for i in range(PLAYERS)]
    records: dict[str, PlayerRecord] = {}
    for i, pid in enumerate(ids):
        if i < 350:
            rating = rng.randint(400, 2600)
            records[pid] = PlayerRecord(
                system="cfc",
                pool="regular",
                id=pid,
                rating=rating,
                status="established",
                games=rng.randint(25, 900),
                highest=rating + rng.randint(0, 200),
            )
        elif i < 450:
            rating, games = rng.randint(600, 2200), rng.randint(1, 24)
            records[pid] = PlayerRecord(
                system="cfc",
                pool="regular",
                id=pid,
                rating=rating,
                status="provisional",
                games=games,
                highest=rating,
                cfc=CfcState(provisional_sum=str(rating * games + rng.randint(-2, 2))),
            )
        else:
            records[pid] = PlayerRecord(system="cfc", pool="regular", id=pid)
    games, byes = [], []
    for rnd in range(1, ROUNDS + 1):
        order = ids[:]
        rng.shuffle(order)
        if len(order) % 2:
            byes.append({"round": rnd, "player": order.pop(), "score": 1})
        for a, b in zip(order[::2], order[1::2]):
            game = {"round": rnd, "a": a, "b": b, "score": rng.choice((0, 0.5, 1))}
            if rng.random() < 0.01:
                game["forfeit"] = True
            games.append(game)
    message = {
        "schema": "event.finished/v1",
        "event_id": "bench-500x9",
        "system": "cfc",
        "name": "Benchmark open",
        "start_date": "2009-07-01",
        "end_date": "2009-07-05",
        "rounds": ROUNDS,
        "players": [{"id": pid} for pid in ids],
        "games": games,
        "byes": byes,
    }
    return msgspec.json.encode(message), records


def main() -> None:
    raw, records = build()
    engine, pool = CfcEngine(), PoolState(system="cfc", pool="regular")
    event = decode_input(raw)
    engine_times, total_times = [], []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        decoded = decode_input(raw)
        t1 = time.perf_counter()
        outcome = engine.rate_event(EventInput(decoded, records, pool))
        t2 = time.perf_counter()
        engine_times.append(t2 - t1)
        total_times.append(t2 - t0)
    assert len(outcome.results) == PLAYERS and event.rounds == ROUNDS
    print(
        f"CFC cfc-2009: {PLAYERS} players, {ROUNDS} rounds, {len(event.games)} games; median of {RUNS} runs:"
    )
    print(f"  engine rate_event:   {statistics.median(engine_times) * 1000:.1f} ms")
    print(f"  decode + rate_event: {statistics.median(total_times) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
