"""`publish --wait` and friends, `close-period`, `rejected` and `watch --rejected`, as a person
runs them: the command line as a subprocess, against the real Redis, with the real service
(`python -m service serve`) running as a subprocess on the test's own streams."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

import msgspec
import pytest
import redis
import redis.asyncio as aioredis

from schemas import RatingsUpdated
from service.runtime.keys import redriven_key
from service.runtime.metrics import Metrics
from service.runtime.processor import StreamProcessor
from tests.engines import counting_registry
from tests.integration.helpers import settings_for
from tests.integration.processes import ROOT, Services

pytestmark = pytest.mark.integration

EXAMPLES = ROOT / "deploy" / "examples"


@pytest.fixture
def service(redis_url, key_prefix):
    """The real service on the test's streams; yields (settings, env for the command line)."""
    settings = settings_for(redis_url, key_prefix)
    services = Services(settings, command=("-m", "service", "serve"))
    services.start()
    yield settings, services.env
    services.stop_all()


def cli(env: dict, *args: str, timeout: float = 90) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "service", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def event_file(tmp_path, name: str, **changes) -> str:
    document = {**json.loads((EXAMPLES / "cfc-event.json").read_text()), **changes}
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return str(path)


def outputs_of(redis_url: str, stream: str) -> list[RatingsUpdated]:
    client = redis.Redis.from_url(redis_url)
    try:
        return [
            msgspec.json.decode(f[b"__data__"], type=RatingsUpdated)
            for _, f in client.xrange(stream)
        ]
    finally:
        client.close()


def test_publish_wait_rated_duplicate_and_rejected(tmp_path, service, redis_url):
    settings, env = service
    stream = settings.input_streams[0]
    assert (
        cli(env, "import", str(EXAMPLES / "cfc-ratings.jsonl"), "--stream", stream).returncode == 0
    )
    # A good event: its table, exit 0. 1850 + 9 (the README's figure for 100001).
    done = cli(env, "publish", str(EXAMPLES / "cfc-event.json"), "--stream", stream, "--wait")
    assert done.returncode == 0, done.stderr
    entry_id = done.stdout.split()[0]
    assert f"{entry_id}  ottawa-fall-open-2025: rated" in done.stdout
    assert "\n  Ottawa Fall Open  2025-11-01 to 2025-11-02\n" in done.stdout  # the event's name
    assert "100001  Anne Tremblay  1850  1859      +9" in done.stdout  # each player's
    # The same again: a duplicate, said so, exit 0.
    again = cli(env, "publish", str(EXAMPLES / "cfc-event.json"), "--stream", stream, "--wait")
    assert again.returncode == 0, again.stderr
    assert "duplicate: already applied with this content, nothing changed" in again.stdout
    # Same id, other content: a conflict. Exit 1, the reason, the path and the message.
    typo = event_file(
        tmp_path, "typo.json", games=[{"round": 1, "a": "100001", "b": "100002", "score": 0}]
    )
    rejected = cli(env, "publish", typo, "--stream", stream, "--wait")
    assert rejected.returncode == 1, rejected.stderr
    assert "ottawa-fall-open-2025: REJECTED (conflict), dead letter" in rejected.stdout
    assert "already applied with other content" in rejected.stdout
    assert "  at   $\n" in rejected.stdout
    # Without --wait, off a terminal: the entry id only, as before.
    plain = cli(env, "publish", str(EXAMPLES / "cfc-event.json"), "--stream", stream)
    assert (
        plain.returncode == 0
        and len(plain.stdout.split()) == 1
        and plain.stdout.strip().count("-") == 1
    )


