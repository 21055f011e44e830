"""JSON Schemas of every message, generated from the Structs (committed under schemas/json/)."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from schemas.events import EventFinished, PeriodClosed
from schemas.ratings import RatingsUpdated
from schemas.records import PlayerRecord
from schemas.rejected import EventRejected

MESSAGES: dict[str, type] = {
    "event.finished/v1": EventFinished,
    "period.closed/v1": PeriodClosed,
    "ratings.updated/v1": RatingsUpdated,
    "event.rejected/v1": EventRejected,
    "player.record/v1": PlayerRecord,
}
JSON_DIR = Path(__file__).with_name("json")


def file_name(schema: str) -> str:
    """`event.finished/v1` -> `event.finished.v1.json`."""
    return schema.replace("/", ".") + ".json"


def schema_of(schema: str) -> dict:
    """The JSON Schema (draft 2020-12) of one message."""
    document = msgspec.json.schema(MESSAGES[schema])
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": file_name(schema),
        "title": schema,
        **document,
    }


def render(schema: str) -> str:
    return json.dumps(schema_of(schema), indent=2, sort_keys=True) + "\n"


def generate() -> dict[str, str]:
    """Every schema file's name and text."""
    return {file_name(name): render(name) for name in MESSAGES}


def write(out_dir: Path = JSON_DIR) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in generate().items():
        path = out_dir / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def stale(out_dir: Path = JSON_DIR) -> list[str]:
    """Names of the committed schema files that differ from the code (or are missing)."""
    return [
        name
        for name, text in generate().items()
        if not (out_dir / name).exists() or (out_dir / name).read_text(encoding="utf-8") != text
    ]
