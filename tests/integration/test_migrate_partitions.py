"""`rating-service migrate-partitions`: a store rated in the single layout is copied into the
domains layout's partitions, and the partitions go on from there: a correction of an event
rated before the move re-rates it and the later event, exactly as an offline `rate` of the
whole history does, and the read model (histories) carries over."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import msgspec
import pytest
import redis.asyncio as aioredis

from schemas import PlayerRecord
from service.engine.registry import default_registry
from service.runtime.keys import StreamKeys
from service.runtime.processor import StreamProcessor
from service.runtime.queries import ReadModel
from service.runtime.records_io import export_records, import_records
from tests.integration.helpers import settings_for
from tests.integration.processes import ROOT, offline_records

pytestmark = pytest.mark.integration
EXAMPLES = ROOT / "deploy" / "examples"
LISTS = ("cfc-ratings.jsonl", "fide-ratings.jsonl", "naspa-ratings.jsonl")


def example(name: str, **changes) -> dict:
    return {**json.loads((EXAMPLES / name).read_text()), **changes}


def start_list() -> list[PlayerRecord]:
    return [
        msgspec.json.decode(line, type=PlayerRecord)
        for name in LISTS
        for line in (EXAMPLES / name).read_bytes().splitlines()
        if line.strip()
    ]


async def rate(client, processor: StreamProcessor, *messages: dict) -> None:
    ids = [
        (await client.xadd(processor.stream, {"__data__": json.dumps(m)})).decode()
        for m in messages
    ]
    await processor.handle(*ids)


def cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "service", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_single_layout_store_moves_into_partitions_and_goes_on(tmp_path, redis_url, key_prefix):
    single = settings_for(redis_url, key_prefix)
    domains = settings_for(redis_url, key_prefix, partitions="domains")
    first = example("cfc-event.json")
    later = example(
        "cfc-event.json", event_id="cfc-later", start_date="2025-12-06", end_date="2025-12-07"
    )
    corrected = {
        **first,
        "schema": "event.corrected/v1",
        "games": [
            {**g, "score": 1 - g["score"]} if i == 0 else g for i, g in enumerate(first["games"])
        ],
    }
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(ROOT),
        "RATING_REDIS_URL": redis_url,
        "RATING_INPUT_STREAMS": single.input_streams[0],
        "RATING_OUTPUT_STREAM": single.output_stream,
        "RATING_DEAD_LETTER_STREAM": single.dead_letter_stream,
        "RATING_GROUP": single.group,
    }

    async def before() -> None:
        client = aioredis.Redis.from_url(redis_url)
        try:
            await import_records(client, StreamKeys(single.input_streams[0]), start_list())
            old = StreamProcessor(client, single, single.input_streams[0], default_registry())
            await old.ensure_group()
            await rate(
                client,
                old,
                first,
                example("fide-event.json"),
                example("naspa-event.json"),
                later,
                example("fide-period-closed.json"),
            )
        finally:
            await client.aclose()

    asyncio.run(before())
    dry = cli(env, "migrate-partitions")
    assert dry.returncode == 0, dry.stderr
    assert "would copy" in dry.stdout and "nothing was written" in dry.stdout
    done = cli(env, "migrate-partitions", "--yes")
    assert done.returncode == 0, done.stderr
    for name in ("cfc.regular", "fide.standard", "naspa"):
        assert f"  {name} " in done.stdout
    again = cli(env, "migrate-partitions", "--yes")
    assert again.returncode == 2 and "migrated to the domains layout already" in again.stderr

    async def after() -> None:
        client = aioredis.Redis.from_url(redis_url)
        try:
            layout = domains.layout
            cfc = layout.route("cfc", "regular")
            new = StreamProcessor(client, domains, cfc.input, default_registry())
            await new.ensure_group()
            await rate(client, new, corrected)
            outputs = [json.loads(f[b"__data__"]) for _, f in await client.xrange(cfc.output)]
            # The correction re-rates the event (revision 1) and the later event rated before the move.
            assert [(o["kind"], o["event_id"], o.get("revision")) for o in outputs] == [
                ("revision", first["event_id"], 1),
                ("revision", "cfc-later", 1),
            ]
            whole = [
                (b"0-1", {b"__data__": json.dumps(m).encode()}) for m in (first, later, corrected)
            ]
            offline = offline_records(
                whole, tmp_path, [r for r in start_list() if r.system == "cfc"]
            )
            stored = {
                (r.system, r.pool, r.id): r
                for r in await export_records(client, StreamKeys(cfc.input), "cfc", "regular")
            }
            assert stored == offline
            # FIDE and NASPA moved as they were; their histories and results with them.
            fide = layout.route("fide", "standard")
            assert await export_records(
                client, StreamKeys(fide.input), "fide", "standard"
            ) == await export_records(
                client, StreamKeys(single.input_streams[0]), "fide", "standard"
            )
            reads = ReadModel(client, list(layout.inputs))
            history = await reads.history("fide", "standard", "2010001")
            assert [e.kind for e in history.entries] == ["event", "list"]
            assert (await reads.event("toronto-scrabble-club-2025-11-20")).pool == "nwl"
            assert await client.xlen(cfc.dead_letter) == 0
        finally:
            await client.aclose()

    asyncio.run(after())
