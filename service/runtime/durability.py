"""Whether a commit the service made is on disk (D85, D86): what `publish --durable` and the
other producing commands ask after the outcome, and what a Python producer calls
(`confirm_durable`).

A commit is the service's MULTI/EXEC, not the caller's, and WAITAOF / WAIT wait only for the
caller's own writes. So the caller, once it has seen the commit (the applied cursor at or
past its entry), writes `{S}:durable` on the same connection and waits for that write: the
AOF and the replication stream are in the order commands ran, so its write fsynced
(WAITAOF numlocal 1) or acknowledged by replicas (WAITAOF numreplicas, WAIT) implies the
commit before it is too. One pipeline on the slot's master (connection.on_owner): GET the
cursor, XRANGE the entry, SET, WAITAOF; the cursor read on that connection, before the SET,
is what ties the wait to the commit (a failover in between answers a cursor before the entry,
or an error).

What a server can confirm (D86):
- WAITAOF (Redis 7.2+, Valkey): fsynced to the master's AOF and to N replicas' AOFs.
- No WAITAOF (Redis 7.0, 6.2): with `appendfsync always` the master fsyncs the AOF before it
  sends any reply, so the reply to the SET means the commit is on its disk; WAIT N says that N
  replicas received it (in their memory). With `everysec` nothing tells when the fsync was:
  not confirmed.
- `appendonly no`: never on the master's disk (and a master restarted empty empties its
  replicas): not confirmed, whatever the replicas say.

Each WAITAOF / WAIT blocks at most ROUND_S (under redis-py's socket timeout), and is asked
again until the timeout.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from redis.exceptions import ResponseError

from service.entryids import entry_order
from service.runtime.connection import on_owner
from service.runtime.keys import StreamKeys
from service.runtime.replies import text

ROUND_S = 2.0  # longest single WAITAOF / WAIT: redis-py's socket timeout is 5 s
MARK_PX = 60_000  # {S}:durable expires: nothing reads it, it only has to be written


@dataclass(frozen=True)
class Durability:
    """What the server confirmed about the commit of entry `entry_id` of `stream`."""

    stream: str
    entry_id: str
    applied: bool  # the master's cursor had reached the entry when asked
    present: bool  # the entry is still in the stream (False: lost with a Redis's last writes)
    local: bool  # on the master's disk: its AOF fsynced past the commit
    replicas: int  # replicas that acknowledged it (fsynced with WAITAOF, received with WAIT)
    required: int  # replicas asked for
    how: str  # what confirmed it: "WAITAOF", "appendfsync always + WAIT", ...
    why_not: str | None = None  # what the server cannot confirm, for people

    @property
    def confirmed(self) -> bool:
        return self.applied and self.local and self.replicas >= self.required and not self.why_not

    def describe(self) -> str:
        """One line for people."""
        if not self.applied and not self.present:
            return (
                f"entry {self.entry_id} of {self.stream} is gone: Redis lost its last writes "
                "(a restart or a failover) before they were on disk; publish it again"
            )
        if not self.applied:
            return (
                f"the commit of {self.entry_id} on {self.stream} was lost (a Redis restart or a "
                "failover) before it was on disk: the service rates the entry again"
            )
        kept = "received by" if self.how.endswith("WAIT") else "fsynced by"
        replicas = f"{self.replicas} of {self.required} replica{'s' if self.required != 1 else ''}"
        if self.confirmed:
            where = "on disk (AOF fsynced)"
            if self.required:
                where += f", {kept} {replicas}"
            return f"durable: {self.stream} up to {self.entry_id} {where} ({self.how})"
        if self.why_not:
            return f"not confirmed durable: {self.why_not}"
        missing = "the AOF not fsynced yet" if not self.local else f"{kept} {replicas} only"
        return f"not confirmed durable within the timeout: {missing} ({self.how})"


async def confirm_durable(
    client: Any,
    stream: str,
    entry_id: str,
    timeout: float,
    replicas: int | None = None,
) -> Durability:
    """Wait up to `timeout` seconds until the commit that applied `entry_id` (the caller has
    seen it applied) is on the master's disk and acknowledged by `replicas` replicas (None:
    every replica connected to the master when asked). Standalone or Cluster (the master of
    the stream's slot)."""
    deadline = time.monotonic() + timeout
    while True:
        found = await on_owner(
            client,
            stream,
            lambda node: _round(node, stream, entry_id, replicas, deadline),
        )
        if found.confirmed or found.why_not or not found.applied:
            return found
        if time.monotonic() >= deadline:
            return found
        await asyncio.sleep(0.05)


async def _round(
    node: Any, stream: str, entry_id: str, replicas: int | None, deadline: float
) -> Durability:
    """One GET / XRANGE / SET / WAITAOF (or WAIT) on the master `node`."""
    keys = StreamKeys(stream)
    persistence = await node.info("persistence")
    replication = await node.info("replication")
    if replication.get("role") != "master":
        return _not(stream, entry_id, "the server answering is a replica, not the master")
    aof = bool(int(persistence.get("aof_enabled", 0)))
    required = int(replication.get("connected_slaves", 0)) if replicas is None else replicas
    wait_ms = max(1, int(min(ROUND_S, deadline - time.monotonic()) * 1000))
    head = await _pipeline(
        node, keys, stream, entry_id, ("WAITAOF", 1 if aof else 0, required, wait_ms)
    )
    applied, present, reply = head
    if not isinstance(reply, ResponseError):
        local_count, replica_count = int(reply[0]), int(reply[1])
        why = None if aof else "appendonly is off on the master: a restart loses the commit"
        return Durability(
            stream,
            entry_id,
            applied,
            present,
            local_count >= 1,
            replica_count,
            required,
            "WAITAOF",
            why,
        )
    if "unknown command" not in str(reply).lower():
        raise reply
    return await _without_waitaof(node, keys, stream, entry_id, aof, required, wait_ms)


async def _without_waitaof(
    node: Any, keys: StreamKeys, stream: str, entry_id: str, aof: bool, required: int, ms: int
) -> Durability:
    """Redis before 7.2: on disk only by `appendfsync always` (fsynced before any reply);
    WAIT for the replicas. With everysec nothing tells when the fsync was."""
    fsync = await _appendfsync(node)
    wait = ("WAIT", required, ms) if required else ("PING",)
    applied, present, acked = await _pipeline(node, keys, stream, entry_id, wait)
    count = int(acked) if required and not isinstance(acked, Exception) else 0
    how = "appendfsync always" + (" + WAIT" if required else "")
    why = None
    if not aof:
        why = "appendonly is off on the master: a restart loses the commit"
    elif fsync != "always":
        version = (await node.info("server")).get("redis_version", "?")
        why = (
            f"Redis {version} has no WAITAOF and appendfsync is {fsync or 'unknown'}: nothing "
            "tells when the commit reaches the disk (use appendfsync always, or Redis 7.2+ / "
            "Valkey)"
        )
        how = "WAIT" if required else "none"
    return Durability(
        stream, entry_id, applied, present, fsync == "always" and aof, count, required, how, why
    )


async def _pipeline(
    node: Any, keys: StreamKeys, stream: str, entry_id: str, wait: tuple
) -> tuple[bool, bool, Any]:
    """GET the cursor, XRANGE the entry, SET `{S}:durable`, then `wait`, on ONE connection
    (a pipeline): the wait is for this connection's SET, made after the cursor was read."""
    async with node.pipeline(transaction=False) as pipe:
        pipe.get(keys.cursor)
        pipe.xrange(stream, entry_id, entry_id)
        pipe.set(keys.durable, entry_id, px=MARK_PX)
        pipe.execute_command(*wait)
        cursor, entry, _, reply = await pipe.execute(raise_on_error=False)
    for value in (cursor, entry):
        if isinstance(value, Exception):
            raise value
    at = text(cursor)
    applied = at is not None and entry_order(at) >= entry_order(entry_id)
    return applied, bool(entry), reply


async def _appendfsync(node: Any) -> str | None:
    """The server's appendfsync, or None when CONFIG GET is refused (an ACL, a managed Redis)."""
    try:
        found = await node.config_get("appendfsync")
    except ResponseError:
        return None
    value = found.get("appendfsync") or found.get(b"appendfsync")
    return text(value) if value is not None else None


def _not(stream: str, entry_id: str, why: str) -> Durability:
    return Durability(stream, entry_id, True, True, False, 0, 0, "none", why)
