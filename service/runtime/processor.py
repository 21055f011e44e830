"""Applying one input stream in order, exactly once (docs/design/guarantees.md).

Each input stream has an applied cursor. A replica handed entries applies, in stream order,
the entries after the cursor (read with XRANGE) until the cursor has passed them; entries
at or below the cursor are only acknowledged. Several consecutive entries share one commit:
WATCH (cursor, the pools' records), read everything the batch needs in one round trip,
apply the entries one by one to an in-memory ledger with the pure engines, then MULTI:
records, pool states, idempotency markers, output and dead-letter entries, the cursor,
XACK; EXEC. A WatchError means another replica moved first: re-read and go on.

Under a lease (service/runtime/leases.py) its fence key is watched too, and read in the same
round trip: a commit is made only while the fence holds this replica's value (the fencing
token), else LeaseLost is raised and nothing is written.

What the commit protocol uses lives in modules of its own: the entries decoded and checked
(entries.py), what a commit publishes (outputs.py), its metrics, logs and stage times
(report.py). The consumer group (groups.py) and the read model's back-fill (backfill.py) are
held by the processor and reached through it (ensure_group, index_existing, ...).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import structlog
from redis.exceptions import RedisError, WatchError

from service.engine.registry import Registry
from service.entryids import entry_ms, entry_order
from service.rating import (
    Applied,
    Duplicate,
    MemoryLedger,
    Missing,
    Needs,
    Rejected,
    apply_message,
    in_order,
)
from service.runtime.backfill import index_stream
from service.runtime.closes import MORE, PagedClose, is_paged_close
from service.runtime.collector import collector_paused
from service.runtime.commitsize import CommitLimits, CommitWrites
from service.runtime.connection import on_owner
from service.runtime.entries import Decision, Entry, EntryDecoder
from service.runtime.groups import ConsumerGroup
from service.runtime.keys import StreamKeys
from service.runtime.leases import LeaseLost, StreamLease, token_of
from service.runtime.metrics import Metrics
from service.runtime.outage import failure_reason
from service.runtime.outputs import outputs_of, queue_encoded
from service.runtime.packahead import PackAhead
from service.runtime.readbudget import ReadBudget, StreamEntry, read_budgeted
from service.runtime.replies import text
from service.runtime.report import CommitClock, CommitReport
from service.runtime.settings import Settings
from service.runtime.store import (
    ledger_writes,
    load_cascade,
    load_missing,
    queue,
    queue_ledger_reads,
    watched_keys,
)
from service.timeline import arrival_of

log = structlog.get_logger("rating.consumer")


class Attempt(NamedTuple):
    """One try of a commit (StreamProcessor._commit): on which client, of which entries, what
    it expects to find and under which fence."""

    client: Any  # the partition's slot owner on a cluster
    entries: list[Entry]
    wants: list[Needs]  # what the entries need read
    expected_cursor: str
    handed: bool  # the entries were handed over by the subscriber, not read from the cursor
    forgiven: bool  # the last try was cut short by Redis, not by the entry: not counted
    fence: str | None  # the fence value this replica holds (None: no lease)
    fence_key: str | None

    @property
    def head(self) -> str:
        return self.entries[0].id


class Aside(NamedTuple):
    """What one try keeps beside its ledger: where a cascade pauses the cyclic collector until
    the try has returned (D135), and the large values it writes, encoded ahead (D136)."""

    pausing: contextlib.ExitStack
    packing: PackAhead


class Writes(NamedTuple):
    """A commit's writes and the decisions they are of."""

    writes: CommitWrites
    decisions: list[Decision]


class Checks(NamedTuple):
    """What a try reads, in the round trip of the ledger's reads, before it may write."""

    attempts: int  # the tries of the head entry so far, this one included (poison)
    cursor: str  # the applied cursor ("0-0": nothing applied)
    fence_held: bool  # the fence holds this replica's value (True without a lease)
    gap: bool  # an entry lies between the cursor and the first handed one
    gone: bool  # the last entry of the try is no longer in the stream (a failover lost it)


