"""What the service relies on of FastStream's private and undocumented parts
(service/runtime/faststream_seams.py), checked on the pinned version against a real Redis: each
test fails when that behaviour changes, before the service's own tests show why."""

from __future__ import annotations

import asyncio
import importlib.metadata
import re
import time
from collections.abc import Callable

import pytest
from faststream import AckPolicy
from faststream.redis import RedisBroker, RedisMessage, StreamSub
from redis.exceptions import ResponseError

from service.runtime.faststream_seams import (
    FASTSTREAM_CHECKED,
    ExitAwareApp,
    ReadTurn,
    entries_of,
    guard_reads,
    ids_only,
    no_body,
)
from tests.integration.processes import ROOT

pytestmark = pytest.mark.integration

GROUP, CONSUMER = "seams", "c1"


async def until(condition: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not {what} in {timeout} s"
        await asyncio.sleep(0.02)


class Subscribed:
    """A broker with one subscriber of `stream` as the service makes them (StreamSub in the
    consumer group, AckPolicy.MANUAL, the seams' parser and decoder), which records what its
    handler is handed (`entries_of`)."""

    def __init__(self, url: str, stream: str, *, batch: bool = True, reclaim_ms: int | None = None):
        self.broker = RedisBroker(url)
        self.handed: list[tuple[list[str], list[dict] | None]] = []
        self.subscriber = self.broker.subscriber(
            stream=StreamSub(
                stream,
                group=GROUP,
                consumer=CONSUMER,
                polling_interval=50,
                batch=batch,
                min_idle_time=reclaim_ms,
            ),
            ack_policy=AckPolicy.MANUAL,
            parser=ids_only,
            decoder=no_body,
        )

        async def handler(message: RedisMessage) -> None:
            self.handed.append(entries_of(message))

        self.subscriber(handler)


def test_the_pinned_faststream_is_the_one_the_seams_were_checked_against():
    """An upgrade of the pin fails here first: check each seam (the tests below) and say the
    new version in faststream_seams.FASTSTREAM_CHECKED."""
    pinned = re.search(
        r"^faststream(?:\[[^\]]*\])?==(\S+)$",
        (ROOT / "deploy" / "constraints.txt").read_text(),
        re.MULTILINE,
    )
    assert pinned is not None
    assert pinned.group(1) == FASTSTREAM_CHECKED
    assert importlib.metadata.version("faststream") == FASTSTREAM_CHECKED


async def test_every_turn_of_the_read_loop_goes_through_the_guard(redis_url, key_prefix, client):
    stream = f"{key_prefix}.events"
    sub = Subscribed(redis_url, stream)
    turns = 0

    async def guard(turn: ReadTurn) -> None:
        nonlocal turns
        turns += 1
        await turn()

    guard_reads(sub.subscriber, guard)
    async with sub.broker:
        await sub.broker.start()
        ids = [(await client.xadd(stream, {"__data__": f"e{n}".encode()})).decode() for n in (1, 2)]
        await until(lambda: sum(len(i) for i, _ in sub.handed) == 2, "handed both entries")
        await until(lambda: turns >= 3, "read again after handing them")
    # The raw message of a batch: its ids (as text) and the entries' fields, as XRANGE has them.
    assert [i for handed, _ in sub.handed for i in handed] == ids
    assert [f for _, fields in sub.handed for f in fields or ()] == [
        {b"__data__": b"e1"},
        {b"__data__": b"e2"},
    ]


async def test_a_guard_that_does_not_read_leaves_nothing_delivered(redis_url, key_prefix, client):
    """What a standby relies on: while the guard does not call FastStream's turn, the group
    delivers nothing to this consumer (no entry pending for it)."""
    stream = f"{key_prefix}.events"
    sub = Subscribed(redis_url, stream)
    owned = asyncio.Event()

    async def guard(turn: ReadTurn) -> None:
        if not owned.is_set():
            await asyncio.sleep(0.02)
            return
        await turn()

    guard_reads(sub.subscriber, guard)
    async with sub.broker:
        await sub.broker.start()
        [entry] = [(await client.xadd(stream, {"__data__": b"e1"})).decode()]
        await asyncio.sleep(0.5)  # ten polling intervals
        assert sub.handed == []
        assert (await client.xpending(stream, GROUP))["pending"] == 0
        owned.set()
        await until(lambda: bool(sub.handed), "handed once the guard reads")
    assert sub.handed[0][0] == [entry]


async def test_the_reads_errors_reach_the_guard_and_stop_there(redis_url, key_prefix, client):
    """A lost consumer group: the read's NOGROUP comes out of FastStream's turn into the guard,
    and a guard that takes it keeps the subscriber reading (the app is not asked to exit)."""
    stream = f"{key_prefix}.events"
    sub = Subscribed(redis_url, stream)
    exits: list[str] = []
    app = ExitAwareApp(sub.broker, on_exit=lambda: exits.append("exit"))
    refused: list[str] = []

    async def guard(turn: ReadTurn) -> None:
        try:
            await turn()
        except ResponseError as exc:
            refused.append(str(exc))
            if "NOGROUP" in str(exc):
                await client.xgroup_create(stream, GROUP, id="0", mkstream=True)

    guard_reads(sub.subscriber, guard)
    async with app:
        await client.xgroup_destroy(stream, GROUP)
        await until(lambda: any("NOGROUP" in r for r in refused), "NOGROUP in the guard")
        await client.xadd(stream, {"__data__": b"after"})
        await until(lambda: bool(sub.handed), "handed after the group came back")
    assert exits == []


async def test_without_a_guard_a_lost_group_stops_the_subscriber_and_asks_the_app_to_exit(
    redis_url, key_prefix, client
):
    """What the guard is there for, and what ExitAwareApp hears: FastStream's own answer to a
    lost group is to stop the subscriber and call the app's exit()."""
    stream = f"{key_prefix}.events"
    sub = Subscribed(redis_url, stream)
    exited = asyncio.Event()
    app = ExitAwareApp(sub.broker, on_exit=exited.set)
    async with app:
        await client.xgroup_destroy(stream, GROUP)
        await asyncio.wait_for(exited.wait(), 10)
        assert not sub.subscriber.running


async def test_a_handler_that_raises_system_exit_asks_the_app_to_exit(
    redis_url, key_prefix, client
):
    stream = f"{key_prefix}.events"
    broker = RedisBroker(redis_url)

    @broker.subscriber(
        stream=StreamSub(stream, group=GROUP, consumer=CONSUMER, polling_interval=50)
    )
    async def handler(message: RedisMessage) -> None:
        raise SystemExit(3)

    exited = asyncio.Event()
    async with ExitAwareApp(broker, on_exit=exited.set):
        await client.xadd(stream, {"__data__": b"e1"})
        await asyncio.wait_for(exited.wait(), 10)


async def test_a_reclaimed_entry_comes_as_one_entry_without_its_fields(
    redis_url, key_prefix, client
):
    """The reclaiming subscriber (XAUTOCLAIM, not a batch): its raw message is one entry, whose
    fields the service reads from the stream itself."""
    stream = f"{key_prefix}.events"
    await client.xgroup_create(stream, GROUP, id="0", mkstream=True)
    entry = (await client.xadd(stream, {"__data__": b"e1"})).decode()
    await client.xreadgroup(GROUP, "dead", {stream: ">"})  # left pending by a dead consumer
    sub = Subscribed(redis_url, stream, batch=False, reclaim_ms=100)
    async with sub.broker:
        await sub.broker.start()
        await until(lambda: bool(sub.handed), "reclaimed")
    assert sub.handed[0] == ([entry], None)
