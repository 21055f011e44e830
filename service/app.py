"""The FastStream application: `rating-service serve`, or `faststream run service.app:app`.

Per input stream, two subscribers share the consumer group: one reads new entries
(XREADGROUP >), one reclaims entries left pending by a dead replica after the idle time
(XAUTOCLAIM). Both hand the entry id to the StreamProcessor, which commits and acks.
FastStream's own acknowledgement is off (AckPolicy.MANUAL): the XACK is part of the
commit. The handler reads the raw fields itself so that a malformed entry is
dead-lettered by us rather than failing inside the framework.
"""

from __future__ import annotations

import redis.asyncio as aioredis
import structlog
from faststream import AckPolicy, FastStream
from faststream.redis import RedisBroker, StreamSub
from faststream.redis.annotations import RedisMessage

from service.consumer import StreamProcessor
from service.engine.registry import Registry, default_registry
from service.logconfig import configure_logging
from service.settings import Settings, load_settings

log = structlog.get_logger("rating.app")


def build_app(settings: Settings | None = None, registry: Registry | None = None) -> FastStream:
    """Wire the broker, the subscribers and the processors from the settings."""
    settings = settings or load_settings()
    registry = registry if registry is not None else default_registry()
    broker = RedisBroker(settings.redis_url, graceful_timeout=30.0, logger=None)
    client = aioredis.Redis.from_url(settings.redis_url)
    processors = {s: StreamProcessor(client, settings, s, registry) for s in settings.input_streams}

    for stream, processor in processors.items():
        _subscribe(broker, settings, processor, reclaim=False)
        _subscribe(broker, settings, processor, reclaim=True)

    app = FastStream(broker, logger=None)

    @app.on_startup
    async def create_groups() -> None:
        configure_logging(settings.log_level, settings.log_json)
        for processor in processors.values():
            await processor.ensure_group()
        log.info(
            "starting",
            streams=list(settings.input_streams),
            group=settings.group,
            consumer=settings.consumer,
            engines=[f"{e.system}/{e.ruleset}" for e in registry],
        )

    @app.after_shutdown
    async def close_client() -> None:
        await client.aclose()
        log.info("stopped", consumer=settings.consumer)

    return app


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
        if ids:
            await processor.handle(*ids)

    broker.subscriber(stream=sub, ack_policy=AckPolicy.MANUAL, title=f"{processor.stream}{':reclaim' if reclaim else ''}")(
        on_entries
    )


def __getattr__(name: str):
    # `faststream run service.app:app`: built from the environment on first access.
    if name == "app":
        return build_app()
    raise AttributeError(name)
