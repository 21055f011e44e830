"""The cyclic garbage collector paused while a correction's cascade is committed (D135).

A cascade's commit makes hundreds of thousands of objects that outlive the young generation
(the histories and records it reads, the states and messages its walk makes, the commands
it writes) and are in no cycle: each collection the allocations trigger walks them for
nothing (the bench's correction: 30 young and 2 middle collections, 60-110 ms of its ~1 s of
CPU). Reference counting frees them as before. The pause is process-wide and counted, so
that two streams' cascades committing at once give the collector back when the last ends;
a cycle made meanwhile (by any coroutine) is collected at the next collection after it.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

_depth = 0  # pauses in progress
_resume = False  # the collector was enabled when the first of them began


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off until the last of the pauses in progress ends (then back as
    it was before the first)."""
    global _depth, _resume
    if _depth == 0:
        _resume = gc.isenabled()
        gc.disable()
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0 and _resume:
            gc.enable()
