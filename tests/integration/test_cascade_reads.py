"""A correction's cascade against a real Redis reads only what its walk looks at (D65), and
the read model's activity index stays what a recount from the history lines gives (D67).

The bench's history in small (service/bench/cascade.py: two-player games and 40-player
7-round Swiss events, alternately, in date order) through a processor, then the first event
corrected: the records end as the offline fold's (the same events, corrected, through a
complete MemoryLedger), the archives decoded are those of the events a dirty player plays in,
not every later one, and each player's last rated game is the latest end day of their history
lines with rated games.
"""

from __future__ import annotations

import gc

import pytest

from service.bench.cascade import history
from service.bench.workloads import rated_list
from service.engine.registry import default_registry
from service.rating import Applied, MemoryLedger, apply_message
from service.readmodel import unpack_entry
from service.runtime import store
from service.runtime.keys import StreamKeys
from service.runtime.processor import StreamProcessor
from service.runtime.records_io import import_records
from service.runtime.store import decode_record
from tests.cascade_workload import decoded
from tests.integration.helpers import outputs, publish, rejections, settings_for

pytestmark = pytest.mark.integration

POOL, EVENTS = 600, 120


def flipped(first: dict) -> dict:
    correction = {**first, "schema": "event.corrected/v1", "reason": "result entered wrong"}
    correction["games"] = [{**first["games"][0], "score": 0}]
    return correction


async def test_a_correction_reads_what_it_re_rates_and_ends_as_the_offline_fold(
    client, redis_url, key_prefix, monkeypatch
):
    settings = settings_for(redis_url, key_prefix)
    stream = settings.input_streams[0]
    keys = StreamKeys(stream)
    registry = default_registry()
    processor = StreamProcessor(client, settings, stream, registry)
    await processor.ensure_group()
    players = rated_list("cfc", POOL, prefix="c")
    await import_records(client, keys, players)
    messages = history(players, EVENTS, "t")
    for entry in await publish(client, settings, *messages):
        await processor.handle(entry)
    before = len(await outputs(client, settings))
    assert before == EVENTS

    decoded_archives: list[str] = []
    collecting: list[bool] = []  # whether the cyclic collector runs as each is read (D135)
    real = store.decode_archived

    def counting(raw: bytes):
        archived = real(raw)
        decoded_archives.append(archived.event.event_id)
        collecting.append(gc.isenabled())
        return archived

    monkeypatch.setattr(store, "decode_archived", counting)
    [entry] = await publish(client, settings, flipped(messages[0]))
    assert gc.isenabled()
    await processor.handle(entry)
    assert await rejections(client, settings) == []
    assert collecting and not any(collecting)  # paused through the cascade's reads
    assert gc.isenabled()  # and given back after its commit
    revisions = (await outputs(client, settings))[before:]
    assert revisions and all(o.kind == "revision" for o in revisions)
    # Read: the corrected event's archive, then only the later events a dirty player plays
    # in: each revised one, and fewer than all.
    assert decoded_archives[0] == "t-h0"
    assert {o.event_id for o in revisions} <= set(decoded_archives)
    assert len(decoded_archives) < EVENTS // 2, len(decoded_archives)

    # The records: as the offline fold of the same events, corrected.
    offline = MemoryLedger(players)
    for arrival, raw in enumerate([*messages, flipped(messages[0])], 1):
        result = apply_message(offline, decoded(raw), registry, f"s{arrival}", arrival)
        assert isinstance(result, Applied)
    raw_records = await client.hgetall(keys.players("cfc", "regular"))
    stored = {r.id: r for r in map(decode_record, raw_records.values())}
    assert stored == {r.id: r for r in offline.all_records()}

    # The activity index: each player's last day with rated games, from their lines (D67).
    played = dict(await client.zrange(keys.played("cfc", "regular"), 0, -1, withscores=True))
    recounted = {}
    for p in players:
        days = [
            int.from_bytes(value[3:6], "big")
            for value in (await client.hvals(keys.entries("cfc", "regular", p.id)))
            if value[3:6] != b"\xff\xff\xff" and unpack_entry(value).event_games > 0
        ]
        if days:
            recounted[p.id.encode()] = float(max(days))
    assert played == recounted
