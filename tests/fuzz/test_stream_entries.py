"""The service's input decoders (event, correction, withdrawal, close, reopen: stream entries)
on hostile entries. The rule (D80): an entry is either accepted, and then its effect can be
applied and stored (the engine and the store's packing take it: no poison), or it is a
`Rejected` with a known reason and a `$` path, whose dead letter keeps the entry's bytes
verbatim (nothing lost). Never any other exception."""

from __future__ import annotations

import datetime as dt

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from schemas.rejected import REASONS, EventRejected
from service.engine.registry import default_registry
from service.formats.ratinglists import read_list
from service.rating import Duplicate, ListRules, MemoryLedger, Rejected, apply_message
from service.runtime.deadletters import original_data, rejection_message
from service.runtime.entries import EntryDecoder
from service.runtime.settings import load_settings
from service.timeline import pack_state
from tests.fuzz.hostile import ROOT, examples, mutated_bytes

REGISTRY = default_registry()
SETTINGS = load_settings({})
TODAY = dt.date(2026, 6, 1)
DECODER = EntryDecoder(
    SETTINGS, REGISTRY, SETTINGS.layout.of_stream(SETTINGS.layout.inputs[0]), lambda: TODAY
)
_EVENTS = [
    "deploy/examples/cfc-event.json",
    "deploy/examples/fide-event.json",
    "deploy/examples/naspa-event.json",
    "docs/examples/gatineau-october.json",
    "docs/examples/quebec-match.json",
]
_RATINGS = [
    "deploy/examples/cfc-ratings.jsonl",
    "deploy/examples/fide-ratings.jsonl",
    "deploy/examples/naspa-ratings.jsonl",
]


def _compact(name: str) -> bytes:
    return msgspec.json.encode(msgspec.json.decode((ROOT / name).read_bytes()))


def _corrected(name: str) -> bytes:
    document = msgspec.json.decode((ROOT / name).read_bytes())
    return msgspec.json.encode({**document, "schema": "event.corrected/v1", "reason": "typo"})


SAMPLES = [
    *(_compact(name) for name in _EVENTS),
    _corrected("docs/examples/ottawa-corrected.json"),
    _corrected("docs/examples/montreal-corrected.json"),
    b'{"schema":"period.closed/v1","system":"fide","pool":"standard","period":"2025-11"}',
    b'{"schema":"period.reopened/v1","system":"fide","pool":"standard","period":"2025-11",'
    b'"reason":"late results"}',
    b'{"schema":"event.withdrawn/v1","system":"cfc","pool":"regular",'
    b'"event_id":"ottawa-fall-open-2025","reason":"not rated"}',
    b'{"schema":"event.withdrawn/v1","system":"naspa","event_id":"toronto-scrabble-club-2025-11-20"}',
]


def _ledger() -> MemoryLedger:
    """The examples' lists with the examples' events rated: what a correction, withdrawal or
    close of the samples finds in the store."""
    rules = ListRules(REGISTRY)
    ledger = MemoryLedger([r for name in _RATINGS for r in read_list(ROOT / name, rules=rules)])
    for i, name in enumerate(_EVENTS):
        message = DECODER.decode(f"1-{i}", {b"__data__": _compact(name)}).message
        assert message is not None
        apply_message(ledger, message, REGISTRY, source_id=f"1-{i}")
    return ledger


@st.composite
def entries(draw: st.DrawFn) -> dict:
    """An entry's fields: the mutated message in `__data__`, sometimes beside other fields,
    under another name, or as bytes that are not UTF-8."""
    data = draw(mutated_bytes(SAMPLES, json=True))
    fields = {b"__data__": data}
    extra = draw(st.sampled_from(["none", "none", "field", "renamed", "binary-name"]))
    if extra == "field":
        fields[draw(st.binary(min_size=1, max_size=8))] = draw(st.binary(max_size=16))
    elif extra == "renamed":
        fields = {b"data": data}
    elif extra == "binary-name":
        fields[b"\xff\xfe"] = b"\x00"
    return fields


def _check_rejected(rejected: Rejected, fields: dict) -> None:
    assert rejected.reason in REASONS, rejected
    assert rejected.path.startswith("$"), rejected
    assert rejected.message and "\n" not in rejected.message, rejected
    letter = rejection_message(rejected, "events.finished", _Refused("1-0", fields))
    again = msgspec.json.decode(msgspec.json.encode(letter), type=EventRejected)
    if b"__data__" in fields:
        assert original_data(again) == fields[b"__data__"]  # nothing lost


class _Refused:
    def __init__(self, entry_id: str, fields: dict):
        self.id, self.fields, self.event_id = entry_id, fields, None


@examples(ci=300)
@given(entries())
def test_every_entry_is_accepted_and_storable_or_rejected_with_a_reason(fields):
    entry = DECODER.decode("2-0", fields)
    if entry.rejected is not None:
        _check_rejected(entry.rejected, fields)
        return
    assert entry.message is not None
    ledger = _ledger()
    try:
        result = apply_message(ledger, entry.message, REGISTRY, source_id="2-0")
    except Rejected as exc:
        _check_rejected(exc, fields)
        return
    if isinstance(result, Duplicate):
        return
    for output in result.outputs:
        msgspec.json.encode(output)
    for record in ledger.all_records():
        pack_state(record)  # what the store keeps of it (D58: MessagePack, 64 bits)
