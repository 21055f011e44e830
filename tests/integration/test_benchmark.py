"""The bench against a real Redis, at a tiny size: the ceiling consumer does
exactly its three things, and the report has the documented keys. No figure is checked:
timing belongs to `rating-service bench`, never to a test."""

from __future__ import annotations

import subprocess

import msgspec
import pytest
import redis
import redis.asyncio as aioredis

from service.bench.benchmark import ENGINE_KEYS, REPORT_KEYS, SERVICE_KEYS, Sizes, render, run
from service.bench.ceiling import ceiling_consumer

pytestmark = pytest.mark.integration


async def test_ceiling_consumer_copies_each_entry_once_and_acks(redis_url, key_prefix):
    client = aioredis.Redis.from_url(redis_url)
    stream, output, group = f"{key_prefix}.in", f"{key_prefix}.out", f"{key_prefix}.g"
    try:
        for i in range(10):
            await client.xadd(stream, {"__data__": f'{{"n":{i}}}'.encode()})
        handled = await ceiling_consumer(client, stream, group, output, batch=4, stop_after=10)
        assert handled == 10
        copied = [fields[b"__data__"] for _, fields in await client.xrange(output)]
        assert copied == [f'{{"n":{i}}}'.encode() for i in range(10)]
        assert (await client.xpending(stream, group))["pending"] == 0
    finally:
        await client.aclose()


def test_bench_report_has_the_documented_keys_and_cleans_up(redis_url):
    tiny = Sizes(
        runs=1,
        engine_runs=1,
        two_player_events=20,
        swiss_events=2,
        latency_seconds=0.5,
        memory_records=500,
        platform_players=100,
        cascade_players=100,
        cascade_events=20,
        scale_runs=1,
        scale_events=20,
        scale_players=50,
        cluster_events=20,
    )
    engines = {
        name: dict.fromkeys(ENGINE_KEYS, 1.0) for name in ("cfc", "fide", "glicko2", "naspa")
    }
    engines["fide_close"] = {"players": 1, "seconds": 1.0}
    engines["apply"] = {"system": "cfc", "us_per_event": 1.0, "stages_us": {"engine": 1.0}}
    report = msgspec.json.decode(
        msgspec.json.encode(run(redis_url, True, sizes=tiny, engines=engines))
    )
    assert {k: set(report[k]) for k in REPORT_KEYS} == REPORT_KEYS
    assert (
        set(report["service"]["two_player"]) == set(report["service"]["swiss_64x7"]) == SERVICE_KEYS
    )
    assert report["settings"]["redis"] == "given URL" and report["memory"]["records"] == 500
    names = [t["name"] for t in report["targets"]]
    assert len(names) == 23 and names[:2] == ["CFC engine", "FIDE engine"]
    assert names[-2:] == ["two replicas on one partition", "two replicas, two busy partitions"]
    assert all(set(t) == {"name", "value", "target", "met"} for t in report["targets"])
    two = report["scale_out"]["two_partitions"]
    assert len(set(two["partitions"])) == 2 and len(set(two["owners"].values())) == 2
    assert report["scale_out"]["one_partition"]["two_replicas"]["events"] == 20
    assert two["one_replica_one_at_a_time"]["events"] == two["two_replicas"]["events"] == 40
    assert report["machine"]["cores"] >= 1 and isinstance(report["machine"]["warnings"], list)
    assert "scale-out" in render(report) and "two replicas, two busy partitions" in render(report)
    client = redis.Redis.from_url(redis_url)
    try:
        assert list(client.scan_iter(match=f"*{report['settings']['prefix']}*", count=1000)) == []
    finally:
        client.close()


def test_bench_without_a_url_runs_on_a_private_embedded_server_and_stops_it(monkeypatch):
    """Every process the bench starts (its private servers, the cluster's, the service's
    replicas: recorded as they are started) has exited after it. Only the bench's own are
    looked at, not the machine's servers, which other work may start and stop meanwhile."""
    started: list[subprocess.Popen] = []

    class Recorded(subprocess.Popen):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            started.append(self)

    monkeypatch.setattr(subprocess, "Popen", Recorded)
    tiny = Sizes(
        runs=1,
        engine_runs=1,
        two_player_events=20,
        swiss_events=2,
        latency_seconds=0.5,
        memory_records=200,
        platform_players=100,
        cascade_players=100,
        cascade_events=20,
        scale_runs=1,
        scale_events=20,
        scale_players=50,
        cluster_events=20,
    )
    engines = {
        name: dict.fromkeys(ENGINE_KEYS, 1.0) for name in ("cfc", "fide", "glicko2", "naspa")
    }
    engines["fide_close"] = {"players": 1, "seconds": 1.0}
    engines["apply"] = {"system": "cfc", "us_per_event": 1.0, "stages_us": {"engine": 1.0}}
    report = run(None, True, sizes=tiny, engines=engines)
    assert report["settings"]["redis"].startswith("private ")  # e.g. "private valkey 9.1.2"
    assert report["memory"]["records"] == 200
    servers = [p for p in started if "-server" in str(p.args[0])]
    assert servers, f"the bench started no server: {[p.args for p in started]}"
    running = [(p.pid, p.args) for p in started if p.poll() is None]
    assert running == [], "the bench left these running"


def test_bench_profile_reads_the_service_s_commit_stages(redis_url):
    """`bench --profile` at a tiny size: the real service's stage counters moved for each
    workload (every stage of a commit ran), and the table names them."""
    from service.bench.benchmark import bench_profile
    from service.bench.profile import profile_keys, render_profile

    profile = bench_profile(redis_url, True, counts=(40, 3))
    assert set(profile) == {"two_player", "swiss_64x7"}
    for kind, events in (("two_player", 40), ("swiss_64x7", 3)):
        figures = profile[kind]
        assert set(figures) == profile_keys() and figures["events"] == events
        assert all(
            figures["stages_us_per_event"][stage] > 0
            for stage in ("decode", "read", "rate", "encode", "write")
        )
        assert figures["entries_per_commit"] >= 1 and figures["wall_us_per_event"] > 0
    text = render_profile(profile)
    assert "rate (engines, ledger)" in text and "40 two-player events, 3 64x7 events" in text


def test_an_unreachable_redis_is_one_line_without_the_password(capsys, monkeypatch):
    """`bench --profile` and `python -m service.bench.instructions` on a --redis-url nothing
    answers: a one-line error naming the URL (password hidden), a non-zero exit."""
    from service.bench import instructions
    from service.cli.main import main

    url = "redis://:s3cret@127.0.0.1:1/0"
    assert main(["bench", "--profile", "--quick", "--json", "--redis-url", url]) == 2
    err = capsys.readouterr().err.strip()
    assert (
        err.count("\n") == 0
        and "Redis at redis://:***@127.0.0.1:1/0" in err
        and "s3cret" not in err
    )
    monkeypatch.setattr(
        instructions.shutil, "which", lambda name: f"/usr/bin/{name}"
    )  # valgrind or not
    assert instructions.main(["--events", "10", "--redis-url", url]) == 1
    err = capsys.readouterr().err.strip()
    assert (
        err.count("\n") == 0
        and "Redis at redis://:***@127.0.0.1:1/0" in err
        and "s3cret" not in err
    )
