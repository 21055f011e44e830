"""Every shape problem of a JSON document, field by field (msgspec stops at the first one).

`shape_problems` walks a decoded document against a Struct: each field is checked by
msgspec on its own (so its rules are the contract's, byte for byte), lists of Structs element
by element. `repaired` is the document with what failed left out where the contract allows
(an optional field, a list's element), for the cross-field checks to read the rest; `index`
maps the repaired lists' positions back to the document's.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, field
from typing import Any

import msgspec

_encoder = msgspec.json.Encoder()


@dataclass
class Walk:
    """The walk of one document: its problems as (path, message), the repaired document
    (None when a required field failed), and the kept positions of each repaired list."""

    problems: list[tuple[str, str]] = field(default_factory=list)
    repaired: Any = None
    index: dict[str, list[int]] = field(default_factory=dict)


def walk(document: Any, struct: type[msgspec.Struct], path: str = "$") -> Walk:
    """The shape problems of `document` as a `struct`, and the document repaired."""
    result = Walk()
    result.repaired = _struct(document, struct, path, result)
    return result


def _struct(document: Any, struct: type[msgspec.Struct], path: str, result: Walk) -> Any:
    """Check an object field by field; the object without its failed optional fields, or
    None when it cannot be repaired (not an object, a required field failed or is missing)."""
    if not isinstance(document, dict):
        _leaf(document, struct, path, result)
        return None
    config = struct.__struct_config__
    tag_field = config.tag_field
    fields = {f.encode_name: f for f in msgspec.structs.fields(struct)}
    kept: dict[str, Any] = {}
    whole = True
    for key, value in document.items():
        if key == tag_field:
            kept[key] = value
        elif key not in fields:
            if config.forbid_unknown_fields:
                result.problems.append((path, f"Object contains unknown field `{key}`"))
        else:
            info = fields[key]
            checked = _value(value, info.type, f"{path}.{key}", result)
            if checked is not _FAILED:
                kept[key] = checked
            elif info.required:
                whole = False
    for name, info in fields.items():
        if info.required and name not in document:
            result.problems.append((path, f"Object missing required field `{name}`"))
            whole = False
    return kept if whole else None


_FAILED = object()


def _value(value: Any, annotation: Any, path: str, result: Walk) -> Any:
    """A field's value checked: a Struct field by field, a list of Structs element by element
    (the failed elements left out), anything else by msgspec whole; _FAILED when it failed."""
    element = _struct_list(annotation)
    if element is not None and isinstance(value, list):
        kept = []
        positions = []
        for i, item in enumerate(value):
            checked = _struct(item, element, f"{path}[{i}]", result)
            if checked is not None:
                kept.append(checked)
                positions.append(i)
        result.index[path] = positions
        return kept
    if _is_struct(annotation) and isinstance(value, dict):
        checked = _struct(value, annotation, path, result)
        return _FAILED if checked is None else checked
    return value if _leaf(value, annotation, path, result) else _FAILED


def _leaf(value: Any, annotation: Any, path: str, result: Walk) -> bool:
    """msgspec's own check of one value (decoded from its JSON, as the whole message is)."""
    try:
        msgspec.json.decode(_encoder.encode(value), type=annotation)
    except msgspec.ValidationError as exc:
        message, _, where = str(exc).partition(" - at `")
        result.problems.append((path + where.rstrip("`").removeprefix("$"), message))
        return False
    return True


def _is_struct(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, msgspec.Struct)


def _struct_list(annotation: Any) -> type[msgspec.Struct] | None:
    """The element type of a `list[SomeStruct]` annotation, else None."""
    if typing.get_origin(annotation) is list:
        (element,) = typing.get_args(annotation)
        return element if _is_struct(element) else None
    return None
