"""Redis stream entry ids (`1700000000000-3`: the Unix time in milliseconds the entry was
added, then a sequence number within that millisecond): their order, time and age.

Pure: imports nothing of the project (the timeline's arrival numbers, the store, the
processor and the command line all read ids through it).
"""

from __future__ import annotations


def entry_order(entry_id: str) -> tuple[int, int]:
    """A stream entry id ("1700000000000-3") as a sortable pair; an id without a sequence
    number ("1700000000000") is its first."""
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


def entry_ms(entry_id: str) -> int:
    """When the entry was added: Unix time in milliseconds (the id's first part)."""
    return entry_order(entry_id)[0]


def entry_age(entry_id: str, now: float) -> float:
    """Seconds from the entry's addition to `now` (Unix time in seconds)."""
    return now - entry_ms(entry_id) / 1000