async def read_under_watch(
    attempt: Attempt, keys: StreamKeys, stream: str
) -> tuple[Checks, Callable[[], MemoryLedger]]:
    """The one round trip of a try after its WATCH (`keys`, `stream`: its input stream's):
    count this try, read the cursor, the fence and, for handed entries, whether an entry lies
    between the cursor and the first of them (the stream's ids only grow: none can be added
    there after this read); whether the try's last entry is still in the stream (a master
    that died before its replica had the entry takes it along, while this replica holds it:
    committing it on the promoted replica would rate an entry the stream no longer has,
    D97); read what the ledger needs. The checks, and what builds the ledger from its
    replies."""
    async with attempt.client.pipeline(transaction=False) as reads:
        if attempt.forgiven:  # the last try was cut short by Redis, not by the entry
            reads.hget(keys.attempts, attempt.head)
        else:
            reads.hincrby(keys.attempts, attempt.head, 1)
        reads.get(keys.cursor)
        if attempt.fence_key is not None:
            reads.get(attempt.fence_key)
        if attempt.handed:
            reads.xrange(stream, min=f"({attempt.expected_cursor}", max=f"({attempt.head}", count=1)
        last = attempt.entries[-1].id
        reads.xrange(stream, min=last, max=last, count=1)
        build_ledger = queue_ledger_reads(reads, keys, attempt.wants)
        replies = iter(await reads.execute())
    # The replies, in the order the reads were queued; what is left is the ledger's.
    attempts = int(next(replies) or 1)
    cursor = text(next(replies)) or "0-0"
    fence_held = attempt.fence_key is None or text(next(replies)) == attempt.fence
    gap = bool(next(replies)) if attempt.handed else False
    gone = not next(replies)
    ledger_replies = list(replies)
    return Checks(attempts, cursor, fence_held, gap, gone), lambda: build_ledger(ledger_replies)


