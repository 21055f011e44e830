"""Messages packed ahead by worker threads (D136): the bytes are pack_message's, whether a
worker packed them, they were packed where needed, or there is no worker at all."""

from __future__ import annotations

import random

import pytest

from schemas import decode_input
from service.bench.workloads import rated_list, swiss_event, two_player_event
from service.engine.registry import default_registry
from service.rating import Applied, MemoryLedger, apply_message
from service.readmodel import pack_message
from service.runtime import resultpacking
from service.runtime.resultpacking import AHEAD_PLAYERS, ResultPacking
from tests.messages import encode


def published(events: list[dict]) -> list:
    players = rated_list("cfc", 80, prefix="p")
    ledger = MemoryLedger(players)
    for n, event in enumerate(events, 1):
        applied = apply_message(ledger, decode_input(encode(event)), default_registry(), f"s{n}")
        assert isinstance(applied, Applied), applied
    return list(ledger.changes.published)


@pytest.fixture
def one_worker(monkeypatch):
    """A worker thread whatever the machine's CPUs (its own pool, shut down after)."""
    monkeypatch.setattr(resultpacking, "_workers", lambda: 1)
    monkeypatch.setattr(resultpacking, "_pool", None)
    yield
    if resultpacking._pool is not None:
        resultpacking._pool.shutdown()


@pytest.fixture(scope="module")
def messages() -> list:
    players = rated_list("cfc", 80, prefix="p")
    rng = random.Random(3)
    events = [swiss_event("cfc", players[:40], 7, event_id="swiss-1", seed=4)]
    events.append(two_player_event("cfc", players[0], players[1], "two-1", rng))
    events.append(swiss_event("cfc", players[40:], 5, event_id="swiss-2", seed=5))
    return published(events)


def test_packed_ahead_or_not_the_bytes_are_pack_messages(messages, one_worker):
    assert [len(m.players) >= AHEAD_PLAYERS for m in messages] == [True, False, True]
    packing = ResultPacking()
    packing.start(messages[:2])  # the second is small: packed where it is needed
    assert [packing.packed(m) for m in messages] == [pack_message(m) for m in messages]
    assert len(packing._ahead) == 1  # only the large message went to a worker


def test_started_twice_packed_once(messages, one_worker, monkeypatch):
    calls = []
    real = resultpacking.pack_message

    def counting(message):
        calls.append(message.event_id)
        return real(message)

    monkeypatch.setattr(resultpacking, "pack_message", counting)
    packing = ResultPacking()
    packing.start(messages)
    packing.start(messages)  # a walk that stops again hands over what it made so far again
    assert [packing.packed(m) for m in messages] == [real(m) for m in messages]
    assert sorted(calls) == ["swiss-1", "swiss-2", "two-1"]


def test_without_a_worker_everything_is_packed_where_needed(messages, monkeypatch):
    monkeypatch.setattr(resultpacking, "_workers", lambda: 0)
    monkeypatch.setattr(resultpacking, "_pool", None)
    packing = ResultPacking()
    packing.start(messages)
    assert packing._ahead == {}
    assert [packing.packed(m) for m in messages] == [pack_message(m) for m in messages]
