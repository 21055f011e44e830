"""The pure parts of `rating-service load` (service/runtime/onboard.py, D115-D118): the
entry ids it gives, the file check of a resume, the progress line, and what a ledger keeps
once its chunk is written."""

from __future__ import annotations

import hashlib
import io

from schemas.records import PlayerRecord, PoolState
from service.rating import MemoryLedger
from service.rating.ledger import MemberChanges
from service.runtime.onboard import SEQ, Checkpoint, LoadProgress, entry_id, read_lines, same_file
from service.timeline import arrival_of


def test_entry_ids_increase_and_every_arrival_is_distinct_past_a_millisecond_of_ids():
    ids = [entry_id(1_000, n) for n in range(1, 3 * SEQ)]
    arrivals = [arrival_of(i) for i in ids]
    assert arrivals == sorted(arrivals) and len(set(arrivals)) == len(arrivals)
    assert entry_id(1_000, SEQ - 1) == f"1000-{SEQ - 1}" and entry_id(1_000, SEQ) == "1001-0"


def test_read_lines_from_an_offset_gives_the_offset_after_each_line(tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_bytes(b"a\n\nbb\nccc")
    assert list(read_lines(path, 0)) == [(2, b"a\n"), (3, b"\n"), (6, b"bb\n"), (9, b"ccc")]
    assert list(read_lines(path, 3)) == [(6, b"bb\n"), (9, b"ccc")]


def test_a_resume_checks_the_last_line_read_at_its_offset(tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_bytes(b"one\ntwo\nthree\n")
    at = Checkpoint(file=str(path), base=1, offset=8, last=hashlib.sha256(b"two\n").hexdigest())
    at.last_len = 4
    assert same_file(path, at)
    path.write_bytes(b"one\nTWO\nthree\n")
    assert not same_file(path, at)
    assert not same_file(tmp_path / "missing.jsonl", at)


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_drawn_on_a_terminal_only_with_rate_share_and_time_left():
    start = Checkpoint(file="h", base=1)
    now = [0.0]
    shown = Terminal()
    progress = LoadProgress(1_000_000, start, shown, clock=lambda: now[0])
    now[0] = 10.0
    progress(Checkpoint(file="h", base=1, messages=500, offset=250_000))
    assert "500 messages, 50/s, 25% of 1.0 MB, ETA 0m30s" in shown.getvalue()
    quiet = io.StringIO()
    LoadProgress(1_000_000, start, quiet)(Checkpoint(file="h", base=1, finished=True))
    assert quiet.getvalue() == ""


def test_a_written_ledger_keeps_records_pools_markers_and_each_timeline_tail():
    record = PlayerRecord(system="cfc", pool="regular", id="1", rating=1500)
    ledger = MemoryLedger([record], [PoolState(system="fide", pool="standard")], {"event:e": "d"})
    ledger.timelines["cfc:regular"] = [b"a", b"b"]
    ledger.histories[("cfc", "regular", "1")] = [b"h"]
    ledger.store_records([record])
    ledger.changes.histories[("cfc", "regular", "1")] = MemberChanges()
    ledger.written()
    assert ledger.record("cfc", "regular", "1") == record and ledger.markers == {"event:e": "d"}
    assert ("fide", "standard") in ledger.pools and ledger.timelines == {"cfc:regular": [b"b"]}
    assert ledger.histories == {} and not ledger.changes.records and not ledger.changes.histories
    assert ledger.projection.changed_results is ledger.changes.results
