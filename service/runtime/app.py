"""The FastStream application: `rating-service serve`, or `faststream run service.app:app`.

Per input stream, two subscribers share the consumer group: one reads new entries
(XREADGROUP >), one reclaims entries left pending by a dead replica after the idle time
(XAUTOCLAIM). Both hand the entry id to the StreamProcessor, which commits and acks.
FastStream's own acknowledgement is off (AckPolicy.MANUAL): the XACK is part of the
commit. The handler reads the raw fields itself so that a malformed entry is
dead-lettered by us rather than failing inside the framework.
"""

from __future__ import annotations

import asyncio
import logging

import redis.asyncio as aioredis
import structlog
from faststream import AckPolicy, FastStream
from faststream.redis import RedisBroker, StreamSub
from faststream.redis.annotations import RedisMessage
from faststream.redis.message import RedisBatchStreamMessage, RedisStreamMessage

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from service.runtime.processor import StreamProcessor
from service.engine.registry import Registry, default_registry
from service.runtime.health import HealthServer
from service.runtime.logconfig import configure_logging
from service.runtime.metrics import Metrics
from service.runtime.settings import Settings, load_settings, redact, redact_error

log = structlog.get_logger("rating.app")
BACKOFF_FIRST, BACKOFF_MAX = 0.1, 5.0
# Errors that mean "Redis is not there right now" (BusyLoadingError is a ConnectionError).
REDIS_AWAY = (RedisConnectionError, RedisTimeoutError, OSError)


def build_app(settings: Settings | None = None, registry: Registry | None = None) -> FastStream:
    """Wire the broker, the subscribers and the processors from the settings."""
    settings = settings or load_settings()
    registry = registry if registry is not None else default_registry()
    # FastStream's own log lines go through the standard library into structlog's JSON; its
    # per-message lines at DEBUG, its errors (a failed read while Redis is away) as errors.
    broker = RedisBroker(
        settings.redis_url, graceful_timeout=30.0, logger=logging.getLogger("rating.faststream"), log_level=logging.DEBUG
    )
    client = aioredis.Redis.from_url(settings.redis_url)
    metrics = Metrics()
    processors = {s: StreamProcessor(client, settings, s, registry, metrics) for s in settings.input_streams}
    health = HealthServer(client, metrics, settings.http_host, settings.http_port, settings.redis_url)
    tasks: list[asyncio.Task] = []

    for stream, processor in processors.items():
        _subscribe(broker, settings, processor, reclaim=False)
        _subscribe(broker, settings, processor, reclaim=True)

    app = FastStream(broker, logger=logging.getLogger("rating.faststream"))

    @app.on_startup
    async def create_groups() -> None:
        configure_logging(settings.log_level, settings.log_json)
        if settings.http_port:
            await health.start()  # live at once; ready once Redis answers
        await _until_redis_answers(processors.values(), settings)
        tasks.append(asyncio.create_task(_watch_groups(list(processors.values()), health)))
        log.info(
            "starting",
            streams=list(settings.input_streams),
            group=settings.group,
            consumer=settings.consumer,
            engines=[f"{e.system}/{e.ruleset}" for e in registry],
            http=f"{settings.http_host}:{health.port}" if settings.http_port else None,
        )

    @app.on_shutdown
    async def stop_side_tasks() -> None:
        for task in tasks:
            task.cancel()
        await health.stop()

    @app.after_shutdown
    async def close_client() -> None:
        await client.aclose()
        log.info("stopped", consumer=settings.consumer)

    async def release() -> None:
        """What the shutdown hooks release, for a start-up that failed before them."""
        await stop_side_tasks()
        await client.aclose()

    app.release = release  # type: ignore[attr-defined]
    return app


async def serve(settings: Settings, registry: Registry | None = None) -> None:
    """Run the service until SIGTERM / SIGINT. A start-up cut short by Redis going away
    (FastStream's own connect or group set-up) starts again, with backoff."""
    delay = BACKOFF_FIRST
    while True:
        app = build_app(settings, registry)
        try:
            await app.run()
            return
        except REDIS_AWAY as exc:
            await app.release()  # type: ignore[attr-defined]
            log.warning("start-up interrupted, starting again", error=_reason(exc, settings), retry_in=delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, BACKOFF_MAX)


def _subscribe(broker: RedisBroker, settings: Settings, processor: StreamProcessor, *, reclaim: bool) -> None:
    sub = StreamSub(
        processor.stream,
        group=settings.group,
        consumer=settings.consumer,
        polling_interval=settings.poll_ms,
        min_idle_time=settings.claim_idle_ms if reclaim else None,
        # New entries come in batches, handled (and committed) together.
        batch=not reclaim,
        max_records=None if reclaim else settings.batch_size,
    )

    async def on_entries(message: RedisMessage) -> None:
        ids = [i.decode() if isinstance(i, bytes) else i for i in message.raw_message["message_ids"]]
        delay = BACKOFF_FIRST
        while ids:
            try:
                await processor.handle(*ids)
                return
            except REDIS_AWAY as exc:
                # Redis went away (or is loading its data after a restart): nothing was half
                # done (each commit is one MULTI/EXEC); try again when it is back, in order.
                log.warning("redis unavailable, retrying", stream=processor.stream, error=_reason(exc, settings),
                            retry_in=delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, BACKOFF_MAX)

    broker.subscriber(
        stream=sub,
        ack_policy=AckPolicy.MANUAL,
        parser=_ids_only,
        decoder=_no_body,
        title=f"{processor.stream}{':reclaim' if reclaim else ''}",
    )(on_entries)


async def _ids_only(raw: dict, original_parser: object) -> RedisStreamMessage | RedisBatchStreamMessage:
    """FastStream's message without decoding the entries' bodies: the handler needs only
    their ids (the processor reads and decodes the entries itself, strictly, in order)."""
    kind = RedisBatchStreamMessage if raw["type"] == "bstream" else RedisStreamMessage
    return kind(raw_message=raw, body=b"", consumer=None, group=None)  # type: ignore[arg-type]


async def _no_body(message: object, original_decoder: object) -> None:
    return None


async def _until_redis_answers(processors, settings: Settings) -> None:
    """Create the consumer groups, waiting (with backoff, saying why) until Redis answers."""
    delay = BACKOFF_FIRST
    while True:
        try:
            for processor in processors:
                await processor.ensure_group()
            return
        except REDIS_AWAY as exc:
            log.warning("waiting for redis", redis=redact(settings.redis_url), error=_reason(exc, settings), retry_in=delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, BACKOFF_MAX)


def _reason(exc: BaseException, settings: Settings) -> str:
    """An error's type and text, without the Redis password."""
    return f"{type(exc).__name__}: {redact_error(exc, settings.redis_url)}"


async def _watch_groups(processors: list[StreamProcessor], health: HealthServer, every: float = 2.0) -> None:
    """Keep the consumer-group gauges and `rating_redis_up` current; say when Redis goes
    away and when it is back."""
    was_up = True
    while True:
        problem = await health.redis_answers()
        if problem is not None and was_up:
            log.error("redis unreachable", error=problem)
        elif problem is None and not was_up:
            log.info("redis reachable again")
        was_up = problem is None
        if was_up:
            for processor in processors:
                try:
                    await processor.observe_group()
                except RedisError as exc:
                    log.warning("cannot read the consumer group", stream=processor.stream, error=str(exc))
        await asyncio.sleep(every)
