"""The data commands against a real Redis: publish a TRF, import / export lists (JSON
Lines and CSV, the import guard), trf-ratings, and replay of 5,000 events."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import msgspec
import pytest
import redis

from schemas.records import PlayerRecord
from service.cli.main import main
from service.engine.registry import default_registry
from service.formats import trf
from service.formats.ratinglists import render_csv, render_jsonl
from service.runtime.keys import StreamKeys
from service.runtime.processor import StreamProcessor
from tests.integration.helpers import outputs, rejections, settings_for

pytestmark = pytest.mark.integration

OPEN = Path(__file__).resolve().parents[1] / "data" / "autumn-open-2025.trf"
FIDE_LIST = [
    PlayerRecord(
        system="fide", pool="standard", id=pid, rating=rating, status="established", games=60
    )
    for pid, rating in (("1001", 2300), ("1002", 2200), ("1003", 2100), ("1004", 2000))
]


async def cli(*args: str) -> int:
    """The command line, from an async test (it runs its own event loop)."""
    return await asyncio.to_thread(main, list(args))


def hash_of(redis_url: str, key: str) -> dict:
    sync = redis.Redis.from_url(redis_url)
    try:
        return sync.hgetall(key)
    finally:
        sync.close()


async def test_a_published_trf_is_rated_and_guards_the_list(
    tmp_path, redis_url, key_prefix, client, capsys
):
    settings = settings_for(redis_url, key_prefix)
    stream = settings.input_streams[0]
    common = ["--stream", stream, "--redis-url", redis_url]
    listing = tmp_path / "fide.csv"
    listing.write_text(render_csv(FIDE_LIST))
    assert (
        await cli("import", str(listing), "--system", "fide", "--pool", "standard", *common)
    ) == 0
    assert (await cli("import", str(listing), *common)) == 0  # the same list again: allowed
    assert "0 new, 4 replaced" in capsys.readouterr().out

    bad = tmp_path / "bad.trf"
    bad.write_text(OPEN.read_text().replace("     4 b 1     5 b W", "     4 b 1     9 b W"))
    assert (await cli("publish", str(bad), *common)) == 2
    assert f"{bad}:14: round 5: opponent 9 has no 001 record" in capsys.readouterr().err
    assert await client.xlen(stream) == 0  # nothing of a bad file is sent
    assert (await cli("publish", str(OPEN), *common)) == 0
    [entry_id] = capsys.readouterr().out.split()
    [(_, fields)] = await client.xrange(stream)
    tournament = trf.parse(OPEN.read_text(), str(OPEN))
    converted = trf.to_event(
        tournament, trf.identity(tournament)
    )  # the event id: the tournament's identity
    assert fields[b"__data__"] == msgspec.json.encode(converted)

    processor = StreamProcessor(client, settings, stream, default_registry())
    await processor.ensure_group()
    await processor.handle(entry_id)
    [out] = await outputs(client, settings)
    assert {p.id: p.details.projected_rating for p in out.players}[
        "1003"
    ] == 2125  # test_trf: 2100 + 25

    # The pool moved on: re-importing the old list is refused, and nothing is written.
    before = hash_of(redis_url, StreamKeys(stream).players("fide", "standard"))
    assert (await cli("import", str(listing), *common)) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("rating-service import: fide/standard already holds 4 record(s) that differ")
        and "--force" in err
    )
    assert hash_of(redis_url, StreamKeys(stream).players("fide", "standard")) == before
    assert (await cli("import", str(listing), "--force", *common)) == 0
    assert "0 new, 4 replaced" in capsys.readouterr().out


def test_import_export_round_trips_in_both_formats(tmp_path, redis_url, key_prefix, capsys):
    stream = f"{key_prefix}.events"
    common = ["--stream", stream, "--redis-url", redis_url]
    records = FIDE_LIST + [PlayerRecord(system="fide", pool="standard", id="2001", birth_year=2012)]
    source = tmp_path / "list.jsonl"
    source.write_bytes(render_jsonl(records))
    assert main(["import", str(source), *common]) == 0
    capsys.readouterr()
    export = ["export", "--system", "fide", "--pool", "standard", *common]
    assert main([*export, "--format", "csv"]) == 0
    as_csv = capsys.readouterr().out
    assert as_csv == render_csv(records)
    assert main([*export, "--out", str(tmp_path / "out.jsonl")]) == 0
    assert (tmp_path / "out.jsonl").read_bytes() == render_jsonl(records)
    # CSV back in, into another stream's store: the same records.
    other = ["--stream", f"{key_prefix}.other", "--redis-url", redis_url]
    (tmp_path / "in.csv").write_text(as_csv)
    assert main(["import", str(tmp_path / "in.csv"), *other]) == 0
    assert (
        main(
            [
                "export",
                "--system",
                "fide",
                "--pool",
                "standard",
                *other,
                "--out",
                str(tmp_path / "b.csv"),
            ]
        )
        == 0
    )
    assert (tmp_path / "b.csv").read_text() == as_csv


def test_export_defaults_the_pool_and_says_when_a_pool_is_empty(
    tmp_path, redis_url, key_prefix, capsys
):
    common = ["--stream", f"{key_prefix}.events", "--redis-url", redis_url]
    source = tmp_path / "list.jsonl"
    source.write_bytes(render_jsonl(FIDE_LIST))
    assert main(["import", str(source), *common]) == 0
    capsys.readouterr()
    assert main(["export", "--system", "fide", *common]) == 0  # the default pool: standard
    done = capsys.readouterr()
    assert done.out.encode() == render_jsonl(FIDE_LIST) and done.err == ""
    assert main(["export", "--system", "fide", "--pool", "rapid", *common]) == 0
    done = capsys.readouterr()
    assert done.out == ""
    assert done.err == (
        f"rating-service export: fide/rapid holds no records in stream {key_prefix}.events's "
        "store: nothing exported (load a list with rating-service import FILE; --stream names "
        "another store, --pool another of standard, rapid, blitz)\n"
    )
    assert main(["export", "--system", "fide", "--pool", "bullet", *common]) == 2
    assert "--pool 'bullet' is not a fide pool" in capsys.readouterr().err


def test_trf_ratings_rewrites_from_the_service_list(tmp_path, redis_url, key_prefix, capsys):
    stream = f"{key_prefix}.events"
    listing = tmp_path / "list.csv"
    listing.write_text(
        "id,rating,status,games\n1001,2295,established,65\n1002,2188,established,64\n"
        "1003,,unrated,0\n1004,2005,established,65\n"
    )
    common = ["--stream", stream, "--redis-url", redis_url]
    assert main(["import", str(listing), "--system", "fide", "--pool", "standard", *common]) == 0
    capsys.readouterr()
    out = tmp_path / "round1.trf"
    assert (
        main(["trf-ratings", str(OPEN), "--out", str(out), *common]) == 0
    )  # the pool: fide's default
    err = capsys.readouterr().err
    assert [p.rating for p in trf.parse(out.read_text()).players] == [2295, 2188, None, 2005, None]
    assert "4 players found in fide/standard, 4 ratings changed" in err
    assert (
        "1 players unknown to the service keep their rating:\n     5 Echo, Emil (id sn5@autumn-open-2025.2025-11-01.55fb111f)"
        in err
    )
    assert (
        main(["trf-ratings", str(OPEN), "--pool", "blitz", *common]) == 0
    )  # nobody known: unchanged
    assert capsys.readouterr().out == OPEN.read_text()


def many_events(count: int, seed: int = 9) -> list[bytes]:
    """`count` input entries: CFC events, FIDE events over three periods with their
    closings, a duplicate, a conflict and an invalid message. The events arrive in date
    order (re-rating from late events has tests of its own)."""
    rng = random.Random(seed)
    cfc_ids = [f"c{i}" for i in range(150)]
    fide_ids = [str(5000 + i) for i in range(60)]
    entries: list[bytes] = []
    months = ["2025-10", "2025-11", "2025-12"]
    third = (count - 6 + 2) // 3
    for n in range(count - 6):
        month = months[min(n // third, 2)]
        if n % 5 == 4:
            players = rng.sample(fide_ids, 4)
            system, day = "fide", f"{month}-{1 + (n % third) * 27 // third:02d}"
        else:
            players = rng.sample(cfc_ids, 4)
            system, day = "cfc", f"2025-11-{1 + n * 27 // count:02d}"
        games = [
            {"round": r + 1, "a": a, "b": b, "score": rng.choice([1, 0.5, 0])}
            for r, (a, b) in enumerate(
                [
                    (players[0], players[1]),
                    (players[2], players[3]),
                    (players[0], players[2]),
                    (players[1], players[3]),
                ]
            )
        ]
        entries.append(
            json.dumps(
                {
                    "schema": "event.finished/v1",
                    "event_id": f"e{n}",
                    "system": system,
                    "name": f"Event {n}",
                    "start_date": day,
                    "end_date": day,
                    "rounds": 4,
                    "players": [{"id": p} for p in players],
                    "games": games,
                }
            ).encode()
        )
        if (n + 1) % third == 0 and n // third < 2:
            entries.append(
                json.dumps(
                    {"schema": "period.closed/v1", "system": "fide", "period": month}
                ).encode()
            )
    entries.append(entries[10])  # a duplicate: no effect
    conflict = json.loads(entries[11])
    conflict["name"] = "Renamed"
    entries.append(json.dumps(conflict).encode())  # a conflict: dead-lettered
    entries.append(b'{"schema": "event.finished/v1"}')  # invalid
    entries.append(
        json.dumps({"schema": "period.closed/v1", "system": "fide", "period": "2025-12"}).encode()
    )
    return entries


async def test_replay_of_5000_events_reproduces_the_live_state(
    tmp_path, redis_url, key_prefix, client, capsys
):
    settings = settings_for(redis_url, key_prefix, batch_size=256)
    stream = settings.input_streams[0]
    starting = [
        PlayerRecord(
            system="cfc",
            pool="regular",
            id=f"c{i}",
            rating=1200 + 7 * i,
            status="established",
            games=40,
            highest=1200 + 7 * i,
        )
        for i in range(0, 150, 2)
    ]
    starting += [
        PlayerRecord(
            system="fide",
            pool="standard",
            id=str(5000 + i),
            rating=1600 + 11 * i,
            status="established",
            games=50,
        )
        for i in range(0, 60, 3)
    ]
    listing = tmp_path / "start.jsonl"
    listing.write_bytes(render_jsonl(starting))
    common = ["--stream", stream, "--redis-url", redis_url]
    assert (await cli("import", str(listing), *common)) == 0

    entries = many_events(5_000)
    assert len(entries) == 5_000
    async with client.pipeline(transaction=False) as pipe:
        for data in entries:
            pipe.xadd(stream, {"__data__": data})
        ids = [i.decode() for i in await pipe.execute()]
    processor = StreamProcessor(client, settings, stream, default_registry())
    await processor.ensure_group()
    await processor.handle(ids[-1])
    assert [r.reason for r in await rejections(client, settings)] == ["conflict", "invalid"]
    capsys.readouterr()

    assert (
        await cli("replay", "--into", "rp", "--ratings", str(listing), "--page", "700", *common)
    ) == 0
    report = capsys.readouterr()
    assert "replayed 5,000 entries: 4,997 applied, 1 duplicates, 2 rejected" in report.out
    assert "no differences from the live state" in report.out
    assert "markers: 4,997 identical, 0 differ, 0 only live, 0 only in the replay" in report.out
    assert report.err == ""  # not a terminal and fewer than --progress-every entries: quiet
    live, replayed = StreamKeys(stream), StreamKeys(stream, namespace="rp")
    for system, pool in (("cfc", "regular"), ("fide", "standard")):
        records = hash_of(redis_url, live.players(system, pool))
        assert len(records) > 50 and hash_of(redis_url, replayed.players(system, pool)) == records
    assert hash_of(redis_url, replayed.markers) == hash_of(redis_url, live.markers)
    assert hash_of(redis_url, replayed.pools) == hash_of(redis_url, live.pools)
    assert await client.get(replayed.cursor) == await client.get(live.cursor) == ids[-1].encode()

    # The namespace is taken now; a changed live record shows as a difference.
    assert (await cli("replay", "--into", "rp", *common)) == 2
    assert "namespace 'rp' already has" in capsys.readouterr().err
    record = msgspec.json.decode(
        await client.hget(live.players("cfc", "regular"), "c0"), type=PlayerRecord
    )
    await client.hset(
        live.players("cfc", "regular"),
        "c0",
        msgspec.json.encode(msgspec.structs.replace(record, rating=record.rating + 1)),
    )
    assert (
        await cli(
            "replay",
            "--into",
            "rp",
            "--force",
            "--ratings",
            str(listing),
            "--progress-every",
            "2000",
            *common,
        )
    ) == 0
    report = capsys.readouterr()
    assert (
        f"  c0: live {record.rating + 1} (established" in report.out
        and f"-> replay {record.rating} (" in report.out
    )
    assert "1 players differ from the live state" in report.out
    assert (
        report.err == "replay: 2,000 of 5,000 entries\nreplay: 4,000 of 5,000 entries\n"
    )  # pages of 1,000
