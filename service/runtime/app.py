"""The FastStream application: `rating-service serve`, or
`faststream run service.app:build_app --factory`.

`build_service` wires one build of the service (Service: the broker, the client, the leases,
a processor per input stream, the HTTP side) and holds its state; `build_app`, the factory,
returns its FastStream app. FastStream's private parts are used in runtime/faststream_seams.py
only.

Per input stream, two subscribers share the consumer group: one reads new entries
(XREADGROUP >), one reclaims entries left pending by a dead replica after the idle time
(XAUTOCLAIM). Both hand the entries to the StreamProcessor (new ones with the bodies just
read, which it applies as read when they follow the applied cursor), which commits and acks.
Only the replica holding the stream's lease (leases.py) reads it: on a standby both
subscribers' reads wait for the lease (ReadGuard) instead of asking Redis, so no entry
is delivered to, or left pending for, a standby. The owner applies from the applied cursor
(XRANGE), so entries a former owner was handed but did not commit are applied by the new
owner's catch-up when it takes the lease, and acked (XACK acks any consumer's entry).
FastStream's own acknowledgement is off (AckPolicy.MANUAL): the XACK is part of the
commit. The handler reads the raw fields itself so that a malformed entry is
dead-lettered by us rather than failing inside the framework.

`serve` runs the app itself rather than through `FastStream.run`: it owns SIGTERM / SIGINT
across every start-up try, starts again when Redis cuts a start-up short, and raises
ServiceFailed (one line, exit 1) for what retrying cannot fix. The subscribers' read errors
are taken before FastStream's loop sees them (ReadGuard): an outage is logged once per
change of state (OutageLog), a lost consumer group is created again at the applied cursor.

On a Redis Cluster (docs/operations/partitions.md; asked of the server, runtime/connection.py) the
broker is FastStream's RedisClusterBroker, the client redis-py's cluster client, and each
commit runs on the partition's slot owner; a layout whose commits would span slots is
refused at start-up. A server that does not answer yet is taken for standalone (the HTTP
side is live meanwhile) and asked again when it answers: the service is built again for a
cluster (KindFound).
"""

from __future__ import annotations

import asyncio
import errno
import gc
import logging
import signal
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import redis.asyncio as aioredis
import structlog
from faststream import AckPolicy, FastStream
from faststream.redis import RedisBroker, RedisClusterBroker, RedisMessage, StreamSub
from redis.exceptions import RedisClusterException, RedisError, ResponseError

from service.engine.registry import Registry, default_registry
from service.runtime.connection import (
    TRANSIENT,
    client_for,
    is_cluster,
    is_cluster_now,
    is_connection_race,
)
from service.runtime.faststream_seams import (
    ExitAwareApp,
    ReadTurn,
    budget_reads,
    entries_of,
    guard_reads,
    ids_only,
    no_body,
)
from service.runtime.health import Health
from service.runtime.leases import LeaseLost, Leases
from service.runtime.logconfig import configure_logging
from service.runtime.metrics import Metrics
from service.runtime.outage import REFUSING, OutageLog, refuses_writes
from service.runtime.partitions import advertise, cluster_problem
from service.runtime.processor import StreamProcessor
from service.runtime.readbudget import ReadBudget
from service.runtime.redischecks import RedisChecks
from service.runtime.settings import Settings, load_settings, redact, redact_error
from service.runtime.storegate import StoreGate
from service.runtime.storeid import StoreRefused
from service.runtime.unread import Unread

log = structlog.get_logger("rating.app")
T = TypeVar("T")
BACKOFF_FIRST, BACKOFF_MAX = 0.1, 5.0
GC_YOUNG_THRESHOLD = 10_000  # allocations between two young collections (Python's default: 700)
READ_RETRY_MAX = 1.0  # a subscriber whose read failed tries again within a second
# Errors that mean "Redis is not there right now" (BusyLoadingError is a ConnectionError), or,
# on a cluster, that a slot is moving or a master failing over (connection.TRANSIENT).
REDIS_AWAY = TRANSIENT


class ServiceFailed(Exception):
    """A failure that retrying cannot fix (the HTTP port is taken, Redis refuses a command the
    service needs at start-up, a store it must not serve (storeid.py), a subscriber stopped
    for good): said in one line, and the process exits non-zero."""


