"""`reopen-period` through the command line against the real service and Redis (issue 29,
docs/rules/fide.md "F11 A close can be undone"): a close reopened, its period corrected and
closed again gives the list an offline `rate` of the corrected history gives; a reopen of
a period that is not the latest close is refused before anything is appended."""

from __future__ import annotations

import json

import msgspec
import pytest
import redis

from schemas import RatingsUpdated
from tests.integration.test_wait_and_dead_letters import EXAMPLES, cli, outputs_of, service

pytestmark = pytest.mark.integration
__all__ = ["service"]  # the fixture, imported


def stream_length(redis_url: str, stream: str) -> int:
    client = redis.Redis.from_url(redis_url)
    try:
        return client.xlen(stream)
    finally:
        client.close()


def test_a_reopened_close_closed_again_equals_the_offline_rate(tmp_path, service, redis_url):
    settings, env = service
    stream = settings.input_streams[0]
    ratings = str(EXAMPLES / "fide-ratings.jsonl")
    assert cli(env, "import", ratings, "--stream", stream).returncode == 0
    event = str(EXAMPLES / "fide-event.json")
    assert cli(env, "publish", event, "--stream", stream, "--wait").returncode == 0
    close = ("close-period", "fide", "standard", "2025-11", "--stream", stream, "--wait")
    assert cli(env, *close).returncode == 0
    document = json.loads((EXAMPLES / "fide-event.json").read_text())
    document["games"][0]["score"] = 0.5
    fixed = tmp_path / "fixed.json"
    fixed.write_text(json.dumps(document))
    late = cli(env, "correct", str(fixed), "--stream", stream, "--wait")
    assert late.returncode == 1 and "REJECTED (period_closed)" in late.stdout

    # Not the latest close: one line, exit 2, nothing appended.
    length = stream_length(redis_url, stream)
    wrong = cli(env, "reopen-period", "fide", "standard", "2025-10", "--stream", stream)
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1, wrong.stderr
    assert "not the latest closed period of fide/standard (closed through 2025-11" in wrong.stderr
    assert stream_length(redis_url, stream) == length

    reopened = cli(
        env, "reopen-period", "fide", "2025-11", "--reason", "closed too early", "--stream", stream
    )
    assert reopened.returncode == 0, reopened.stderr
    assert cli(env, "correct", str(fixed), "--stream", stream, "--wait").returncode == 0
    assert cli(env, *close).returncode == 0
    again = cli(env, "reopen-period", "fide", "standard", "2025-10", "--stream", stream)
    assert again.returncode == 2

    outputs = outputs_of(redis_url, settings.output_stream)
    lists = [o for o in outputs if o.period == "2025-11" and o.event_id is None]
    assert [(o.kind, o.withdrawn) for o in lists] == [
        ("list", False),
        ("revision", True),
        ("list", False),
    ]
    assert lists[1].cause is not None and lists[1].cause.type == "reopened"
    history = tmp_path / "history.jsonl"
    history.write_text(
        json.dumps(document)
        + "\n"
        + json.dumps({"schema": "period.closed/v1", "system": "fide", "period": "2025-11"})
        + "\n"
    )
    offline = cli(env, "rate", str(history), "--ratings", ratings)
    assert offline.returncode == 0, offline.stderr
    rated = [msgspec.json.decode(line, type=RatingsUpdated) for line in offline.stdout.splitlines()]
    expected = [o for o in rated if o.kind == "list"]
    assert [o.players for o in expected] == [lists[2].players]
    assert lists[0].players != lists[2].players  # the correction changed the list
