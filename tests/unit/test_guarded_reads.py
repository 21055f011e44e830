"""The read side's guard (service/web/source.py, D28) on a connection that an outage left dead:
redis-py's connections here do not retry (the clients' pools give them none), so the first
read after Redis is back failed on each such pooled connection: a 503 and a second pair of
outage lines after "redis reachable again" (seen under load: tests/integration/
test_read_side_guard.py allowed that flap). A read that fails on its connection is tried once
more; a Redis still away is a 503 as before."""

from __future__ import annotations

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from service.runtime.outage import OutageLog
from service.web.source import Guarded, Unavailable


class FailingFirst:
    """Reads whose first `failures` calls fail as a dead pooled connection does."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0

    async def pools(self):
        self.calls += 1
        if self.calls <= self.failures:
            raise RedisConnectionError(
                "Error 104 while writing to socket. Connection reset by peer."
            )
        return ["cfc/regular"]


async def test_a_read_on_a_dead_pooled_connection_is_tried_once_more():
    reads, outage = FailingFirst(1), OutageLog()
    assert await Guarded(reads, outage).pools() == ["cfc/regular"]  # type: ignore[arg-type]
    assert reads.calls == 2 and not outage.down


async def test_a_redis_still_away_is_unavailable_after_the_second_try():
    reads, outage = FailingFirst(5), OutageLog()
    with pytest.raises(Unavailable):
        await Guarded(reads, outage).pools()  # type: ignore[arg-type]
    assert reads.calls == 2 and outage.down
