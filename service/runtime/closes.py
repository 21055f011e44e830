"""A FIDE period's close, a page of players at a time (D60; docs/design/guarantees.md
"Closes").

A `period.closed` reads only the players with games in the period (the close index,
service/closeindex.py) and commits its list in pages: each page is one WATCH/MULTI/EXEC
of at most RATING_CLOSE_PLAYERS players (their records, histories, list lines and the list's
message of that page). Between pages the close's progress is kept in `{S}:closing` (the
entry, the messages published of how many, the last index member done), written in the
page's own transaction: a crash between any two pages resumes after the last committed one,
so no message is lost or published twice. The applied cursor stays before the close until
its last page, so nothing after it on the stream is applied meanwhile; that last page closes
the pool (`closed_through`, its marker), renames the staged list's changes to the pool's
`moves`, moves the cursor and acknowledges the entry.
"""

from __future__ import annotations

from typing import Any

import msgspec
import structlog
from redis.exceptions import WatchError

from schemas.events import PeriodClosed
from schemas.records import PoolState
from schemas.systems import BY_NAME
from service.closeindex import (
    BUILT,
    K_END,
    K_FIRST,
    PERIODS_END,
    after,
    due_members,
    open_first,
    period_end,
    period_first,
    split,
)
from service.engine.registry import Registry
from service.entryids import entry_ms
from service.rating import Duplicate, MemoryLedger, Rejected
from service.rating.periods import Page, close_page, close_start
from service.runtime.backfill import index_due
from service.runtime.entries import Decision, Entry
from service.runtime.keys import StreamKeys
from service.runtime.leases import LeaseLost, token_of
from service.runtime.outputs import queue_outputs
from service.runtime.partitions import Partition
from service.runtime.replies import text
from service.runtime.report import CommitReport
from service.runtime.settings import Settings
from service.runtime.store import decode_record, queue_ledger_writes

log = structlog.get_logger("rating.consumer")

MORE = -1  # a page committed (or a try lost to another writer): the close goes on

# The list's staged changes become the pool's (D49): the old ones unlinked (freed in the
# background), the staged ones renamed in (none staged: none moved).
_SWAP_MOVES = (
    "redis.call('UNLINK', KEYS[1]) "
    "if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('RENAME', KEYS[2], KEYS[1]) end "
    "return 1"
)


class CloseProgress(msgspec.Struct, frozen=True, omit_defaults=True):
    """`{S}:closing`: the close in progress on a stream (D60). `chunks`: the list's messages,
    counted when it started (its players in the close index, RATING_CLOSE_PLAYERS a message);
    `published` of them so far; `phase` `list` (the period's players) then `k` (the imported
    K overrides the list ends, F5); `after`: the last index member done in the phase."""

    entry: str
    system: str
    pool: str
    period: str
    chunks: int
    published: int = 0
    phase: str = "list"
    after: str = ""


_decode_progress = msgspec.json.Decoder(CloseProgress)
_encoder = msgspec.json.Encoder()


def is_paged_close(entry: Entry) -> bool:
    """Whether the entry is a close the service commits in pages: a `period.closed` that
    reaches a commit (the decode step refuses one for a system without periods) of a system
    whose close changes only the players with games (schemas.systems `paged_close`: FIDE)."""
    message = entry.message
    if not isinstance(message, PeriodClosed) or entry.want is None:
        return False
    info = BY_NAME.get(message.system)
    return info is not None and info.paged_close


