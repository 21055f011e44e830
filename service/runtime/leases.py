"""One active owner per input stream: renewable leases in Redis with a fencing token
(docs/design/guarantees.md "Replicas: one owner per input stream").

Keys, under the stream's key prefix ({S}, keys.StreamKeys: the stream's slot):

    {S}:lease          "<token> <consumer>", PX RATING_LEASE_MS: who owns the stream
    {S}:lease:fence    the same value, without expiry: written only when a lease is taken
    {S}:lease:token    the token counter (INCR on every acquisition: tokens only grow)
    {S}:replicas       zset consumer -> heartbeat expiry (ms): the live replicas

A replica reads and rates a stream only while it holds its lease; the others stand by
(their subscribers do not read it). Every commit WATCHes the fence key and checks, after
WATCH and before MULTI, that it still holds this replica's value (StreamProcessor._commit):
a former owner that was paused past its lease either reads another value (LeaseLost: it
stops and stands by) or sees the key written before its EXEC (WatchError). The fence is a
key of its own so that renewing the lease (PEXPIRE, a write) never aborts the owner's own
commit, however long it takes; a release waits for the commit in progress (the stream's
lock).

Spread: a replica takes a lease only while it holds fewer than ceil(streams / live
replicas), and gives one back (between two commits) while it holds more, so that leases
rebalance when a replica joins. Live replicas: the members of `{S}:replicas` whose expiry
(now + lease, by each replica's clock) has not passed, the largest count over its streams.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Coroutine
from typing import Any

import structlog
from redis.exceptions import RedisError

from service.runtime.connection import TRANSIENT
from service.runtime.keys import StreamKeys
from service.runtime.metrics import Metrics
from service.runtime.replies import text

log = structlog.get_logger("rating.leases")
STANDBY_POLL = 0.2  # seconds: how often a standby looks for a free lease (at most lease / 3)

# KEYS[1] lease, KEYS[2] token counter, KEYS[3] fence, KEYS[4] the store's record; ARGV[1]
# consumer, ARGV[2] lease ms, ARGV[3] '1' to take a lease held under this consumer's own name
# (a predecessor's), ARGV[4] '1' to take none while the store has no record (0: storegate.py).
_ACQUIRE = """
if ARGV[4] == '1' and redis.call('EXISTS', KEYS[4]) == 0 then return 0 end
local held = redis.call('GET', KEYS[1])
if held then
  if ARGV[3] ~= '1' or string.sub(held, -(#ARGV[1] + 1)) ~= ' ' .. ARGV[1] then return false end
end
local value = redis.call('INCR', KEYS[2]) .. ' ' .. ARGV[1]
redis.call('SET', KEYS[1], value, 'PX', ARGV[2])
redis.call('SET', KEYS[3], value)
return value
"""
# KEYS[1] lease; ARGV[1] our value, ARGV[2] lease ms.
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""
# KEYS[1] lease; ARGV[1] our value.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
# KEYS[1] replicas; ARGV[1] consumer, ARGV[2] now ms, ARGV[3] expiry ms.
_HEARTBEAT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[2])
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return redis.call('ZCOUNT', KEYS[1], ARGV[2], '+inf')
"""


class LeaseLost(Exception):
    """This replica no longer holds the stream's lease: the commit was not made."""


def token_of(value: bytes | str | None) -> int | None:
    """The fencing token of a lease value ("<token> <consumer>")."""
    if value is None:
        return None
    raw = text(value)
    return int(raw.partition(" ")[0])


class StreamLease:
    """This replica's view of one stream's lease."""

    def __init__(self, stream: str):
        self.stream = stream
        keys = StreamKeys(stream)
        self.key = keys.lease
        self.token_key = keys.lease_token
        self.fence_key = keys.lease_fence
        self.replicas_key = keys.replicas
        self.store_key = keys.store
        self.value: str | None = None  # "<token> <consumer>" while this replica owns the stream
        self.held: str | None = None  # the value to give back in Redis (kept past stand_down)
        self.lock = asyncio.Lock()  # one commit or release at a time
        self.owned = asyncio.Event()
        self.renewed = 0.0
        self.said_waiting = False  # the wait for another's lease is logged once, until taken

    @property
    def token(self) -> int | None:
        return token_of(self.value)

    async def wait_owned(self, timeout: float) -> bool:
        try:
            await asyncio.wait_for(self.owned.wait(), timeout)
        except TimeoutError:
            return False
        return True


class Leases:
    """This replica's leases: the heartbeat, acquisition, renewal, fair-share release, and
    the catch-up that applies what was left after the cursor when a lease is taken."""

    def __init__(
        self,
        client: Any,
        consumer: str,
        streams: tuple[str, ...],
        lease_ms: int,
        metrics: Metrics,
        catch_up: Callable[[str], Coroutine[Any, Any, None]],
        gate: Any = None,
    ):
        """`gate`: the stores' records (storegate.StoreGate): no lease is taken on a store
        without one, nor kept on one the gate does not admit; None: not looked at."""
        self.client = client
        self.gate = gate
        self.consumer = consumer
        self.lease_ms = lease_ms
        self.metrics = metrics
        self.catch_up = catch_up
        self.streams = {s: StreamLease(s) for s in streams}
        self._acquire = client.register_script(_ACQUIRE)
        self._renew = client.register_script(_RENEW)
        self._release = client.register_script(_RELEASE)
        self._heartbeat = client.register_script(_HEARTBEAT)
        self._catching_up: dict[str, asyncio.Task] = {}
        self._started = False  # after the first tick: leases under our own name are another's
        self.share = len(streams)
        for stream in streams:
            metrics.lease_owned.labels(stream).set(0)

    def __getitem__(self, stream: str) -> StreamLease:
        return self.streams[stream]

    @property
    def poll(self) -> float:
        return min(STANDBY_POLL, self.lease_ms / 3000)

    async def run(
        self, on_error: Callable[[BaseException], None], on_ok: Callable[[], None] = lambda: None
    ) -> None:
        """Every `poll` seconds: heartbeat, renew (every lease / 3), give back what is over
        the fair share, take what is free while under it (`on_ok` after a round that wrote)."""
        while True:
            try:
                await self.tick()
                on_ok()
            except (
                RedisError,
                *TRANSIENT,
            ) as exc:  # said, and tried again (a cluster's map hole too)
                on_error(exc)
            except Exception as exc:  # never the end of the leases: e.g. redis-py's cluster client
                # closing, after another task's error, a connection this round was using
                log.error("lease round failed, trying again", error=f"{type(exc).__name__}: {exc}")
            await asyncio.sleep(self.poll)

    async def tick(self) -> None:
        now = time.time()
        now_ms = int(now * 1000)
        counts = [
            await self._heartbeat(
                keys=[lease.replicas_key], args=[self.consumer, now_ms, now_ms + self.lease_ms]
            )
            for lease in self.streams.values()
        ]
        live = max([1, *(int(c) for c in counts)])
        self.share = math.ceil(len(self.streams) / live)
        for lease in self.streams.values():
            if lease.value is not None and now - lease.renewed >= self.lease_ms / 3000:
                await self._renew_one(lease, now)
        owned = [lease for lease in self.streams.values() if lease.value is not None]
        while len(owned) > self.share:
            await self.release(owned.pop(), "over the fair share")
        for lease in self.streams.values():
            if lease.value is None and len(owned) < self.share:
                if await self._acquire_one(lease, now):
                    owned.append(lease)
        self._started = True
        for lease in owned:
            task = self._catching_up.get(lease.stream)
            if (
                lease.value is not None
                and (task is None or task.done())
                and now - lease.renewed < self.poll
            ):
                # Just taken or renewed: apply what is after the cursor (entries a former
                # owner read but did not commit are pending for it, not delivered again).
                self._catching_up[lease.stream] = asyncio.create_task(self.catch_up(lease.stream))

    async def _acquire_one(self, lease: StreamLease, now: float) -> bool:
        # On the first tick, a lease held under this replica's own name is its predecessor's (a
        # restart with the same RATING_CONSUMER, e.g. a container restarted in its pod): taken at
        # once rather than after it expires; the new token fences the predecessor out.
        own = "0" if self._started else "1"
        value = await self._acquire(
            keys=[lease.key, lease.token_key, lease.fence_key, lease.store_key],
            args=[self.consumer, self.lease_ms, own, "1" if self.gate is not None else "0"],
        )
        if value == 0:  # the store has no record
            await self.gate.missing(lease.stream)
            return False
        if value is None:
            if not lease.said_waiting:
                await self._say_waiting(lease)
            return False
        if self.gate is not None and not await self.gate.admits(lease.stream):
            await self._release(keys=[lease.key], args=[text(value)])
            return False
        lease.value = lease.held = text(value)
        lease.said_waiting = False
        lease.renewed = now
        lease.owned.set()
        self.metrics.lease_owned.labels(lease.stream).set(1)
        log.info(
            "lease acquired",
            stream=lease.stream,
            consumer=self.consumer,
            token=lease.token,
            fair_share=self.share,
        )
        return True

    async def _say_waiting(self, lease: StreamLease) -> None:
        """One line when the lease this replica wants is another's: whose, and how long it
        has left (PTTL). After a SIGKILL the restarted service waits this out: its
        predecessor's lease expires, unless a live owner renews it (then this one stands by)."""
        holder, left_ms = await self._holder(lease)
        if holder is None:
            return  # gone since: the next round takes it
        lease.said_waiting = True
        log.info(
            "lease held by another consumer: waiting until it expires (if its owner is gone) "
            "or is given back",
            stream=lease.stream,
            consumer=self.consumer,
            holder=holder.partition(" ")[2],
            token=token_of(holder),
            expires_in_s=None if left_ms < 0 else round(left_ms / 1000, 1),
        )

    async def _holder(self, lease: StreamLease) -> tuple[str | None, int]:
        """The lease's value and its time to live in ms (-1: no expiry) now."""
        async with self.client.pipeline(transaction=False) as pipe:
            pipe.get(lease.key)
            pipe.pttl(lease.key)
            value, left_ms = await pipe.execute()
        return (None if value is None else text(value)), int(left_ms)

    async def _renew_one(self, lease: StreamLease, now: float) -> None:
        value = lease.value
        if value is None:
            return
        if await self._renew(keys=[lease.key], args=[value, self.lease_ms]):
            lease.renewed = now
        elif lease.value == value:
            self.lost(lease.stream)

    def lost(self, stream: str) -> None:
        """The lease is someone else's (or expired): stop consuming the stream, stand by."""
        lease = self.streams[stream]
        if lease.value is None:
            return
        log.warning("lease lost", stream=stream, consumer=self.consumer, token=lease.token)
        self._forget(lease)
        lease.held = None

    def _forget(self, lease: StreamLease) -> None:
        lease.value = None
        lease.owned.clear()
        self.metrics.lease_owned.labels(lease.stream).set(0)

    async def release(self, lease: StreamLease, why: str) -> None:
        """Give the lease back (between two commits), if it is still this replica's."""
        async with lease.lock:
            held, token = lease.held, token_of(lease.held)
            self._forget(lease)
            lease.held = None
            if held is not None and await self._release(keys=[lease.key], args=[held]):
                log.info(
                    "lease released",
                    stream=lease.stream,
                    consumer=self.consumer,
                    token=token,
                    why=why,
                )

    def stand_down(self) -> None:
        """Shutdown starts: no new commit (the one in progress finishes); the leases are
        given back by release_all once the subscribers have stopped."""
        for lease in self.streams.values():
            self._forget(lease)  # a catch-up in progress stops at its next commit (LeaseLost)

    async def release_all(self) -> None:
        """After the last commit: give every lease back and leave the live replicas, so that
        a standby takes over within its poll interval rather than the lease time."""
        await asyncio.gather(*self._catching_up.values(), return_exceptions=True)
        for lease in self.streams.values():
            await self.release(lease, "shutdown")
        async with self.client.pipeline(transaction=False) as pipe:
            for lease in self.streams.values():
                pipe.zrem(lease.replicas_key, self.consumer)
            await pipe.execute()
