"""Hostile but plausible inputs (Hypothesis strategies): mutations of valid samples from
tests/data, docs/examples and deploy/examples, as a careless program or a malicious one
writes them. Byte mutations (a byte changed, a span cut or doubled, a truncation, a token
put in, a BOM, CRLF, NUL) for any file; JSON mutations (a value replaced by a huge number, a
wrong type, odd unicode, deep nesting; a key dropped, added or duplicated) for messages and
records; both, one to three at a time. Each test of tests/fuzz/ draws from these and checks
the rule: accepted, or refused in the documented way (docs/design/decisions.md D80)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]


def examples(ci: int) -> settings:
    """A fuzz test's settings: `ci` examples in the README's test command, FUZZ_EXAMPLES in
    `make fuzz` (the longer run); no deadline, no health check on large inputs."""
    count = int(os.environ.get("FUZZ_EXAMPLES") or ci)
    return settings(
        max_examples=count,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def sample(*names: str) -> list[bytes]:
    """The bytes of the named sample files (paths from the repository's root)."""
    return [(ROOT / name).read_bytes() for name in names]


# Raw JSON texts that have broken decoders somewhere: beyond 64 bits, beyond a double, a
# fraction where a whole number goes, signed zero, the wrong type, text that is not text.
HUGE = [
    "100000000000000000000",
    "18446744073709551616",
    "9223372036854775808",
    "-9223372036854775809",
    "1e400",
    "-1e400",
    "1e-400",
    "1.5",
    "0.1",
    "-0",
    "-1",
    "0",
    "2147483648",
    "1000000001",
]
WRONG = ["null", "true", "false", "[]", "{}", '""', '"1500"', '"null"', "[1]", '{"a":1}']
TEXTS = [
    '"\\u0000"',
    '"\\ud800"',  # a lone surrogate, escaped
    '"\\udfff\\ud800"',
    '"\\uffff"',
    '"\\ufeff"',
    '"e\\u0301"',  # a combining accent
    '"\\u202e"',  # right-to-left override
    '"\\r\\n"',
    '"\\t"',
    '" "',
    '"\\u2028"',
    '"%00"',
    '"../../etc/passwd"',
    '"1970-01-01"',
    '"9999-12-31"',
    '"0000-00-00"',
    '"2025-02-30"',
    '"2025-13"',
    '"+002025-01-01"',
    '"2025-01-01T00:00:00Z"',
]
_DEEP = 100_000


def _deep(kind: str, depth: int) -> str:
    return "[" * depth + "]" * depth if kind == "list" else '{"a":' * depth + "1" + "}" * depth


_json_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30),
)
_json_value = st.recursive(
    _json_scalar,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)
raw_value = st.one_of(
    st.sampled_from(HUGE + WRONG + TEXTS),
    st.sampled_from(["list", "object"]).flatmap(
        lambda kind: st.sampled_from([64, 1_000, _DEEP]).map(lambda depth: _deep(kind, depth))
    ),
    st.integers(min_value=1, max_value=200_000).map(lambda n: '"' + "x" * n + '"'),
    _json_value.map(lambda v: msgspec.json.encode(v).decode()),
)

_SENTINEL = "\x00hostile\x00"
_SENTINEL_JSON = msgspec.json.encode(_SENTINEL).decode()
_DUPLICATE = "\x00duplicate\x00"


def _paths(document: Any, at: tuple = ()) -> list[tuple]:
    """Every path into a decoded JSON document (the root included)."""
    found = [at]
    if isinstance(document, dict):
        for key, value in document.items():
            found += _paths(value, (*at, key))
    elif isinstance(document, list):
        for i, value in enumerate(document):
            found += _paths(value, (*at, i))
    return found


def _get(document: Any, path: tuple) -> Any:
    for step in path:
        document = document[step]
    return document


