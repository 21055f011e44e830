"""Between a stream's subscribers and its processor: read ahead while a commit waits.

A subscriber's handler (`put`) decodes the batch it was handed (pure work) and queues it;
one task per stream (`run`) takes the batches in turn and commits them through the
StreamProcessor. While a commit waits for Redis (its WATCH, its reads, its MULTI/EXEC), the
event loop reads, parses and decodes the next batch instead of waiting with it. At most
`depth` batches wait in the queue: a full queue holds the subscriber (its next XREADGROUP
waits), so the entries read ahead stay few.

Nothing about the guarantees moves: every entry stays pending (unacked) until the commit
that applies it acknowledges it; the processor applies from the applied cursor, in stream
order, whatever batch it is handed; a batch left in the queue at shutdown or when the lease
goes is applied by the next owner's catch-up (design, "Processing guarantees").
"""

from __future__ import annotations

import asyncio
from typing import Callable, Sequence

import structlog

from service.runtime.leases import LeaseLost
from service.runtime.processor import Entry, StreamProcessor
from service.runtime.store import entry_order

log = structlog.get_logger("rating.intake")
BACKOFF_FIRST, BACKOFF_MAX = 0.1, 5.0


class Intake:
    """The queue of one stream's batches and the task that commits them in turn."""

    def __init__(self, processor: StreamProcessor, stopping: asyncio.Event, *, away: tuple[type[BaseException], ...],
                 reachable: Callable[[], None], unreachable: Callable[[BaseException], None],
                 lost: Callable[[str], None], depth: int = 2):
        """`away`: the errors that mean Redis is not there (tried again, with backoff, until
        `stopping`); `reachable` / `unreachable`: told of each commit that worked / each
        such error; `lost(stream)`: the lease turned out to be another replica's."""
        self.processor = processor
        self.stopping = stopping
        self.away = away
        self.reachable = reachable
        self.unreachable = unreachable
        self.lost = lost
        self.queue: asyncio.Queue[tuple[list[str], list[Entry] | None]] = asyncio.Queue(maxsize=depth)

    async def put(self, entry_ids: Sequence[str], bodies: Sequence[dict] | None) -> None:
        """Queue a subscriber's batch (`bodies` decoded now; None: reclaimed entries, read from
        the stream by the processor). Waits while the queue is full, until shutdown."""
        decoded = self.processor.decode_batch(entry_ids, bodies) if bodies is not None else None
        putting = asyncio.ensure_future(self.queue.put((list(entry_ids), decoded)))
        stopped = asyncio.ensure_future(self.stopping.wait())
        await asyncio.wait({putting, stopped}, return_when=asyncio.FIRST_COMPLETED)
        stopped.cancel()
        if not putting.done():  # shutdown: the entries stay pending, for the next owner
            putting.cancel()

    async def run(self) -> None:
        """Commit the queued batches in turn until shutdown (then the batch in progress is
        finished and the rest left pending)."""
        while not self.stopping.is_set():
            getting = asyncio.ensure_future(self.queue.get())
            stopped = asyncio.ensure_future(self.stopping.wait())
            await asyncio.wait({getting, stopped}, return_when=asyncio.FIRST_COMPLETED)
            stopped.cancel()
            if not getting.done():
                getting.cancel()
                return
            entry_ids, decoded = getting.result()
            runs = [decoded] if decoded is not None else []
            while not self.queue.empty():  # what waits besides is committed with it
                more_ids, more = self.queue.get_nowait()
                entry_ids += more_ids
                if more is not None:
                    runs.append(more)
            await self._commit(entry_ids, sorted(runs, key=lambda run: entry_order(run[0].id) if run else (0, 0)))

    async def _commit(self, entry_ids: list[str], runs: list[list[Entry]]) -> None:
        delay = BACKOFF_FIRST
        while True:
            try:
                await self.processor.handle(*entry_ids, runs=runs)
                self.reachable()
                return
            except LeaseLost:
                # Read just before the lease went: the entries stay pending, unacked; the new
                # owner applies them from the cursor and acks them.
                self.lost(self.processor.stream)
                return
            except self.away as exc:
                # Redis went away (or is loading its data after a restart): nothing was half
                # done (each commit is one MULTI/EXEC); try again when it is back, in order.
                # On shutdown, leave the entries pending (reclaimed or caught up later).
                self.unreachable(exc)
                if await _stopped_within(self.stopping, delay):
                    return
                delay = min(delay * 2, BACKOFF_MAX)
            except Exception:
                # An entry that fails (counted towards poison), or Redis refusing a command: the
                # batch stays pending; the next batch, or the next catch-up, tries it again.
                log.exception("batch left pending after a failure", stream=self.processor.stream,
                              first_id=entry_ids[0], entries=len(entry_ids))
                return


async def _stopped_within(stopping: asyncio.Event, seconds: float) -> bool:
    try:
        await asyncio.wait_for(stopping.wait(), seconds)
        return True
    except asyncio.TimeoutError:
        return False

