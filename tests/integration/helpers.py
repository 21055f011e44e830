"""Helpers of the integration tests: settings on a private key prefix, stream readers."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from schemas import EventRejected, RatingsUpdated
from service.runtime.settings import Settings, load_settings


def settings_for(redis_url: str, prefix: str, **overrides: Any) -> Settings:
    """Settings whose streams (and so all keys) carry the test's own prefix; the store's
    record is created at start (RATING_CREATE_STORE: every test's store is new; the tests of
    the records themselves give create_store=False)."""
    values: dict[str, Any] = dict(
        create_store=True,
        input_streams=(f"{prefix}.events",),
        output_stream=f"{prefix}.ratings",
        dead_letter_stream=f"{prefix}.rejected",
        group=f"{prefix}-group",
        poll_ms=50,
        claim_idle_ms=300,
        lease_ms=1000,
        http_port=0,
    )
    values.update(overrides)
    return load_settings({}, redis_url=redis_url, **values)


async def publish(client, settings: Settings, *messages: dict | bytes) -> list[str]:
    ids = []
    for message in messages:
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        ids.append((await client.xadd(settings.input_streams[0], {"__data__": data})).decode())
    return ids


async def outputs(client, settings: Settings) -> list[RatingsUpdated]:
    entries = await client.xrange(settings.output_stream)
    return [msgspec.json.decode(fields[b"__data__"], type=RatingsUpdated) for _, fields in entries]


async def rejections(client, settings: Settings) -> list[EventRejected]:
    entries = await client.xrange(settings.dead_letter_stream)
    return [msgspec.json.decode(fields[b"__data__"], type=EventRejected) for _, fields in entries]


async def pending(client, settings: Settings) -> int:
    info = await client.xpending(settings.input_streams[0], settings.group)
    return int(info["pending"])
