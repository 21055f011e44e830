"""An event's crosstable and revisions (D42, D43) on a real Redis: the StreamProcessor
in-process rates a club's events, a correction with a reason, a late event and a
withdrawal; the read API over the ReadModel says who played whom and every revision, when
(the input entries' ids) and why."""

from __future__ import annotations

import re

import httpx
import msgspec
import pytest

from schemas import PlayerRecord
from schemas.ratings import RatingsUpdated
from schemas.reads import Crosstable, EventRevisions
from schemas.validation import decode_input
from service.engine.registry import default_registry
from service.rating import Applied, MemoryLedger, apply_message
from service.runtime.keys import StreamKeys
from service.runtime.metrics import Metrics
from service.runtime.processor import StreamProcessor
from service.runtime.queries import ReadModel
from service.runtime.records_io import import_records
from service.runtime.store import ledger_writes, queue
from service.web.app import create_app
from tests.figures import check_page
from tests.integration.helpers import publish, rejections, settings_for

pytestmark = pytest.mark.integration


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


def night(event_id: str, day: int, games: list[tuple[int, str, str, float]], **more) -> dict:
    return {
        "schema": "event.finished/v1",
        "event_id": event_id,
        "system": "cfc",
        "name": f"Club night {day}",
        "start_date": f"2025-10-{day:02d}",
        "end_date": f"2025-10-{day:02d}",
        "rounds": max(r for r, *_ in games),
        "players": [{"id": f"p{i}"} for i in range(1, 5)],
        "games": [{"round": r, "a": a, "b": b, "score": s} for r, a, b, s in games],
        **more,
    }


FIRST = [(1, "p1", "p2", 1), (1, "p3", "p4", 0.5), (2, "p1", "p3", 0), (2, "p2", "p4", 1)]
SECOND = [(1, "p1", "p4", 1), (1, "p2", "p3", 0), (2, "p1", "p2", 0.5), (2, "p3", "p4", 1)]


async def apply(client, settings, processor, *messages: dict) -> list[str]:
    ids = await publish(client, settings, *messages)
    await client.xreadgroup(settings.group, "c1", {settings.input_streams[0]: ">"}, count=100)
    await processor.handle(ids[-1])
    return ids


async def test_the_crosstable_and_revisions_of_a_corrected_event(client, redis_url, key_prefix):
    settings = settings_for(redis_url, key_prefix)
    stream = settings.input_streams[0]
    await import_records(client, StreamKeys(stream), club())
    processor = StreamProcessor(client, settings, stream, default_registry())
    await processor.ensure_group()
    [rated_05, rated_12] = await apply(
        client,
        settings,
        processor,
        night("night-05", 5, FIRST),
        night("night-12", 12, SECOND, byes=[{"round": 3, "player": "p4", "score": 1}], rounds=3),
    )
    fixed = [(1, "p1", "p2", 0), *FIRST[1:]]  # round 1 went the other way
    [corrected] = await apply(
        client,
        settings,
        processor,
        dict(
            night("night-05", 5, fixed),
            schema="event.corrected/v1",
            reason="round 1: the result sheet was signed the other way",
        ),
    )
    [late] = await apply(client, settings, processor, night("night-03", 3, SECOND))
    [withdrawn] = await apply(
        client,
        settings,
        processor,
        {
            "schema": "event.withdrawn/v1",
            "system": "cfc",
            "event_id": "night-12",
            "reason": "not a rated event",
        },
    )
    assert await rejections(client, settings) == []

    app = create_app(ReadModel(client, [stream]), None, Metrics())
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://rating.test") as web:
        answer = await web.get("/v1/events/night-05/crosstable")
        assert answer.status_code == 200
        table = msgspec.json.decode(answer.content, type=Crosstable, strict=True)
        again = await web.get(
            "/v1/events/night-05/crosstable", headers={"If-None-Match": answer.headers["etag"]}
        )
        assert again.status_code == 304 and "last-modified" in answer.headers
        # Corrected: p1 0 + 0 = 0, p2 1 + 1 = 2, p3 0.5 + 1 = 1.5, p4 0.5 + 0 = 0.5.
        assert [(p.number, p.id, p.points) for p in table.players] == [
            (1, "p2", 2.0),
            (2, "p3", 1.5),
            (3, "p4", 0.5),
            (4, "p1", 0.0),
        ]
        p2 = table.players[0]
        assert [(r.round, r.opponent, r.score, r.running) for r in p2.results] == [
            (1, 4, 1.0, 1.0),
            (2, 3, 1.0, 2.0),
        ]
        assert table.revision == 2 and p2.name == "Player B" and p2.rating is not None

        found = msgspec.json.decode(
            (await web.get("/v1/events/night-05/revisions")).content,
            type=EventRevisions,
            strict=True,
        )
        assert [(r.revision, r.kind, r.source_id, r.reason) for r in found.revisions] == [
            (0, "rated", rated_05, None),
            (1, "corrected", corrected, "round 1: the result sheet was signed the other way"),
            (2, "rerated", late, None),
        ]
        assert found.revisions[2].cause is not None
        assert found.revisions[2].cause.event_id == "night-03"
        gone = msgspec.json.decode(
            (await web.get("/v1/events/night-12/revisions")).content,
            type=EventRevisions,
            strict=True,
        )
        assert gone.withdrawn and [(r.kind, r.source_id) for r in gone.revisions] == [
            ("rated", rated_12),
            ("rerated", corrected),
            ("rerated", late),
            ("withdrawn", withdrawn),
        ]
        assert gone.revisions[-1].reason == "not a rated event"
        withdrawn_table = msgspec.json.decode(
            (await web.get("/v1/events/night-12/crosstable")).content, type=Crosstable
        )
        assert withdrawn_table.withdrawn and withdrawn_table.players[0].score is None
        assert (await web.get("/v1/events/night-99/revisions")).status_code == 404

        for event_id in ("night-05", "night-12", "night-03"):
            page = (await web.get(f"/events/{event_id}?games=true")).text
            apis = set(re.findall(r'data-api="([^"]+)"', page))
            documents = {api: (await web.get(api)).json() for api in apis}
            count, problems = check_page(page, documents.__getitem__)
            assert problems == [] and count > 20, (event_id, problems)