class KindFound(Exception):
    """The start-up found the server to be of the other kind (standalone / Redis Cluster) than
    the app was built for: `serve` builds it again for `cluster`."""

    def __init__(self, cluster: bool):
        super().__init__("a Redis Cluster" if cluster else "a standalone server")
        self.cluster = cluster


class Service:
    """One build of the service, for one kind of server: the FastStream app (`app`, what
    `faststream run` runs) and what its hooks start and stop: the Redis client, the leases, a
    processor per input stream, the HTTP side and the side tasks. `exit_requested` is set when
    a subscriber that stopped for good asks the app to exit (FastStream does so on errors it
    deems terminal); `serve` tells that apart from SIGTERM and exits non-zero. `release()`
    releases what a start-up that failed, or was stopped, left."""

    def __init__(
        self, settings: Settings, registry: Registry, cluster: bool, *, verify_kind: bool
    ) -> None:
        self.settings, self.registry = settings, registry
        # With a guessed kind the start-up asks the server again (KindFound when wrong).
        self.guessed_kind = cluster if verify_kind else None
        # FastStream's own log lines go through the standard library into structlog's JSON;
        # its per-message lines at DEBUG. Its read errors never reach it (see ReadGuard).
        self.broker = (RedisClusterBroker if cluster else RedisBroker)(
            settings.redis_url,
            graceful_timeout=30.0,
            logger=logging.getLogger("rating.faststream"),
            log_level=logging.DEBUG,
        )
        self.client = client_for(settings.redis_url, cluster)
        self.metrics = Metrics()
        self.outage = OutageLog(settings.outage_log_ms / 1000)
        self.refusing = OutageLog(settings.outage_log_ms / 1000, said=REFUSING)  # D34
        self.stopping = asyncio.Event()  # set when the shutdown starts: handlers stop waiting
        self.exit_requested = asyncio.Event()
        self.fatal: str | None = None  # why the service stops, found while running (the gate)
        inputs = settings.layout.inputs
        self.gate = StoreGate(self.client, settings, self.metrics, self._stop_for)
        self.leases = Leases(
            self.client,
            settings.consumer,
            inputs,
            settings.lease_ms,
            self.metrics,
            self.catch_up,
            gate=self.gate,
        )
        self.processors = {
            s: StreamProcessor(self.client, settings, s, registry, self.metrics, self.leases[s])
            for s in inputs
        }
        self.health = Health(self.client, self.metrics, settings.redis_url)
        self.health.stores = self.gate.problem
        self.checks = RedisChecks(self.client, settings, self.metrics, self.health.unready)
        self.http = (
            _http_server(self.client, self.health, self.metrics, settings, self.outage)
            if settings.http_port
            else None
        )
        self.tasks: list[asyncio.Task] = []
        for processor in self.processors.values():
            for reclaim in (False, True):
                _subscribe(self, processor, reclaim=reclaim)
        self.app = ExitAwareApp(
            self.broker,
            logger=logging.getLogger("rating.faststream"),
            on_exit=self.exit_requested.set,
            on_startup=[self.start],
            on_shutdown=[self.stop_side_tasks],
            after_shutdown=[self.close_client],
        )

    def _stop_for(self, reason: str) -> None:
        """A store this replica must not serve, found while running: exit 1, saying why."""
        self.fatal = reason
        self.exit_requested.set()

    async def catch_up(self, stream: str) -> None:
        """Apply whatever is after the cursor up to the last entry the consumer group has
        delivered (on taking the lease, and again on every renewal: entries handed to a former
        owner, or to this one and not committed, are not delivered again; the entries after
        it are, to this replica's subscriber, with their bodies)."""
        processor = self.processors[stream]
        if self.health.unready:  # held off consuming (a Redis check refuses the server, D25)
            return
        try:
            last = await processor.delivered_until()
            if last is not None:
                await processor.handle(last)
        except LeaseLost:
            self.leases.lost(stream)
        except REDIS_AWAY as exc:
            self.outage.unreachable(_reason(exc, self.settings))
        except Exception as exc:  # a failing entry (counted towards poison) or a Redis refusal:
            if refuses_writes(exc):  # the next renewal tries again
                self.refusing.unreachable(_reason(exc, self.settings))
            else:
                log.exception("catch-up failed", stream=stream)

    async def start(self) -> None:
        """The app's start-up hook: the HTTP side (live at once, ready once Redis answers),
        then, once Redis answers, the stores' records (refused: ServiceFailed, before anything
        is written), the consumer groups, the layout, the index of the existing entries, and
        the side tasks (the groups' observer, the leases, the records' look, the unread
        streams' look)."""
        settings = self.settings
        configure_logging(settings.log_level, settings.log_json)
        if self.http is not None:
            try:
                await self.http.start()
            except OSError as exc:
                raise ServiceFailed(_http_problem(exc, settings)) from None
        processors = list(self.processors.values())
        await _until_redis_answers(
            lambda: _start_on_redis(
                settings, self.guessed_kind, processors, self.checks, self.gate
            ),
            settings,
            self.refusing,
        )
        await advertise(self.client, settings.layout)
        for processor in processors:
            await processor.index_existing()

        def away(exc: BaseException) -> None:  # away, or answering but refusing writes (D34)
            said = self.refusing if refuses_writes(exc) else self.outage
            said.unreachable(_reason(exc, settings))

        self.tasks.append(asyncio.create_task(self.checks.run()))
        self.tasks.append(
            asyncio.create_task(
                _watch_groups(processors, self.health, self.outage, settings, self.gate.gone)
            )
        )
        self.tasks.append(asyncio.create_task(self.leases.run(away, self.refusing.reachable)))
        self.tasks.append(asyncio.create_task(self.gate.run(self.leases, away)))
        unread = Unread(
            self.client, settings.layout, self.metrics, self.leases[settings.layout.inputs[0]]
        )
        self.tasks.append(asyncio.create_task(unread.run(away)))
        log.info(
            "starting",
            partitions=settings.partitions,
            streams=list(settings.layout.inputs),
            group=settings.group,
            consumer=settings.consumer,
            engines=[f"{e.system}/{e.ruleset}" for e in self.registry],
            http=f"{settings.http_host}:{self.http.port}" if self.http is not None else None,
        )

    async def stop_side_tasks(self) -> None:
        """The app's shutdown hook (before the subscribers stop)."""
        self.stopping.set()
        self.leases.stand_down()
        for task in self.tasks:
            task.cancel()
        if self.http is not None:
            await self.http.stop()

    async def close_client(self) -> None:
        """The app's after-shutdown hook: after the last commit, release the leases (a standby
        takes over within its poll interval) and close the client."""
        try:
            await self.leases.release_all()
        except (RedisError, *REDIS_AWAY) as exc:  # the leases expire on their own
            log.warning("leases not released", error=_reason(exc, self.settings))
        await self.client.aclose()
        log.info("stopped", consumer=self.settings.consumer)

    async def release(self) -> None:
        """What the shutdown releases, for a start-up that failed or was stopped before it."""
        await self.stop_side_tasks()
        try:
            await self.broker.stop()
        except Exception as exc:  # a half-started broker: nothing more to release
            log.debug("broker stop after a failed start-up", error=repr(exc))
        await self.client.aclose()


