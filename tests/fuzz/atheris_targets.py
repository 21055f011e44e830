"""Coverage-guided fuzzing of the file readers and the stream decoder with atheris (libFuzzer),
for long runs beside the Hypothesis tier (D84): `make fuzz-atheris TARGET=trf SECONDS=600`.

    python tests/fuzz/atheris_targets.py TARGET [libFuzzer options] CORPUS_DIR [SEED_DIR ...]

TARGET: `trf` (parse and convert a TRF), `ids` (an id map), `lists` (a rating list as CSV,
JSON Lines, FIDE text or XML, zipped or not), `entries` (a stream entry's `__data__`, decoded
and, when accepted, applied and packed). Each target calls the reader and lets through only
what the rule allows (D80): the reader's own refusal. Any other exception is a finding:
libFuzzer writes the input to `crash-*` (under -artifact_prefix)."""

from __future__ import annotations

import datetime as dt
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def _targets() -> dict:
    from schemas.validation import InvalidMessage, decode_input
    from service.engine.registry import default_registry
    from service.formats import trf
    from service.formats.ratinglists import ListProblem, read_list
    from service.rating import ListRules, MemoryLedger, Rejected, apply_message
    from service.timeline import pack_state

    registry = default_registry()
    rules = ListRules(registry)
    today = dt.date(2026, 6, 1)

    def text(data: bytes) -> str:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return data.decode("latin-1")

    def trf_one(data: bytes) -> None:
        try:
            tournament = trf.parse(text(data), "t.trf")
            event_id = trf.identity(tournament)
            ids = trf.player_ids(tournament, event_id, "cfc", None, True)
            trf.to_event(tournament, event_id, "cfc", ids=ids)
        except trf.TrfError:
            pass

    def ids_one(data: bytes) -> None:
        try:
            trf.read_ids(text(data), "ids.csv")
        except trf.TrfError:
            pass

    folder = Path(tempfile.mkdtemp(prefix="fuzz-lists-"))

    def lists_one(data: bytes) -> None:
        for name, system, pool in (("l.csv", "fide", "standard"), ("l.jsonl", None, None)):
            path = folder / name
            path.write_bytes(data)
            try:
                for record in read_list(path, system, pool, rules):
                    pack_state(record)
            except ListProblem:
                pass

    def entries_one(data: bytes) -> None:
        try:
            message = decode_input(data, today=today)
        except InvalidMessage:
            return
        ledger = MemoryLedger([])
        try:
            apply_message(ledger, message, registry, source_id="1-0")
        except Rejected:
            return
        for record in ledger.all_records():
            pack_state(record)

    return {"trf": trf_one, "ids": ids_one, "lists": lists_one, "entries": entries_one}


def main() -> None:
    import atheris  # the `fuzz` extra (Linux x86_64 wheels)

    target = sys.argv.pop(1)
    with atheris.instrument_imports(include=["service", "schemas"]):
        targets = _targets()
    atheris.Setup(sys.argv, targets[target])
    atheris.Fuzz()


if __name__ == "__main__":
    main()
