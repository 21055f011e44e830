"""A cascade's messages and archives encoded while Redis reads (D136): the bytes are the
encoders' own, whether made ahead or where needed, and the making stops when the read is
done."""

from __future__ import annotations

import asyncio
import random

import pytest

from schemas import decode_input
from service.bench.workloads import rated_list, swiss_event, two_player_event
from service.engine.registry import default_registry
from service.rating import Applied, MemoryLedger, apply_message
from service.readmodel import pack_message
from service.runtime import packahead
from service.runtime.packahead import PackAhead
from service.runtime.store import encode as json_encode
from service.timeline import encode_archived
from tests.messages import encode


@pytest.fixture(scope="module")
def made() -> tuple[list, list]:
    """The messages and archives of a 40x7, a two-player and a 40x5 event."""
    players = rated_list("cfc", 80, prefix="p")
    rng = random.Random(3)
    events = [swiss_event("cfc", players[:40], 7, event_id="swiss-1", seed=4)]
    events.append(two_player_event("cfc", players[0], players[1], "two-1", rng))
    events.append(swiss_event("cfc", players[40:], 5, event_id="swiss-2", seed=5))
    ledger = MemoryLedger(players)
    for n, event in enumerate(events, 1):
        applied = apply_message(ledger, decode_input(encode(event)), default_registry(), f"s{n}")
        assert isinstance(applied, Applied), applied
    return list(ledger.changes.published), list(ledger.changes.archives.values())


def expected(messages: list, archives: list) -> tuple:
    return (
        [json_encode(m) for m in messages],
        [pack_message(m) for m in messages],
        [encode_archived(a) for a in archives],
    )


def given(packing: PackAhead, messages: list, archives: list) -> tuple:
    return (
        [packing.json(m) for m in messages],
        [packing.packed(m) for m in messages],
        [packing.archived(a) for a in archives],
    )


def test_made_while_reading_or_not_the_bytes_are_the_encoders(made):
    messages, archives = made

    async def read_that_never_ends() -> PackAhead:
        packing = PackAhead()
        reading = asyncio.get_running_loop().create_future()
        await packing.while_reading(messages[:2], archives[:1], reading)
        reading.cancel()
        return packing

    packing = asyncio.run(read_that_never_ends())
    assert len(packing._json) == len(packing._packed) == 2 and len(packing._archived) == 1
    assert given(packing, messages, archives) == expected(messages, archives)
    assert given(PackAhead(), messages, archives) == expected(messages, archives)


def test_the_making_stops_when_the_read_is_done_and_goes_on_at_the_next(made, monkeypatch):
    messages, archives = made
    calls: list[str] = []
    real = packahead.encode

    def counting(message):
        calls.append(message.event_id)
        return real(message)

    monkeypatch.setattr(packahead, "encode", counting)

    async def reads() -> PackAhead:
        packing = PackAhead()
        reading = asyncio.ensure_future(asyncio.sleep(0))  # done after one turn of the loop
        await packing.while_reading(messages, archives, reading)
        assert reading.done() and len(calls) < len(messages)  # stopped early
        made_first = len(calls)
        never = asyncio.get_running_loop().create_future()
        await packing.while_reading(messages, archives, never)  # the next stop: the rest
        assert len(calls) == len(messages) and made_first >= 1
        never.cancel()
        return packing

    packing = asyncio.run(reads())
    assert given(packing, messages, archives) == expected(messages, archives)
    assert sorted(calls) == sorted(m.event_id for m in messages)  # each made once