class StreamProcessor:
    """Applies the entries of one input stream, in stream order, exactly once."""

    def __init__(
        self,
        client: Any,
        settings: Settings,
        stream: str,
        registry: Registry,
        metrics: Metrics | None = None,
        lease: StreamLease | None = None,
    ):
        """`lease`: commit only while holding it (the service); None: no lease (tools, tests)."""
        self.client = client
        self.lease = lease
        self.settings = settings
        self.keys = StreamKeys(stream)
        self.stream = stream
        self.partition = settings.layout.of_stream(stream)
        self.registry = registry
        self.metrics = metrics or Metrics()
        self.group = ConsumerGroup(
            client, stream, settings.group, self.keys, self.partition, self.metrics
        )
        self.decoder = EntryDecoder(settings, registry, self.partition)
        self.limits = CommitLimits.of(settings)
        self.budget = ReadBudget.of(settings)
        self.report = CommitReport(self.metrics, stream)
        self.closer = PagedClose(self.keys, stream, self.partition, settings, registry, self.report)
        self._forgiven: str | None = None  # head entry whose attempt failed through Redis
        self._cursor: str | None = None  # the applied cursor as this processor last saw it
        self._handling = asyncio.Lock()

    async def ensure_group(self) -> None:
        """groups.ConsumerGroup.ensure: create the group at the applied cursor if missing."""
        await self.group.ensure()

    async def recover_group(self) -> bool:
        """groups.ConsumerGroup.recover: the group was lost; False when another was first."""
        return await self.group.recover()

    async def observe_group(self) -> bool:
        """groups.ConsumerGroup.observe: the gauges; False when the group does not exist."""
        return await self.group.observe()

    async def delivered_until(self) -> str | None:
        """groups.ConsumerGroup.delivered_until: the last entry a catch-up applies up to."""
        return await self.group.delivered_until()

    async def index_existing(self) -> None:
        """Index the pools stored before the read model existed (backfill.index_stream)."""
        await index_stream(self.client, self.stream, self.keys)

    def decode_batch(self, entry_ids: Sequence[str], bodies: Sequence[dict]) -> list[Entry]:
        """The entries a subscriber read (ids and fields, aligned), decoded and checked, in
        stream order (pure: done before waiting for this processor's turn)."""
        started = time.perf_counter()
        entries = self.decoder.decode_batch(entry_ids, bodies)
        self.report.spent("decode", time.perf_counter() - started)
        return entries

    async def handle(self, *entry_ids: str, bodies: Sequence[dict] | None = None) -> None:
        """Make the entries take effect (after every entry before them), then ack them.

        `bodies`: the entries' fields as the subscriber read them (one XREADGROUP, aligned
        with `entry_ids`: consecutive in the stream). When they start right after the applied
        cursor they are applied as read, without reading them again: the commit checks, under
        its WATCH, that the cursor is where this processor left it and that no entry of the
        stream lies between it and the first of them (else the entries are read from the
        stream, as without bodies). One handle at a time per processor (the subscriber's and a
        catch-up's would otherwise race each other's commits)."""
        handed = self.decode_batch(entry_ids, bodies) if bodies is not None else []
        async with self._handling:
            try:
                await self._handle(entry_ids, handed)
            except (RedisError, OSError) as exc:  # counted by reason (D26); tried again above
                self.metrics.commit_failures.labels(self.stream, failure_reason(exc)).inc()
                raise

    async def _handle(self, entry_ids: Sequence[str], handed: list[Entry]) -> None:
        last = max(entry_order(e) for e in entry_ids)
        unacked = set(entry_ids)
        # The cursor this processor committed last is a guess (another replica may have moved
        # it, the store may have been wiped): used only as what a commit of handed entries
        # expects, and checked by it. Whether entries are applied already is read from Redis.
        cursor = self._cursor
        if cursor is None or not handed or entry_order(handed[0].id) <= entry_order(cursor):
            cursor = await self._read_cursor()
        # Entries read from the stream right after the cursor and not committed yet (a commit
        # took only the prefix RATING_COMMIT_PLAYERS allows): they still follow the cursor once
        # the commit before them lands, so they are not read and decoded again.
        following: list[Entry] = []
        while entry_order(cursor) < last:
            at = entry_order(cursor)
            entries = [e for e in handed if entry_order(e.id) > at][: self.settings.batch_size]
            read = not entries
            if read:
                entries = following
                if not entries:
                    entries = await self._read_after(cursor)
                    if not entries:  # the entries were deleted from the stream: nothing to apply
                        break
            committing = commit_prefix(entries, self.settings.commit_players)
            done = await self._commit(committing, cursor, handed=not read)
            following = []
            if (
                done is None
            ):  # the handed entries do not start right after the cursor: read the stream
                handed = []
            elif done:
                cursor = self._cursor = committing[done - 1].id
                unacked.difference_update(e.id for e in committing[:done])  # the commit acked them
                if read:
                    following = entries[done:]
            else:  # another replica moved the cursor first: read where it is now
                cursor = await self._read_cursor()
        if unacked:
            await self.client.xack(self.stream, self.settings.group, *unacked)

    async def _read_after(self, cursor: str) -> list[Entry]:
        """The entries right after `cursor` (a batch within RATING_READ_BYTES, D90), read and
        decoded; none when they were deleted from the stream."""
        reading = time.perf_counter()
        batch = await read_after(self.client, self.stream, cursor, self.budget)
        self.report.spent("read", time.perf_counter() - reading)
        return self.decode_batch([i.decode() for i, _ in batch], [f for _, f in batch])

    async def _read_cursor(self) -> str:
        self._cursor = text(await self.client.get(self.keys.cursor)) or "0-0"
        return self._cursor

    async def _commit(
        self, entries: list[Entry], expected_cursor: str, handed: bool = False
    ) -> int | None:
        """Commit a prefix of `entries` (the entries right after the cursor) in one atomic
        step; returns how many (0 when another replica moved the cursor first). `handed`:
        the entries were handed over by the subscriber, not read from the cursor: None when
        an entry of the stream lies between the cursor and the first of them, or the last entry
        is no longer in the stream (nothing written: the stream is read again).

        Poison: each attempt is counted on its first entry before it starts, and the count
        is removed by the commit. After a failed attempt the entry is tried alone, so an
        entry whose processing fails, or kills its process, `max_deliveries` times is
        dead-lettered with reason `poison` instead of blocking the stream.
        """
        if is_paged_close(entries[0]):
            return await self._commit_close(entries[0], expected_cursor, handed)
        head = entries[0].id
        wants = [e.want for e in entries if e.want is not None]

        async def attempt(client: Any) -> int | None:
            # On a cluster `client` is the partition's slot owner, and a try cut short by a
            # moving slot is tried again (connection.on_owner): forgiven, as any Redis failure.
            forgiven, self._forgiven = self._forgiven == head, None
            tried = Attempt(client, entries, wants, expected_cursor, handed, forgiven, None, None)
            # A cascade pauses the cyclic collector (D135) until the try has returned: what it
            # made is freed by then, so the next collection does not walk it.
            with contextlib.ExitStack() as pausing:
                aside = Aside(pausing, PackAhead())
                if self.lease is None:
                    return await self._commit_watched(tried, aside)
                async with self.lease.lock:  # a release waits for the commit in progress
                    fence = self.lease.value
                    if fence is None:
                        raise LeaseLost(self.stream)
                    return await self._commit_watched(
                        tried._replace(fence=fence, fence_key=self.lease.fence_key), aside
                    )

        return await on_owner(self.client, self.keys.cursor, attempt, retried=self._redirected)

    async def _commit_close(self, entry: Entry, expected_cursor: str, handed: bool) -> int | None:
        """A period's close, a page a commit (closes.PagedClose, D60), until its last page:
        each page under the lease's lock and fence as any commit, so that a release or a new
        owner waits for one page, not for the whole close. 1, 0 or None as `_commit`."""

        async def attempt(client: Any) -> int | None:
            if self.lease is None:
                return await self.closer.step(client, entry, expected_cursor, handed, None, None)
            async with self.lease.lock:
                fence = self.lease.value
                if fence is None:
                    raise LeaseLost(self.stream)
                return await self.closer.step(
                    client, entry, expected_cursor, handed, fence, self.lease.fence_key
                )

        while True:
            done = await on_owner(self.client, self.keys.cursor, attempt, retried=self._redirected)
            if done != MORE:
                return done

    def _redirected(self, exc: BaseException) -> None:
        """A commit on a cluster was cut short by a moving slot or a failover: tried again."""
        self.metrics.redirects.labels(self.stream).inc()
        log.debug(
            "commit tried again on the cluster",
            stream=self.stream,
            error=f"{type(exc).__name__}: {exc}",
        )

    async def _commit_watched(self, attempt: Attempt, aside: Aside) -> int | None:
        """One try of a commit (see _commit): WATCH, read and check, rate, MULTI ... EXEC."""
        client, head = attempt.client, attempt.head
        fenced = [attempt.fence_key] if attempt.fence_key is not None else []
        clock = CommitClock()
        try:
            async with client.pipeline(transaction=True) as pipe:
                # The fence is watched with the cursor: a new owner's acquisition (it writes the
                # fence) between this WATCH and EXEC aborts the EXEC.
                await pipe.watch(self.keys.cursor, *fenced, *watched_keys(self.keys, attempt.wants))
                checks, build_ledger = await read_under_watch(attempt, self.keys, self.stream)
                if not checks.fence_held:  # another owner (or none): stop, write nothing
                    await client.hdel(self.keys.attempts, head)
                    raise LeaseLost(self.stream)
                if checks.cursor != attempt.expected_cursor:
                    await client.hdel(self.keys.attempts, head)
                    return 0
                if checks.gap or checks.gone:  # read the stream again from the cursor
                    await client.hdel(self.keys.attempts, head)
                    return None
                ledger, decisions = await self._decide(
                    pipe, attempt, checks.attempts, build_ledger, clock, aside
                )
                writes = within_limits(
                    self, attempt.entries, build_ledger, ledger, decisions, aside.packing
                )
                clock.lap("rate")
                decisions = self._queue_writes(pipe, writes)
                clock.lap("encode")
                await pipe.execute()
        except WatchError:
            self.metrics.retries.labels(self.stream).inc()
            await client.hdel(self.keys.attempts, head)
            return 0
        except RedisError:
            self._forgiven = head
            raise
        clock.lap("write")
        self.report.committed(decisions, clock.elapsed, token_of(attempt.fence))
        clock.lap("report")
        self.report.timed(clock)
        return len(decisions)

    async def _decide(
        self,
        pipe: Any,
        attempt: Attempt,
        attempts: int,
        build_ledger: Callable[[], MemoryLedger],
        clock: CommitClock,
        aside: Aside,
    ) -> tuple[MemoryLedger, list[Decision]]:
        """What the try commits, with the ledger it writes: the head entry dead-lettered as
        poison after `max_deliveries` tries; the head entry alone, re-rated from its place,
        when it is late (a late event, a correction or a withdrawal: `read_and_cascade`);
        else the entries in order (the head alone after a failed try)."""
        entries = attempt.entries
        first = entries[0]
        if attempts > self.settings.max_deliveries:
            reason = f"entry failed {attempts - 1} times (limit {self.settings.max_deliveries})"
            clock.lap("read")
            return MemoryLedger(), [Decision(first, Rejected("poison", reason))]
        ledger = build_ledger()
        chosen = entries if attempts == 1 else entries[:1]  # alone after a failed try
        if first.message is not None and not in_order(
            ledger, first.message, arrival_of(first.id), self.registry
        ):
            return await read_and_cascade(self, pipe, attempt, clock, aside)
        clock.lap("read")
        return ledger, self.apply_entries(chosen, ledger)

    def apply_entries(self, entries: list[Entry], ledger: MemoryLedger) -> list[Decision]:
        """apply_in_order, with this stream's registry and cascade limit."""
        cascade = self.settings.max_cascade_events
        return apply_in_order(entries, ledger, self.registry, cascade, self.stream)

    def _queue_writes(self, pipe: Any, writes: Writes) -> list[Decision]:
        """MULTI, then what the commit writes: the ledger's changes, the outputs and dead
        letters, the cursor, the XACK. Returns the decisions committed."""
        pipe.multi()
        decisions = writes.decisions
        done = [d.entry.id for d in decisions]
        queue(pipe, writes.writes.commands)
        queue_encoded(pipe, writes.writes.outputs, self.settings.output_maxlen)
        pipe.set(self.keys.cursor, done[-1])
        pipe.xack(self.stream, self.settings.group, *done)
        # Counts are only ever for the entry after the cursor: once it moves, every count left
        # (of this head, or a stale one of a replica killed after counting an entry already
        # applied) is moot.
        pipe.delete(self.keys.attempts)
        return decisions


