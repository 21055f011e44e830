"""The command line's file inputs, in-process (D80): `validate` and `rate` of hostile JSON,
JSON Lines and TRF files, `rate --ratings` of hostile lists (JSON Lines, CSV), `convert`
of a TRF with a hostile id map. Each run is accepted, or refused in one line naming the
file (tests/fuzz/cli.py says the rule); never a traceback."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, note
from hypothesis import strategies as st

from tests.fuzz.cli import check_refusal, run
from tests.fuzz.hostile import examples, mutated_bytes, sample

MESSAGES = sample(
    "deploy/examples/cfc-event.json",
    "deploy/examples/fide-event.json",
    "deploy/examples/naspa-event.json",
    "deploy/examples/fide-period-closed.json",
    "docs/examples/fide-month.jsonl",
    "docs/examples/ottawa-section-b.json",
)
TRFS = sample(
    "tests/data/autumn-open-2025.trf",
    "tests/data/club-night-cfc.trf",
    "docs/examples/club-night-noids.trf",
)
LISTS = {
    "cfc": sample("deploy/examples/cfc-ratings.jsonl", "docs/examples/club.csv"),
    "fide": sample("deploy/examples/fide-ratings.jsonl"),
    "naspa": sample("deploy/examples/naspa-ratings.jsonl"),
}
EVENTS = {
    "cfc": "deploy/examples/cfc-event.json",
    "fide": "deploy/examples/fide-event.json",
    "naspa": "deploy/examples/naspa-event.json",
}
IDS = sample("tests/data/club-night-ids.csv", "docs/examples/club-fixed.csv")


def _write(folder: str, name: str, data: bytes) -> str:
    path = Path(folder) / name
    path.write_bytes(data)
    note(f"{name}: {data!r}")
    return str(path)


@examples(ci=150)
@given(data=mutated_bytes(MESSAGES, json=True), suffix=st.sampled_from([".json", ".jsonl", ""]))
def test_validate_and_rate_a_hostile_message_file(data, suffix):
    with tempfile.TemporaryDirectory() as folder:
        path = _write(folder, f"m{suffix}", data)
        check_refusal(run(["validate", path]), "validate", path)
        check_refusal(run(["rate", path, "--keep-going"]), "rate", path)


@examples(ci=100)
@given(data=mutated_bytes(TRFS))
def test_validate_convert_and_rate_a_hostile_trf(data):
    with tempfile.TemporaryDirectory() as folder:
        path = _write(folder, "t.trf", data)
        check_refusal(run(["validate", path]), "validate", path)
        check_refusal(run(["convert", path]), "convert", path)
        check_refusal(run(["convert", path, "--system", "cfc", "--local-ids"]), "convert", path)
        check_refusal(run(["rate", path, "--ratings-from-trf"]), "rate", path)


@examples(ci=100)
@given(
    st.sampled_from(sorted(LISTS)).flatmap(
        lambda s: st.tuples(st.just(s), mutated_bytes(LISTS[s], json=True))
    )
)
def test_rate_with_a_hostile_list(drawn):
    system, data = drawn
    with tempfile.TemporaryDirectory() as folder:
        csv = not data.lstrip().startswith(b"{")
        path = _write(folder, "list.csv" if csv else "list.jsonl", data)
        from tests.fuzz.hostile import ROOT

        event = str(ROOT / EVENTS[system])
        check_refusal(run(["rate", event, "--ratings", path]), "rate", path, event)


@examples(ci=100)
@given(data=mutated_bytes(IDS))
def test_convert_with_a_hostile_id_map(data):
    from tests.fuzz.hostile import ROOT

    with tempfile.TemporaryDirectory() as folder:
        path = _write(folder, "ids.csv", data)
        trf = str(ROOT / "tests/data/club-night-cfc.trf")
        check_refusal(run(["convert", trf, "--system", "cfc", "--ids", path]), "convert", path, trf)
