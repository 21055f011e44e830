"""The committed JSON Schemas are generated from the Structs and kept current."""

from __future__ import annotations

import json

from schemas import jsonschema
from service.cli import main


def test_committed_schemas_are_current():
    stale = jsonschema.stale()
    assert stale == [], f"stale JSON Schemas {stale}: run `rating-service schemas` and commit"


def test_every_message_has_a_schema_file():
    names = sorted(p.name for p in jsonschema.JSON_DIR.glob("*.json"))
    assert names == sorted(
        ["event.finished.v1.json", "period.closed.v1.json", "ratings.updated.v1.json",
         "event.rejected.v1.json", "player.record.v1.json"]
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
    assert document["$defs"]["EventFinished"]["properties"]["event_id"]["pattern"] == "^[A-Za-z0-9._:-]{1,128}$"