def build_service(
    settings: Settings | None = None,
    registry: Registry | None = None,
    cluster: bool | None = None,
    *,
    verify_kind: bool = False,
) -> Service:
    """The service wired from the settings (default: the environment's). `cluster`: whether
    the Redis is a Redis Cluster (runtime/connection.py; None: asked now, standalone when it
    does not answer, as for `faststream run`). `verify_kind`: the kind was a guess (the server
    did not answer yet): the start-up asks again once it answers and raises KindFound if it
    was wrong. A layout whose commits would span a cluster's slots is a ServiceFailed."""
    settings = settings or load_settings()
    registry = registry if registry is not None else default_registry()
    if cluster is None:
        cluster = is_cluster_now(settings.redis_url)
    if cluster:
        problem = cluster_problem(settings.layout)
        if problem is not None:
            raise ServiceFailed(problem)
    return Service(settings, registry, cluster, verify_kind=verify_kind)


def build_app(
    settings: Settings | None = None, registry: Registry | None = None, cluster: bool | None = None
) -> FastStream:
    """The FastStream app, built from the settings: the factory of
    `faststream run service.app:build_app --factory` (called without arguments: the
    environment's settings, the default engines, the server asked now)."""
    return build_service(settings, registry, cluster).app


def _http_server(
    client: aioredis.Redis | Any,
    health: Health,
    metrics: Metrics,
    settings: Settings,
    outage: OutageLog,
) -> Any:
    """The HTTP side (service/web): operators' endpoints, the read API and the pages, served
    by uvicorn in this event loop once the app starts; its reads tell `outage` when Redis
    is away (one log line per outage for the whole process), and the operators' endpoints
    are on RATING_ADMIN_PORT when it is set."""
    from service.runtime.queries import ReadModel
    from service.web.app import create_app
    from service.web.server import HttpServer

    reads = ReadModel(client, list(settings.layout.inputs))
    app = create_app(
        reads,
        health,
        metrics,
        outage,
        admin_port=settings.admin_port,
        reason=lambda exc: _reason(exc, settings),
        look=settings.look,
    )
    admin = settings.admin_port or None
    return HttpServer(app, settings.http_host, settings.http_port, settings.admin_host, admin)


