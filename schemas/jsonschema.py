"""JSON Schemas of every message, generated from the Structs (committed under schemas/json/)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, overload

import msgspec

from schemas.events import (
    EventCorrected,
    EventFinished,
    EventWithdrawn,
    PeriodClosed,
    PeriodReopened,
)
from schemas.ratings import RatingsUpdated
from schemas.records import PlayerRecord
from schemas.rejected import EventRejected

MESSAGES: dict[str, type] = {
    "event.finished/v1": EventFinished,
    "period.closed/v1": PeriodClosed,
    "event.corrected/v1": EventCorrected,
    "event.withdrawn/v1": EventWithdrawn,
    "period.reopened/v1": PeriodReopened,
    "ratings.updated/v1": RatingsUpdated,
    "event.rejected/v1": EventRejected,
    "player.record/v1": PlayerRecord,
}
JSON_DIR = Path(__file__).with_name("json")


def file_name(schema: str) -> str:
    """`event.finished/v1` -> `event.finished.v1.json`."""
    return schema.replace("/", ".") + ".json"


@overload
def portable(node: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]: ...
@overload
def portable(node: object, definitions: dict[str, Any]) -> object: ...


def portable(node: object, definitions: dict[str, Any]) -> object:
    """`node` (a msgspec JSON Schema) with its tagged unions in standard JSON Schema.

    msgspec writes a tagged union as `anyOf` plus an OpenAPI `discriminator` object
    (`propertyName`, `mapping`). That is not a keyword of JSON Schema 2020-12 (Ajv's strict
    mode refuses it) and the AsyncAPI Schema format's `discriminator` is a plain string (its
    parser refuses the object). Nothing is lost by writing it as `oneOf`: every variant
    requires the tag property with its one value (checked here), so exactly one variant can
    match and the mapping can be read off the variants; a description names the tag too.
    `definitions` resolves the variants' `$ref`s (the `$defs`, or the AsyncAPI components).
    """
    if isinstance(node, list):
        return [portable(item, definitions) for item in node]
    if not isinstance(node, dict):
        return node
    mapped: dict[str, Any] = {key: portable(value, definitions) for key, value in node.items()}
    discriminator = mapped.pop("discriminator", None)
    if discriminator is None:
        return mapped
    tag = discriminator["propertyName"]
    variants = mapped.pop("anyOf", None) or mapped.pop("oneOf")
    if {variant.get("$ref") for variant in variants} != set(discriminator["mapping"].values()):
        raise ValueError(f"the variants are not those of the discriminator {discriminator}")
    for value, ref in discriminator["mapping"].items():
        variant = definitions[ref.rsplit("/", 1)[1]]
        if tag not in variant.get("required", ()) or variant["properties"][tag] != {
            "enum": [value]
        }:
            raise ValueError(f"{ref} does not require `{tag}` to be {value!r}")
    names = ", ".join(
        f"`{value}` {ref.rsplit('/', 1)[1]}" for value, ref in discriminator["mapping"].items()
    )
    return {
        **mapped,
        "oneOf": variants,
        "description": f"One variant, chosen by the `{tag}` field: {names}.",
    }


def schema_of(schema: str) -> dict:
    """The JSON Schema (draft 2020-12) of one message."""
    document = msgspec.json.schema(MESSAGES[schema])
    document = portable(document, document.get("$defs", {}))
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
