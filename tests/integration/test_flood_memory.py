"""A flood of maximal entries (D90): the serve process's peak RSS stays under a bound derived
from RATING_READ_BYTES, whatever RATING_BATCH_SIZE x RATING_MAX_BYTES would allow.

The entries are near RATING_MAX_BYTES (256 kB here): Glicko-2 events of 900 players (about
230 kB of games), two-player events padded with whitespace to the limit, and entries a few
bytes over it (refused too_large, kept verbatim in their dead letters). RATING_READ_BYTES is
1 MiB: four entries a read (D90), against 64 (16 MiB) by the batch size alone.
"""

from __future__ import annotations

import asyncio
import time

import msgspec
import pytest

from service.bench.workloads import rated_list, swiss_event
from service.runtime.keys import StreamKeys
from tests.integration.helpers import rejections, settings_for
from tests.integration.processes import Services

pytestmark = [pytest.mark.integration, pytest.mark.slow]

MAX_BYTES = 256 * 1024
READ_BYTES = 1024 * 1024
# What the process holds per byte of entries read, at most (measured 2026-12-02: see
# docs/operations/limits.md): the reply as redis-py reads it and as bytes (2), the decoded
# messages (4.4), the ratings.updated messages and the commit's writes of those entries (7.2
# for a Glicko-2 event); two reads in flight (the subscriber's and a catch-up's).
PER_BYTE = 16
READERS = 2
ALLOWANCE = 24 * 1024 * 1024  # the allocator's slack and the interpreter's own growth


def padded(event_id: str) -> bytes:
    """A two-player Glicko-2 event, padded with whitespace to RATING_MAX_BYTES exactly."""
    body = msgspec.json.encode(
        {
            "schema": "event.finished/v1",
            "event_id": event_id,
            "system": "glicko2",
            "pool": "standard",
            "name": "Padded",
            "start_date": "2025-11-01",
            "end_date": "2025-11-09",
            "rounds": 1,
            "players": [{"id": f"{event_id}-a"}, {"id": f"{event_id}-b"}],
            "games": [{"round": 1, "a": f"{event_id}-a", "b": f"{event_id}-b", "score": 1}],
        }
    )
    return body[:-1] + b" " * (MAX_BYTES - len(body)) + b"}"


def big(n: int) -> bytes:
    """A Glicko-2 event of 900 new players and 8 rounds, near RATING_MAX_BYTES."""
    records = rated_list("glicko2", 900, prefix=f"f{n}-", newcomers=900)
    data = msgspec.json.encode(swiss_event("glicko2", records, 8, event_id=f"flood-big-{n}"))
    assert MAX_BYTES // 2 < len(data) <= MAX_BYTES
    return data


def peak_rss(pid: int) -> int:
    """VmHWM of a live process, in bytes."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmHWM for pid {pid}")


async def wait_for_cursor(client, key: str, entry: str, timeout: float = 240.0) -> None:
    deadline = time.monotonic() + timeout
    while (await client.get(key) or b"").decode() != entry:
        assert time.monotonic() < deadline, f"the cursor did not reach {entry}"
        await asyncio.sleep(0.2)


async def test_a_flood_of_maximal_entries_stays_under_the_bound(client, redis_url, key_prefix):
    settings = settings_for(redis_url, key_prefix)
    stream = settings.input_streams[0]
    cursor = StreamKeys(stream).cursor
    services = Services(settings)
    services.env.update(
        RATING_MAX_BYTES=str(MAX_BYTES), RATING_READ_BYTES=str(READ_BYTES), RATING_BATCH_SIZE="64"
    )
    entries = []
    for n in range(96):
        if n % 12 == 0:
            entries.append(big(n))
        elif n % 4 == 3:
            entries.append(padded(f"flood-over-{n}") + b" " * 64)  # over the limit: refused
        else:
            entries.append(padded(f"flood-{n}"))
    try:
        process = services.start()
        [warm] = [(await client.xadd(stream, {"__data__": padded("warm-up")})).decode()]
        await wait_for_cursor(client, cursor, warm)
        base = peak_rss(process.pid)
        async with client.pipeline(transaction=False) as pipe:
            for data in entries:
                pipe.xadd(stream, {"__data__": data})
            ids = [i.decode() for i in await pipe.execute()]
        await wait_for_cursor(client, cursor, ids[-1])
        peak = peak_rss(process.pid)
        assert process.poll() is None, services.logs(process)
    finally:
        services.stop_all()
    refused = [r for r in await rejections(client, settings) if r.reason == "too_large"]
    assert len(refused) == 24 and all("(RATING_MAX_BYTES)" in r.message for r in refused)
    bound = base + READERS * READ_BYTES * PER_BYTE + ALLOWANCE
    print(
        f"flood: base {base / 2**20:.1f} MiB, peak {peak / 2**20:.1f} MiB, bound {bound / 2**20:.1f} MiB"
    )
    assert peak <= bound, f"peak RSS {peak:,} over the bound {bound:,} (base {base:,})"
