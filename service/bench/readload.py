"""The read side's figures (docs/guides/websites.md), part of `rating-service bench`.

- A pool of `players` CFC players whose histories hold `player_events` lines in all, written
  straight into the read model's keys (what the service's commits would have written for
  that many rated events; rating them would take minutes): `regulars` players have
  `regular_events` lines each, the others share the rest.
- The real service (`python -m service serve`) with its HTTP API on a free port.
- `latency`: requests paced at `rate` per second for `seconds`, in a fixed mix (half player
  lookups, three in ten histories of a regular, one in five first pages of the ranked list),
  each timed from its scheduled start to its last byte (so a stall counts against every
  request it delays); p50 / p99 per kind.
- `throughput`: the two-player drain rate (service/bench/benchmark.py `drain_rate`) without
  and with that read load, alternating, `runs` times each; the ratio of the medians.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import httpx
import redis
from redis.typing import EncodableT, FieldT

from schemas.reads import HistoryEntry
from schemas.records import PlayerRecord
from service.bench.machine import stderr_tail
from service.readmodel import name_members, pack_entry, rank_score
from service.runtime.embedded import free_port
from service.runtime.keys import StreamKeys
from service.runtime.store import encode

WORDS = (
    "Able",
    "Baker",
    "Carter",
    "Dubois",
    "Eriksen",
    "Fischer",
    "Garcia",
    "Horvat",
    "Ivanov",
    "Jensen",
    "Kowalski",
    "Larsen",
    "Martin",
    "Novak",
    "Olsen",
    "Petrov",
    "Quinn",
    "Rossi",
    "Silva",
    "Tanaka",
)


@dataclass(frozen=True)
class ReadSizes:
    players: int
    player_events: int
    regulars: int
    regular_events: int
    rate: float
    seconds: float
    runs: int
    drain_events: int

    @staticmethod
    def of(quick: bool) -> ReadSizes:
        if quick:
            return ReadSizes(
                players=10_000,
                player_events=100_000,
                regulars=100,
                regular_events=200,
                rate=200,
                seconds=3.0,
                runs=2,
                drain_events=1_500,
            )
        return ReadSizes(
            players=100_000,
            player_events=1_000_000,
            regulars=1_000,
            regular_events=200,
            rate=200,
            seconds=10.0,
            runs=3,
            drain_events=6_000,
        )


def pool_records(prefix: str, count: int, seed: int = 11) -> list[PlayerRecord]:
    """Established CFC players with names: ids `<prefix>r000001`..."""
    rng = random.Random(seed)
    records = []
    for i in range(count):
        rating = max(100, min(2800, int(rng.gauss(1500, 350))))
        name = f"{rng.choice(WORDS)}{i % 997}, {rng.choice(WORDS)}"
        records.append(
            PlayerRecord(
                system="cfc",
                pool="regular",
                id=f"{prefix}r{i + 1:06d}",
                name=name,
                rating=rating,
                status="established",
                games=rng.randint(25, 900),
                highest=rating + rng.randint(0, 150),
            )
        )
    return records


def _line(n: int, rating: int, rng: random.Random) -> tuple[bytes, HistoryEntry]:
    """The n-th history line of a player (one per week from 2015 on)."""
    import datetime as dt

    end = dt.date(2015, 1, 4) + dt.timedelta(days=7 * n)
    change = rng.randint(-20, 20)
    entry = HistoryEntry(
        kind="event",
        event_id=f"e{n}-{rng.randrange(1 << 30)}",
        name=f"Club night {n}",
        start_date=end,
        end_date=end,
        period=None,
        list_period=None,
        old_rating=rating - change,
        new_rating=rating,
        change=change,
        old_status="established",
        status="established",
        games=100 + n,
        event_games=4,
        score=2.5,
        expected=2.1,
        performance=float(rating + 40),
        revision=0,
    )
    key = (0).to_bytes(3, "big") + end.toordinal().to_bytes(3, "big") * 2 + n.to_bytes(8, "big")
    return key, entry


def populate(
    url: str,
    keys: StreamKeys,
    records: list[PlayerRecord],
    sizes: ReadSizes,
    progress: Callable[[str], None],
) -> None:
    """Write the records, their ranking and name index, and the history lines."""
    rng = random.Random(5)
    client = redis.Redis.from_url(url)
    players = keys.players("cfc", "regular")
    rest = sizes.player_events - sizes.regulars * sizes.regular_events
    others = len(records) - sizes.regulars
    try:
        for start in range(0, len(records), 1_000):
            chunk = records[start : start + 1_000]
            with client.pipeline(transaction=False) as pipe:
                pipe.hset(players, mapping={r.id: encode(r) for r in chunk})
                pipe.zadd(keys.ranking("cfc", "regular"), {r.id: rank_score(r) for r in chunk})
                pipe.zadd(
                    keys.names("cfc", "regular"), {m: 0 for r in chunk for m in name_members(r)}
                )
                for i, record in enumerate(chunk, start):
                    lines = (
                        sizes.regular_events
                        if i < sizes.regulars
                        else rest // others + (i - sizes.regulars < rest % others)
                    )
                    fields: dict[FieldT, EncodableT] = {}
                    names: dict[FieldT, EncodableT] = {}
                    for n in range(lines):
                        key, entry = _line(n, record.rating or 1500, rng)
                        event_id = cast(str, entry.event_id)  # _line names it
                        fields[event_id] = pack_entry(key, entry)
                        names[event_id] = cast(str, entry.name)  # the lines leave it out (D122)
                    if fields:
                        pipe.hset(keys.entries("cfc", "regular", record.id), mapping=fields)
                        pipe.hset(keys.event_names, mapping=names)
                pipe.execute()
            if start and start % 20_000 == 0:
                progress(f"read side: {start:,} of {len(records):,} players written")
        client.hset(keys.catalog, "cfc:regular", int(time.time() * 1000))
    finally:
        client.close()


class ReadLoad:
    """Paced GET requests in a thread of their own (its own event loop), until stopped."""

    def __init__(self, base: str, records: list[PlayerRecord], regulars: int, rate: float):
        self.base = base
        self.ids = [r.id for r in records]
        self.regulars = self.ids[:regulars]
        self.rate = rate
        self.timings: dict[str, list[float]] = {"player": [], "history": [], "list": []}
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def path(self, n: int, rng: random.Random) -> tuple[str, str]:
        kind = (
            "player",
            "player",
            "player",
            "player",
            "player",
            "history",
            "history",
            "history",
            "list",
            "list",
        )[n % 10]
        if kind == "player":
            return kind, f"/v1/pools/cfc/regular/players/{rng.choice(self.ids)}"
        if kind == "history":
            return kind, f"/v1/pools/cfc/regular/players/{rng.choice(self.regulars)}/history"
        return kind, "/v1/pools/cfc/regular/players?limit=50"

    async def _run(self, seconds: float | None) -> None:
        rng = random.Random(3)
        limits = httpx.Limits(max_connections=32, max_keepalive_connections=32)
        async with httpx.AsyncClient(base_url=self.base, limits=limits, timeout=10.0) as client:
            loop = asyncio.get_running_loop()
            start = loop.time()
            pending: set[asyncio.Task] = set()
            n = 0
            while not self._stop.is_set() and (seconds is None or loop.time() - start < seconds):
                due = start + n / self.rate
                delay = due - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                kind, path = self.path(n, rng)
                task = asyncio.create_task(self._get(client, kind, path, due, loop))
                pending.add(task)
                task.add_done_callback(pending.discard)
                n += 1
            if pending:
                await asyncio.gather(*pending)

    async def _get(
        self, client: httpx.AsyncClient, kind: str, path: str, due: float, loop: Any
    ) -> None:
        try:
            reply = await client.get(path)
            if reply.status_code != 200:
                self.failures.append(f"{path}: {reply.status_code}")
                return
        except httpx.HTTPError as exc:
            self.failures.append(f"{path}: {exc!r}")
            return
        self.timings[kind].append((loop.time() - due) * 1000)

    def run_for(self, seconds: float) -> None:
        asyncio.run(self._run(seconds))

    def start(self) -> None:
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run(None)), daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(30)


def _percentiles(values: list[float]) -> dict:
    ordered = sorted(values)
    if not ordered:
        return {"requests": 0, "p50_ms": float("nan"), "p99_ms": float("nan")}
    at = lambda pct: ordered[min(len(ordered) - 1, int(round(pct / 100 * (len(ordered) - 1))))]
    return {"requests": len(ordered), "p50_ms": at(50), "p99_ms": at(99)}


def wait_ready(base: str, process: Any, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the service exited ({process.returncode}): {stderr_tail(process)}")
        try:
            if httpx.get(f"{base}/health/ready", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"the service at {base} was not ready after {timeout:.0f} s")


def bench_reads(
    url: str,
    prefix: str,
    quick: bool,
    start_service: Callable[[dict], Any],
    stop: Callable[[Any], None],
    drain: Callable[[list[bytes]], float],
    make_two_player: Callable[[list[PlayerRecord]], Callable[[], bytes]],
    progress: Callable[[str], None],
) -> dict:
    """The read side's figures: latency per kind at the paced rate, and the service's
    two-player throughput with and without that load."""
    sizes = ReadSizes.of(quick)
    stream = f"{prefix}.reads"
    keys = StreamKeys(stream)
    records = pool_records(f"{prefix}-", sizes.players)
    progress(
        f"read side: writing {sizes.players:,} players and {sizes.player_events:,} history lines"
    )
    populate(url, keys, records, sizes, progress)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    service = start_service(
        {
            "RATING_INPUT_STREAMS": stream,
            "RATING_OUTPUT_STREAM": f"{prefix}.reads-out",
            "RATING_DEAD_LETTER_STREAM": f"{prefix}.reads-dead",
            "RATING_HTTP_PORT": str(port),
            "RATING_HTTP_HOST": "127.0.0.1",
        }
    )
    try:
        wait_ready(base, service)
        ReadLoad(base, records, sizes.regulars, sizes.rate).run_for(1.0)  # warm-up
        progress(f"read side: {sizes.rate:.0f} requests/s for {sizes.seconds:.0f} s")
        load = ReadLoad(base, records, sizes.regulars, sizes.rate)
        load.run_for(sizes.seconds)
        if load.failures:
            raise RuntimeError(
                f"{len(load.failures)} read requests failed, e.g. {load.failures[0]}"
            )
        latency = {kind: _percentiles(values) for kind, values in load.timings.items()}
        two_player = make_two_player(records)
        drain([two_player() for _ in range(200)])  # warm-up
        without, under = [], []
        for run in range(sizes.runs):
            progress(
                f"read side: throughput run {run + 1} of {sizes.runs}, without and with the read load"
            )
            without.append(drain([two_player() for _ in range(sizes.drain_events)]))
            background = ReadLoad(base, records, sizes.regulars, sizes.rate)
            background.start()
            try:
                under.append(drain([two_player() for _ in range(sizes.drain_events)]))
            finally:
                background.stop()
            if background.failures:
                raise RuntimeError(
                    f"{len(background.failures)} read requests failed, e.g. {background.failures[0]}"
                )
    finally:
        stop(service)
    alone, loaded = statistics.median(without), statistics.median(under)
    return {
        "players": sizes.players,
        "player_events": sizes.player_events,
        "history_lines": sizes.regular_events,
        "rate": sizes.rate,
        "seconds": sizes.seconds,
        **{kind: figures for kind, figures in latency.items()},
        "throughput": {
            "events_per_second": alone,
            "under_read_load": loaded,
            "ratio": loaded / alone,
            "runs": sizes.runs,
        },
    }
