"""The list readers on hostile files (D80): `player.record/v1` JSON Lines, CSV (the records'
own columns and the federations'), FIDE's downloads (fixed-width text, XML, zipped), as
`import` and `rate --ratings` read them (service/formats/ratinglists.py). Each file is read
into records the store can keep, or refused with a ListProblem whose lines each name the
file; never another exception."""

from __future__ import annotations

import io
import tempfile
import zipfile
from pathlib import Path

from hypothesis import given, note
from hypothesis import strategies as st

from service.engine.registry import default_registry
from service.formats.ratinglists import ListProblem, read_list
from service.rating import ListRules
from service.timeline import pack_state
from tests.fuzz.cli import NOT_LISTED
from tests.fuzz.hostile import examples, mutated_bytes, sample

RULES = ListRules(default_registry())
# (file name, system, pool) the sample is read with, and the samples.
KINDS: dict[tuple[str, str | None, str | None], list[bytes]] = {
    ("list.jsonl", None, None): sample(
        "deploy/examples/cfc-ratings.jsonl",
        "deploy/examples/fide-ratings.jsonl",
        "deploy/examples/naspa-ratings.jsonl",
    ),
    ("list.csv", "cfc", "regular"): sample("docs/examples/club.csv"),
    ("players_list.csv", "fide", "standard"): sample("docs/examples/players_list.csv"),
    ("players_list_foa.txt", "fide", "standard"): sample("tests/data/fide/players_list_foa.txt"),
    ("players_list_xml_foa.xml", "fide", "rapid"): sample(
        "tests/data/fide/players_list_xml_foa.xml"
    ),
}


def _zipped(name: str, data: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(name, data)
    return buffer.getvalue()


@st.composite
def list_files(draw: st.DrawFn) -> tuple[str, str | None, str | None, bytes]:
    name, system, pool = draw(st.sampled_from(sorted(KINDS, key=str)))
    data = draw(mutated_bytes(KINDS[(name, system, pool)], json=name.endswith(".jsonl")))
    if draw(st.integers(0, 4)) == 0:  # as downloaded: zipped (and the zip mutated, sometimes)
        data = _zipped(name, data)
        name = "download.zip"
        if draw(st.booleans()):
            data = draw(mutated_bytes([data]))
    return name, system, pool, data


def _check(path: Path, system: str | None, pool: str | None) -> None:
    try:
        records = read_list(path, system, pool, rules=RULES)
    except ListProblem as exc:
        lines = str(exc).splitlines()
        assert lines, exc
        for line in lines:
            assert line.startswith(str(path)) or NOT_LISTED.match(line), exc
        return
    for record in records:
        pack_state(record)  # the store can keep it (D58)


@examples(ci=300)
@given(list_files())
def test_a_hostile_list_is_read_or_refused_naming_the_file(drawn):
    name, system, pool, data = drawn
    note(f"{name} ({system}, {pool}): {data!r}")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        _check(path, system, pool)