async def serve(
    settings: Settings, registry: Registry | None = None, signalled: Sequence[int] = ()
) -> None:
    """Run the service until SIGTERM / SIGINT, then return (the process exits 0).

    SIGTERM is honoured at every stage: while waiting for Redis, during FastStream's own
    start-up, between two tries, and while running (the commit in progress is finished).
    A start-up cut short by Redis going away starts again, with backoff. A failure that
    retrying cannot fix raises ServiceFailed. `signalled`: signals the caller caught before
    (checked once the service's own handlers are in place)."""
    configure_logging(settings.log_level, settings.log_json)  # before the first wait for Redis
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    handled = (signal.SIGTERM, signal.SIGINT)
    for sig in handled:
        loop.add_signal_handler(sig, stop.set)
    if signalled:
        stop.set()
    try:
        await _run_until(stop, settings, registry)
    finally:
        for sig in handled:
            loop.remove_signal_handler(sig)


async def _run_until(stop: asyncio.Event, settings: Settings, registry: Registry | None) -> None:
    delay = BACKOFF_FIRST
    cluster: bool | None = None  # standalone or Redis Cluster: known once the server has said
    while True:
        if cluster is None:
            asking = asyncio.ensure_future(_kind_now(settings))
            if not await _first(asking, stop):
                log.info("stopped during start-up", consumer=settings.consumer)
                return
            cluster = asking.result()
        # A server that does not answer yet is taken for standalone (the HTTP side is live at
        # once, the start-up waits for Redis), and asked again when it answers (KindFound).
        service = build_service(settings, registry, bool(cluster), verify_kind=cluster is None)
        starting = asyncio.create_task(service.app.start())
        if not await _first(starting, stop):  # SIGTERM during the start-up
            starting.cancel()
            await asyncio.gather(starting, return_exceptions=True)
            await service.release()
            log.info("stopped during start-up", consumer=settings.consumer)
            return
        try:
            starting.result()
        except KindFound as found:
            await service.release()
            cluster = found.cluster
            log.info("redis answers: building the service again for it", redis=str(found))
            continue
        except (*REDIS_AWAY, ResponseError) as exc:
            await service.release()
            if isinstance(exc, ResponseError) and not refuses_writes(exc):
                raise _refused(exc, settings) from None  # e.g. an ACL without a command
            # Away, or refusing writes (full under noeviction: D34): wait, start again.
            log.warning(
                "start-up interrupted, starting again", error=_reason(exc, settings), retry_in=delay
            )
            if not await _first(asyncio.sleep(delay), stop):  # SIGTERM between two tries
                log.info("stopped during start-up", consumer=settings.consumer)
                return
            delay = min(delay * 2, BACKOFF_MAX)
            continue
        except RedisError as exc:  # e.g. an ACL without a command the service needs
            await service.release()
            raise _refused(exc, settings) from None
        except BaseException:
            await service.release()
            raise
        break
    # What start-up made lives as long as the process: out of the garbage collector's way
    # (its full collections walk fewer objects), and young collections less often (a commit
    # makes thousands of short-lived objects that reference counting frees).
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    log.info("ready", consumer=settings.consumer)
    await _first(stop.wait(), service.exit_requested)
    await service.app.stop()
    if not stop.is_set():
        raise ServiceFailed(
            service.fatal
            or "a subscriber stopped for good (see the log above); restart the service"
        )


