"""The bench of date order (docs/design/guarantees.md "Order"): what the service keeps per event and per
player-event, and how long a correction at the start of a long history takes.

- **Archive**: a stream of two-player events only; Redis bytes (MEMORY USAGE) of the archive
  hash and the timeline per event, and of the players' history sets per player-event.
- **Cascade**: a CFC pool of 20,000 players (2,000 with `--quick`) and a history of 10,000
  events (1,000), alternately two-player games and 40-player 7-round Swiss events, in date
  order; then the first event is corrected (its one result flipped). Measured: from the
  correction's XADD until its revisions are on the output stream (one commit: they all
  arrive together), the number of revisions, and the service's peak RSS; and, as counts that
  a busy machine does not blur, the service's CPU seconds (user, system) and what Redis did
  meanwhile (`INFO commandstats` and `INFO stats` deltas: calls and microseconds by command,
  bytes in and out; on a shared server, its other clients' too).
"""

from __future__ import annotations

import datetime as dt
import random
import subprocess
import time
from collections.abc import Callable

import msgspec
import redis

from schemas.records import PlayerRecord
from service.bench.machine import TICKS
from service.bench.workloads import encode, rated_list, swiss_event, two_player_event
from service.runtime.keys import StreamKeys
from service.runtime.replies import text
from service.runtime.store import DATA_FIELD

FIRST_DAY = dt.date(2020, 1, 1)


def dated(message: dict, day: int) -> dict:
    """The event moved to `day` days after FIRST_DAY (one-day events: date order = this order)."""
    date = (FIRST_DAY + dt.timedelta(days=day)).isoformat()
    return {**message, "start_date": date, "end_date": date}


