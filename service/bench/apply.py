"""The in-memory apply path of one event: what the service's use case
costs per two-player event, decoding excluded (the runtime's), and where it goes.

A ledger holds an imported rated list (service/bench/workloads.py, 2,000 players by
default); two-player events among its players arrive in date order, each decoded first
(untimed) and then applied as the service applies an entry: `needs`, `in_order`,
`apply_message` (service/rating/apply.py). The figure is the median per event over every
event of several runs, each run on a fresh ledger.

The split of `process` replays its stages alone on each event's own inputs (the records
it was rated from): the content digest of the idempotency marker, the engine's
`rate_event`, the results digest of the archive, the `ratings.updated` message, the read
model's history lines (`entries_of` / `pack_entry`) and the players' packed states (their
history members). What `process` costs beyond them is the ledger's own bookkeeping.

Run: python -m service.bench.apply [--players N] [--events N] [--runs N] [--json]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable

import msgspec

from schemas.events import EventFinished
from schemas.records import PlayerRecord, unrated_record
from schemas.validation import decode_input
from service.bench.workloads import encode, rated_list, two_player_event
from service.engine.contract import EventInput
from service.engine.registry import Registry, default_registry
from service.rating import (
    MemoryLedger,
    apply_message,
    content_digest,
    engine_for,
    event_output,
    in_order,
    marker_key,
    needs,
)
from service.readmodel import entries_of, pack_entry
from service.timeline import order_key, pack_state, results_digest

STAGES = ("content_digest", "engine", "results_digest", "output", "read_model", "history_states")


def two_player_messages(
    system: str, records: list[PlayerRecord], events: int, seed: int = 3
) -> list[EventFinished]:
    """`events` two-player events among the list's players, decoded as the service decodes them."""
    rng = random.Random(seed)
    out = []
    for i in range(events):
        a, b = rng.sample(records, 2)
        message = decode_input(encode(two_player_event(system, a, b, f"apply-{i}", rng)))
        assert isinstance(message, EventFinished)
        out.append(message)
    return out


def _us(seconds: list[float]) -> float:
    return statistics.median(seconds) * 1e6


def _timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def bench_apply(
    system: str,
    players: int = 2_000,
    events: int = 2_000,
    runs: int = 5,
    registry: Registry | None = None,
) -> dict:
    """Median microseconds per two-player event: the whole apply, and its stages."""
    registry = registry or default_registry()
    records = rated_list(system, players)
    messages = two_player_messages(system, records, events)
    times: dict[str, list[float]] = {
        k: [] for k in ("total", "needs", "in_order", "process", *STAGES)
    }
    for run in range(runs):
        ledger = MemoryLedger(records)
        replay = []
        for arrival, message in enumerate(messages, 1):
            source_id = f"{arrival}-0"
            if run == 0:  # what the stages are replayed on: the records the event is rated from
                pool = message.pool or ""
                before = {
                    p.id: ledger.record(system, pool, p.id) or unrated_record(system, pool, p.id)
                    for p in message.players
                }
                replay.append(
                    (message, arrival, source_id, before, ledger.pool_state(system, pool))
                )
            t0 = time.perf_counter()
            needs(message, registry)
            t1 = time.perf_counter()
            ordered = in_order(ledger, message, arrival, registry)
            t2 = time.perf_counter()
            apply_message(ledger, message, registry, source_id, arrival)
            t3 = time.perf_counter()
            assert ordered
            times["needs"].append(t1 - t0)
            times["in_order"].append(t2 - t1)
            times["process"].append(t3 - t2)
            times["total"].append(t3 - t0)
        for message, arrival, source_id, before, pool_state in replay:
            engine = engine_for(message, registry)
            data = EventInput(message, before, pool_state)
            outcome = engine.rate_event(data)
            output = event_output(message, engine, outcome.results, source_id, before)
            key = order_key(message, arrival, engine.order_prefix(message))
            times["content_digest"].append(
                _timed(lambda: (marker_key(message), content_digest(message)))
            )
            times["engine"].append(_timed(lambda: engine.rate_event(data)))
            times["results_digest"].append(_timed(lambda: results_digest(outcome.results)))
            times["output"].append(
                _timed(lambda: event_output(message, engine, outcome.results, source_id, before))
            )
            times["read_model"].append(
                _timed(lambda: [pack_entry(key, e) for _, _, e in entries_of(output)])
            )
            times["history_states"].append(
                _timed(lambda: [key + pack_state(r) for r in before.values()])
            )
    figures = {k: _us(v) for k, v in times.items()}
    figures["ledger"] = figures["process"] - sum(figures[k] for k in STAGES)
    return {
        "system": system,
        "players": players,
        "events": events,
        "runs": runs,
        "us_per_event": figures["total"],
        "stages_us": {k: v for k, v in figures.items() if k != "total"},
    }


def render(figures: dict) -> str:
    s = figures["stages_us"]
    return (
        f"{figures['system']:<5} {figures['us_per_event']:7.1f} us per event"
        f"  (needs {s['needs']:.1f}, in_order {s['in_order']:.1f}, process {s['process']:.1f}:"
        f" engine {s['engine']:.1f}, content digest {s['content_digest']:.1f},"
        f" results digest {s['results_digest']:.1f}, output {s['output']:.1f}, read model {s['read_model']:.1f},"
        f" history states {s['history_states']:.1f}, ledger {s['ledger']:.1f})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m service.bench.apply", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--players", type=int, default=2_000, help="players in the imported list (default 2,000)"
    )
    parser.add_argument(
        "--events", type=int, default=2_000, help="two-player events per run (default 2,000)"
    )
    parser.add_argument(
        "--runs", type=int, default=5, help="runs, each on a fresh ledger (default 5)"
    )
    parser.add_argument("--systems", default="cfc,fide", help="comma-separated (default cfc,fide)")
    parser.add_argument("--json", action="store_true", help="one JSON object per system")
    args = parser.parse_args(argv)
    registry = default_registry()
    if not args.json:
        print(
            f"two-player events through apply_message, {args.players:,}-player list, median of "
            f"{args.events:,} events x {args.runs} runs (decode excluded):"
        )
    for system in args.systems.split(","):
        figures = bench_apply(system, args.players, args.events, args.runs, registry)
        print(msgspec.json.encode(figures).decode() if args.json else "  " + render(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
