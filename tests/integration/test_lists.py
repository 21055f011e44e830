"""The lists' indexes (D46-D49) against a real Redis, kept by the commits of the stream
processor: the active players (and how a withdrawal moves the list's date back), the label
filters, alone and together, the latest events, the biggest changes (CFC's 30 days, FIDE's
close), and the indexes of a store written before them, built by the back-fill."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from schemas import PlayerRecord
from service.engine.registry import default_registry
from service.formats.ratinglists import read_list
from service.runtime.backfill import index_existing
from service.runtime.keys import StreamKeys
from service.runtime.processor import StreamProcessor
from service.runtime.queries import ReadModel
from service.runtime.records_io import import_records
from tests.integration.helpers import publish, settings_for

pytestmark = pytest.mark.integration
EXAMPLES = Path(__file__).resolve().parents[2] / "deploy" / "examples"
FEDS = {"p1": "ON", "p2": "ON", "p3": "QC", "p4": "ON", "p5": "QC", "p6": "ON"}
TITLES = {"p1": ["FM"], "p4": ["FM", "NA"]}


def club() -> list[PlayerRecord]:
    return [
        PlayerRecord(
            system="cfc",
            pool="regular",
            id=f"p{i}",
            name=f"Player {'ABCDEF'[i - 1]}",
            rating=2000 - 50 * i,
            status="established",
            games=40,
            highest=2000 - 50 * i,
            federation=FEDS[f"p{i}"],
            titles=TITLES.get(f"p{i}", []),
        )
        for i in range(1, 7)
    ]


def cfc_event(event_id: str, end: str, ids: list[str]) -> dict:
    games = [
        {"round": 1, "a": ids[i], "b": ids[i + 1], "score": 1} for i in range(0, len(ids) - 1, 2)
    ]
    return {
        "schema": "event.finished/v1",
        "event_id": event_id,
        "system": "cfc",
        "pool": "regular",
        "name": f"Event {event_id}",
        "start_date": end,
        "end_date": end,
        "rounds": 1,
        "players": [{"id": p} for p in ids],
        "games": games,
    }


@pytest.fixture
def settings(redis_url, key_prefix):
    return settings_for(redis_url, key_prefix)


@pytest.fixture
async def rate(client, settings):
    processor = StreamProcessor(client, settings, settings.input_streams[0], default_registry())
    await processor.ensure_group()

    async def run(*messages: dict) -> None:
        for entry in await publish(client, settings, *messages):
            await client.xreadgroup(
                settings.group, "c1", {settings.input_streams[0]: ">"}, count=100
            )
            await processor.handle(entry)

    return run


def ids(page) -> list[str]:
    return [p.id for p in page.players]


async def test_active_players_labels_events_and_changes(client, settings, rate):
    stream = settings.input_streams[0]
    keys = StreamKeys(stream)
    await import_records(client, keys, club())
    reads = ReadModel(client, [stream])
    await rate(
        cfc_event("e1", "2025-01-10", ["p1", "p2", "p3", "p4"]),
        cfc_event("e2", "2025-06-01", ["p3", "p4", "p5", "p6"]),
        cfc_event("e3", "2026-01-20", ["p5", "p6"]),
    )
    # The list's date: e3's end; active from 364 days before it (the 365 days up to it).
    page = await reads.players("cfc", "regular", active=True)
    assert page is not None and page.list_date is not None
    assert page.list_date.date == dt.date(2026, 1, 20)
    assert page.list_date.active_from == dt.date(2025, 1, 21)
    assert page.list_date.period is None and page.list_date.active == 4
    assert page.total == 4 and set(ids(page)) == {"p3", "p4", "p5", "p6"}
    full = await reads.players("cfc", "regular")
    assert full is not None and full.total == 6
    assert {p.id: p.active for p in full.players} == {
        "p1": False,
        "p2": False,
        "p3": True,
        "p4": True,
        "p5": True,
        "p6": True,
    }
    assert [p.rank for p in page.players] == [
        next(q.rank for q in full.players if q.id == pid) for pid in ids(page)
    ]  # the rows keep their place on the whole list
    best_active = ids(page)[0]
    assert await reads.active_rank("cfc", "regular", best_active) == 1
    assert await reads.active_rank("cfc", "regular", "p1") is None  # inactive
    # Labels: each alone, and together (the smallest index looked up in the others).
    on = await reads.players("cfc", "regular", federation="ON")
    assert on is not None and set(ids(on)) == {"p1", "p2", "p4", "p6"} and on.total == 4
    assert [p.federation for p in on.players] == ["ON"] * 4
    fm = await reads.players("cfc", "regular", title="FM")
    assert fm is not None and ids(fm) == ["p1", "p4"]
    both = await reads.players("cfc", "regular", federation="ON", active=True, limit=1, offset=1)
    assert both is not None and both.total == 2  # p4 and p6: the second of them
    on_active = await reads.players("cfc", "regular", federation="ON", active=True)
    assert on_active is not None and ids(both) == ids(on_active)[1:2]
    assert {(c.kind, c.label): c.players for c in full.labels} == {
        ("federation", "ON"): 4,
        ("federation", "QC"): 2,
        ("title", "FM"): 2,
        ("title", "NA"): 1,
    }
    searched = await reads.players("cfc", "regular", q="player", federation="QC")
    assert searched is not None and set(ids(searched)) == {"p3", "p5"}
    # The latest events, newest first; of every pool too.
    events = await reads.events("cfc", "regular")
    assert events is not None and [e.event_id for e in events.events] == ["e3", "e2", "e1"]
    assert [e.players for e in events.events] == [2, 4, 4]
    everywhere = await reads.events(limit=2, offset=1)
    assert everywhere is not None and everywhere.total == 3
    assert [e.event_id for e in everywhere.events] == ["e2", "e1"]
    # The biggest changes: the events of the 30 days up to e3 (e3 only).
    changes = await reads.changes("cfc", "regular")
    assert changes is not None and changes.basis == "days" and changes.events == 1
    assert changes.since == dt.date(2025, 12, 22) and changes.through == dt.date(2026, 1, 20)
    assert [c.id for c in changes.gains] == ["p5"] and [c.id for c in changes.losses] == ["p6"]
    assert changes.gains[0].federation == "QC"
    record = json.loads(await client.hget(keys.players("cfc", "regular"), "p5"))
    assert changes.gains[0].new_rating == record["rating"]

    # Withdrawn, e3 leaves the events and moves the list's date back to e2's end: p1 and p2
    # (e1, 2025-01-10) are active again, p5 and p6 are active by e2, and e3's ratings go.
    await rate(
        {
            "schema": "event.withdrawn/v1",
            "system": "cfc",
            "pool": "regular",
            "event_id": "e3",
        }
    )
    events = await reads.events("cfc", "regular")
    assert events is not None and [e.event_id for e in events.events] == ["e2", "e1"]
    page = await reads.players("cfc", "regular", active=True)
    assert page is not None and page.list_date is not None
    assert page.list_date.date == dt.date(2025, 6, 1) and page.total == 6
    assert (
        await client.zscore(keys.played("cfc", "regular"), "p5") == dt.date(2025, 6, 1).toordinal()
    )


async def test_a_fide_close_keeps_its_list_changes(client, settings, rate):
    stream = settings.input_streams[0]
    reads = ReadModel(client, [stream])
    await import_records(
        client, StreamKeys(stream), read_list(str(EXAMPLES / "fide-ratings.jsonl"))
    )
    await rate(json.loads((EXAMPLES / "fide-event.json").read_text()))
    before = await reads.changes("fide", "standard")
    assert before is not None and before.basis == "days"  # no close yet
    await rate(json.loads((EXAMPLES / "fide-period-closed.json").read_text()))
    changes = await reads.changes("fide", "standard", limit=3)
    assert changes is not None and changes.basis == "list" and changes.period == "2025-11"
    assert changes.gains and changes.losses and len(changes.gains) <= 3
    assert [c.change for c in changes.gains] == sorted(
        (c.change for c in changes.gains), reverse=True
    )
    for c in changes.gains + changes.losses:
        assert c.new_rating is not None and c.old_rating == c.new_rating - c.change
    page = await reads.players("fide", "standard", active=True)
    assert page is not None and page.list_date is not None
    assert page.list_date.period == "2025-11" and page.list_date.date == dt.date(2025, 11, 30)
    assert page.list_date.active_from == dt.date(2024, 12, 1)  # the 12 periods up to the close
    assert page.total == page.list_date.active > 0


async def test_a_store_written_before_the_lists_is_indexed_by_the_backfill(client, settings, rate):
    stream = settings.input_streams[0]
    keys = StreamKeys(stream)
    await import_records(client, keys, club())
    await rate(
        cfc_event("e1", "2025-01-10", ["p1", "p2", "p3", "p4"]),
        cfc_event("e2", "2025-06-01", ["p3", "p4", "p5", "p6"]),
    )
    reads = ReadModel(client, [stream])
    fresh = await reads.players("cfc", "regular", active=True, federation="ON")
    events = await reads.events()
    # As a store of the version before: none of the lists' keys.
    doomed = [
        k
        async for k in client.scan_iter(match=keys.prefix + "*")
        if k.decode()[len(keys.prefix) :].split(":")[0]
        in ("played", "active", "label", "labels", "dated", "cards", "moves", "listdate")
    ]
    assert doomed
    await client.delete(*doomed)
    gone = await reads.players("cfc", "regular", active=True)
    assert gone is not None and gone.list_date is None and gone.total == 0
    assert await index_existing(client, keys, [("cfc", "regular")]) == [("cfc", "regular")]
    assert await reads.players("cfc", "regular", active=True, federation="ON") == fresh
    assert await reads.events() == events
    assert await index_existing(client, keys, [("cfc", "regular")]) == []  # once
