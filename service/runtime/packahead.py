"""A commit's large values packed ahead of its encoding, in worker threads (D136): the
published messages as `{S}:results` keeps them and the archived events as `{S}:events` does.

A message is packed (`readmodel.pack_message`: MessagePack, deflated by service/compact.py)
once, for the results script (`store.result_writes`), and an archived event once
(`timeline.encode_archived`, also deflated). Deflating is most of it (a 40-player 7-round
revision: ~45 kB of MessagePack; the bench's correction: 432 of them, ~0.2 s, and as many
archives, ~0.03 s) and zlib lets other threads run while it deflates. So a commit's large
values are packed by a worker while the service does something else: a cascade's as its walk
makes them (each time the walk stops to read, the messages and archives it made so far:
`start`), the rest when the commit's writes are built. `packed` and `archived` give the bytes,
waiting for the worker if need be; a value not started (or small) is packed there and then.
The bytes are those `pack_message` and `encode_archived` give: only where and when they run
changes.

The messages' JSON for the output stream (`store.encode`) cannot be made by a worker (the
encoder holds the interpreter's lock); a cascade's are made while Redis reads what its walk
stopped for (`encode`, processor.apply_reading), time the event loop would spend waiting;
`json` gives them, or encodes a message made after the last stop.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor

from schemas.ratings import RatingsUpdated
from service.readmodel import pack_message
from service.runtime.store import encode
from service.timeline import Archived, encode_archived

# A message or event of fewer players is packed where it is needed: handing it to a thread
# costs about what deflating it does (a two-player message: ~1.5 kB).
AHEAD_PLAYERS = 16

_pool: ThreadPoolExecutor | None = None


def _workers() -> int:
    """Threads that deflate: the CPUs this process may use but one (the event loop's)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(0, min(4, cpus - 1))


def _executor() -> ThreadPoolExecutor | None:
    global _pool
    if _pool is None and _workers():
        _pool = ThreadPoolExecutor(_workers(), thread_name_prefix="pack-ahead")
    return _pool


class PackAhead:
    """One commit's try's messages and archives, packed ahead by worker threads (none on a
    single CPU)."""

    __slots__ = ("_ahead", "_json")

    def __init__(self) -> None:
        # id(value) -> (value, its packing): the value is held, so its id stays its own
        self._ahead: dict[int, tuple[RatingsUpdated | Archived, Future[bytes]]] = {}
        self._json: dict[int, tuple[RatingsUpdated, bytes]] = {}  # the same, JSON made here

    def start(self, messages: Iterable[RatingsUpdated], archives: Iterable[Archived] = ()) -> None:
        """Have the large ones of `messages` and `archives` not started yet packed by a
        worker."""
        pool = _executor()
        if pool is None:
            return
        ahead = self._ahead
        for message in messages:
            if id(message) not in ahead and len(message.players) >= AHEAD_PLAYERS:
                ahead[id(message)] = (message, pool.submit(pack_message, message))
        for archived in archives:
            if id(archived) not in ahead and len(archived.event.players) >= AHEAD_PLAYERS:
                ahead[id(archived)] = (archived, pool.submit(encode_archived, archived))

    def packed(self, message: RatingsUpdated) -> bytes:
        """`pack_message(message)`: the worker's, or made here."""
        found = self._ahead.get(id(message))
        if found is not None and found[0] is message:
            return found[1].result()
        return pack_message(message)

    def archived(self, archived: Archived) -> bytes:
        """`encode_archived(archived)`: the worker's, or made here."""
        found = self._ahead.get(id(archived))
        if found is not None and found[0] is archived:
            return found[1].result()
        return encode_archived(archived)

    def encode(self, messages: Iterable[RatingsUpdated]) -> None:
        """Make the JSON of the messages not encoded yet, here and now."""
        made = self._json
        for message in messages:
            if id(message) not in made:
                made[id(message)] = (message, encode(message))

    def json(self, message: RatingsUpdated) -> bytes:
        """`store.encode(message)`: made ahead, or here."""
        found = self._json.get(id(message))
        if found is not None and found[0] is message:
            return found[1]
        return encode(message)