async def read_and_cascade(
    processor: StreamProcessor, pipe: Any, attempt: Attempt, clock: CommitClock, aside: Aside
) -> tuple[MemoryLedger, list[Decision]]:
    """The head entry of a try, late: re-rated from its place, what that needs read under the
    same WATCH (load_cascade, then apply_reading), the cyclic collector paused until the try
    has returned (D135) and the large values its walk makes encoded while Redis reads (D136)."""
    first = attempt.entries[0]
    assert first.message is not None and first.want is not None
    aside.pausing.enter_context(collector_paused())
    keys, settings = processor.keys, processor.settings
    await pipe.watch(*watched_keys(keys, [first.want], cascade=True))
    ledger = await load_cascade(
        attempt.client,
        keys,
        first.message,
        first.want,
        arrival_of(first.id),
        settings.max_cascade_events,
    )
    clock.lap("read")
    return ledger, await apply_reading(
        attempt.client,
        keys,
        ledger,
        lambda: processor.apply_entries([first], ledger),
        aside.packing,
    )


async def read_after(
    client: Any, stream: str, cursor: str, budget: ReadBudget
) -> list[StreamEntry]:
    """The entries of `stream` right after `cursor`, XRANGE within `budget` (D90)."""
    after = cursor

    async def fetch(count: int, first: bool) -> list[StreamEntry]:
        nonlocal after
        got = await client.xrange(stream, min=f"({after}", count=count)
        if got:
            after = got[-1][0].decode()
        return list(got)

    return await read_budgeted(budget, fetch)