def test_dead_letters_listed_shown_and_redriven_fixed(tmp_path, service, redis_url):
    settings, env = service
    stream = settings.input_streams[0]
    cli(env, "import", str(EXAMPLES / "cfc-ratings.jsonl"), "--stream", stream)
    assert (
        cli(
            env, "publish", str(EXAMPLES / "cfc-event.json"), "--stream", stream, "--wait"
        ).returncode
        == 0
    )
    typo = event_file(
        tmp_path, "typo.json", games=[{"round": 1, "a": "100001", "b": "100002", "score": 0}]
    )
    rejected = cli(env, "publish", typo, "--stream", stream, "--wait")
    assert rejected.returncode == 1
    source = rejected.stdout.split()[0]
    # Listed: reason, event, source entry, open.
    listed = cli(env, "rejected", "list")
    assert listed.returncode == 0, listed.stderr
    [row] = [line for line in listed.stdout.splitlines() if source in line]
    letter = row.split()[0]
    assert row.split()[2:] == ["conflict", "ottawa-fall-open-2025", source, "open"]
    shown = cli(env, "rejected", "show", letter)
    assert shown.returncode == 0, shown.stderr
    assert f"{source} of {stream}, still in the input stream" in shown.stdout
    assert '"event_id": "ottawa-fall-open-2025"' in shown.stdout  # the original message, in full
    # Watching the dead letters shows it (not "not a ratings.updated/v1 message").
    watched = cli(env, "watch", "--rejected", "--from-start", "--count", "1")
    assert watched.returncode == 0, watched.stderr
    assert f"ottawa-fall-open-2025  REJECTED: conflict  dead letter {letter}" in watched.stdout
    # Redriven with a fix (a new event id): the fixed event is rated.
    fixed = event_file(
        tmp_path,
        "fixed.json",
        event_id="ottawa-fall-open-2025-b",
        games=[{"round": 1, "a": "100001", "b": "100002", "score": 0}],
    )
    redriven = cli(env, "rejected", "redrive", letter, "--file", fixed, "--wait")
    assert redriven.returncode == 0, redriven.stderr
    assert "ottawa-fall-open-2025-b: rated" in redriven.stdout
    new_entry = redriven.stdout.split("as entry ")[1].split()[0]
    [output] = [
        o for o in outputs_of(redis_url, settings.output_stream) if o.source_id == new_entry
    ]
    assert output.event_id == "ottawa-fall-open-2025-b" and output.kind == "event"
    # The list shows it redriven; a second redrive is refused without --again.
    assert f"redriven as {new_entry}" in cli(env, "rejected", "list").stdout
    assert "no dead letters" in cli(env, "rejected", "list", "--open").stdout
    twice = cli(env, "rejected", "redrive", letter, "--file", fixed)
    assert (
        twice.returncode == 2
        and "redriven already" in twice.stderr
        and "Traceback" not in twice.stderr
    )
    # A correction of the first event re-rates the later one: its own result first.
    why = "round 1 entered the wrong way round"
    corrected = cli(env, "correct", typo, "--stream", stream, "--wait", "--reason", why)
    assert corrected.returncode == 0, corrected.stderr
    assert corrected.stdout.splitlines()[:2] == [
        f"{corrected.stdout.split()[0]}  ottawa-fall-open-2025: re-rated",
        f"  reason given: {why}",
    ]
    own = corrected.stdout.index("ottawa-fall-open-2025  REVISION 1")
    later = corrected.stdout.index("ottawa-fall-open-2025-b  REVISION 1")
    assert own < corrected.stdout.index("... and 1 later event re-rated:") < later
    assert "100002  Bruno Roy" in corrected.stdout[later:]  # the later event's players named
    # A withdrawal echoes its reason too.
    withdrawn = cli(
        env,
        "withdraw",
        "ottawa-fall-open-2025-b",
        "--system",
        "cfc",
        "--stream",
        stream,
        "--wait",
        "--reason",
        "not a rated section",
    )
    assert withdrawn.returncode == 0, withdrawn.stderr
    assert withdrawn.stdout.splitlines()[1] == "  reason given: not a rated section"
    # Purge asks for --yes, then removes the letter (and its ledger entry).
    refused = cli(env, "rejected", "purge", "--all")
    assert refused.returncode == 2 and "would remove 1 dead letter(s)" in refused.stderr
    assert cli(env, "rejected", "purge", "--all", "--yes").returncode == 0
    assert "no dead letters" in cli(env, "rejected", "list").stdout


