"""`rating-service watch` across a Redis restart (D27): one line when Redis is lost, one when
it answers again, and every message shown exactly once, in order, the ones published while
it was reconnecting included."""

from __future__ import annotations

import select
import signal
import time

import pytest

from tests.integration.processes import PrivateRedis
from tests.integration.test_watch import add, finish, ratings_updated, wait_reading, watch

pytestmark = pytest.mark.integration


@pytest.fixture
async def private_redis():
    server = PrivateRedis()
    server.start()
    await server.wait_ready()
    yield server
    server.remove()


def headings_until(process, last: str, timeout: float = 60.0) -> list[str]:
    """The event ids of the tables watch prints, up to the one of `last`."""
    deadline = time.monotonic() + timeout
    seen: list[str] = []
    while not seen or seen[-1] != last:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([process.stdout], [], [], max(0.0, left))
        assert ready, f"no table of {last} within {timeout} s (saw {seen})"
        line = process.stdout.readline().decode()
        assert line, f"watch ended before {last} (saw {seen})"
        if "  cfc/regular  " in line:
            seen.append(line.split()[0])
    return seen


async def test_watch_follows_on_across_a_redis_restart(private_redis, tmp_path):
    stream = "restart.ratings"
    messages = {n: ratings_updated(tmp_path, f"ev-{n}") for n in range(1, 6)}
    process = watch(private_redis.url, stream, "--block-ms", "1000")
    interrupted = False
    try:
        wait_reading(private_redis.url)  # watch reads from "now": started before the first message
        add(private_redis.url, stream, messages[1])
        add(private_redis.url, stream, messages[2])
        assert headings_until(process, "ev-2") == ["ev-1", "ev-2"]
        private_redis.stop()  # SIGTERM: Redis writes its AOF and exits
        time.sleep(2.0)  # watch tries again meanwhile
        private_redis.start()  # same port, same data
        await private_redis.wait_ready()
        add(private_redis.url, stream, messages[3])  # maybe before watch is back
        add(private_redis.url, stream, messages[4])
        assert headings_until(process, "ev-4") == ["ev-3", "ev-4"]
        add(private_redis.url, stream, messages[5])
        assert headings_until(process, "ev-5") == ["ev-5"]
        assert process.poll() is None
        process.send_signal(signal.SIGINT)
        interrupted = True
    finally:
        if not interrupted:  # a failed step: stop it, so that its failure is the one said
            process.send_signal(signal.SIGINT)
        code, err = finish(process)
    assert code == 130, err
    lines = err.splitlines()
    assert len(lines) == 2, err
    assert lines[0].startswith(f"rating-service watch: lost Redis at {private_redis.url} (")
    assert lines[0].endswith("); reconnecting")
    assert lines[1].startswith(
        f"rating-service watch: Redis at {private_redis.url} answers again after "
    )
    assert lines[1].endswith(" s; following on from the last message read")
