"""How many input entries one read may bring (D90): a byte budget, not only a count.

Redis cannot read "entries up to N bytes": XREADGROUP and XRANGE take a count. An entry's size
is known only once it has been read, so a count alone bounds the bytes a replica holds only as
count x the largest entry (RATING_BATCH_SIZE 64 x RATING_MAX_BYTES 16 MiB: 1 GiB, and about
4.4 times that once decoded). A read here asks for as many entries as fit in what is left of
RATING_READ_BYTES were each of them RATING_MAX_BYTES (at least one), and reads again, without
blocking, while there is room and the last read came back full:

    entries asked  =  min(batch_size - entries held, (read_bytes - bytes held) // max_bytes)

So a read holds at most max(read_bytes, max_bytes) bytes of entries no bigger than
RATING_MAX_BYTES (a bigger one, refused, is as big as Redis let it be written: bounded by the
server's proto-max-bulk-len), and small entries still come RATING_BATCH_SIZE a read, in
(batch_size x max_bytes / read_bytes) round trips instead of one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

StreamEntry = tuple[Any, dict]  # an entry as redis-py returns it: (id, fields)


class ReadBudget(NamedTuple):
    """RATING_READ_BYTES, RATING_MAX_BYTES and RATING_BATCH_SIZE, as one read uses them."""

    read_bytes: int
    max_bytes: int
    batch_size: int

    @classmethod
    def of(cls, settings: Any) -> ReadBudget:
        return cls(settings.read_bytes, settings.max_bytes, settings.batch_size)

    @property
    def first(self) -> int:
        """The entries the first read of a batch asks for."""
        return self.asked(0, 0)

    def asked(self, entries: int, held: int) -> int:
        """The entries the next read may ask for, `entries` of `held` bytes already read (the
        first read at least one: an entry bigger than the budget is still read, alone)."""
        room = max(0, self.read_bytes - held) // self.max_bytes
        count = min(self.batch_size - entries, room)
        return max(1, count) if entries == 0 else max(0, count)


def entry_bytes(fields: dict) -> int:
    """What an entry weighs: its fields' names and values, in bytes."""
    return sum(len(k) + len(v) for k, v in fields.items())


async def read_budgeted(
    budget: ReadBudget, fetch: Callable[[int, bool], Awaitable[list[StreamEntry]]]
) -> list[StreamEntry]:
    """The entries of one read within `budget`: `fetch(count, first)` reads up to `count`
    entries after the ones it read before (`first`: the read that may block); it is called
    again while the last call came back full and the budget leaves room."""
    entries: list[StreamEntry] = []
    held = 0
    count, first = budget.first, True
    while count:
        got = await fetch(count, first)
        entries.extend(got)
        held += sum(entry_bytes(fields) for _, fields in got)
        if len(got) < count:
            break
        count, first = budget.asked(len(entries), held), False
    return entries