async def _first(work: Awaitable | asyncio.Task, stop: asyncio.Event) -> bool:
    """Wait for `work` or for `stop`, whichever comes first; True when `work` finished
    (an unfinished `work` is cancelled unless it is a task the caller holds)."""
    task = work if isinstance(work, asyncio.Task) else asyncio.ensure_future(work)
    stopped = asyncio.ensure_future(stop.wait())
    await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
    stopped.cancel()
    if task.done():
        return True
    if task is not work:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    return False


def _http_problem(exc: OSError, settings: Settings) -> str:
    """The one line that says why the HTTP endpoint (or the operators' port) cannot listen."""
    from service.web.server import AdminPortProblem

    admin = isinstance(exc, AdminPortProblem)
    name, port, where = (
        ("ADMIN", "operators' port", f"{settings.admin_host}:{settings.admin_port}")
        if admin
        else ("HTTP", "HTTP port", f"{settings.http_host}:{settings.http_port}")
    )
    if exc.errno == errno.EADDRINUSE:
        return f"{port} {where} is already in use (RATING_{name}_PORT)"
    if exc.errno == errno.EACCES:
        return f"{port} {where}: permission denied (a port below 1024 needs privileges; RATING_{name}_PORT)"
    listen = "the operators' port" if admin else "HTTP"
    return f"cannot listen on {listen} {where}: {exc.strerror or exc} (RATING_{name}_HOST, RATING_{name}_PORT)"


def _subscribe(service: Service, processor: StreamProcessor, *, reclaim: bool) -> None:
    """A subscriber of `processor`'s stream: new entries in batches (XREADGROUP >), or with
    `reclaim` the entries left pending by a dead replica after the idle time (XAUTOCLAIM);
    its reads guarded (ReadGuard)."""
    settings = service.settings
    sub = StreamSub(
        processor.stream,
        group=settings.group,
        consumer=settings.consumer,
        polling_interval=settings.poll_ms,
        min_idle_time=settings.claim_idle_ms if reclaim else None,
        # New entries come in batches, handled (and committed) together.
        batch=not reclaim,
        max_records=None if reclaim else ReadBudget.of(settings).first,
    )
    subscriber = service.broker.subscriber(
        stream=sub,
        ack_policy=AckPolicy.MANUAL,
        parser=ids_only,
        decoder=no_body,
        title=f"{processor.stream}{':reclaim' if reclaim else ''}",
    )
    subscriber(_entries_handler(service, processor))
    guard_reads(subscriber, ReadGuard(service, processor))
    if not reclaim:  # reclaimed entries come one at a time (XAUTOCLAIM COUNT 1)
        budget_reads(subscriber, ReadBudget.of(settings))


def _entries_handler(
    service: Service, processor: StreamProcessor
) -> Callable[[RedisMessage], Awaitable[None]]:
    """The subscriber's handler: the entries to the processor, which commits and acks them;
    while Redis is away, tried again with backoff, in order."""
    settings, outage = service.settings, service.outage

    async def on_entries(message: RedisMessage) -> None:
        # New entries come with their bodies (applied without reading them again when they
        # follow the cursor); reclaimed ones are read from the stream.
        ids, bodies = entries_of(message)
        if service.health.unready:  # a Redis check holds consuming (D25): a batch read
            return  # just before stays pending, unacked; the catch-up applies it after
        delay = BACKOFF_FIRST
        while ids:
            try:
                await processor.handle(*ids, bodies=bodies)
                outage.reachable()
                service.refusing.reachable()
                return
            except LeaseLost:
                # Read just before the lease went: the entries stay pending, unacked; the
                # new owner applies them from the cursor and acks them.
                service.leases.lost(processor.stream)
                return
            except REDIS_AWAY as exc:
                # Redis went away (or is loading its data after a restart): nothing was half
                # done (each commit is one MULTI/EXEC); try again when it is back, in order.
                # On shutdown, leave the entries pending (reclaimed or caught up later).
                outage.unreachable(_reason(exc, settings))
                if not await _first(asyncio.sleep(delay), service.stopping):
                    return
                delay = min(delay * 2, BACKOFF_MAX)
            except ResponseError as exc:
                if not refuses_writes(exc):
                    raise
                # Redis full (noeviction), read-only or unable to persist: nothing of the
                # commit was done; said once, tried again with backoff, in order (D34).
                service.refusing.unreachable(_reason(exc, settings))
                if not await _first(asyncio.sleep(delay), service.stopping):
                    return
                delay = min(delay * 2, BACKOFF_MAX)

    return on_entries


