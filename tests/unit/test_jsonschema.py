"""The committed JSON Schemas are generated from the Structs and kept current."""

from __future__ import annotations

import json

from schemas import jsonschema
from service.cli.main import main


def test_committed_schemas_are_current():
    stale = jsonschema.stale()
    assert stale == [], f"stale JSON Schemas {stale}: run `rating-service schemas` and commit"


def test_every_message_has_a_schema_file():
    names = sorted(p.name for p in jsonschema.JSON_DIR.glob("*.json"))
    assert names == sorted(
        [
            "event.finished.v1.json",
            "period.closed.v1.json",
            "ratings.updated.v1.json",
            "event.rejected.v1.json",
            "player.record.v1.json",
            "event.corrected.v1.json",
            "event.withdrawn.v1.json",
            "period.reopened.v1.json",
        ]
    )


def test_staleness_is_detected(tmp_path):
    assert main(["schemas", "--out", str(tmp_path)]) == 0
    assert main(["schemas", "--check", "--out", str(tmp_path)]) == 0
    path = tmp_path / "event.finished.v1.json"
    document = json.loads(path.read_text())
    document["title"] = "edited by hand"
    path.write_text(json.dumps(document))
    assert jsonschema.stale(tmp_path) == ["event.finished.v1.json"]
    assert main(["schemas", "--check", "--out", str(tmp_path)]) == 1


def test_schema_carries_the_constraints():
    document = jsonschema.schema_of("event.finished/v1")
    game = document["$defs"]["Game"]["properties"]
    assert game["score"]["enum"] == [0, 0.5, 1]
    assert (
        document["$defs"]["EventFinished"]["properties"]["event_id"]["pattern"]
        == "^[A-Za-z0-9._:-]{1,128}$"
    )


def test_asyncapi_document_is_current_and_complete():
    from schemas import asyncapi

    assert not asyncapi.stale(), (
        "stale schemas/asyncapi.json: run `rating-service schemas` and commit"
    )
    document = json.loads(asyncapi.ASYNCAPI_FILE.read_text())
    assert document["asyncapi"].startswith("3.")
    assert set(document["channels"]) == {"events.finished", "ratings.updated", "events.rejected"}
    for message in document["components"]["messages"].values():
        name = message["payload"]["$ref"].rsplit("/", 1)[1]
        assert name in document["components"]["schemas"]
    # Every $ref in the document resolves.
    text = json.dumps(document)
    for ref in set(__import__("re").findall(r'"\$ref": "#/([^"]+)"', text)):
        node = document
        for part in ref.split("/"):
            node = node[part]


def test_schemas_check_reports_a_stale_asyncapi(tmp_path, capsys):
    assert main(["schemas", "--out", str(tmp_path)]) == 0
    (tmp_path / "asyncapi.json").write_text("{}")
    assert main(["schemas", "--check", "--out", str(tmp_path)]) == 1
    assert "asyncapi.json: stale" in capsys.readouterr().out
