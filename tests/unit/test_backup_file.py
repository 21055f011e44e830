"""The backup file (service/runtime/backupfile.py, D21) and the units a backup reads in one
transaction (service/runtime/backup.py, D20), without Redis."""

from __future__ import annotations

import pytest

from service.runtime.backup import units_of
from service.runtime.backupfile import (
    BackupProblem,
    End,
    Group,
    HashKey,
    Header,
    StreamEntries,
    StreamState,
    StringKey,
    Writer,
    ZSetKey,
    check,
    records,
)
from service.runtime.partitions import Partition, layout_of


def header() -> Header:
    layout = layout_of("single", ("events.finished",), "ratings.updated", "events.rejected")
    return Header(1, "2026-01-01T00:00:00Z", "0", "redis 7.0.15", "redis://h:6379/0", layout, [])


def written(tmp_path, *items) -> tuple:
    path = tmp_path / "b.backup"
    writer = Writer(path)
    for item in items:
        writer.write(item)
        if not isinstance(item, StreamEntries):
            writer.key_done()
    return path, writer.finish(header())


def test_records_come_back_as_written_with_the_counts(tmp_path):
    items = [
        StringKey(b"k", b"\x00\xff"),
        HashKey(b"h", [b"f", b"v"]),
        ZSetKey(b"z", [(b"m", float("inf"))]),
        StreamEntries(b"s", [(b"1-0", [b"f", b"v"])]),
        StreamState(b"s", b"2-0", 2, b"2-0", [Group(b"g", b"1-0", 1)]),
    ]
    path, head = written(tmp_path, *items)
    assert (head.keys, head.entries) == (4, 1)
    assert check(path) == head
    assert list(records(path)) == [*items, End(4, 1)]
    assert path.read_bytes().startswith(b"RATING-SERVICE-BACKUP 1\n{")
    assert not list(tmp_path.glob(".*partial"))


def test_a_file_cut_or_changed_is_refused_naming_it(tmp_path):
    path, _ = written(tmp_path, StringKey(b"k", b"v" * 5000))
    data = path.read_bytes()
    path.write_bytes(data[:-10])
    with pytest.raises(BackupProblem, match=f"{path}: truncated or damaged"):
        check(path)
    path.write_bytes(data[:-10] + bytes([data[-10] ^ 0x40]) + data[-9:])
    with pytest.raises(BackupProblem, match="SHA-256"):
        check(path)
    path.write_bytes(data.replace(b'"keys":1', b'"keys":2', 1))
    with pytest.raises(BackupProblem, match="the header says 2"):
        list(records(path))
    path.write_bytes(data.replace(b"BACKUP 1", b"BACKUP 9", 1))
    with pytest.raises(BackupProblem, match="backup format 9, this version reads 1"):
        check(path)


def test_partitions_that_share_a_stream_are_one_unit():
    single = layout_of("single", ("a", "b"), "ratings.updated", "events.rejected")
    assert [len(u.partitions) for u in units_of(list(single.partitions))] == [2]
    domains = layout_of("domains", ("events.finished",), "ratings.updated", "events.rejected")
    units = units_of(list(domains.partitions))
    assert [len(u.partitions) for u in units] == [1] * len(domains.partitions)
    unit = units[0]
    assert unit.watched == [
        f"{unit.partitions[0].input}:cursor",
        f"{unit.partitions[0].input}:catalog",
    ]
    loose = [Partition("x", "x", "out", "dl"), Partition("y", "y", "out2", "dl")]
    assert [len(u.partitions) for u in units_of(loose)] == [2]  # a shared dead-letter stream
