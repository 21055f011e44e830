"""The published messages packed as `{S}:results` keeps them, ahead of a commit's encoding,
in worker threads (D136).

A message is packed (`readmodel.pack_message`: MessagePack, deflated by service/compact.py)
once, for the results script (`store.result_writes`). Deflating is most of it (a 40-player
7-round revision: ~45 kB of MessagePack; the bench's correction: 432 of them, ~0.2 s) and
zlib lets other threads run while it deflates. So a commit's large messages are packed by a
worker while the service does something else: a cascade's revisions as its walk makes them
(each time the walk stops to read, the messages it made so far: `start`), the rest when the
commit's writes are built. `packed` gives the bytes, waiting for the worker if need be; a
message not started (or small) is packed there and then. The bytes are those
`pack_message` gives: only where and when it runs changes.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor

from schemas.ratings import RatingsUpdated
from service.readmodel import pack_message

# A message of fewer players is packed where it is needed: handing it to a thread costs about
# what deflating it does (a two-player message: ~1.5 kB).
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
        _pool = ThreadPoolExecutor(_workers(), thread_name_prefix="pack-results")
    return _pool


class ResultPacking:
    """One commit's try's messages, packed ahead by worker threads (none on a single CPU)."""

    __slots__ = ("_ahead",)

    def __init__(self) -> None:
        # id(message) -> (message, its packing): the message is held, so its id stays its own
        self._ahead: dict[int, tuple[RatingsUpdated, Future[bytes]]] = {}

    def start(self, messages: Iterable[RatingsUpdated]) -> None:
        """Have the large messages of `messages` not started yet packed by a worker."""
        pool = _executor()
        if pool is None:
            return
        ahead = self._ahead
        for message in messages:
            if id(message) not in ahead and len(message.players) >= AHEAD_PLAYERS:
                ahead[id(message)] = (message, pool.submit(pack_message, message))

    def packed(self, message: RatingsUpdated) -> bytes:
        """`pack_message(message)`: the worker's, or made here."""
        found = self._ahead.get(id(message))
        if found is not None and found[0] is message:
            return found[1].result()
        return pack_message(message)