def test_close_period_wait_prints_the_list(tmp_path, service):
    settings, env = service
    stream = settings.input_streams[0]
    cli(env, "import", str(EXAMPLES / "fide-ratings.jsonl"), "--stream", stream)
    assert (
        cli(
            env, "publish", str(EXAMPLES / "fide-event.json"), "--stream", stream, "--wait"
        ).returncode
        == 0
    )
    closed = cli(env, "close-period", "fide", "standard", "2025-11", "--stream", stream, "--wait")
    assert closed.returncode == 0, closed.stderr
    assert "period fide/standard 2025-11: rated" in closed.stdout
    assert "list 2025-11 (1/1)  fide/standard  fide-2024" in closed.stdout
    # A list message carries no names: the table takes the store's records'.
    assert "2010001  Ana Ferreira" in closed.stdout
    # A correction of an event of the closed period: period_closed, exit 1.
    document = json.loads((EXAMPLES / "fide-event.json").read_text())
    document["games"][0]["score"] = 0.5
    (tmp_path / "fixed.json").write_text(json.dumps(document))
    late = cli(env, "correct", str(tmp_path / "fixed.json"), "--stream", stream, "--wait")
    assert late.returncode == 1 and "REJECTED (period_closed)" in late.stdout


def test_no_service_times_out_with_exit_3(redis_url, key_prefix):
    settings = settings_for(redis_url, key_prefix)
    env = Services(settings).env  # the same environment, and no service started
    started = time.monotonic()
    done = cli(
        env,
        "publish",
        str(EXAMPLES / "cfc-event.json"),
        "--stream",
        settings.input_streams[0],
        "--wait",
        "--timeout",
        "1",
        "--no-check",  # no list imported: only the wait is under test
    )
    assert done.returncode == 3
    assert "no outcome within 1 s" in done.stdout
    assert done.stderr.count("\n") == 1 and "no consumer group" in done.stderr
    assert time.monotonic() - started < 30
    # watch --count with nothing coming: exit 3 too, saying so.
    watched = cli(env, "watch", "--count", "1", "--block-ms", "200")
    assert watched.returncode == 3 and "0 of 1 message(s)" in watched.stderr


async def test_oldest_open_dead_letter_age_metric(redis_url, key_prefix):
    """Letters 100 s and 50 s old; the first redriven: the oldest open one is 50 s old."""
    client = aioredis.Redis.from_url(redis_url)
    settings = settings_for(redis_url, key_prefix)
    metrics = Metrics()
    processor = StreamProcessor(
        client, settings, settings.input_streams[0], counting_registry(), metrics
    )
    await processor.ensure_group()
    gauge = "rating_dead_letter_oldest_age_seconds"
    labels = {"stream": settings.dead_letter_stream}
    await processor.observe_group()
    assert metrics.registry.get_sample_value(gauge, labels) == 0
    now_ms = int(time.time() * 1000)
    old, newer = f"{now_ms - 100_000}-0", f"{now_ms - 50_000}-0"
    for letter_id in (old, newer):
        await client.xadd(settings.dead_letter_stream, {"__data__": b"{}"}, id=letter_id)
    await processor.observe_group()
    assert 100 <= metrics.registry.get_sample_value(gauge, labels) < 110
    await client.hset(redriven_key(settings.dead_letter_stream), old, "1-1")
    await processor.observe_group()
    assert 50 <= metrics.registry.get_sample_value(gauge, labels) < 60
    await client.hset(redriven_key(settings.dead_letter_stream), newer, "1-2")
    await processor.observe_group()
    assert metrics.registry.get_sample_value(gauge, labels) == 0
    await client.aclose()
    await asyncio.sleep(0)