def history(players: list[PlayerRecord], events: int, prefix: str, seed: int = 23) -> list[dict]:
    """`events` events in date order: two-player games and 40-player 7-round Swiss events, alternately."""
    rng = random.Random(seed)
    out = []
    for n in range(events):
        event_id = f"{prefix}-h{n}"
        if n % 2 == 0:
            a, b = rng.sample(players, 2)
            message = two_player_event("cfc", a, b, event_id, rng)
            if (
                n == 0
            ):  # the event the bench corrects: a decisive result, so that flipping it changes figures
                message["games"][0]["score"] = 1
        else:
            message = swiss_event(
                "cfc", rng.sample(players, 40), 7, event_id=event_id, seed=seed + n
            )
        out.append(dated(message, n // 4))
    return out


def _xadd_all(client: redis.Redis, stream: str, messages: list[dict], chunk: int = 500) -> None:
    for start in range(0, len(messages), chunk):
        with client.pipeline(transaction=False) as pipe:
            for message in messages[start : start + chunk]:
                pipe.xadd(stream, {DATA_FIELD: encode(message)})
            pipe.execute()


def _wait_outputs(client: redis.Redis, output: str, count: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while client.xlen(output) < count:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{client.xlen(output)} of {count} outputs after {timeout:.0f} s")
        time.sleep(0.05)


def _memory(client: redis.Redis, keys: list[bytes | str]) -> int:
    total = 0
    with client.pipeline(transaction=False) as pipe:
        for key in keys:
            pipe.memory_usage(key, samples=0)
        for used in pipe.execute():
            total += used or 0
    return total


def archive_bytes(client: redis.Redis, stream: str, events: int, players: int) -> dict:
    """Redis bytes per archived event (archive hash + timeline) and per player-event (histories)."""
    keys = StreamKeys(stream)
    archive = _memory(
        client, [keys.events, *client.scan_iter(match=keys.timeline("*"), count=1000)]
    )
    histories = _memory(
        client, list(client.scan_iter(match=keys.history("*", "*", "*"), count=1000))
    )
    return {
        "events": events,
        "bytes_per_event": archive / events,
        "player_events": players,
        "bytes_per_player_event": histories / players,
    }


def bench_cascade(
    url: str,
    prefix: str,
    pool: int,
    events: int,
    start_service: Callable[[dict], subprocess.Popen],
    wait_for_group: Callable,
    peak_rss_mb: Callable[[int], float],
    progress: Callable[[str], None] = lambda _: None,
) -> dict:
    """The archive's size and a correction's cascade (see the module's docstring): a pool of
    `pool` players and a history of `events` events."""
    client = redis.Redis.from_url(url)
    names = _names(prefix)
    players = rated_list("cfc", pool, prefix=f"{prefix}-c")
    _import_players(client, (names["input"], names["archive"]), players)
    service = start_service(_service_env(url, names))
    try:
        wait_for_group(client, names["input"], names["group"], service)
        progress("date order: archive of two-player events")
        archive = _archive(client, names, players, prefix, events)
        progress(f"date order: a history of {events:,} events in a pool of {pool:,}")
        messages = history(players, events, prefix)
        started = time.perf_counter()
        _xadd_all(client, names["input"], messages)
        _wait_outputs(client, names["output"], 2 * events, timeout=1_800)
        in_order_seconds = time.perf_counter() - started
        progress("date order: the first event corrected")
        seconds, revisions, counts = _correct_first(client, names, messages[0], service.pid)
        rss = peak_rss_mb(service.pid)
        _none_rejected(client, names["rejected"])
    finally:
        _stop(service)
        client.close()
    return {
        "archive": archive,
        "correction": {
            "players": pool,
            "later_events": events - 1,
            "seconds": seconds,
            "revisions": revisions,
            "history_seconds": in_order_seconds,
            "service_peak_rss_mb": rss,
            **counts,
        },
    }


def _names(prefix: str) -> dict[str, str]:
    """The streams and group of the cascade (`input`) and of the archive (`archive`)."""
    return {
        "input": f"{prefix}.c-events",
        "output": f"{prefix}.c-ratings",
        "rejected": f"{prefix}.c-rejected",
        "group": f"{prefix}.c-group",
        "archive": f"{prefix}.a-events",
    }


def _import_players(
    client: redis.Redis, streams: tuple[str, ...], players: list[PlayerRecord]
) -> None:
    """The pool's records into each input stream's store (each has its own)."""
    for stream in streams:
        for start in range(0, len(players), 1_000):
            client.hset(
                StreamKeys(stream).players("cfc", "regular"),
                mapping={r.id: msgspec.json.encode(r) for r in players[start : start + 1_000]},
            )


def _service_env(url: str, names: dict[str, str]) -> dict[str, str]:
    """The `serve` of the bench: both input streams, no HTTP port, warnings only."""
    return {
        "RATING_REDIS_URL": url,
        "RATING_INPUT_STREAMS": f"{names['input']},{names['archive']}",
        "RATING_OUTPUT_STREAM": names["output"],
        "RATING_DEAD_LETTER_STREAM": names["rejected"],
        "RATING_GROUP": names["group"],
        "RATING_HTTP_PORT": "0",
        "RATING_LOG_LEVEL": "WARNING",
    }


def _archive(
    client: redis.Redis,
    names: dict[str, str],
    players: list[PlayerRecord],
    prefix: str,
    events: int,
) -> dict:
    """`events` two-player events rated on the archive stream, then archive_bytes of them."""
    rng = random.Random(5)
    two = [
        dated(two_player_event("cfc", a, b, f"{prefix}-a{n}", rng), n // 50)
        for n in range(events)
        for a, b in (rng.sample(players, 2),)
    ]
    _xadd_all(client, names["archive"], two)
    _wait_outputs(client, names["output"], events, timeout=600)
    return archive_bytes(client, names["archive"], events, 2 * events)


def _correct_first(
    client: redis.Redis, names: dict[str, str], first: dict, pid: int
) -> tuple[float, int, dict]:
    """The first event corrected (its one result flipped): the seconds from the XADD until
    its revisions are on the output stream, how many there are, and the counts (`serve`'s
    CPU, Redis's commands and bytes) from before the XADD until the commit is acknowledged."""
    correction = {
        **first,
        "schema": "event.corrected/v1",
        "reason": "bench: result flipped",
    }
    correction["games"] = [{**first["games"][0], "score": 0}]
    before = client.xlen(names["output"])
    last = client.xrevrange(names["output"], count=1)
    after = (text(last[0][0]) or "0-0") if last else "0-0"
    cpu, redis_before = process_cpu(pid), redis_counts(client)
    started = time.perf_counter()
    entry = client.xadd(names["input"], {DATA_FIELD: encode(correction)})
    # Woken by the first revision on the output stream (they come in one commit), not by a
    # poll: a poll every 50 ms added up to 50 ms to the figure.
    if not client.xread({names["output"]: after}, count=1, block=600_000):
        raise RuntimeError("no revision on the output stream after 600 s")
    seconds = time.perf_counter() - started
    _wait_acknowledged(client, names, entry)
    user, system = (b - a for a, b in zip(cpu, process_cpu(pid)))
    counts = {
        "service_cpu_seconds": {"user": round(user, 2), "system": round(system, 2)},
        "redis": counts_delta(redis_before, redis_counts(client)),
    }
    return seconds, client.xlen(names["output"]) - before, counts


def _wait_acknowledged(client: redis.Redis, names: dict[str, str], entry: bytes | str) -> None:
    """Until the group has no entry pending (the commit's XACK: its counts are complete)."""
    deadline = time.monotonic() + 600
    while client.xpending(names["input"], names["group"])["pending"]:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the correction {entry!r} is still pending after 600 s")
        time.sleep(0.05)


def process_cpu(pid: int) -> tuple[float, float]:
    """User and system CPU seconds of a live process (/proc/<pid>/stat)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rpartition(")")[2].split()
    return int(fields[11]) / TICKS, int(fields[12]) / TICKS


def redis_counts(client: redis.Redis) -> dict:
    """Redis's counters so far: calls and microseconds by command, bytes in and out."""
    stats, cpu = client.info("stats"), client.info("cpu")
    return {
        "cpu": float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"]),
        "commands": {
            name.removeprefix("cmdstat_"): (int(v["calls"]), int(v["usec"]))
            for name, v in client.info("commandstats").items()
        },
        "bytes_in": int(stats["total_net_input_bytes"]),
        "bytes_out": int(stats["total_net_output_bytes"]),
    }


def counts_delta(before: dict, after: dict) -> dict:
    """What Redis did between two `redis_counts`: its CPU seconds, the commands' calls and
    microseconds (a command run by EXEC or a script counts in its own line and in theirs),
    and the bytes it received and sent."""
    commands = {}
    for name, (calls, usec) in after["commands"].items():
        was_calls, was_usec = before["commands"].get(name, (0, 0))
        if calls > was_calls:
            commands[name] = {"calls": calls - was_calls, "usec": usec - was_usec}
    return {
        "cpu_seconds": round(after["cpu"] - before["cpu"], 3),
        "commands": dict(sorted(commands.items(), key=lambda kv: -kv[1]["usec"])),
        "bytes_in": after["bytes_in"] - before["bytes_in"],
        "bytes_out": after["bytes_out"] - before["bytes_out"],
    }


def _none_rejected(client: redis.Redis, rejected_stream: str) -> None:
    """Every bench event is valid: a dead letter means the bench (or the service) is wrong."""
    rejected = client.xlen(rejected_stream) if client.exists(rejected_stream) else 0
    if rejected:
        raise RuntimeError(
            f"{rejected} bench entries were dead-lettered: {client.xrange(rejected_stream, count=1)}"
        )


def _stop(service: subprocess.Popen) -> None:
    """SIGTERM, and SIGKILL after 20 s."""
    service.terminate()
    try:
        service.wait(20)
    except subprocess.TimeoutExpired:
        service.kill()