def commit_writes(
    processor: StreamProcessor,
    ledger: MemoryLedger,
    decisions: list[Decision],
    packing: PackAhead | None = None,
) -> Writes:
    """What committing `decisions` on `ledger` writes, built in full (commitsize.py); what
    `packing` encoded ahead is taken from it (D136)."""
    packing = packing or PackAhead()
    outputs, owners = [], []
    for n, decision in enumerate(decisions):
        made = outputs_of(processor.partition, processor.stream, [decision], packing.json)
        outputs += made
        owners += [n] * len(made)
    stamp = entry_ms(decisions[-1].entry.id)
    commands = list(
        ledger_writes(
            processor.keys, ledger.changes, stamp, packed=packing.packed, archived=packing.archived
        )
    )
    return Writes(CommitWrites(commands, outputs, owners), decisions)


def within_limits(
    processor: StreamProcessor,
    entries: list[Entry],
    build_ledger: Callable[[], MemoryLedger],
    ledger: MemoryLedger,
    decisions: list[Decision],
    packing: PackAhead | None = None,
) -> Writes:
    """A commit's writes within RATING_MAX_MESSAGE_BYTES and RATING_MAX_COMMIT_BYTES (D91):
    over one, the entries before the one over it (or fewer, in proportion to the bytes) are
    rated again on a fresh ledger (`build_ledger()`); a single entry over one is refused
    `too_large` and its commit writes the dead letter only. A lone rejection is written
    whatever it weighs (its entry's bytes, kept verbatim)."""
    while True:
        writes = commit_writes(processor, ledger, decisions, packing)
        lone_rejection = len(decisions) == 1 and isinstance(decisions[0].outcome, Rejected)
        over = None if lone_rejection else processor.limits.over(writes.writes, len(decisions))
        if over is None:
            return writes
        if over.keep:
            ledger = build_ledger()
            decisions = processor.apply_entries(entries[: over.keep], ledger)
            continue
        entry = decisions[0].entry
        log.warning("entry over a commit limit", stream_id=entry.id, reason=over.message)
        ledger = MemoryLedger()
        decisions = [Decision(entry, Rejected("too_large", over.message, "$"))]


