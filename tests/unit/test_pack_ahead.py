"""Messages and archived events packed ahead by worker threads (D136): the bytes are
pack_message's and encode_archived's, whether a worker packed them, they were packed where
needed, or there is no worker at all."""

from __future__ import annotations

import random

import pytest

from schemas import decode_input
from service.bench.workloads import rated_list, swiss_event, two_player_event
from service.engine.registry import default_registry
from service.rating import Applied, MemoryLedger, apply_message
from service.readmodel import pack_message
from service.runtime import packahead
from service.runtime.packahead import AHEAD_PLAYERS, PackAhead
from service.timeline import encode_archived
from tests.messages import encode


@pytest.fixture
def one_worker(monkeypatch):
    """A worker thread whatever the machine's CPUs (its own pool, shut down after)."""
    monkeypatch.setattr(packahead, "_workers", lambda: 1)
    monkeypatch.setattr(packahead, "_pool", None)
    yield
    if packahead._pool is not None:
        packahead._pool.shutdown()


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


def test_packed_ahead_or_not_the_bytes_are_the_encoders(made, one_worker):
    messages, archives = made
    assert [len(m.players) >= AHEAD_PLAYERS for m in messages] == [True, False, True]
    packing = PackAhead()
    packing.start(messages[:2], archives[:2])  # the second are small: packed where needed
    assert [packing.packed(m) for m in messages] == [pack_message(m) for m in messages]
    assert [packing.archived(a) for a in archives] == [encode_archived(a) for a in archives]
    assert len(packing._ahead) == 2  # only the large message and archive went to a worker


def test_started_twice_packed_once(made, one_worker, monkeypatch):
    messages, archives = made
    calls = []
    real_message, real_archive = packahead.pack_message, packahead.encode_archived

    def counting_message(message):
        calls.append(message.event_id)
        return real_message(message)

    def counting_archive(archived):
        calls.append("archive " + archived.event.event_id)
        return real_archive(archived)

    monkeypatch.setattr(packahead, "pack_message", counting_message)
    monkeypatch.setattr(packahead, "encode_archived", counting_archive)
    packing = PackAhead()
    packing.start(messages, archives)
    packing.start(messages, archives)  # a walk that stops again hands over the same again
    assert [packing.packed(m) for m in messages] == [real_message(m) for m in messages]
    assert [packing.archived(a) for a in archives] == [real_archive(a) for a in archives]
    made_once = ["swiss-1", "swiss-2", "two-1"]
    assert sorted(calls) == sorted(made_once + [f"archive {e}" for e in made_once])


def test_without_a_worker_everything_is_packed_where_needed(made, monkeypatch):
    messages, archives = made
    monkeypatch.setattr(packahead, "_workers", lambda: 0)
    monkeypatch.setattr(packahead, "_pool", None)
    packing = PackAhead()
    packing.start(messages, archives)
    assert packing._ahead == {}
    assert [packing.packed(m) for m in messages] == [pack_message(m) for m in messages]
    assert [packing.archived(a) for a in archives] == [encode_archived(a) for a in archives]


def test_the_json_made_ahead_is_store_encodes(made):
    """A message's JSON made while Redis reads (D136) is the output stream's bytes."""
    from service.runtime.store import encode as json_encode

    messages, _ = made
    packing = PackAhead()
    packing.encode(messages[:1])
    packing.encode(messages[:1])  # made once
    assert [packing.json(m) for m in messages] == [json_encode(m) for m in messages]
    assert len(packing._json) == 1