async def test_every_revision_s_full_message_is_kept_after_the_output_is_trimmed(
    client, redis_url, key_prefix
):
    """D101: the output stream keeps RATING_OUTPUT_MAXLEN messages (here 1) and `results`
    only the last, yet each revision's message, every figure and detail included, is read
    back from `{S}:revisions` as it was published."""
    settings = settings_for(redis_url, key_prefix, output_maxlen=1)
    stream = settings.input_streams[0]
    await import_records(client, StreamKeys(stream), club())
    processor = StreamProcessor(client, settings, stream, default_registry())
    await processor.ensure_group()
    published: list[bytes] = []

    async def step(*messages: dict) -> None:
        await apply(client, settings, processor, *messages)
        [(_, fields)] = await client.xrevrange(settings.output_stream, count=1)
        published.append(fields[b"__data__"])

    await step(night("night-05", 5, FIRST))
    fixed = [(1, "p1", "p2", 0), *FIRST[1:]]
    await step(dict(night("night-05", 5, fixed), schema="event.corrected/v1", reason="sheet"))
    refixed = [(1, "p1", "p2", 0.5), *FIRST[1:]]
    await step(dict(night("night-05", 5, refixed), schema="event.corrected/v1", reason="again"))
    assert await rejections(client, settings) == []
    assert await client.xlen(settings.output_stream) < len(published)  # the first is gone

    app = create_app(ReadModel(client, [stream]), None, Metrics())
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://rating.test") as web:
        for revision, data in enumerate(published):
            answer = await web.get(f"/v1/events/night-05/revisions/{revision}")
            assert answer.status_code == 200, answer.text
            message = msgspec.json.decode(answer.content, type=RatingsUpdated, strict=True)
            assert message == msgspec.json.decode(data, type=RatingsUpdated)
            assert (message.revision or 0) == revision
            assert all(p.details is not None and p.details.opponents for p in message.players)  # type: ignore[union-attr]  # CFC details
        scores = [msgspec.json.decode(d, type=RatingsUpdated).players[0].score for d in published]
        assert len(set(scores)) == 3  # three different messages, each its own
        missing = await web.get("/v1/events/night-05/revisions/3")
        assert missing.status_code == 404 and "no revision 3" in missing.text
        assert (await web.get("/v1/events/night-99/revisions/0")).status_code == 404
        assert (await web.get("/v1/events/night-05/revisions/x")).status_code == 400


async def test_an_event_and_two_corrections_in_one_change_set_keep_each_message(client, key_prefix):
    """D101: a first result and two revisions of the same event in one ledger's change set
    (what one commit writes, whether or not the processor batches them so): each of the
    three messages is kept in `{S}:revisions`, in the order published."""
    keys = StreamKeys(f"{key_prefix}.events")
    ledger = MemoryLedger(club())
    fixed = [(1, "p1", "p2", 0), *FIRST[1:]]
    refixed = [(1, "p1", "p2", 0.5), *FIRST[1:]]
    messages = [
        night("night-05", 5, FIRST),
        dict(night("night-05", 5, fixed), schema="event.corrected/v1", reason="sheet"),
        dict(night("night-05", 5, refixed), schema="event.corrected/v1", reason="again"),
    ]
    published = []
    for n, message in enumerate(messages):
        applied = apply_message(
            ledger, decode_input(msgspec.json.encode(message)), default_registry(), f"1-{n}"
        )
        assert isinstance(applied, Applied)
        published += applied.outputs
    assert [m.revision for m in published] == [None, 1, 2]
    async with client.pipeline(transaction=True) as pipe:
        queue(pipe, ledger_writes(keys, ledger.changes))
        await pipe.execute()
    reads = ReadModel(client, [keys.stream])
    for revision, message in enumerate(published):
        assert await reads.revision_message("night-05", revision) == message, revision
