"""The source the HTTP side reads from: the read model's interface (`service/runtime/queries.py`
implements it over Redis; the tests use a fake with the same methods), and `Guarded`, the
read model as the routes see it (D28): each read bounded in time, Redis being away said to
the process's OutageLog and answered 503 (`Unavailable`), never a traceback."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from schemas.ratings import RatingsUpdated
from schemas.reads import (
    Crosstable,
    EventList,
    EventRevisions,
    PlayerHistory,
    PlayerList,
    PlayerProfile,
    PlayerView,
    PoolChanges,
    PoolList,
)
from service.runtime.connection import MOVING, is_connection_race
from service.runtime.outage import OutageLog

T = TypeVar("T")
READ_TIMEOUT = 5.0  # seconds one read may take before it is answered 503 (D28)
# Redis is not there, or not there yet: refused, reset, timed out, loading its data
# (BusyLoadingError is a ConnectionError, so are AuthenticationError and MaxConnectionsError),
# or on a Redis Cluster a slot moving, a master failing over (connection.MOVING).
AWAY: tuple[type[BaseException], ...] = (
    RedisConnectionError,
    RedisTimeoutError,
    ConnectionError,
    TimeoutError,
    *MOVING,
)


class Reads(Protocol):
    async def pools(self) -> PoolList: ...

    async def players(
        self,
        system: str,
        pool: str,
        *,
        limit: int = 50,
        offset: int = 0,
        q: str | None = None,
        unrated: bool = False,
        active: bool = False,
        federation: str | None = None,
        title: str | None = None,
    ) -> PlayerList | None:
        """None: no players in that pool."""

    async def player(self, system: str, pool: str, player_id: str) -> PlayerView | None: ...

    async def history(self, system: str, pool: str, player_id: str) -> PlayerHistory | None: ...

    async def event(self, event_id: str) -> RatingsUpdated | None:
        """The last message published for the event."""

    async def last_update(self, system: str, pool: str) -> dt.datetime | None: ...

    # The lists (D46-D49).
    async def active_rank(self, system: str, pool: str, player_id: str) -> int | None: ...

    async def events(
        self,
        system: str | None = None,
        pool: str | None = None,
        *,
        limit: int = 50,
        offset: int = 0,
    ) -> EventList | None:
        """None: no such pool."""

    async def changes(self, system: str, pool: str, *, limit: int = 20) -> PoolChanges | None:
        """None: no such pool."""

    async def profile(self, system: str, player_id: str) -> PlayerProfile | None:
        """The player in every pool of the system (D38); None: no record in any."""

    async def crosstable(self, event_id: str) -> Crosstable | None:
        """The event's crosstable (D42); None: no such event."""

    async def revisions(self, event_id: str) -> EventRevisions | None:
        """The event's revision history (D43); None: no such event."""

    async def revision_message(self, event_id: str, revision: int) -> RatingsUpdated | None:
        """The message of the event's `revision` (D101); None: no such event or revision."""


class Unavailable(Exception):
    """A read failed because Redis did not answer: 503 with Retry-After (errors.py)."""


def describe(exc: BaseException) -> str:
    """An error for the log (the service passes one that also hides the Redis password)."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class Guarded:
    """The read model with each read guarded (D28): a read that fails because Redis is away,
    or takes longer than `timeout` seconds, raises Unavailable and tells `outage`
    (one log line per outage for the whole process, shared with the consumer); a read that
    succeeds tells it that Redis answers. Anything else goes up as it is (a 500)."""

    def __init__(
        self,
        reads: Reads,
        outage: OutageLog,
        timeout: float = READ_TIMEOUT,
        reason: Callable[[BaseException], str] = describe,
    ):
        self.reads, self.outage, self.timeout, self.reason = reads, outage, timeout, reason

    async def _read(self, read: Callable[[], Awaitable[T]]) -> T:
        try:
            async with asyncio.timeout(self.timeout):
                try:
                    found = await read()
                except RedisConnectionError:
                    # Once more, within the same time: a pooled connection that an outage left
                    # dead fails its first use after Redis is back (the clients' connections
                    # do not retry), and a read changes nothing when it is tried again.
                    found = await read()
        except TimeoutError as exc:  # asyncio's, or a socket's
            said = self.reason(exc) if str(exc) else f"no answer within {self.timeout:g} s"
            self.outage.unreachable(said)
            raise Unavailable from exc
        except AWAY as exc:
            self.outage.unreachable(self.reason(exc))
            raise Unavailable from exc
        except AttributeError as exc:  # redis-py's cluster client: a connection closed under it
            if not is_connection_race(exc):
                raise
            self.outage.unreachable(self.reason(exc))
            raise Unavailable from exc
        self.outage.reachable()
        return found

    async def pools(self) -> PoolList:
        return await self._read(self.reads.pools)

    async def players(
        self,
        system: str,
        pool: str,
        *,
        limit: int = 50,
        offset: int = 0,
        q: str | None = None,
        unrated: bool = False,
        active: bool = False,
        federation: str | None = None,
        title: str | None = None,
    ) -> PlayerList | None:
        return await self._read(
            lambda: self.reads.players(
                system,
                pool,
                limit=limit,
                offset=offset,
                q=q,
                unrated=unrated,
                active=active,
                federation=federation,
                title=title,
            )
        )

    async def player(self, system: str, pool: str, player_id: str) -> PlayerView | None:
        return await self._read(lambda: self.reads.player(system, pool, player_id))

    async def history(self, system: str, pool: str, player_id: str) -> PlayerHistory | None:
        return await self._read(lambda: self.reads.history(system, pool, player_id))

    async def event(self, event_id: str) -> RatingsUpdated | None:
        return await self._read(lambda: self.reads.event(event_id))

    async def last_update(self, system: str, pool: str) -> dt.datetime | None:
        return await self._read(lambda: self.reads.last_update(system, pool))

    async def active_rank(self, system: str, pool: str, player_id: str) -> int | None:
        return await self._read(lambda: self.reads.active_rank(system, pool, player_id))

    async def events(
        self,
        system: str | None = None,
        pool: str | None = None,
        *,
        limit: int = 50,
        offset: int = 0,
    ) -> EventList | None:
        return await self._read(lambda: self.reads.events(system, pool, limit=limit, offset=offset))

    async def changes(self, system: str, pool: str, *, limit: int = 20) -> PoolChanges | None:
        return await self._read(lambda: self.reads.changes(system, pool, limit=limit))

    async def profile(self, system: str, player_id: str) -> PlayerProfile | None:
        return await self._read(lambda: self.reads.profile(system, player_id))

    async def crosstable(self, event_id: str) -> Crosstable | None:
        return await self._read(lambda: self.reads.crosstable(event_id))

    async def revisions(self, event_id: str) -> EventRevisions | None:
        return await self._read(lambda: self.reads.revisions(event_id))

    async def revision_message(self, event_id: str, revision: int) -> RatingsUpdated | None:
        return await self._read(lambda: self.reads.revision_message(event_id, revision))
