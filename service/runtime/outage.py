"""Saying that Redis is away, once per change of state, instead of once per failed call.

Every part of the service that talks to Redis (the subscribers' reads, the handlers'
commits, the periodic observer) reports here what it saw. The log gets one line when Redis
becomes unreachable, one line every `every` seconds while it stays so, and one line when it
answers again: a few lines per outage and replica, whatever the number of subscribers.
Redis counts as back at the first success `settle` seconds after the last failure, so
that the stragglers of an outage (a read that was in flight, a connection closing while
Redis shuts down) do not make it flap.

`failure_reason` names what made a commit fail, for `rating_commit_failures_total` (D26).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import structlog
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import OutOfMemoryError, ReadOnlyError
from redis.exceptions import TimeoutError as RedisTimeoutError

log = structlog.get_logger("rating.redis")


UNREACHABLE = ("redis unreachable", "redis still unreachable", "redis reachable again")
# Redis answers but refuses to write (maxmemory reached under noeviction, a replica, a failed
# snapshot under stop-writes-on-bgsave-error): said the same way, once per change (D34).
REFUSING = ("redis refuses writes", "redis still refuses writes", "redis takes writes again")


class OutageLog:
    """The state of Redis as this process sees it, and the log lines of its changes."""

    def __init__(
        self,
        every: float = 60.0,
        settle: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        said: tuple[str, str, str] = UNREACHABLE,
    ):
        self.lines = said  # what is said when it starts, goes on and ends
        self.every = every
        self.settle = settle
        self.clock = clock
        self.since: float | None = None  # when Redis was first seen unreachable
        self._said = 0.0  # when that was last said
        self._failed = 0.0  # the last failure

    @property
    def down(self) -> bool:
        return self.since is not None

    def unreachable(self, error: str) -> None:
        """Something failed because Redis is away: say so if it is news, or if it was said
        `every` seconds ago."""
        now = self._failed = self.clock()
        if self.since is None:
            self.since = self._said = now
            log.error(self.lines[0], error=error)
        elif now - self._said >= self.every:
            self._said = now
            log.error(self.lines[1], error=error, down_seconds=round(now - self.since, 1))

    def reachable(self) -> None:
        """Something Redis had to answer succeeded: say so if Redis was away."""
        if self.since is not None:
            now = self.clock()
            if now - self._failed >= self.settle:
                down = round(now - self.since, 1)
                self.since = None
                log.warning(self.lines[2], down_seconds=down)


FAILURE_REASONS = ("connection", "timeout", "readonly", "oom", "other")


def refuses_writes(exc: BaseException) -> bool:
    """Whether Redis answered but refused a write it may take later (OOM, READONLY,
    MISCONF): nothing of the commit was done; tried again, said by a REFUSING OutageLog."""
    return failure_reason(exc) in ("oom", "readonly") or str(exc).startswith("MISCONF")


def failure_reason(exc: BaseException) -> str:
    """What made a commit fail, one of FAILURE_REASONS: the connection (refused, reset,
    closed; Redis loading its data), a socket timeout, a read-only server (a replica, a
    demoted master), Redis out of memory (maxmemory under noeviction), or anything else."""
    if isinstance(exc, (RedisTimeoutError, TimeoutError)):
        return "timeout"
    if isinstance(exc, (RedisConnectionError, OSError)):
        return "connection"
    if isinstance(exc, ReadOnlyError):
        return "readonly"
    if isinstance(exc, OutOfMemoryError) or str(exc).startswith("OOM"):
        return "oom"
    return "other"