@st.composite
def json_mutation(draw: st.DrawFn, document: Any) -> str:
    """One JSON document with one structural change, as text."""
    paths = _paths(document)
    path = draw(st.sampled_from(paths))
    how = draw(st.sampled_from(["replace", "replace", "replace", "drop", "add", "duplicate"]))
    document = msgspec.json.decode(msgspec.json.encode(document))  # a copy
    raw = draw(raw_value)
    if how == "replace" or not path and how == "drop":
        if not path:
            return raw
        _get(document, path[:-1])[path[-1]] = _SENTINEL
        return msgspec.json.encode(document).decode().replace(_SENTINEL_JSON, raw, 1)
    if how == "drop":
        parent = _get(document, path[:-1])
        del parent[path[-1]]
        return msgspec.json.encode(document).decode()
    target = _get(document, path)
    if not isinstance(target, dict):
        return msgspec.json.encode(document).decode()
    if how == "add":
        target[draw(st.sampled_from(["extra", "", "schema", "__proto__", _SENTINEL]))] = _SENTINEL
        return msgspec.json.encode(document).decode().replace(_SENTINEL_JSON, raw)
    if not target:
        return msgspec.json.encode(document).decode()
    key = draw(st.sampled_from(sorted(target)))
    target[_DUPLICATE] = _SENTINEL  # the same key again, after the first
    text = msgspec.json.encode(document).decode()
    return text.replace(
        msgspec.json.encode(_DUPLICATE).decode(), msgspec.json.encode(key).decode()
    ).replace(_SENTINEL_JSON, raw)


TOKENS = [
    b"\x00",
    b"\r",
    b"\r\n",
    b"\n",
    b"\t",
    b"\xef\xbb\xbf",
    b"\xff\xfe",
    b"\xc3",  # a cut UTF-8 sequence
    b"\xed\xa0\x80",  # an encoded surrogate
    b"\xe2\x80\xae",
    b"\\",
    b'"',
    b",",
    b";",
    b"{",
    b"}",
    b"[",
    b"]",
    b"<",
    b"&",
    b"99999999999999999999",
    b"-",
    b" ",
    b"0",
    *(
        c.encode()
        for c in ("\u00b2", "\u0661", "\u00a0", "\u0130", "\u00df", "\ufb01", "\u216b", "\u0301")
    ),  # a superscript two and an Arabic-Indic one (isdigit), a no-break space, letters whose
    # case changes their length, a ligature, a Roman numeral, a combining accent
]


@st.composite
def byte_mutation(draw: st.DrawFn, data: bytes) -> bytes:
    """`data` with one change at the byte level."""
    n = len(data)
    at = draw(st.integers(min_value=0, max_value=n))
    how = draw(
        st.sampled_from(
            ["flip", "cut", "double", "truncate", "insert", "bom", "crlf", "cr", "nul", "lines"]
        )
    )
    if how == "flip" and n:
        at = min(at, n - 1)
        return data[:at] + bytes([draw(st.integers(0, 255))]) + data[at + 1 :]
    if how == "cut":
        end = draw(st.integers(min_value=at, max_value=n))
        return data[:at] + data[end:]
    if how == "double":
        end = draw(st.integers(min_value=at, max_value=min(n, at + 200)))
        return data[:end] + data[at:end] * draw(st.integers(1, 50)) + data[end:]
    if how == "truncate":
        return data[:at]
    if how == "bom":
        return b"\xef\xbb\xbf" + data
    if how == "crlf":
        return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    if how == "cr":
        return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r")
    if how == "nul":
        return data[:at] + b"\x00" + data[at:]
    if how == "lines":  # the same lines in another order, or one twice
        lines = data.split(b"\n")
        return b"\n".join(
            draw(st.lists(st.sampled_from(lines), min_size=1, max_size=len(lines) + 2))
        )
    token = draw(st.sampled_from(TOKENS) | st.binary(min_size=1, max_size=8))
    return data[:at] + token + data[at:]


@st.composite
def mutated_bytes(draw: st.DrawFn, samples: list[bytes], json: bool = False) -> bytes:
    """One of `samples`, changed one to three times (JSON mutations too when `json`: the
    sample is then one JSON document, or JSON Lines)."""
    data = draw(st.sampled_from(samples))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        if json and draw(st.booleans()):
            mutated = draw(_json_file_mutation(data))
            if mutated is not None:
                data = mutated
                continue
        data = draw(byte_mutation(data))
    return data


def _decoded(data: bytes) -> Any:
    try:
        return msgspec.json.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return None


@st.composite
def _json_file_mutation(draw: st.DrawFn, data: bytes) -> bytes | None:
    """A JSON file (one document) or a JSON Lines file (one of its lines) with one JSON
    mutation; None when no part of it is JSON any more."""
    whole = _decoded(data)
    if whole is not None:
        return draw(json_mutation(whole)).encode("utf-8", "surrogatepass")
    lines = data.split(b"\n")
    documents = [i for i, line in enumerate(lines) if _decoded(line) is not None]
    if not documents:
        return None
    at = draw(st.sampled_from(documents))
    lines[at] = draw(json_mutation(_decoded(lines[at]))).encode("utf-8", "surrogatepass")
    return b"\n".join(lines)
