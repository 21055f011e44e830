"""Crash safety of corrections, withdrawals and late events (design "Processing guarantees"
and "Order (v1.1)"): the service as its own processes.

- A mixed workload (tests/cascade_workload.py: CFC; FIDE with a period closed between two;
  NASPA nwl + csw) through two replicas, the owner SIGKILLed at random points: the end state equals
  the offline twin and the date-order fold, one output per (event id, revision), each dead
  letter once, nothing pending.
- Redis stopped and started again (AOF) while the service commits a cascade of ~2,000 events:
  the cascade is committed once, whole, and the end equals the offline twin.
"""

from __future__ import annotations

import asyncio
import os
import random
import time

import pytest
import redis.asyncio as aioredis

from service.entryids import entry_order
from service.runtime.keys import StreamKeys
from service.runtime.records_io import import_records
from tests.cascade_workload import check_revisions, figures
from tests.integration.corrections import (
    check_against_offline_and_fold,
    load_lists,
    mixed,
    offline,
    publish_all,
)
from tests.integration.helpers import outputs, settings_for
from tests.integration.processes import PrivateRedis, Services, stored_records, wait_until_applied
from tests.integration.test_corrections_service import club_season, flipped

pytestmark = [pytest.mark.integration, pytest.mark.slow]


SEED = int(os.environ.get("CASCADE_CRASH_SEED", "41"))


@pytest.mark.parametrize("fide", ["fide-close", "fide-reopen"])
async def test_two_replicas_one_killed_at_random_end_as_offline(redis_url, key_prefix, fide):
    settings = settings_for(redis_url, key_prefix, batch_size=8)
    stream = settings.input_streams[0]
    client = aioredis.Redis.from_url(redis_url)
    m = mixed(seed=SEED, cases=("cfc", fide, "naspa"), events=36, extra=48)
    await load_lists(client, stream, m)
    rng = random.Random(SEED)
    services = Services(settings)
    services.env["RATING_LOG_LEVEL"] = "INFO"  # to tell which killed replicas were working
    kills = 0
    killed_working = 0
    publishing = True

    async def working() -> object:
        """The replica that owns the stream (holds its lease), else either."""
        value = await client.get(StreamKeys(stream).lease)
        owner = value.decode().partition(" ")[2] if value else ""
        return next(
            (p for p in services.running if owner.endswith(f"-{p.pid}")),
            rng.choice(services.running),
        )

    async def killer() -> None:
        nonlocal kills, killed_working
        last = None
        while publishing or (await client.get(StreamKeys(stream).cursor)) != last:
            await asyncio.sleep(rng.uniform(0.3, 1.2))
            # The owner is killed once it has committed (then wherever it is), not after a
            # time a loaded machine's start-up can outrun; a bound of a minute for that.
            deadline = time.monotonic() + 60
            victim = await working()
            while '"event": "committed"' not in services.logs(victim):
                if (
                    not publishing
                    and (await client.get(StreamKeys(stream).cursor))
                    == (await client.xrevrange(stream, count=1))[0][0]
                ):
                    break  # all applied: nothing left for it to commit
                assert time.monotonic() < deadline, (
                    f"no replica committed in 60 s:\n{services.logs()[-3000:]}"
                )
                await asyncio.sleep(0.05)
                victim = await working()
            services.kill(victim)  # SIGKILL, wherever it is
            kills += 1
            killed_working += '"event": "committed"' in services.logs(victim)
            services.start()
            if not publishing:
                last = (await client.xrevrange(stream, count=1))[0][0]

    try:
        services.start()
        services.start()
        killing = asyncio.create_task(killer())
        at = 0
        while at < len(m.messages):
            size = rng.randint(1, 12)
            await publish_all(client, stream, m.messages[at : at + size])
            at += size
            await asyncio.sleep(rng.uniform(0.05, 0.25))
        publishing = False
        # The killer ends when everything is applied; each of its rounds waits for a replica to
        # start, take the lease and commit, so on a loaded machine this takes minutes: a bound,
        # not a speed requirement.
        await asyncio.wait_for(killing, timeout=900)
        try:
            await wait_until_applied(client, settings)
        except AssertionError as exc:
            raise AssertionError(f"{exc}; logs:\n{services.logs()[-4000:]}") from None
        await check_against_offline_and_fold(client, settings, m)
        keys = StreamKeys(stream)
        cursor = entry_order((await client.get(keys.cursor)).decode())
        assert all(entry_order(e.decode()) <= cursor for e in await client.hkeys(keys.attempts))
        assert kills >= 3 and killed_working >= 2, (kills, killed_working)
    finally:
        services.stop_all()
        await client.aclose()


async def restart_during_commit(
    server: PrivateRedis, client, attempts_key: str, entry_id: str, delay: float
) -> bool:
    """Stop Redis `delay` s after the entry's commit started (its attempt is counted first),
    start it again a second later; True if the commit had not happened when Redis stopped."""
    deadline = time.monotonic() + 30
    while not await client.hexists(attempts_key, entry_id):
        assert time.monotonic() < deadline, "the service never started the commit"
        await asyncio.sleep(0.002)
    await asyncio.sleep(delay)
    cursor = await client.get(attempts_key.replace(":attempts", ":cursor"))
    server.stop()  # SIGTERM: Redis finishes the command at hand, writes its AOF and exits
    await asyncio.sleep(1.0)
    server.start()
    await server.wait_ready()
    return cursor != entry_id.encode()


async def test_redis_restarted_during_a_cascade_of_2000_events():
    server = PrivateRedis()
    server.start()
    await server.wait_ready()
    settings = settings_for(server.url, "cascade-restart")
    stream = settings.input_streams[0]
    keys = StreamKeys(stream)
    client = aioredis.Redis.from_url(server.url)
    start, season = club_season(2_000, 60, seed=8)
    await import_records(client, keys, start)
    services = Services(settings)
    cut_short = []
    try:
        process = services.start()
        await publish_all(client, stream, season)
        await wait_until_applied(client, settings, timeout=120)
        # A correction of the first event (re-rating the whole season), then a withdrawal of the
        # second: Redis goes down while each commits, at once and a little later.
        for change, delay in (
            (flipped(season[0]), 0.0),
            (
                {
                    "schema": "event.withdrawn/v1",
                    "event_id": season[1]["event_id"],
                    "system": "cfc",
                    "pool": "regular",
                },
                0.1,
            ),
        ):
            [entry_id] = await publish_all(client, stream, [change])
            cut_short.append(
                await restart_during_commit(server, client, keys.attempts, entry_id, delay)
            )
            await client.aclose()
            client = aioredis.Redis.from_url(server.url)
            await wait_until_applied(client, settings, timeout=120)
        assert any(cut_short), "Redis stopped only after the commits"
        assert process.poll() is None, "the service must survive the restarts"
        entries = await client.xrange(stream)
        twin = offline(entries, start)
        assert await stored_records(client, settings) == {
            (r.system, r.pool, r.id): r for r in twin.ledger.all_records()
        }
        produced = await outputs(client, settings)
        check_revisions(produced)
        assert [(o.source_id, figures(o)) for o in produced] == [
            (o.source_id, figures(o)) for o in twin.outputs
        ]
        assert sum(1 for o in produced if o.kind == "revision") > 1_000
        assert twin.rejected == []
    finally:
        services.stop_all()
        await client.aclose()
        server.remove()
