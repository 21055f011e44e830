"""The commands that talk to Redis: import, export, publish."""

from __future__ import annotations

import json

import pytest
import redis

from service.cli.main import main
from service.runtime.keys import StreamKeys
from tests.messages import event

pytestmark = pytest.mark.integration


def records(*ratings):
    return [
        {
            "schema": "player.record/v1",
            "system": "cfc",
            "pool": "regular",
            "id": f"p{i}",
            "rating": r,
            "status": "established",
            "games": 30,
            "highest": r,
        }
        for i, r in enumerate(ratings)
    ]


def test_import_then_export_round_trips(tmp_path, redis_url, key_prefix, capsys):
    stream = f"{key_prefix}.events"
    source = tmp_path / "list.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records(1500, 1720, 2250)))
    assert main(["import", str(source), "--stream", stream, "--redis-url", redis_url]) == 0
    assert "3 new, 0 replaced" in capsys.readouterr().out
    assert main(["import", str(source), "--stream", stream, "--redis-url", redis_url]) == 0
    assert "0 new, 3 replaced" in capsys.readouterr().out
    # The read model: one HGET per player, documented key layout.
    client = redis.Redis.from_url(redis_url)
    raw = client.hget(f"{{{stream}}}:players:cfc:regular", "p1")
    assert json.loads(raw)["rating"] == 1720
    assert StreamKeys(stream).players("cfc", "regular") == f"{{{stream}}}:players:cfc:regular"
    client.close()
    out = tmp_path / "out.jsonl"
    assert (
        main(
            [
                "export",
                "--system",
                "cfc",
                "--pool",
                "regular",
                "--stream",
                stream,
                "--redis-url",
                redis_url,
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert [json.loads(line) for line in out.read_text().splitlines()] == records(1500, 1720, 2250)
    assert (
        main(
            [
                "export",
                "--system",
                "cfc",
                "--pool",
                "active",
                "--stream",
                stream,
                "--redis-url",
                redis_url,
            ]
        )
        == 0
    )
    assert capsys.readouterr().out == ""


def test_import_refuses_a_bad_file_and_writes_nothing(tmp_path, redis_url, key_prefix, capsys):
    stream = f"{key_prefix}.events"
    bad = records(1500, 1600)
    bad[1]["status"] = "grandmaster"
    source = tmp_path / "list.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in bad))
    assert main(["import", str(source), "--stream", stream, "--redis-url", redis_url]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"rating-service import: {source}:2: $.status:") and "\n" not in err
    client = redis.Redis.from_url(redis_url)
    assert client.hlen(f"{{{stream}}}:players:cfc:regular") == 0
    client.close()


def test_publish_checks_then_appends(tmp_path, redis_url, key_prefix, capsys):
    stream = f"{key_prefix}.events"
    good = tmp_path / "events.jsonl"
    good.write_text(json.dumps(event()) + "\n" + json.dumps(event(event_id="two")) + "\n")
    common = ["--stream", stream, "--redis-url", redis_url, "--new-players"]  # no list here
    assert main(["publish", str(good), *common]) == 0
    ids = capsys.readouterr().out.split()
    client = redis.Redis.from_url(redis_url)
    entries = client.xrange(stream)
    assert [i.decode() for i, _ in entries] == ids
    assert json.loads(entries[1][1][b"__data__"])["event_id"] == "two"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(event(event_id="three")) + "\n" + json.dumps(event(rounds=0)) + "\n")
    assert main(["publish", str(bad), *common]) == 2
    assert f"{bad}:2: $.rounds" in capsys.readouterr().err
    assert client.xlen(stream) == 2  # nothing of the bad file was sent
    client.close()


def test_unreachable_redis_is_one_line(tmp_path, capsys):
    source = tmp_path / "list.jsonl"
    source.write_text(json.dumps(records(1500)[0]) + "\n")
    assert main(["import", str(source), "--redis-url", "redis://127.0.0.1:1/0"]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("rating-service import: Redis at redis://127.0.0.1:1/0:")
        and err.count("\n") == 1
    )


def test_watch_prints_a_table_per_message(tmp_path, redis_url, key_prefix, capsys):
    """One table per message: the event's name and dates under its heading, then a row per
    player, the id next to the name the event gave (none for p2: an empty cell)."""
    stream = f"{key_prefix}.ratings"
    events = tmp_path / "event.jsonl"
    players = [
        {"id": "p1", "name": "Anne Tremblay"},
        {"id": "p2"},
        {"id": "p3", "name": "Chloe Wong"},
    ]
    events.write_text(json.dumps(event(players=players)) + "\n")
    ratings = tmp_path / "list.jsonl"
    ratings.write_text("".join(json.dumps(r) + "\n" for r in records(1500, 1720, 2250)))
    assert main(["rate", str(events), "--ratings", str(ratings)]) == 0
    message = capsys.readouterr().out.strip()
    client = redis.Redis.from_url(redis_url)
    client.xadd(stream, {"__data__": message})
    client.close()
    assert (
        main(
            ["watch", "--stream", stream, "--from-start", "--count", "1", "--redis-url", redis_url]
        )
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("club-2025-11-a  cfc/regular  cfc-2009")
    content = event(players=players)
    assert lines[1].split()[-3:] == [content["start_date"], "to", content["end_date"]]
    assert lines[1].strip().startswith(content["name"])
    assert lines[2].split() == [
        "player",
        "name",
        "old",
        "new",
        "change",
        "status",
        "games",
        "event",
        "score",
    ]
    # One row per player of the event, in its order (p0 of the list did not play).
    rows = lines[3:6]
    assert [row.split()[0] for row in rows] == ["p1", "p2", "p3"]
    name_at = lines[2].index("name")
    assert [row[name_at : name_at + 13].strip() for row in rows] == [
        "Anne Tremblay",
        "",
        "Chloe Wong",
    ]
