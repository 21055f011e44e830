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
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any, NamedTuple

import msgspec
import structlog
from redis.exceptions import RedisError, WatchError

from schemas.common import POOLS, SYSTEMS
from schemas.events import InputMessage
from schemas.validation import InvalidMessage, decode_input
from service.engine.registry import Registry
from service.entryids import entry_age, entry_ms, entry_order
from service.rating import (
    Applied,
    Duplicate,
    MemoryLedger,
    Needs,
    Rejected,
    apply_message,
    in_order,
    needs,
)
from service.runtime.connection import on_owner
from service.runtime.deadletters import oldest_open_dead_letter, rejection_message
from service.runtime.keys import StreamKeys
from service.runtime.leases import LeaseLost, StreamLease, token_of
from service.runtime.metrics import Metrics
from service.runtime.partitions import misrouted
from service.runtime.replies import text
from service.runtime.settings import Settings
from service.runtime.store import (
    DATA_FIELD,
    encode,
    index_existing,
    load_cascade,
    queue_ledger_reads,
    queue_ledger_writes,
    watched_keys,
    xadd,
)
from service.timeline import arrival_of

log = structlog.get_logger("rating.consumer")
# The stages of a commit, timed into rating_commit_stage_seconds (`rating-service bench --profile`):
# decoding and checking the entries; reading (the entries when not handed, WATCH, the records,
# markers and timelines a batch needs, decoded); rating (the engines, in the ledger); encoding
# the writes and outputs; writing (MULTI ... EXEC); reporting (metrics and logs).
STAGES = ("decode", "read", "rate", "encode", "write", "report")


class Entry(NamedTuple):
    """One input entry, decoded as far as it can be before reading the store (a tuple: made
    for every entry, it costs a third of a frozen dataclass)."""

    id: str
    fields: dict
    message: InputMessage | None
    want: Needs | None
    rejected: Rejected | None
    event_id: str | None


