"""The profile's read (ReadModel.profile, D38) against a real Redis: FIDE standard on one
input stream (a closed November, an open December), rapid on another; the profile agrees
with the per-pool reads and the published messages, in two pipelined round trips."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from schemas.records import PlayerRecord
from service.engine.registry import default_registry
from service.runtime.keys import StreamKeys
from service.runtime.processor import StreamProcessor
from service.runtime.queries import ReadModel
from service.runtime.records_io import import_records
from tests.integration.helpers import outputs, rejections, settings_for

pytestmark = pytest.mark.integration


def fide_event(event_id: str, pool: str, day: str) -> dict:
    return {
        "schema": "event.finished/v1",
        "event_id": event_id,
        "system": "fide",
        "pool": pool,
        "name": f"Open {day}",
        "start_date": day,
        "end_date": day,
        "rounds": 3,
        "players": [{"id": f"f{i}", "name": f"Player F{i}"} for i in range(1, 5)],
        "games": [
            {"round": 1, "a": "f1", "b": "f2", "score": 1},
            {"round": 1, "a": "f3", "b": "f4", "score": 0.5},
            {"round": 2, "a": "f1", "b": "f3", "score": 1},
            {"round": 2, "a": "f2", "b": "f4", "score": 1},
            {"round": 3, "a": "f1", "b": "f4", "score": 0.5},
            {"round": 3, "a": "f2", "b": "f3", "score": 0},
        ],
    }


def records(pool: str, **labels: Any) -> list[PlayerRecord]:
    return [
        PlayerRecord(
            system="fide",
            pool=pool,
            id=f"f{i}",
            rating=1900 + 100 * i - (50 if pool == "rapid" else 0),
            status="established",
            games=50,
            birth_year=1990,
            **(labels if i == 1 else {}),
        )
        for i in range(1, 5)
    ]


class Counting:
    """The client, counting the pipelines run and any other command sent."""

    def __init__(self, client: Any):
        self.client, self.pipelines, self.others = client, 0, []

    def register_script(self, script: str) -> Any:
        return self.client.register_script(script)

    def pipeline(self, **options: Any) -> Any:
        self.pipelines += 1
        return self.client.pipeline(**options)

    def __getattr__(self, name: str) -> Any:
        self.others.append(name)
        return getattr(self.client, name)


async def test_the_profile_reads_every_pool_of_the_system_in_two_round_trips(
    client, redis_url, key_prefix
):
    settings = settings_for(
        redis_url, key_prefix, input_streams=(f"{key_prefix}.a", f"{key_prefix}.b")
    )
    a, b = settings.input_streams
    await import_records(
        client, StreamKeys(a), records("standard", titles=["FM"], federation="NOR")
    )
    await import_records(client, StreamKeys(b), records("rapid", sex="F", federation="SWE"))
    for stream, messages in (
        (
            a,
            [
                fide_event("nov", "standard", "2025-11-15"),
                {"schema": "period.closed/v1", "system": "fide", "period": "2025-11"},
                fide_event("dec", "standard", "2025-12-13"),
            ],
        ),
        (b, [fide_event("rapid-nov", "rapid", "2025-11-20")]),
    ):
        processor = StreamProcessor(client, settings, stream, default_registry())
        await processor.ensure_group()
        ids = [
            (await client.xadd(stream, {"__data__": msgspec.json.encode(m)})).decode()
            for m in messages
        ]
        await processor.handle(*ids)
    assert await rejections(client, settings) == []
    published = {m.event_id: m for m in await outputs(client, settings) if m.event_id}

    counting = Counting(client)
    reads = ReadModel(counting, [a, b])
    profile = await reads.profile("fide", "f1")
    assert (counting.pipelines, counting.others) == (2, [])  # no pool located beforehand
    assert profile is not None
    assert (profile.name, profile.titles, profile.federation, profile.sex, profile.birth_year) == (
        "Player F1",
        ["FM"],
        "NOR",  # standard's, the first pool
        "F",  # rapid's, the only one that has it
        1990,
    )
    assert [p.pool for p in profile.pools] == ["standard", "rapid"]
    plain = ReadModel(client, [a, b])
    for entry in profile.pools:
        view = await plain.player("fide", entry.pool, "f1")
        assert view is not None
        assert (entry.rating, entry.status, entry.games, entry.rank, entry.last_event_date) == (
            view.rating,
            view.status,
            view.games,
            view.rank,
            view.last_event_date,
        )
        assert entry.last_update == await plain.last_update("fide", entry.pool)
    standard, rapid = profile.pools
    record = (await plain.player("fide", "standard", "f1")).record  # type: ignore[union-attr]
    assert record.fide is not None and standard.list_period == record.fide.published[-1].period
    assert standard.list_period == "2025-12"  # the November list, in force from December
    # Live: the December event's projection for f1, against the November list's rating.
    [dec] = [p for p in published["dec"].players if p.id == "f1"]
    projected = dec.details.projected_rating  # type: ignore[union-attr]
    assert standard.live is not None and standard.rating is not None
    assert (standard.live.rating, standard.live.change, standard.live.period) == (
        projected,
        projected - standard.rating,
        "2025-12",
    )
    assert standard.live.events == 1 and projected != standard.rating  # 2.5 of 3: a gain
    assert rapid.list_period is None and rapid.live is not None and rapid.live.period == "2025-11"
    [nov] = [p for p in published["rapid-nov"].players if p.id == "f1"]
    assert rapid.live.rating == nov.details.projected_rating  # type: ignore[union-attr]

    again = Counting(client)
    reads.client = again
    assert await reads.profile("fide", "f1") == profile
    assert (again.pipelines, again.others) == (2, [])  # the pools are located now
    assert await reads.profile("fide", "nobody") is None
    assert again.pipelines == 3  # nobody has a record: no rank to read
    assert await reads.profile("go", "f1") is None
    assert await ReadModel(client, [a, b]).profile("cfc", "f1") is None
