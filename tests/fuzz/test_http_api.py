"""The HTTP read API against its own OpenAPI document (schemathesis, D80): requests generated
from `/openapi.json`, valid and not, to the app in-process over the Redis read model of a
small club (its own key prefix), whose events the StreamProcessor rated. Every answer: no
5xx, a status code, content type, headers and body the document declares."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Coroutine, Iterator
from typing import Any

import httpx
import pytest
import redis
import redis.asyncio as aioredis
import schemathesis
from hypothesis import given
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from schemas import PlayerRecord
from service.engine.registry import default_registry
from service.runtime.health import Health
from service.runtime.keys import StreamKeys
from service.runtime.metrics import Metrics
from service.runtime.processor import StreamProcessor
from service.runtime.queries import ReadModel
from service.runtime.records_io import import_records
from service.web.app import create_app
from tests.fakereads import FakeReads
from tests.fuzz.hostile import examples
from tests.integration.helpers import publish, rejections, settings_for

pytestmark = pytest.mark.integration
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


class Loop:
    """An event loop on a thread of its own, for the Redis client and the app: the tests
    (Hypothesis's, synchronous) run coroutines on it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, work: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(60)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def club() -> list[PlayerRecord]:
    return [
        PlayerRecord(
            system="cfc",
            pool="regular",
            id=f"p{i}",
            rating=1400 + 100 * i,
            status="established",
            games=40,
            highest=1400 + 100 * i,
            name=f"Player {chr(64 + i)}",
        )
        for i in range(1, 5)
    ]


def night(event_id: str, day: int, **more: Any) -> dict:
    return {
        "schema": "event.finished/v1",
        "event_id": event_id,
        "system": "cfc",
        "name": f"Club night {day}",
        "start_date": f"2025-10-{day:02d}",
        "end_date": f"2025-10-{day:02d}",
        "rounds": 2,
        "players": [{"id": f"p{i}", "name": f"Player {chr(64 + i)}"} for i in range(1, 5)],
        "games": [
            {"round": 1, "a": "p1", "b": "p2", "score": 1},
            {"round": 1, "a": "p3", "b": "p4", "score": 0.5},
            {"round": 2, "a": "p1", "b": "p3", "score": 0},
            {"round": 2, "a": "p2", "b": "p4", "score": 1},
        ],
        **more,
    }


async def _club_rated(url: str, prefix: str) -> tuple[aioredis.Redis, Any]:
    """Two club nights rated and one corrected, through the StreamProcessor; the app."""
    client = aioredis.Redis.from_url(url)
    settings = settings_for(url, prefix)
    stream = settings.input_streams[0]
    await import_records(client, StreamKeys(stream), club())
    processor = StreamProcessor(client, settings, stream, default_registry())
    await processor.ensure_group()
    messages = [
        night("night-05", 5),
        night("night-12", 12),
        dict(
            night("night-05", 5),
            schema="event.corrected/v1",
            reason="round 1 the other way",
            games=[
                {"round": 1, "a": "p1", "b": "p2", "score": 0},
                *night("night-05", 5)["games"][1:],
            ],
        ),
    ]
    ids = await publish(client, settings, *messages)
    await client.xreadgroup(settings.group, "c1", {stream: ">"}, count=100)
    await processor.handle(ids[-1])
    assert await rejections(client, settings) == []
    metrics = Metrics()
    return client, create_app(ReadModel(client, [stream]), Health(client, metrics, url), metrics)


@pytest.fixture(scope="module")
def served(redis_url: str) -> Iterator[tuple[Loop, Any]]:
    loop = Loop()
    prefix = f"tfuzz{uuid.uuid4().hex[:10]}"
    client, app = loop.run(_club_rated(redis_url, prefix))
    try:
        yield loop, app
    finally:
        loop.run(client.aclose())
        loop.stop()
        cleanup = redis.Redis.from_url(redis_url)
        keys = list(cleanup.scan_iter(match=f"*{prefix}*", count=1000))
        if keys:
            cleanup.delete(*keys)
        cleanup.close()


# The document as the app serves it (its routes, not its data: a fake read model makes it).
SCHEMA = schemathesis.openapi.from_dict(create_app(FakeReads(), None, Metrics()).openapi())
OPERATIONS = [(op.path, op.method.upper()) for op in (o.ok() for o in SCHEMA.get_all_operations())]
# Path parameters that exist in the club's store: with them, the queries reach the read model.
KNOWN = {"system": "cfc", "pool": "regular", "player_id": "p1", "event_id": "night-05"}


def cases(path: str, method: str) -> st.SearchStrategy:
    """Requests for one operation: valid, invalid, and valid ones about the club."""
    operation = SCHEMA[path][method]
    known = {name: value for name, value in KNOWN.items() if "{" + name + "}" in path}
    return st.one_of(
        operation.as_strategy(GenerationMode.POSITIVE),
        operation.as_strategy(GenerationMode.NEGATIVE),
        operation.as_strategy(GenerationMode.POSITIVE, path_parameters=known),
    )


async def _request(app: Any, kwargs: dict) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, cookies=kwargs.get("cookies")) as web:
        return await web.request(
            kwargs["method"],
            kwargs["url"],
            headers=kwargs.get("headers"),
            params=kwargs.get("params"),
        )


@pytest.mark.parametrize(("path", "method"), OPERATIONS, ids=[f"{m} {p}" for p, m in OPERATIONS])
def test_every_answer_is_one_the_document_declares(path, method, served) -> None:
    loop, app = served

    @examples(ci=12)
    @given(cases(path, method))
    def answer(case: Any) -> None:
        kwargs = case.as_transport_kwargs(base_url="http://rating.test")
        response = loop.run(_request(app, kwargs))
        case.validate_response(response, checks=CHECKS)

    answer()