async def apply_reading(
    client: Any,
    keys: StreamKeys,
    ledger: MemoryLedger,
    apply: Callable[[], list[Decision]],
    packing: PackAhead | None = None,
) -> list[Decision]:
    """`apply` on a ledger read in part (a cascade, D65): each time the walk asks for more,
    read it (under the same WATCH) and apply again; the walk resumes. While Redis reads,
    `packing` encodes the messages and archives the walk made so far (D136)."""
    while True:
        try:
            return apply()
        except Missing as missing:
            if packing is None or ledger.partial is None:
                found = await load_missing(client, keys, ledger, missing)
            else:
                reading = asyncio.ensure_future(load_missing(client, keys, ledger, missing))
                try:
                    await asyncio.sleep(0)  # the read goes out; meanwhile, encode ahead
                    await packing.while_reading(*ledger.partial.made(), reading)
                except BaseException:  # cancelled (a stop): the read is not waited for
                    reading.cancel()
                    # its error, if it ends with one (its connection closed), is the stop's:
                    # retrieved, not logged as "Task exception was never retrieved"
                    reading.add_done_callback(lambda t: t.cancelled() or t.exception())
                    raise
                found = await reading
            if not found:
                raise RuntimeError(
                    f"a cascade needs what the store does not hold: {missing}"
                    f" (archives {missing.archives[:5]}, players {missing.players[:5]})"
                ) from None


def apply_in_order(
    entries: list[Entry],
    ledger: MemoryLedger,
    registry: Registry,
    max_cascade_events: int,
    stream: str,
) -> list[Decision]:
    """Apply the entries (of `stream`) in order to the ledger. An unexpected failure stops the
    batch before the failing entry; on the batch's first entry it is raised (and counted). An
    entry that needs re-rating from an earlier place also stops the batch before it (unless it
    is first: then the ledger holds what it needs)."""
    decisions: list[Decision] = []
    for entry in entries:
        if entry.rejected is not None:
            decisions.append(Decision(entry, entry.rejected))
            continue
        assert entry.message is not None and entry.want is not None
        arrival = arrival_of(entry.id)
        if decisions and not in_order(ledger, entry.message, arrival, registry):
            break  # committed alone, next
        try:
            outcome: Applied | Duplicate | Rejected = apply_message(
                ledger,
                entry.message,
                registry,
                entry.id,
                arrival,
                max_cascade_events,
            )
        except Rejected as exc:
            outcome = exc
        except Missing:  # the ledger is read in part: the caller reads more and applies again
            raise
        except Exception:
            log.exception(
                "entry failed", stream=stream, stream_id=entry.id, event_id=entry.event_id
            )
            if not decisions:
                raise
            break  # commit what came before; this entry comes first next time
        decisions.append(Decision(entry, outcome))
    return decisions


def players_of(entry: Entry, budget: int) -> int:
    """What an entry weighs against a commit's players: its event's players (at least one:
    a rejection or a withdrawal); a period's close, which rates the whole pool, the budget."""
    want = entry.want
    if want is None:
        return 1
    if want.player_ids is None:
        return budget
    return max(1, len(want.player_ids))


def commit_prefix(entries: list[Entry], budget: int) -> list[Entry]:
    """The entries of one commit: the longest prefix whose players come to at most `budget`
    (RATING_COMMIT_PLAYERS), and always the first entry, whatever its size. Small events
    share big commits (fewer round trips per event) while big ones, and a period's close,
    do not hold Redis (one MULTI/EXEC) or the process's memory for long."""
    total = 0
    for n, entry in enumerate(entries):
        total += players_of(entry, budget)
        if total > budget and n:
            return entries[:n]
    return entries
