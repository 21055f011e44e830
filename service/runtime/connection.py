"""Connecting to Redis, standalone or Redis Cluster (docs/operations/partitions.md "Redis Cluster").

Which one is asked of the server, so that the same URL (any node of a cluster) works for the
service and every command: `CLUSTER INFO` answers on a cluster node; a standalone server says
"cluster support disabled". A user whose ACL forbids CLUSTER INFO is told to allow it
(`+cluster|info`): guessing would either fail later on MOVED or give up on a standalone
server that works. (redis-py has no URL scheme for a cluster, and FastStream neither: asking
keeps one URL, the one a user already has, for both.)

Clients (`connect`):

    standalone   redis.asyncio.Redis, as before: nothing changes for it.
    cluster      Cluster: redis-py's async RedisCluster (it follows MOVED / ASK, splits
                 non-transactional pipelines and multi-key DEL / EXISTS by node), plus
                 `owner(key)`: a plain redis.asyncio.Redis on the master that owns the key's
                 slot, from the cluster client's slot map.

Transactions (`on_owner`) run on that owner: every commit's keys are one partition's, so
one slot (partitions.py), and a plain client's WATCH / reads / MULTI / EXEC cost what they
cost on a standalone server. redis-py's own cluster transaction pipeline (8.1,
`TransactionStrategy.execute_command`) runs a thread and an event loop per queued command:
2.7-4x a commit's time (docs/design/decisions.md, D11; measured by `rating-service bench`).

A slot that moves (MOVED, ASK, TRYAGAIN), a cluster that is down or a master that fails
over (CLUSTERDOWN, a connection error, READONLY from a demoted master) makes the
transaction fail before or at EXEC: MULTI/EXEC is atomic, so nothing was written. `on_owner`
then reloads the slot map and tries again, with backoff, for up to `patience` seconds; a
commit during a migration therefore lands whole on the owner, or is tried again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterPipeline, RedisCluster
from redis.crc import key_slot
from redis.exceptions import (
    AskError,
    ClusterDownError,
    ClusterError,
    ExecAbortError,
    NoPermissionError,
    ReadOnlyError,
    RedisClusterException,
    ResponseError,
    SlotNotCoveredError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from service.runtime.packing import use_hiredis_packing

T = TypeVar("T")

# Redis is away, or a cluster's slot map is changing under the client: nothing was written,
# the same work is tried again (AskError covers MovedError; ClusterError covers CLUSTERDOWN
# and MASTERDOWN; SlotNotCoveredError is what the client says when its map has a hole).
AWAY = (RedisConnectionError, RedisTimeoutError, OSError)
MOVING = (
    AskError,
    TryAgainError,
    ClusterError,
    ClusterDownError,
    SlotNotCoveredError,
    ReadOnlyError,
)
TRANSIENT = AWAY + MOVING
# On a slot's owner, a command queued after MULTI that was redirected aborts the EXEC (redis-py
# raises the queued command's own error when it has it).
_RETRIED = TRANSIENT + (ExecAbortError,)
PATIENCE = 5.0  # seconds a transaction is tried again on a moving slot before the error goes up
BACKOFF_FIRST, BACKOFF_MAX = 0.01, 0.5

ACL_HINT = (
    "the ACL user may not run CLUSTER INFO, which tells a Redis Cluster from a standalone server: "
    "add +cluster|info to its rule (docs/operations/security.md)"
)


class ConnectionRefused(ResponseError):
    """The server cannot be used as it is configured (an ACL without CLUSTER INFO, a database
    number on a cluster): said in one line."""


async def is_cluster(url: str, **options: Any) -> bool:
    """Whether the server at `url` is a Redis Cluster node (CLUSTER INFO answers)."""
    client = aioredis.Redis.from_url(url, **options)
    try:
        await client.execute_command("CLUSTER", "INFO")
    except NoPermissionError:
        raise ConnectionRefused(ACL_HINT) from None
    except ResponseError as exc:
        if "cluster support disabled" in str(exc).lower():
            return False
        raise
    finally:
        await client.aclose()
    return True


def is_cluster_now(url: str, timeout: float = 2.0) -> bool:
    """`is_cluster` without an event loop, for an app built at import (`faststream run`): a
    server that does not answer counts as standalone."""
    import redis

    client = redis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
    try:
        client.execute_command("CLUSTER", "INFO")
    except NoPermissionError:
        raise ConnectionRefused(ACL_HINT) from None
    except ResponseError as exc:
        if "cluster support disabled" in str(exc).lower():
            return False
        raise
    except AWAY:
        return False
    finally:
        client.close()
    return True


def is_connection_race(exc: BaseException) -> bool:
    """Whether `exc` is redis-py's cluster client failing a command because another task's
    connection error closed the connection under it (redis-py 8.1: an AttributeError inside
    redis-py, a connection whose writer or reader is None): as transient as a ConnectionError."""
    if not isinstance(exc, AttributeError):
        return False
    tb, last = exc.__traceback__, None
    while tb is not None:
        last, tb = tb, tb.tb_next
    return last is not None and "/redis/" in last.tb_frame.f_code.co_filename.replace("\\", "/")


def is_cluster_away(exc: BaseException) -> bool:
    """Whether `exc` is redis-py's cluster client finding no node to ask for the slot map
    (a RedisClusterException caused by a connection error: "Redis Cluster cannot be connected",
    a client whose only known node, the URL's, is down or failing over): Redis is away."""
    return isinstance(exc, RedisClusterException) and isinstance(exc.__cause__, AWAY)


class _Race:
    """Turns a connection race (is_connection_race), or a cluster none of whose known nodes
    answers (is_cluster_away), into the ConnectionError it stands for."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        if exc is not None and is_connection_race(exc):
            raise RedisConnectionError(f"connection closed under the command: {exc}") from exc
        if exc is not None and is_cluster_away(exc):
            raise RedisConnectionError(str(exc)) from exc


class _Pipeline(ClusterPipeline):
    async def execute(self, *args: Any, **kwargs: Any) -> Any:
        with _Race():
            return await super().execute(*args, **kwargs)


class Cluster(RedisCluster):
    """redis-py's async cluster client, with a plain client per master for the transactions,
    and its connection races said as ConnectionErrors (is_connection_race)."""

    def __init__(
        self, *args: Any, node_url: str = "", node_options: dict | None = None, **kwargs: Any
    ):
        super().__init__(*args, **kwargs)
        self.node_url = node_url
        self.node_options = node_options or {}
        self.owners: dict[tuple[str, int | str], aioredis.Redis] = {}

    @classmethod
    def connect(cls, url: str, **options: Any) -> Cluster:
        try:
            return cls.from_url(url, node_url=url, node_options=options, **options)  # type: ignore[return-value]  # from_url builds cls (redis-py types it RedisCluster)
        except RedisClusterException as exc:  # e.g. a database number: a cluster has only 0
            raise ConnectionRefused(
                f"{exc} (a Redis Cluster has database 0 only: end the URL with /0)"
            ) from None

    async def initialize(self, *args: Any, **kwargs: Any) -> Cluster:
        with _Race():
            await super().initialize(*args, **kwargs)
        return self

    async def owner(self, key: str) -> aioredis.Redis:
        """A plain client on the master that owns `key`'s slot (as the slot map says now)."""
        if self._initialize:
            await self.initialize()
        node = self.nodes_manager.get_node_from_slot(key_slot(key.encode()))
        found = self.owners.get((node.host, node.port))
        if found is None:
            found = self.owners[(node.host, node.port)] = use_hiredis_packing(
                aioredis.Redis.from_url(
                    _with_address(self.node_url, node.host, node.port), **self.node_options
                )
            )
        return found

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        with _Race():
            return await super().execute_command(*args, **kwargs)

    def pipeline(self, transaction: Any = None, shard_hint: Any = None) -> ClusterPipeline:
        if shard_hint:
            return super().pipeline(transaction, shard_hint)  # refused by redis-py, as it says
        return _Pipeline(self, transaction)  # type: ignore[abstract]  # redis.typing names _event_dispatcher; ClusterPipeline sets it

    async def refresh(self) -> None:
        """Reload the slot map (after a redirect, or a master that went away)."""
        await self.nodes_manager.initialize()

    async def aclose(self) -> None:
        owners, self.owners = list(self.owners.values()), {}
        for client in owners:
            await client.aclose()
        await super().aclose()


def _with_address(url: str, host: str, port: int | str) -> str:
    """`url` with its host and port replaced (user, password, TLS options and query kept)."""
    parts = urlsplit(url)
    user = parts.netloc.rpartition("@")[0]
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return urlunsplit(
        (
            parts.scheme,
            f"{user}@{address}" if user else address,
            parts.path,
            parts.query,
            parts.fragment,
        )
    )


def client_for(url: str, cluster: bool, **options: Any) -> aioredis.Redis | Cluster:
    """A client of the kind `is_cluster` found (no round trip: clients connect on first use);
    commands packed by hiredis (runtime/packing.py; on a cluster, the slot owners' clients)."""
    return (
        Cluster.connect(url, **options)
        if cluster
        else use_hiredis_packing(aioredis.Redis.from_url(url, **options))
    )


async def connect(url: str, **options: Any) -> aioredis.Redis | Cluster:
    """A client for the server at `url`, of its kind (one CLUSTER INFO to tell)."""
    return client_for(url, await is_cluster(url, **options), **options)


async def on_owner(
    client: Any,
    key: str,
    work: Callable[[Any], Awaitable[T]],
    patience: float = PATIENCE,
    retried: Callable[[BaseException], None] | None = None,
) -> T:
    """`work(c)` with `c` a client on which a transaction over `key`'s slot runs: `client`
    itself when standalone; on a cluster the slot's owner, tried again while the slot moves or
    its master fails over (the transaction wrote nothing), for up to `patience` seconds
    (`retried(error)` is told of each try again)."""
    if not isinstance(client, Cluster):
        return await work(client)
    deadline = time.monotonic() + patience
    delay = BACKOFF_FIRST
    while True:
        try:
            return await work(await client.owner(key))
        except _RETRIED as exc:
            if time.monotonic() + delay > deadline:
                raise
            if retried is not None:
                retried(exc)
        await asyncio.sleep(delay)
        delay = min(delay * 2, BACKOFF_MAX)
        try:
            await client.refresh()
        except TRANSIENT:  # no node answers yet: the next try says so, or the deadline
            pass


def same_slot(*keys: str) -> bool:
    """Whether the keys hash to one Redis Cluster slot (one MULTI/EXEC, one XREAD may cover them)."""
    return len({key_slot(k.encode()) for k in keys}) <= 1


async def xread(
    client: Any, streams: dict[str, str], count: int | None = None, block: int | None = None
) -> list:
    """XREAD of several streams. On a cluster each slot's streams are read on the slot's owner
    (a moving slot is tried again, on_owner); streams of several slots are read slot by slot,
    a blocking read then waiting by polling every POLL_S, up to `block` ms (0: without end)."""
    if not isinstance(client, Cluster):
        return await client.xread(streams, count=count, block=block) or []
    groups: dict[int, dict[str, str]] = {}
    for stream, last in streams.items():
        groups.setdefault(key_slot(stream.encode()), {})[stream] = last

    async def read(group: dict[str, str], wait: int | None) -> list:
        return (
            await on_owner(
                client, next(iter(group)), lambda owner: owner.xread(group, count=count, block=wait)
            )
            or []
        )

    if len(groups) == 1:
        return await read(streams, block)
    deadline = time.monotonic() + (block or 0) / 1000
    while True:
        replies: list = []
        for group in groups.values():
            replies.extend(await read(group, None))
        if replies or block is None or (block and time.monotonic() >= deadline):
            return replies
        await asyncio.sleep(
            POLL_S if not block else min(POLL_S, max(0.0, deadline - time.monotonic()))
        )


POLL_S = 0.05