class ReadGuard:
    """Takes a subscriber's read errors before FastStream's read loop does (guard_reads).

    FastStream (0.7, `_StreamHandlerMixin._consume`) logs every failed read with its
    traceback and waits 5 s, and on a lost consumer group (NOGROUP) stops the subscriber and
    makes the app exit 0, which leaves the service down under an on-failure restart policy.
    Here a read that fails because Redis is away goes to the OutageLog (a line per change
    of state) and is tried again within a second (on a cluster: a moving slot, a failover, and
    redis-py's cluster client closing a connection under the read, connection.is_connection_race,
    too); a lost group is created again at the applied cursor (StreamProcessor.recover_group).
    Anything else still reaches FastStream.

    On a standby (the stream's lease is another replica's) the read does not ask Redis: it
    waits until the lease is this replica's (at most RATING_POLL_MS) and returns empty, so
    that no entry is delivered to, and left pending for, a replica that will not apply it.
    Nor while a Redis check holds the replica off consuming (Health.unready; D25).
    """

    def __init__(self, service: Service, processor: StreamProcessor) -> None:
        self.settings, self.outage, self.processor = service.settings, service.outage, processor
        self.lease = service.leases[processor.stream]
        self.unready = service.health.unready
        self.delay = BACKOFF_FIRST

    async def __call__(self, read: ReadTurn) -> None:
        if self.unready:  # held off consuming (a Redis check refuses the server, D25)
            await asyncio.sleep(self.settings.poll_ms / 1000)
            return
        if not self.lease.owned.is_set():
            await self.lease.wait_owned(self.settings.poll_ms / 1000)
            return
        try:
            await read()
        except REDIS_AWAY as exc:
            self.outage.unreachable(_reason(exc, self.settings))
        except AttributeError as exc:  # FastStream's cluster client: a connection closed under it
            if not is_connection_race(exc):
                raise
            self.outage.unreachable(_reason(exc, self.settings))
        except ResponseError as exc:
            if "NOGROUP" in str(exc):
                if await self._recover_group():
                    return
            elif str(exc).startswith("UNBLOCKED"):
                return  # the stream was deleted under a blocked read: the next read says NOGROUP
            else:
                raise
        else:
            self.outage.reachable()
            self.delay = BACKOFF_FIRST
            return
        await asyncio.sleep(self.delay)
        self.delay = min(self.delay * 2, READ_RETRY_MAX)

    async def _recover_group(self) -> bool:
        """The read said NOGROUP: create the group again at the applied cursor (False when
        Redis went away meanwhile: the read is tried again after the delay)."""
        self.outage.reachable()
        try:
            await self.processor.recover_group()
            return True
        except REDIS_AWAY as again:
            self.outage.unreachable(_reason(again, self.settings))
            return False


async def _kind_now(settings: Settings) -> bool | None:
    """Whether the server is a Redis Cluster, if it answers within a second (None: not yet).
    A refusal (an ACL without CLUSTER INFO) is a ServiceFailed."""
    try:
        return await is_cluster(settings.redis_url, socket_connect_timeout=1.0, socket_timeout=1.0)
    except REDIS_AWAY:
        return None
    except (RedisError, RedisClusterException) as exc:
        raise _refused(exc, settings) from None


