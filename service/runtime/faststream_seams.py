"""Every use the service makes of FastStream's private or undocumented parts, and nowhere else.

Checked against FastStream 0.7.8 (`faststream[redis]==0.7.8`, deploy/constraints.txt).
`tests/integration/test_faststream_seams.py` fails when the pinned version stops behaving as a
seam below relies on: run it first on an upgrade. Everything else the service asks of
FastStream (RedisBroker / RedisClusterBroker, StreamSub, `broker.subscriber` with a parser,
a decoder and AckPolicy.MANUAL, the app's start / stop and its hooks) is its public API.

- **The read loop** (`guard_reads`). A stream subscriber reads in
  `_StreamHandlerMixin._consume`: while it runs, it calls `self._get_msgs(read)` (`read`: the
  XREADGROUP, or XAUTOCLAIM, call its `start()` made), which reads and hands the entries to
  the handler. The read's errors come out of `_get_msgs` into that loop, which logs each with
  its traceback and waits 5 s, and on NOGROUP stops the subscriber and asks the app to exit.
  `_get_msgs` is looked up on the subscriber on every turn, so replacing it on the subscriber
  (the object `broker.subscriber` returns) puts the service's guard around every read.
- **The read's count** (`budget_reads`). The XREADGROUP of a new entries' subscriber is
  `self._xreadgroup(count=..., block=..., noack=...)`, looked up on the subscriber on every
  read and answering redis-py's reply (`[[stream, [(id, fields), ...]]]`, or empty);
  replacing it on the subscriber makes one read several within a byte budget
  (service/runtime/readbudget.py, D90).
- **A subscriber that stops for good** (`ExitAwareApp`). It calls `exit()` on the app of its
  context (`context["app"]`, the FastStream object its broker was given to): on a terminal
  read error (`_stop_on_terminal_error`) or a SystemExit in its handler
  (`SubscriberUsecase.consume`). `FastStream.exit` only sets the flag `run()` polls; an app
  started with `start()` (as `serve` does) hears nothing of it unless `exit` says so.
- **The raw message** (`ids_only`, `entries_of`). What a stream subscriber hands its parser,
  and a message's `raw_message`, is the dict FastStream builds (`UnifyRedisDict`): `type`
  "bstream" for a batch, "stream" for one entry; `message_ids` the entry ids (bytes); `data`
  the entries' fields (a list of them for a batch). A message is built from it directly
  (`RedisStreamMessage` / `RedisBatchStreamMessage`, body empty, no consumer).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, cast

from faststream import FastStream
from faststream.redis.message import RedisBatchStreamMessage, RedisStreamMessage

from service.runtime.readbudget import ReadBudget, StreamEntry, read_budgeted
from service.runtime.replies import text

FASTSTREAM_CHECKED = "0.7.8"  # the version these seams were checked against (constraints.txt)

ReadTurn = Callable[[], Awaitable[None]]
"""One turn of FastStream's read: read from Redis, hand what was read to the handler."""


def guard_reads(subscriber: Any, guard: Callable[[ReadTurn], Awaitable[None]]) -> None:
    """Every turn of `subscriber`'s read loop runs as `await guard(turn)`: `turn()` is
    FastStream's own (it raises what the read raises); what `guard` raises reaches the loop."""
    own_turn = subscriber._get_msgs

    async def guarded(*args: Any) -> None:
        await guard(lambda: own_turn(*args))

    subscriber._get_msgs = guarded


def budget_reads(subscriber: Any, budget: ReadBudget) -> None:
    """Every XREADGROUP of `subscriber` reads within `budget` (readbudget.read_budgeted): the
    first read blocks as FastStream asks, the ones after it do not."""
    own_read = subscriber._xreadgroup

    async def read(*, count: int | None, block: int | None, noack: bool = False) -> Any:
        name: Any = None

        async def fetch(asked: int, first: bool) -> list[StreamEntry]:
            nonlocal name
            reply = await own_read(count=asked, block=block if first else None, noack=noack)
            if not reply:
                return []
            ((name, got),) = reply  # one stream a subscriber
            return list(got)

        entries = await read_budgeted(budget, fetch)
        return [(name, entries)] if entries else []

    subscriber._xreadgroup = read


class ExitAwareApp(FastStream):
    """FastStream's app that also tells `on_exit` when it is asked to exit (by a subscriber
    that stopped for good, or by `faststream run`'s signal handler)."""

    def __init__(self, *brokers: Any, on_exit: Callable[[], None], **options: Any) -> None:
        super().__init__(*brokers, **options)
        self._on_exit = on_exit

    def exit(self) -> None:
        super().exit()
        self._on_exit()


async def ids_only(
    raw: dict, original_parser: object
) -> RedisStreamMessage | RedisBatchStreamMessage:
    """A subscriber's parser: FastStream's message without decoding the entries' bodies (the
    handler needs only their ids and, for new entries, their fields: `entries_of`)."""
    kind = RedisBatchStreamMessage if raw["type"] == "bstream" else RedisStreamMessage
    return kind(raw_message=raw, body=b"", consumer=None, group=None)  # type: ignore[arg-type]  # built from its raw dict, no consumer


async def no_body(message: object, original_decoder: object) -> None:
    """A subscriber's decoder: nothing to decode (`ids_only`)."""
    return None


def entries_of(message: Any) -> tuple[list[str], list[dict] | None]:
    """The entry ids a message carries, and for a batch (new entries) their fields; None for a
    reclaimed entry (its fields are read from the stream)."""
    raw = cast(dict[str, Any], message.raw_message)
    ids = [text(i) for i in raw["message_ids"]]
    return ids, raw["data"] if raw["type"] == "bstream" else None
