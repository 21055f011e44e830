"""`python -m service.bench.oomloop`: what the service does when a replica is killed each
time it rates an entry, as a container memory limit below the entry's peak does (the OOM
killer's SIGKILL), and the orchestrator restarts it (docs/operations/sizing.md).

A private server; a CFC pool and a history of events (service/bench/cascade.py's mix) rated
by a `serve` without a limit; then `--replicas` replicas under fixed consumer names (as pods
are), each SIGKILLed by a watchdog whenever its RSS passes `--limit-mib` and started again at
once (Kubernetes waits 10 s, 20 s, 40 s ... between restarts of one container; the standby
does not wait). A correction of the first event (its cascade re-rates the whole history) and
one new event after it are published. Printed: the kills, how the correction ended (its dead
letter's reason), whether the event after it was rated, the attempts counted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from typing import Any

import msgspec
import redis

from service.bench import benchmark as bench
from service.bench.cascade import history
from service.bench.sizing import Run, _append, _correction, _serve, _wait_cursor, named
from service.bench.workloads import encode, rated_list, two_player_event
from service.runtime.embedded import EmbeddedServer
from service.runtime.keys import StreamKeys
from service.runtime.store import DATA_FIELD


def rss_mib(pid: int) -> float:
    """VmRSS of a live process (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def oom_loop(limit_mib: float, pool: int, events: int, replicas: int, timeout: float) -> dict:
    server = EmbeddedServer(persistent=False).start()
    url, run = server.url, Run("oomloop")
    client: Any = redis.Redis.from_url(url)  # its replies: bytes
    keys = StreamKeys(run.input)
    try:
        players = named(rated_list("cfc", pool, prefix="c"))
        asyncio.run(bench._import(url, keys, players))
        messages = history(players, events, run.prefix)
        first = _serve(url, run)
        try:
            _wait_cursor(
                client,
                keys,
                _append(client, run.input, [encode(m) for m in messages]),
                first,
                3_600,
            )
        finally:
            bench._stop(first)
        names = [f"replica-{n + 1}" for n in range(replicas)]
        env = {name: run.env(url, RATING_CONSUMER=name, RATING_LEASE_MS="2000") for name in names}
        alive = {name: bench._start(["-m", "service", "serve"], env[name]) for name in names}
        kills: list[tuple[float, str, float]] = []
        after = two_player_event(
            "cfc", players[0], players[1], f"{run.prefix}-after", random.Random(1)
        )
        last = messages[-1]["end_date"]
        after = {**after, "start_date": last, "end_date": last}
        started = time.monotonic()
        client.xadd(run.input, {DATA_FIELD: encode(_correction(messages[0]))})
        last_id = client.xadd(run.input, {DATA_FIELD: encode(after)}).decode()
        while time.monotonic() - started < timeout:
            if (client.get(keys.cursor) or b"").decode() == last_id:
                break
            for name, process in alive.items():
                if process.poll() is None and rss_mib(process.pid) > limit_mib:
                    kills.append((time.monotonic() - started, name, rss_mib(process.pid)))
                    process.kill()
                    process.wait()
                if process.poll() is not None:
                    alive[name] = bench._start(["-m", "service", "serve"], env[name])
            time.sleep(0.005)
        seconds = time.monotonic() - started
        letters = client.xrange(run.dead_letter) if client.exists(run.dead_letter) else []
        outputs = [
            fields[DATA_FIELD.encode()]
            for _, fields in client.xrange(run.output, min="-", max="+")[-5:]
        ]
        for process in alive.values():
            bench._stop(process)
        return {
            "limit_mib": limit_mib,
            "pool": pool,
            "history_events": events,
            "replicas": replicas,
            "kills": [
                {"at_seconds": round(t, 2), "replica": n, "rss_mib": round(r)} for t, n, r in kills
            ],
            "dead_letters": [
                {
                    k: msgspec.json.decode(f[DATA_FIELD.encode()]).get(k)
                    for k in ("reason", "event_id", "message")
                }
                for _, f in letters
            ],
            "event_after_rated": any(
                b'"event_id":"' + after["event_id"].encode() + b'"' in o for o in outputs
            ),
            "applied_through_last": (client.get(keys.cursor) or b"").decode() == last_id,
            "seconds": round(seconds, 1),
        }
    finally:
        client.close()
        server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m service.bench.oomloop", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--limit-mib", type=float, default=150.0, help="kill a replica above this RSS"
    )
    parser.add_argument("--pool", type=int, default=2_000, help="players in the pool")
    parser.add_argument("--events", type=int, default=1_000, help="events in the history")
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for the end")
    args = parser.parse_args(argv)
    report = oom_loop(args.limit_mib, args.pool, args.events, args.replicas, args.timeout)
    json.dump(report, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