async def _start_on_redis(
    settings: Settings,
    guessed: bool | None,
    processors,
    checks: RedisChecks,
    gate: StoreGate,
) -> None:
    """What the start-up needs Redis for: with a guessed kind, ask it again (KindFound when
    wrong); check the server (a refusal is a ServiceFailed: redischecks.py, D24); the stores'
    records (a ServiceFailed for a store this replica must not serve, before anything is
    written: storeid.py, D16-D17); create the consumer groups."""
    if guessed is not None and await is_cluster(settings.redis_url) != guessed:
        raise KindFound(not guessed)
    if (refused := await checks.at_start()) is not None:
        raise ServiceFailed(refused)
    try:
        await gate.check_start()
    except StoreRefused as exc:
        raise ServiceFailed(str(exc)) from None
    for processor in processors:
        await processor.ensure_group()


async def _until_redis_answers(
    work: Callable[[], Awaitable[T]], settings: Settings, refusing: OutageLog | None = None
) -> T:
    """`work()` (ask what the server is, create the consumer groups), waiting (with backoff)
    until Redis answers. Says why once, again when the reason changes or every
    RATING_OUTAGE_LOG_MS, and when Redis answers. With `refusing`, a Redis that answers but
    refuses writes (full under noeviction, a replica: D34) is waited out here too, said
    there ("redis refuses writes" once): the HTTP side stays up and the checks are not said
    again, as they were when the whole start-up began again for each try."""
    loop = asyncio.get_running_loop()
    delay = BACKOFF_FIRST
    since = said = 0.0
    said_kind = None
    while True:
        try:
            done = await work()
            if said_kind is not None:
                log.warning("redis answers", waited_seconds=round(loop.time() - since, 1))
            if refusing is not None:
                refusing.reachable()
            return done
        except (*REDIS_AWAY, ResponseError) as exc:
            if refusing is not None and refuses_writes(exc):
                refusing.unreachable(_reason(exc, settings))
            elif isinstance(exc, REDIS_AWAY):
                now, kind = loop.time(), type(exc).__name__
                where = {"redis": redact(settings.redis_url), "error": _reason(exc, settings)}
                if said_kind is None:
                    since = said = now
                    log.warning("waiting for redis", **where)
                elif kind != said_kind or now - said >= settings.outage_log_ms / 1000:
                    said = now
                    log.warning(
                        "still waiting for redis", waited_seconds=round(now - since, 1), **where
                    )
                said_kind = kind
            else:
                raise
            await asyncio.sleep(delay)
            delay = min(delay * 2, BACKOFF_MAX)


def _refused(exc: BaseException, settings: Settings) -> ServiceFailed:
    """The one line of a start-up Redis refused (an ACL without a command the service needs)."""
    return ServiceFailed(
        f"Redis at {redact(settings.redis_url)} refused the start-up: {_reason(exc, settings)}"
    )


def _reason(exc: BaseException, settings: Settings) -> str:
    """An error's type and text, without the Redis password."""
    return f"{type(exc).__name__}: {redact_error(exc, settings.redis_url)}"


async def _watch_groups(
    processors: list[StreamProcessor],
    health: Health,
    outage: OutageLog,
    settings: Settings,
    gone: set[str],
    every: float = 2.0,
) -> None:
    """Every `every` seconds: tell the OutageLog whether Redis answers a PING (and keep
    `rating_redis_up`), update the gauges (consumer groups, lag, dead-letter stream), and
    create a consumer group again if it is gone (not for a stream whose store record is
    `gone`: it is not consumed until the record is back, storegate.py)."""
    problem_said = None
    while True:
        problem = await health.redis_answers()
        if problem is not None:
            outage.unreachable(problem)
        else:
            outage.reachable()
            try:
                for processor in processors:
                    if processor.stream in gone:
                        continue
                    if not await processor.observe_group():
                        await processor.recover_group()
                problem_said = None
            except REDIS_AWAY as exc:
                outage.unreachable(_reason(exc, settings))
            except RedisError as exc:
                if str(exc) != problem_said:  # once per problem, not every `every` seconds
                    log.warning("cannot read the consumer groups", error=_reason(exc, settings))
                    problem_said = str(exc)
        await asyncio.sleep(every)