class PagedClose:
    """The pages of the close at the head of one input stream (StreamProcessor's)."""

    def __init__(
        self,
        keys: StreamKeys,
        stream: str,
        partition: Partition,
        settings: Settings,
        registry: Registry,
        report: CommitReport,
    ):
        self.keys = keys
        self.stream = stream
        self.partition = partition
        self.settings = settings
        self.registry = registry
        self.report = report

    async def step(
        self,
        client: Any,
        entry: Entry,
        expected_cursor: str,
        handed: bool,
        fence: str | None,
        fence_key: str | None,
    ) -> int | None:
        """One commit of the close `entry` (right after `expected_cursor`): 1 when its last
        page (or its rejection, or a duplicate) is committed, MORE after any other page or a
        try another writer cut short, 0 when another replica moved the cursor first, None when
        `handed` and an entry lies between the cursor and it. LeaseLost without the fence."""
        keys = self.keys
        message = entry.message
        want = entry.want
        assert isinstance(message, PeriodClosed) and want is not None
        system, pool = message.system, message.pool or ""
        players = keys.players(system, pool)
        due = keys.due(system, pool)
        fenced = [fence_key] if fence_key is not None else []
        try:
            async with client.pipeline(transaction=True) as pipe:
                await pipe.watch(keys.cursor, keys.closing, players, *fenced)
                async with client.pipeline(transaction=False) as reads:
                    reads.get(keys.cursor)
                    reads.get(keys.closing)
                    if fence_key is not None:
                        reads.get(fence_key)
                    if handed:
                        reads.xrange(
                            self.stream, min=f"({expected_cursor}", max=f"({entry.id}", count=1
                        )
                    reads.hget(keys.markers, want.marker)
                    reads.hget(keys.pools, f"{system}:{pool}")
                    reads.zrange(keys.timeline(want.domain), -1, -1)
                    reads.zscore(due, BUILT)
                    replies = iter(await reads.execute())
                cursor = text(next(replies)) or "0-0"
                raw_progress = next(replies)
                if fence_key is not None and text(next(replies)) != fence:
                    raise LeaseLost(self.stream)
                gap = bool(next(replies)) if handed else False
                marker, raw_pool, tail, built = (next(replies) for _ in range(4))
                if cursor != expected_cursor:
                    return 0
                if gap:
                    return None
                ledger = MemoryLedger(markers={want.marker: text(marker)} if marker else None)
                if raw_pool is not None:
                    ledger.load_pool(msgspec.json.decode(raw_pool, type=PoolState))
                if tail:
                    ledger.load_timeline(want.domain, tail)
                progress = _decode_progress.decode(raw_progress) if raw_progress else None
                starting = progress is None
                if progress is None:
                    started = await self._start(client, entry, ledger, built is not None)
                    if not isinstance(started, CloseProgress):
                        await self._commit_decision(pipe, entry, started, fence)
                        return 1
                    progress = started
                elif progress.entry != entry.id:
                    raise RuntimeError(
                        f"{keys.closing} holds the close of entry {progress.entry}, but entry "
                        f"{entry.id} follows the cursor: the store was changed outside the service"
                    )
                return await self._page(client, pipe, entry, ledger, progress, starting, fence)
        except WatchError:  # another writer first: tried again, not counted as an attempt
            self.report.metrics.retries.labels(self.stream).inc()
            await client.hdel(keys.attempts, entry.id)
            return MORE

    async def _start(
        self, client: Any, entry: Entry, ledger: MemoryLedger, built: bool
    ) -> CloseProgress | Rejected | Duplicate:
        """The close's first try: poison after RATING_MAX_DELIVERIES tries (nothing is written
        before the first page commits), the index built if the store predates it (D61), then
        the engine's check from the earliest and latest open periods; the progress to start."""
        keys, message = self.keys, entry.message
        assert isinstance(message, PeriodClosed)
        system, pool, period = message.system, message.pool or "", message.period
        attempts = int(await client.hincrby(keys.attempts, entry.id, 1))
        if attempts > self.settings.max_deliveries:
            limit = self.settings.max_deliveries
            return Rejected("poison", f"entry failed {attempts - 1} times (limit {limit})")
        if not built:
            await index_due(client, keys, system, pool)
        due = keys.due(system, pool)
        state = ledger.pool_state(system, pool)
        first = open_first(state.closed_through)
        async with client.pipeline(transaction=False) as reads:
            reads.zrange(due, first, PERIODS_END, bylex=True, offset=0, num=1)
            reads.zrange(due, PERIODS_END, first, desc=True, bylex=True, offset=0, num=1)
            reads.zlexcount(due, period_first(period), period_end(period))
            earliest, latest, listed = await reads.execute()
        periods = {split(m)[0] for m in [*earliest, *latest]}
        try:
            duplicate = close_start(ledger, message, self.registry, periods)
        except Rejected as exc:
            return exc
        if duplicate is not None:
            return duplicate
        size = self.settings.close_players
        chunks = max(1, -(-int(listed) // size))
        log.info("a close starts", stream=self.stream, period=period, players=listed, chunks=chunks)
        return CloseProgress(entry.id, system, pool, period, chunks)

    async def _page(
        self,
        client: Any,
        pipe: Any,
        entry: Entry,
        ledger: MemoryLedger,
        progress: CloseProgress,
        starting: bool,
        fence: str | None,
    ) -> int:
        """Read the next page of the close index and its records, apply it, and commit it
        with the progress (or, for the last page, the pool closed and the cursor moved)."""
        keys = self.keys
        message = entry.message
        assert isinstance(message, PeriodClosed)
        system, pool, period = progress.system, progress.pool, progress.period
        due = keys.due(system, pool)
        size = self.settings.close_players
        listing = progress.phase == "list"
        done = progress.after.encode()
        if listing:
            first, end = (after(done) if done else period_first(period)), period_end(period)
        else:
            first, end = (after(done) if done else K_FIRST), K_END
        members = await client.zrange(due, first, end, bylex=True, offset=0, num=size)
        ids = [split(m)[1] for m in members]
        raws = await client.hmget(keys.players(system, pool), ids) if ids else []
        records = [decode_record(raw) for raw in raws if raw is not None]
        ledger.load_records(records)
        # Members no record has (a back-fill that raced a commit): removed with the page.
        held = {m for r in records for m in due_members(r)}
        stale = [m for m in members if m not in held]
        last_member = members[-1].decode() if members else progress.after
        if listing:
            chunk = progress.published + 1
            listed = chunk >= progress.chunks
            page = Page("list", chunk, progress.chunks, False)
            following = msgspec.structs.replace(
                progress,
                published=chunk,
                phase="k" if listed else "list",
                after="" if listed else last_member,
            )
        else:
            page = Page("k", progress.published, progress.chunks, len(members) < size)
            following = msgspec.structs.replace(progress, after=last_member)
        applied = close_page(ledger, message, self.registry, entry.id, page)
        pipe.multi()
        if starting:
            pipe.unlink(keys.nextmoves(system, pool))  # nothing staged before this close's
        queue_ledger_writes(pipe, keys, ledger, stamp=entry_ms(entry.id), staged=True)
        if stale:
            pipe.zrem(due, *stale)
        decisions = [Decision(entry, applied)]
        queue_outputs(pipe, self.partition, self.stream, decisions, self.settings.output_maxlen)
        if page.last:
            pipe.eval(_SWAP_MOVES, 2, keys.moves(system, pool), keys.nextmoves(system, pool))
            pipe.delete(keys.closing)
            pipe.set(keys.cursor, entry.id)
            pipe.xack(self.stream, self.settings.group, entry.id)
        else:
            pipe.set(keys.closing, _encoder.encode(following))
        pipe.delete(keys.attempts)
        await pipe.execute()
        if page.last:
            self.report.committed(decisions, 0.0, token_of(fence))
            return 1
        log.debug(
            "a close's page committed",
            stream=self.stream,
            period=period,
            phase=page.phase,
            chunk=page.chunk,
            chunks=page.chunks,
            players=len(records),
        )
        return MORE

    async def _commit_decision(
        self, pipe: Any, entry: Entry, outcome: Rejected | Duplicate, fence: str | None
    ) -> None:
        """A close that does not start (refused, or applied already): committed as any entry,
        the cursor moved past it."""
        decisions = [Decision(entry, outcome)]
        pipe.multi()
        queue_outputs(pipe, self.partition, self.stream, decisions, self.settings.output_maxlen)
        pipe.set(self.keys.cursor, entry.id)
        pipe.xack(self.stream, self.settings.group, entry.id)
        pipe.delete(self.keys.attempts)
        await pipe.execute()
        self.report.committed(decisions, 0.0, token_of(fence))
