"""An import's rows of a list's packed records (D111, D132): each record's stored JSON is
the bytes `encode` writes of it, and its index view reads as the record does (its ranking
score, labels, name words and close index members), for records of every system: with and
without titles, federation and name, unrated, and with each engine's accumulator (CFC, FIDE
period sums and pooled games, Glicko-2's deviation, volatility and date)."""

from __future__ import annotations

from pathlib import Path

import msgspec

from service.bench.workloads import fide_pool_before_close, rated_list
from service.closeindex import due_members
from service.formats.ratinglists import PackedRecords, read_list
from service.lists import labels_of
from service.readmodel import name_members, rank_score
from service.runtime.records_io import _chunks, _rows
from service.runtime.store import encode

EXAMPLES = Path(__file__).resolve().parents[2] / "deploy" / "examples"


def every_kind():
    records = [
        r
        for name in ("cfc", "fide", "naspa")
        for r in read_list(EXAMPLES / f"{name}-ratings.jsonl")
    ]
    records += fide_pool_before_close(60, seed=5)
    records += rated_list("cfc", 40, seed=3, newcomers=5) + rated_list("glicko2", 40, seed=4)
    records += [
        msgspec.structs.replace(r, name=f"Øster-Ålund, {n}", titles=["GM", "WGM"], federation="NOR")
        for n, r in enumerate(rated_list("fide", 10, seed=6, prefix="q"))
    ]
    return records


def test_packed_rows_are_the_records_as_stored_and_indexed():
    records = every_kind()
    kinds = {
        (r.system, r.fide is not None, r.cfc is not None, r.glicko2 is not None) for r in records
    }
    assert len(kinds) >= 5  # every system, with and without an accumulator
    packed = PackedRecords()
    for record in records:
        packed.append(record)
    rows = [row for chunk in _chunks(packed, 37) for row in _rows(chunk)]
    assert len(rows) == len(records)
    for record, (stored, view, where, pid) in zip(records, rows):
        assert stored == encode(record), record.id
        assert (where, pid) == ((record.system, record.pool), record.id)
        assert rank_score(view) == rank_score(record)
        assert labels_of(view) == labels_of(record)
        assert name_members(view) == name_members(record)
        assert due_members(view) == due_members(record)
