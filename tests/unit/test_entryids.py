"""Stream entry ids (service/entryids.py): ordered as numbers, not as text."""

from __future__ import annotations

from service.entryids import entry_age, entry_ms, entry_order
from service.timeline import arrival_of


def test_ids_sort_by_milliseconds_then_sequence():
    ids = ["10-0", "9-12", "9-2", "1700000000000-3", "9"]
    assert sorted(ids, key=entry_order) == ["9", "9-2", "9-12", "10-0", "1700000000000-3"]
    assert entry_order("9") == (9, 0)


def test_time_and_age_come_from_the_milliseconds():
    assert entry_ms("1700000000250-7") == 1_700_000_000_250
    assert entry_age("1700000000250-7", 1_700_000_010.0) == 1_700_000_010.0 - 1_700_000_000.25


def test_arrival_numbers_keep_the_order_of_the_ids():
    ids = ["9-2", "9-12", "10-0", "10-65535", "11-0"]
    assert [arrival_of(i) for i in ids] == sorted(arrival_of(i) for i in ids)
    assert arrival_of("10-3") == (10 << 16) | 3
