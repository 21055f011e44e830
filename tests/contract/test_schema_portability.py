"""The generated documents use only standard keywords (no node needed): msgspec's OpenAPI
`discriminator` objects become `oneOf` unions whose variants each require their tag value."""

from __future__ import annotations

import json

import pytest

from schemas import asyncapi, jsonschema


def walk(node, path="$"):
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from walk(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from walk(value, f"{path}[{i}]")


def documents():
    yield "asyncapi.json", asyncapi.document(), asyncapi.document()["components"]["schemas"]
    for name in jsonschema.MESSAGES:
        document = jsonschema.schema_of(name)
        yield jsonschema.file_name(name), document, document.get("$defs", {})


@pytest.mark.parametrize(
    "name, document, definitions", list(documents()), ids=lambda v: v if isinstance(v, str) else ""
)
def test_no_discriminator_objects_and_tagged_unions_are_exclusive(name, document, definitions):
    for path, node in walk(document):
        assert not isinstance(node.get("discriminator"), dict), f"{name} {path}"
        for variant in node.get("oneOf", []):
            target = definitions[variant["$ref"].rsplit("/", 1)[1]]
            tags = [
                p
                for p in target.get("required", [])
                if len(target["properties"][p].get("enum", ())) == 1
            ]
            assert tags, f"{name} {path}: {variant['$ref']} has no tag of its own"


def test_details_union_names_its_tag():
    details = jsonschema.schema_of("ratings.updated/v1")["$defs"]["PlayerResult"]["properties"][
        "details"
    ]
    union = details["anyOf"][0]
    assert [v["$ref"] for v in union["oneOf"]] == [
        "#/$defs/CfcDetails",
        "#/$defs/FideDetails",
        "#/$defs/Glicko2Details",
        "#/$defs/NaspaDetails",
    ]
    assert "`system`" in union["description"] and "`fide` FideDetails" in union["description"]


def test_a_discriminator_that_does_not_match_its_variants_is_refused():
    definitions = {"A": {"required": ["kind"], "properties": {"kind": {"enum": ["b"]}}}}
    union = {
        "anyOf": [{"$ref": "#/$defs/A"}],
        "discriminator": {"propertyName": "kind", "mapping": {"a": "#/$defs/A"}},
    }
    with pytest.raises(ValueError):
        jsonschema.portable(union, definitions)
    definitions["A"]["properties"]["kind"]["enum"] = ["a"]
    assert json.dumps(jsonschema.portable(union, definitions)).count("oneOf") == 1