class Decision(NamedTuple):
    """What one entry's commit does: apply, skip a duplicate, or dead-letter."""

    entry: Entry
    outcome: Applied | Duplicate | Rejected


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
        self.layout = settings.layout
        self.partition = self.layout.of_stream(stream)
        self.registry = registry
        self.metrics = metrics or Metrics()
        self._forgiven: str | None = None  # head entry whose attempt failed through Redis
        self._cursor: str | None = None  # the applied cursor as this processor last saw it
        self._handling = asyncio.Lock()
        self._stages = {name: self.metrics.stage_seconds.labels(stream, name) for name in STAGES}

    async def ensure_group(self) -> None:
        """Create the consumer group, if it does not exist, at the applied cursor (at 0, the
        whole stream, when nothing was applied yet)."""
        cursor = await self._create_group()
        if cursor not in (None, "0"):
            log.warning(
                "consumer group created at the applied cursor",
                stream=self.stream,
                group=self.settings.group,
                cursor=cursor,
            )

    async def index_existing(self) -> None:
        """Index the pools stored before the read model existed (store.index_existing)."""
        pools = [(system, pool) for system in SYSTEMS for pool in POOLS[system]]
        indexed = await index_existing(self.client, self.keys, pools)
        if indexed:
            log.warning(
                "indexed the pools stored before the read model",
                stream=self.stream,
                pools=[f"{system}/{pool}" for system, pool in indexed],
            )

    async def recover_group(self) -> bool:
        """The consumer group was found missing while the service runs (XGROUP DESTROY,
        FLUSHALL, Redis restarted without its data): create it again where the applied
        cursor is, so that nothing is applied twice and nothing is skipped, and say so as an
        error. False when another replica was first."""
        cursor = await self._create_group()
        if cursor is None:
            return False
        self.metrics.groups_recreated.labels(self.stream).inc()
        where = {"stream": self.stream, "group": self.settings.group}
        if cursor != "0":
            log.error(
                "consumer group lost, created again at the applied cursor", cursor=cursor, **where
            )
        else:
            log.error(
                "consumer group lost with the applied cursor, created again at the start of the stream: "
                "the store was probably wiped (FLUSHALL, or Redis restarted without its data), and the "
                "records and markers of what was rated before with it",
                **where,
            )
        return True

    async def _create_group(self) -> str | None:
        """XGROUP CREATE at the applied cursor (or 0), MKSTREAM; the id it was created at,
        None when the group exists already (BUSYGROUP)."""
        cursor = text(await self.client.get(self.keys.cursor)) or "0"
        try:
            await self.client.xgroup_create(
                self.stream, self.settings.group, id=cursor, mkstream=True
            )
        except RedisError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
            return None
        return cursor

    def decode_batch(self, entry_ids: Sequence[str], bodies: Sequence[dict]) -> list[Entry]:
        """The entries a subscriber read (ids and fields, aligned), decoded and checked, in
        stream order (pure: done before waiting for this processor's turn)."""
        started = time.perf_counter()
        entries = sorted(
            (self._decode(i, f) for i, f in zip(entry_ids, bodies)), key=lambda e: entry_order(e.id)
        )
        self._stages["decode"].inc(time.perf_counter() - started)
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
            await self._handle(entry_ids, handed)

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
                    reading = time.perf_counter()
                    batch = await self.client.xrange(
                        self.stream, min=f"({cursor}", count=self.settings.batch_size
                    )
                    self._stages["read"].inc(time.perf_counter() - reading)
                    if not batch:  # the entries were deleted from the stream: nothing to apply
                        break
                    entries = self.decode_batch(
                        [raw_id.decode() for raw_id, _ in batch], [fields for _, fields in batch]
                    )
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

    async def _read_cursor(self) -> str:
        self._cursor = text(await self.client.get(self.keys.cursor)) or "0-0"
        return self._cursor

    async def delivered_until(self) -> str | None:
        """The last entry a catch-up applies up to: the consumer group's last delivered entry
        (the entries after it go to the owner's subscriber, bodies and all), or the stream's
        last entry when the group is missing; None for an empty stream."""
        async with self.client.pipeline(transaction=False) as pipe:
            pipe.xinfo_groups(self.stream)
            pipe.xrevrange(self.stream, count=1)
            groups, last = await pipe.execute(raise_on_error=False)
        if isinstance(last, Exception):
            raise last
        if not last:
            return None
        newest = text(last[0][0])
        for group in groups if not isinstance(groups, Exception) else []:
            if text(group["name"]) == self.settings.group:
                delivered = text(group["last-delivered-id"]) or "0-0"
                if entry_order(delivered) == (0, 0):
                    return None  # nothing delivered yet
                return min(newest, delivered, key=entry_order)
        return newest

    def _decode(self, entry_id: str, fields: dict) -> Entry:
        """Decode and check an entry; what cannot be rated is a rejection already."""
        data = fields.get(DATA_FIELD.encode())
        if data is None:
            return Entry(
                entry_id,
                fields,
                None,
                None,
                Rejected("malformed", f"entry has no {DATA_FIELD} field"),
                None,
            )
        try:
            message = decode_input(data, self.settings.limits)
            want = needs(message, self.registry)
            wrong = misrouted(self.partition, self.layout, want.system, want.pool)
            if wrong is not None:
                raise Rejected("misrouted", wrong, "$.pool")
        except InvalidMessage as exc:
            problem = exc.problems[0]
            more = f" (and {len(exc.problems) - 1} more)" if len(exc.problems) > 1 else ""
            rejected = Rejected(problem.reason, problem.message + more, problem.path)
            return Entry(entry_id, fields, None, None, rejected, _event_id_of(fields))
        except Rejected as exc:
            return Entry(entry_id, fields, None, None, exc, _event_id_of(fields))
        return Entry(entry_id, fields, message, want, None, getattr(message, "event_id", None))

    async def _commit(
        self, entries: list[Entry], expected_cursor: str, handed: bool = False
    ) -> int | None:
        """Commit a prefix of `entries` (the entries right after the cursor) in one atomic
        step; returns how many (0 when another replica moved the cursor first). `handed`:
        the entries were handed over by the subscriber, not read from the cursor: None when
        an entry of the stream lies between the cursor and the first of them (nothing written).

        Poison: each attempt is counted on its first entry before it starts, and the count
        is removed by the commit. After a failed attempt the entry is tried alone, so an
        entry whose processing fails, or kills its process, `max_deliveries` times is
        dead-lettered with reason `poison` instead of blocking the stream.
        """
        head = entries[0].id
        wants = [e.want for e in entries if e.want is not None]

        async def attempt(client: Any) -> int | None:
            # On a cluster `client` is the partition's slot owner, and a try cut short by a
            # moving slot is tried again (connection.on_owner): forgiven, as any Redis failure.
            forgiven, self._forgiven = self._forgiven == head, None
            if self.lease is None:
                return await self._commit_watched(
                    client, entries, expected_cursor, head, forgiven, wants, None, handed
                )
            async with self.lease.lock:  # a release waits for the commit in progress
                fence = self.lease.value
                if fence is None:
                    raise LeaseLost(self.stream)
                return await self._commit_watched(
                    client, entries, expected_cursor, head, forgiven, wants, fence, handed
                )

        return await on_owner(self.client, self.keys.cursor, attempt, retried=self._redirected)

    def _redirected(self, exc: BaseException) -> None:
        """A commit on a cluster was cut short by a moving slot or a failover: tried again."""
        self.metrics.redirects.labels(self.stream).inc()
        log.debug(
            "commit tried again on the cluster",
            stream=self.stream,
            error=f"{type(exc).__name__}: {exc}",
        )

    async def _commit_watched(
        self,
        client: Any,
        entries: list[Entry],
        expected_cursor: str,
        head: str,
        forgiven: bool,
        wants: list[Needs],
        fence: str | None,
        handed: bool,
    ) -> int | None:
        clock = time.perf_counter
        started = clock()
        fenced = [self.lease.fence_key] if fence is not None and self.lease is not None else []
        try:
            async with client.pipeline(transaction=True) as pipe:
                # The fence is watched with the cursor: a new owner's acquisition (it writes the
                # fence) between this WATCH and EXEC aborts the EXEC.
                await pipe.watch(self.keys.cursor, *fenced, *watched_keys(self.keys, wants))
                # One round trip for the rest: count this attempt, check the cursor, read.
                async with client.pipeline(transaction=False) as reads:
                    if forgiven:  # the last attempt was cut short by Redis, not by the entry
                        reads.hget(self.keys.attempts, head)
                    else:
                        reads.hincrby(self.keys.attempts, head, 1)
                    reads.get(self.keys.cursor)
                    for key in fenced:
                        reads.get(key)
                    if handed:  # an entry between the cursor and the first handed one? (the
                        # stream's ids only grow: none can be added there after this read)
                        reads.xrange(
                            self.stream, min=f"({expected_cursor}", max=f"({head}", count=1
                        )
                    build_ledger = queue_ledger_reads(reads, self.keys, wants)
                    replies = await reads.execute()
                attempts = int(replies[0] or 1)
                if (
                    fenced and text(replies[2]) != fence
                ):  # another owner (or none): stop, write nothing
                    await client.hdel(self.keys.attempts, head)
                    raise LeaseLost(self.stream)
                if (text(replies[1]) or "0-0") != expected_cursor:
                    await client.hdel(self.keys.attempts, head)
                    return 0
                at = 2 + len(fenced)
                ledger_replies = replies[at + handed :]
                if handed and replies[at]:
                    await client.hdel(self.keys.attempts, head)
                    return None
                if attempts > self.settings.max_deliveries:
                    reason = (
                        f"entry failed {attempts - 1} times (limit {self.settings.max_deliveries})"
                    )
                    ledger, decisions = (
                        MemoryLedger(),
                        [Decision(entries[0], Rejected("poison", reason))],
                    )
                    rating = clock()
                else:
                    ledger = build_ledger(ledger_replies)
                    first = entries[0]
                    if first.message is not None and not in_order(
                        ledger, first.message, arrival_of(first.id), self.registry
                    ):
                        # A late event, a correction or a withdrawal: re-rated from its place,
                        # alone, with what that needs read under the same WATCH.
                        assert first.want is not None
                        await pipe.watch(*watched_keys(self.keys, [first.want], cascade=True))
                        ledger = await load_cascade(
                            client, self.keys, first.message, first.want, arrival_of(first.id)
                        )
                        rating = clock()
                        decisions = self._apply([first], ledger)
                    else:
                        # After a failed attempt the head entry is tried alone.
                        rating = clock()
                        decisions = self._apply(entries if attempts == 1 else entries[:1], ledger)
                rated = clock()
                pipe.multi()
                done = [d.entry.id for d in decisions]
                queue_ledger_writes(pipe, self.keys, ledger, stamp=entry_ms(done[-1]))
                self._queue_outputs(pipe, decisions)
                pipe.set(self.keys.cursor, done[-1])
                pipe.xack(self.stream, self.settings.group, *done)
                # Counts are only ever for the entry after the cursor: once it moves, every
                # count left (of this head, or a stale one of a replica killed after counting
                # an entry already applied) is moot.
                pipe.delete(self.keys.attempts)
                encoded = clock()
                await pipe.execute()
        except WatchError:
            self.metrics.retries.labels(self.stream).inc()
            await client.hdel(self.keys.attempts, head)
            return 0
        except RedisError:
            self._forgiven = head
            raise
        written = clock()
        self._report(decisions, written - started, token_of(fence))
        stage = self._stages
        stage["read"].inc(rating - started)
        stage["rate"].inc(rated - rating)
        stage["encode"].inc(encoded - rated)
        stage["write"].inc(written - encoded)
        stage["report"].inc(clock() - written)
        return len(decisions)

    def _apply(self, entries: list[Entry], ledger: MemoryLedger) -> list[Decision]:
        """Apply the entries in order to the ledger. An unexpected failure stops the batch
        before the failing entry; on the batch's first entry it is raised (and counted). An
        entry that needs re-rating from an earlier place also stops the batch before it
        (unless it is first: then the ledger holds what it needs)."""
        decisions: list[Decision] = []
        for entry in entries:
            if entry.rejected is not None:
                decisions.append(Decision(entry, entry.rejected))
                continue
            assert entry.message is not None and entry.want is not None
            arrival = arrival_of(entry.id)
            if decisions and not in_order(ledger, entry.message, arrival, self.registry):
                break  # committed alone, next
            try:
                outcome: Applied | Duplicate | Rejected = apply_message(
                    ledger,
                    entry.message,
                    self.registry,
                    entry.id,
                    arrival,
                    self.settings.max_cascade_events,
                )
            except Rejected as exc:
                outcome = exc
            except Exception:
                log.exception(
                    "entry failed", stream=self.stream, stream_id=entry.id, event_id=entry.event_id
                )
                if not decisions:
                    raise
                break  # commit what came before; this entry comes first next time
            decisions.append(Decision(entry, outcome))
        return decisions

    def _queue_outputs(self, pipe: Any, decisions: list[Decision]) -> None:
        """The ratings.updated and event.rejected entries, in order; each stream is trimmed
        (approximately, to RATING_OUTPUT_MAXLEN) once per commit rather than per entry."""
        written: set[str] = set()
        for decision in decisions:
            outcome = decision.outcome
            if isinstance(outcome, Applied):
                for output in outcome.outputs:
                    xadd(pipe, self.partition.output, encode(output))
                written.add(self.partition.output)
            elif isinstance(outcome, Rejected):
                rejected = rejection_message(outcome, self.stream, decision.entry)
                xadd(pipe, self.partition.dead_letter, encode(rejected))
                written.add(self.partition.dead_letter)
        if self.settings.output_maxlen:
            for stream in sorted(written):
                pipe.xtrim(stream, maxlen=self.settings.output_maxlen, approximate=True)

    def _report(self, decisions: list[Decision], seconds: float, token: int | None) -> None:
        """Metrics and logs of a commit, once per commit: a `committed` line at INFO (how many
        entries, applied / duplicate / rejected, the first and last stream ids, the events
        rated), each rejection at WARNING and each duplicate at INFO (both rare, and a reader
        wants them by name), each applied entry at DEBUG."""
        where: dict[str, Any] = {"stream": self.stream}
        if token is not None:
            where["lease_token"] = token
        rated: dict[str, int] = {}
        event_ids: list[str] = []
        periods: list[str] = []
        duplicates = rejected = 0
        for decision in decisions:
            outcome, entry = decision.outcome, decision.entry
            if isinstance(outcome, Applied):
                system: str = entry.message.system if entry.message else ""
                rated[system] = rated.get(system, 0) + 1
                if entry.event_id is not None:
                    event_ids.append(entry.event_id)
                else:  # a period's close: its marker names it (period:<system>:<pool>:<period>)
                    periods.append(outcome.marker)
                log.debug(
                    "applied",
                    stream_id=entry.id,
                    event_id=entry.event_id,
                    marker=outcome.marker,
                    outputs=len(outcome.outputs),
                    **where,
                )
            elif isinstance(outcome, Duplicate):
                duplicates += 1
                log.info(
                    "duplicate, already applied",
                    stream_id=entry.id,
                    event_id=entry.event_id,
                    marker=outcome.marker,
                    **where,
                )
            else:
                rejected += 1
                self.metrics.rejected.labels(self.stream, outcome.reason).inc()
                log.warning(
                    "rejected",
                    stream_id=entry.id,
                    event_id=entry.event_id,
                    reason=outcome.reason,
                    path=outcome.path,
                    detail=outcome.message,
                    **where,
                )
        for system, count in rated.items():
            self.metrics.rated.labels(self.stream, system).inc(count)
        if duplicates:
            self.metrics.duplicates.labels(self.stream).inc(duplicates)
        self.metrics.commit_seconds.labels(self.stream).observe(seconds)
        self.metrics.entries_per_commit.labels(self.stream).observe(len(decisions))
        log.info(
            "committed",
            entries=len(decisions),
            applied=sum(rated.values()),
            duplicates=duplicates,
            rejected=rejected,
            first_id=decisions[0].entry.id,
            last_id=decisions[-1].entry.id,
            event_ids=event_ids,
            commit_ms=round(seconds * 1000, 2),
            **({"periods": periods} if periods else {}),
            **where,
        )

    async def observe_group(self) -> bool:
        """Update the gauges: the consumer group's (lag: entries not yet delivered; pending),
        the age of the oldest entry not yet applied, the dead-letter stream's length and the
        age of its oldest letter not redriven. False when the group does not exist."""
        async with self.client.pipeline(transaction=False) as pipe:
            pipe.xinfo_groups(self.stream)
            pipe.get(self.keys.cursor)
            pipe.xlen(self.partition.dead_letter)
            groups, cursor, dead_letters = await pipe.execute(raise_on_error=False)
        for reply in (cursor, dead_letters):
            if isinstance(reply, Exception):
                raise reply
        dead_letter_stream = self.partition.dead_letter
        self.metrics.dead_letters.labels(dead_letter_stream).set(int(dead_letters))
        open_letter = (
            await oldest_open_dead_letter(self.client, dead_letter_stream) if dead_letters else None
        )
        self.metrics.dead_letter_age.labels(dead_letter_stream).set(_age(open_letter))
        if isinstance(groups, Exception):
            if "no such key" in str(groups).lower():
                groups = []  # the stream is gone, and its group with it
            else:
                raise groups
        found = False
        for group in groups:
            name = text(group["name"])
            if name == self.settings.group:
                found = True
                self.metrics.pending.labels(self.stream).set(int(group["pending"]))
                if group.get("lag") is not None:
                    self.metrics.lag.labels(self.stream).set(int(group["lag"]))
        cursor = text(cursor)
        oldest = await self.client.xrange(self.stream, min=f"({cursor}" if cursor else "-", count=1)
        self.metrics.lag_seconds.labels(self.stream).set(
            _age(text(oldest[0][0]) if oldest else None)
        )
        return found


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


def _age(entry_id: str | None) -> float:
    """Seconds since a stream entry was added (now minus its id's milliseconds); 0 for none."""
    if entry_id is None:
        return 0.0
    return max(0.0, entry_age(entry_id, time.time()))


def _event_id_of(fields: dict) -> str | None:
    """The event id of an entry, when it can be read at all (for logs and dead letters)."""
    try:
        document = msgspec.json.decode(fields.get(DATA_FIELD.encode(), b""))
    except (msgspec.DecodeError, RecursionError):
        return None
    value = document.get("event_id") if isinstance(document, dict) else None
    return value if isinstance(value, str) and len(value) <= 128 else None
