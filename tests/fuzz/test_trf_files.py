"""The TRF reader and the id maps on hostile text (D80), below the command line for more
examples a second: `trf.parse` and `trf.to_event` of a mutated TRF, `trf.read_ids` of a
mutated id map. Each is read, or refused with a TrfError whose problems each name the
source and its line; never another exception. (tests/fuzz/test_cli_files.py runs the same
through `validate`, `convert` and `rate`.)"""

from __future__ import annotations

from hypothesis import given, note
from hypothesis import strategies as st

from schemas.validation import InvalidMessage, decode_input
from service.formats import trf
from tests.fuzz.hostile import examples, mutated_bytes, sample

TRFS = sample(
    "tests/data/autumn-open-2025.trf",
    "tests/data/club-night-cfc.trf",
    "docs/examples/club-night-noids.trf",
    "docs/examples/club-autumn.trf",
)
IDS = sample("tests/data/club-night-ids.csv", "docs/examples/club-fixed.csv")
CLUB_NIGHT = trf.parse(sample("tests/data/club-night-cfc.trf")[0].decode(), "club-night.trf")


def _text(data: bytes) -> str:
    """As the command line reads a TRF: UTF-8, else Latin-1."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _names_the_source(exc: trf.TrfError, *sources: str) -> None:
    assert exc.problems, exc
    for problem in exc.problems:
        assert problem.startswith(sources), exc
        assert "\n" not in problem, exc


@examples(ci=400)
@given(data=mutated_bytes(TRFS), system=st.sampled_from(["fide", "cfc", "naspa"]))
def test_a_hostile_trf_is_read_or_refused_naming_the_line(data, system):
    note(repr(data))
    try:
        tournament = trf.parse(_text(data), "t.trf")
        event_id = trf.identity(tournament)
        ids = trf.player_ids(tournament, event_id, system, None, True)
        event = trf.to_event(tournament, event_id, system, ids=ids)
    except trf.TrfError as exc:
        _names_the_source(exc, "t.trf")
        return
    try:  # what it converts to is a message like any other: valid, or refused with a reason
        decode_input(msgspec_json(event))
    except InvalidMessage as exc:
        assert exc.problems[0].path.startswith("$"), exc


def msgspec_json(event: object) -> bytes:
    import msgspec

    return msgspec.json.encode(event)


@examples(ci=300)
@given(data=mutated_bytes(IDS))
def test_a_hostile_id_map_is_read_or_refused_naming_the_line(data):
    note(repr(data))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return  # the command line refuses it before (service/cli/trffile.py: cannot read)
    try:
        mapping = trf.read_ids(text, "ids.csv")
        trf.player_ids(CLUB_NIGHT, "club-night", "cfc", mapping, False)
    except trf.TrfError as exc:
        _names_the_source(exc, "ids.csv", "club-night.trf")
