"""The domains layout end to end on one Redis, as operators and directors use it: the real
service (two replicas) and the command line as subprocesses. Lists are imported and events
published without naming a stream (routed by system and pool), the partitions' leases are
spread over the replicas, every partition's records equal an offline `rate` of its own
stream, a plain XADD to the wrong partition is dead-lettered `misrouted` naming the right
stream, and `watch`, `rejected`, `player` and `streams` cover every partition."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

import msgspec
import pytest
import redis.asyncio as aioredis

from schemas import PlayerRecord, RatingsUpdated
from service.runtime.keys import StreamKeys, layout_key
from service.runtime.partitions import DOMAINS
from service.runtime.records_io import export_records
from tests.integration.helpers import settings_for
from tests.integration.processes import ROOT, Services, offline_records

pytestmark = pytest.mark.integration
EXAMPLES = ROOT / "deploy" / "examples"


def cli(env: dict, *args: str, timeout: float = 90) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "service", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def example(name: str, **changes) -> dict:
    return {**json.loads((EXAMPLES / name).read_text()), **changes}


def season(tmp_path) -> tuple[str, list[dict]]:
    """Events of three partitions in one file, and a correction."""
    events = [
        example("cfc-event.json"),
        example("fide-event.json"),
        example("naspa-event.json"),
        example(
            "cfc-event.json", event_id="cfc-second", start_date="2025-12-06", end_date="2025-12-07"
        ),
    ]
    corrected = {**events[0], "schema": "event.corrected/v1"}
    corrected["games"] = [
        {**g, "score": 1 - g["score"]} if i == 0 else g for i, g in enumerate(corrected["games"])
    ]
    path = tmp_path / "season.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in [*events, corrected]))
    return str(path), events


async def settled(client, inputs: list[str], timeout: float = 60.0) -> None:
    """Every partition's cursor at its stream's last entry."""
    deadline = time.monotonic() + timeout
    while True:
        behind = []
        for stream in inputs:
            last = await client.xrevrange(stream, count=1)
            if last and await client.get(StreamKeys(stream).cursor) != last[0][0]:
                behind.append(stream)
        if not behind:
            return
        assert time.monotonic() < deadline, f"not applied in {timeout} s: {behind}"
        await asyncio.sleep(0.1)


def test_domains_layout_end_to_end(tmp_path, redis_url, key_prefix):
    settings = settings_for(redis_url, key_prefix, partitions="domains")
    layout = settings.layout
    services = Services(settings, command=("-m", "service", "serve"))
    env = services.env
    try:
        services.start()
        services.start()

        async def scenario() -> None:
            client = aioredis.Redis.from_url(redis_url)
            try:
                deadline = time.monotonic() + 30
                while (
                    await client.get(layout_key(layout.base)) is None
                ):  # the service advertises its layout
                    assert time.monotonic() < deadline, services.logs()[-3000:]
                    await asyncio.sleep(0.1)

                # Lists: one command, each pool's records into its partition's store.
                for name in ("cfc-ratings.jsonl", "fide-ratings.jsonl", "naspa-ratings.jsonl"):
                    done = cli(env, "import", str(EXAMPLES / name))
                    assert done.returncode == 0, done.stderr
                cfc = layout.route("cfc", "regular")
                assert "{cfc.regular}" in cfc.input
                assert await client.hlen(StreamKeys(cfc.input).players("cfc", "regular")) > 0
                assert not await client.exists(StreamKeys(cfc.input).players("fide", "standard"))

                path, events = season(tmp_path)
                published = cli(env, "publish", path, "--wait", "--timeout", "60")
                assert published.returncode == 0, published.stdout + published.stderr
                assert published.stdout.count(": rated") == 4 and ": re-rated" in published.stdout

                # A plain XADD of a FIDE event to the CFC partition: dead-lettered, naming the right stream.
                wrong = example("fide-event.json", event_id="fide-misrouted")
                await client.xadd(cfc.input, {"__data__": json.dumps(wrong)})
                await settled(client, list(layout.inputs))

                # The leases: every partition owned by exactly one of the two replicas, a fair share each.
                owners = [
                    (await client.get(StreamKeys(p.input).lease)).decode().split(" ", 1)[1]
                    for p in layout.partitions
                ]
                shares = sorted(owners.count(o) for o in set(owners))
                assert len(shares) == 2 and shares[1] - shares[0] <= 1, (
                    owners
                )  # 7 partitions: 3 and 4

                for partition in layout.partitions:
                    entries = await client.xrange(partition.input)
                    kept = [(i, f) for i, f in entries if b"fide-misrouted" not in f[b"__data__"]]
                    stored = {}
                    for system, pool in [
                        (s, p) for d in partition.domains for s, p in DOMAINS.pools(d)
                    ]:
                        for record in await export_records(
                            client, StreamKeys(partition.input), system, pool
                        ):
                            stored[(record.system, record.pool, record.id)] = record
                    if not kept:
                        assert not stored, partition.name
                        continue
                    start = [
                        msgspec.json.decode(line, type=PlayerRecord)
                        for name in (
                            "cfc-ratings.jsonl",
                            "fide-ratings.jsonl",
                            "naspa-ratings.jsonl",
                        )
                        for line in (EXAMPLES / name).read_bytes().splitlines()
                        if line.strip()
                    ]
                    start = [r for r in start if partition.takes(r.system, r.pool)]
                    offline = offline_records(kept, tmp_path, start)
                    assert stored == offline, partition.name
                    outputs = [
                        msgspec.json.decode(f[b"__data__"], type=RatingsUpdated)
                        for _, f in await client.xrange(partition.output)
                    ]
                    assert all(partition.takes(o.system, o.pool) for o in outputs)

                letters = await client.xrange(cfc.dead_letter)
                assert len(letters) == 1
                letter = json.loads(letters[0][1][b"__data__"])
                assert letter["reason"] == "misrouted"
                assert layout.route("fide", "standard").input in letter["message"]
                for partition in layout.partitions:
                    if partition is not cfc:
                        assert await client.xlen(partition.dead_letter) == 0
                group = settings.group
                for stream in layout.inputs:
                    if await client.exists(stream):
                        assert (await client.xpending(stream, group))["pending"] == 0
            finally:
                await client.aclose()

        asyncio.run(scenario())

        # The reading commands cover every partition.
        # Six messages: three partitions' events, the second CFC event, the correction's revision
        # and the second CFC event re-rated.
        watched = cli(env, "watch", "--from-start", "--count", "6", "--block-ms", "2000")
        assert watched.returncode == 0, watched.stderr
        for event_id in (
            "ottawa-fall-open-2025",
            "montreal-international-2025",
            "toronto-scrabble-club-2025-11-20",
            "cfc-second",
        ):
            assert event_id in watched.stdout
        rejected = cli(env, "rejected", "list")
        assert "misrouted" in rejected.stdout and "fide-misrouted" in rejected.stdout
        assert (
            rejected.stdout.count("dead letter(s) in") == 1
        )  # the partitions without letters are not listed
        player = cli(env, "player", "fide", "standard", "2010001")
        assert player.returncode == 0 and "Ana Ferreira" in player.stdout, player.stderr
        shown = cli(env, "streams")
        assert "as the service advertised" in shown.stdout
        assert "{naspa}:" in shown.stdout and "naspa/csw naspa/nwl" in shown.stdout
        letter_id = json.loads(cli(env, "rejected", "list", "--json").stdout)["id"]
        redrive = cli(env, "rejected", "redrive", letter_id, "--no-wait")
        assert redrive.returncode == 2 and "publish it there" in redrive.stderr, redrive.stderr
    finally:
        services.stop_all()
