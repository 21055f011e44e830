"""`rating-service serve` and the command line on a Redis Cluster: the service pointed at a
node that does not own the partitions' slots rates events on several partitions, a slot
moved meanwhile included, and answers its read API; import / publish --wait / watch / export
/ player / rejected work against the cluster; the single layout, whose output and
dead-letter streams are in other slots than its input's, is refused at start-up in one line."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import msgspec
import pytest

from service.bench.localcluster import LocalCluster
from service.runtime.connection import connect
from service.runtime.embedded import free_port
from tests.cluster.partitioned import (
    check_partitions,
    load_lists,
    mixed_season,
    not_owning,
    publish_routed,
    serve_on,
    until,
)
from tests.integration.helpers import settings_for
from tests.integration.processes import ROOT, http_get

pytestmark = pytest.mark.integration


async def test_serve_on_a_cluster_rates_every_partition_while_a_slot_moves(
    redis_cluster, cluster_prefix, tmp_path
):
    probe = settings_for(redis_cluster.url, cluster_prefix, partitions="domains")
    fide = probe.layout.route("fide", "standard").input
    url = not_owning(redis_cluster, [fide])
    settings = settings_for(url, cluster_prefix, partitions="domains", batch_size=4)
    client = await connect(url)
    port = free_port()
    services = serve_on(settings, port)
    try:
        await load_lists(client, settings)
        process = services.start()
        messages = mixed_season(90, seed=5)
        await publish_routed(client, settings, messages[:45])
        output = settings.layout.of_stream(fide).output
        await until(
            lambda: client.xlen(output)
        )  # the service is committing on that partition: move it
        redis_cluster.move_key_slot(fide, batch=3, pause=0.01)
        await publish_routed(client, settings, messages[45:])
        await check_partitions(client, settings, messages, tmp_path)
        assert process.poll() is None
        assert "Traceback" not in services.logs(process)
        status, body = await http_get(port, "/health/ready")
        assert status == 200, body
        status, body = await http_get(port, "/v1/pools/fide/standard/players?limit=3")
        assert status == 200 and len(json.loads(body)["players"]) == 3
        event_id = next(m["event_id"] for m in messages if m["system"] == "naspa")
        status, body = await http_get(port, f"/v1/events/{event_id}")
        assert status == 200 and json.loads(body)["event_id"] == event_id
    finally:
        services.stop_all()
        await client.aclose()


def test_the_single_layout_is_refused_on_a_cluster_in_one_line(redis_cluster, cluster_prefix):
    settings = settings_for(
        redis_cluster.url, cluster_prefix
    )  # single: prefix.events, .ratings, .rejected
    services = serve_on(settings)
    try:
        process = services.start()
        assert process.wait(timeout=30) == 1
        lines = services.logs(process).strip().splitlines()
        assert "RATING_PARTITIONS=domains" in lines[-1] and lines[-1].startswith(
            "rating-service serve: "
        )
        assert (
            f"RATING_OUTPUT_STREAM={{{cluster_prefix}.events}}:{cluster_prefix}.ratings"
            in lines[-1]
        )
        assert "Traceback" not in services.logs(process)
    finally:
        services.running.clear()
        services.stop_all()


def cli(env: dict, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "service", *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


async def test_the_command_line_on_a_cluster(redis_cluster, cluster_prefix, tmp_path):
    """Configured as a user would (the environment of the service): each command routes to,
    or reads, the partitions, whose streams are in several slots on several masters."""
    settings = settings_for(redis_cluster.url, cluster_prefix, partitions="domains")
    cfc = settings.layout.route("cfc", "regular")
    url = not_owning(redis_cluster, [cfc.input])
    services = serve_on(settings_for(url, cluster_prefix, partitions="domains"))
    env = {**services.env, "RATING_LOG_LEVEL": "ERROR"}
    examples = ROOT / "deploy/examples"
    for listing in ("cfc-ratings.jsonl", "fide-ratings.jsonl"):
        done = cli(env, "import", str(examples / listing))
        assert done.returncode == 0 and "0 replaced" in done.stdout, done.stderr
    both = tmp_path / "both.jsonl"
    both.write_text(
        "".join(
            json.dumps(json.loads((examples / f).read_text())) + "\n"
            for f in ("cfc-event.json", "fide-event.json")
        )
    )
    try:
        services.start()
        done = cli(env, "publish", str(both), "--wait", "--timeout", "30")
        assert done.returncode == 0, done.stdout + done.stderr
        assert (
            "ottawa-fall-open-2025: rated" in done.stdout
            and "montreal-international-2025: rated" in done.stdout
        )
        corrected = tmp_path / "corrected.json"
        event = json.loads((examples / "cfc-event.json").read_text())
        event["games"][0]["score"] = 0
        corrected.write_text(json.dumps(event))
        done = cli(env, "correct", str(corrected), "--wait", "--timeout", "30")
        assert done.returncode == 0 and "re-rated" in done.stdout, done.stdout + done.stderr
        done = cli(env, "close-period", "fide", "standard", "2025-11", "--wait", "--timeout", "30")
        assert done.returncode == 0, done.stdout + done.stderr
        done = cli(
            env, "withdraw", "ottawa-fall-open-2025", "--system", "cfc", "--wait", "--timeout", "30"
        )
        assert done.returncode == 0 and "withdrawn" in done.stdout, done.stdout + done.stderr
        misrouted = tmp_path / "misrouted.json"
        misrouted.write_text(json.dumps({**event, "event_id": "other-id", "pool": "active"}))
        advertised = {
            k: v for k, v in env.items() if k != "RATING_PARTITIONS"
        }  # the layout the service advertised
        done = cli(
            advertised,
            "publish",
            str(misrouted),
            "--stream",
            cfc.input,
            "--wait",
            "--timeout",
            "30",
            "--no-check",  # the service's own check is under test
        )
        assert done.returncode == 1 and "REJECTED (misrouted)" in done.stdout, (
            done.stdout + done.stderr
        )
    finally:
        services.stop_all()
    done = cli(
        env, "watch", "--from-start", "--count", "5", "--block-ms", "2000"
    )  # every partition's outputs
    assert done.returncode == 0, done.stderr
    assert "ottawa-fall-open-2025" in done.stdout and "montreal-international-2025" in done.stdout
    done = cli(env, "export", "--system", "fide", "--pool", "standard")
    records = {r["id"]: r for r in map(json.loads, done.stdout.splitlines())}
    assert done.returncode == 0 and len(records) == 6, done.stderr
    done = cli(env, "player", "fide", "standard", "2010001")
    assert done.returncode == 0 and str(records["2010001"]["rating"]) in done.stdout, (
        done.stdout + done.stderr
    )
    done = cli(env, "history", "fide", "standard", "2010001", "--json")
    kinds = [e["kind"] for e in json.loads(done.stdout)["entries"]]
    assert done.returncode == 0 and "list" in kinds, done.stdout + done.stderr
    done = cli(env, "rejected", "list", "--json")  # every partition's dead letters
    letters = [msgspec.json.decode(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0 and [letter["letter"]["reason"] for letter in letters] == [
        "misrouted"
    ], done.stderr
    done = cli(
        env,
        "replay",
        "--stream",
        cfc.input,
        "--into",
        f"{cluster_prefix}-rp",
        "--ratings",
        str(examples / "cfc-ratings.jsonl"),
    )
    assert done.returncode == 0 and "no differences from the live state" in done.stdout, (
        done.stdout + done.stderr
    )
    done = cli(
        env,
        "trf-ratings",
        str(ROOT / "tests/data/autumn-open-2025.trf"),
        "--out",
        str(tmp_path / "out.trf"),
    )
    assert done.returncode == 0 and "fide/standard" in done.stderr, done.stderr


async def test_serve_started_before_the_cluster_answers_waits_and_runs_on_it(
    cluster_prefix, tmp_path
):
    """Taken for a standalone server while nothing answers (the HTTP side live meanwhile),
    then built again for the cluster once it answers."""
    cluster = LocalCluster(masters=3)
    settings = settings_for(cluster.url, cluster_prefix, partitions="domains")
    port = free_port()
    services = serve_on(settings, port)
    try:
        process = services.start()
        await until(lambda: _answers(port, "/health/live"))
        assert (await http_get(port, "/health/ready"))[0] == 503
        await asyncio.to_thread(cluster.start)
        client = await connect(cluster.url)
        await load_lists(client, settings)
        messages = mixed_season(12, seed=2)
        await publish_routed(client, settings, messages)
        await check_partitions(client, settings, messages, tmp_path)
        assert process.poll() is None and "Traceback" not in services.logs(process)
        await client.aclose()
    finally:
        services.stop_all()
        cluster.stop()


async def _answers(port: int, path: str) -> bool:
    try:
        return (await http_get(port, path))[0] == 200
    except OSError:
        return False
