"""Loading a federation's history from a JSON Lines file into a stream's store, as a
stream (`rating-service load`, issue 32; docs/design/decisions.md D115-D118).

The file is read a line at a time, in its order (the history's date order). Message n is
given the entry id `entry_id(base, n)` (D116) and decoded and checked as the service's
EntryDecoder does for that entry. A message that comes last in its domain's date order is
applied with the service's use case (`apply_message`) to one resident MemoryLedger; every
`chunk` messages its change set is written with the service's own writes
(`queue_ledger_writes`), the applied cursor and the checkpoint in one MULTI/EXEC, and the
ledger forgets what only the store needs now (`MemoryLedger.written`): it keeps the records,
pool states, markers and each timeline's last member, so its memory is the pool's, not the
history's (D115). A chunk's transaction is in flight while the next chunk is rated (D141).
A late event, a correction, a withdrawal or a reopen is committed alone the service's way,
from what it reads of the store (`load_cascade`, D117). A second run after a crash
continues after the checkpoint (D118).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import gc
import hashlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

import msgspec

from schemas.events import PeriodClosed
from schemas.records import PlayerRecord, PoolState
from service.engine.registry import Registry
from service.entryids import entry_ms
from service.rating import Duplicate, MemoryLedger, Rejected, apply_message, in_order
from service.runtime.entries import Entry, EntryDecoder
from service.runtime.keys import STORE, StreamKeys
from service.runtime.processor import apply_in_order, apply_reading
from service.runtime.records_io import import_records
from service.runtime.replies import text
from service.runtime.settings import Settings
from service.runtime.store import (
    DATA_FIELD,
    decode_record,
    glob_escape,
    live_pools,
    load_cascade,
    queue_ledger_writes,
    scan_store,
)
from service.timeline import arrival_of

SEQ = 65_536  # entry ids per millisecond: arrival_of keeps 16 bits of the sequence
# Seconds a reply may take (the load's client's socket timeout, D141): Redis runs a chunk of
# about 25 MB of commands while the loader rates the next, so on a busy machine it may take
# longer than redis-py's default 5 s (measured: up to 4.1 s at load average 4.5).
REPLY_TIMEOUT = 120.0
_pool_decoder = msgspec.json.Decoder(PoolState)


class LoadRefused(Exception):
    """The load cannot start (one line for the user)."""


class Checkpoint(msgspec.Struct, kw_only=True):
    """`{S}:loading`: how far a load got, written in each chunk's transaction (D118)."""

    file: str  # the file as named when the load began (reported)
    base: int  # the first entry id's milliseconds (D116)
    lines: int = 0  # lines read (blank ones too: the line numbers of the reports)
    messages: int = 0  # messages read (message n has entry_id(base, n))
    offset: int = 0  # bytes of the file read
    last: str = ""  # sha256 of the last line read: the same file on a resume
    last_len: int = 0
    applied: int = 0
    duplicates: int = 0
    rejected: int = 0
    chunks: int = 0
    finished: bool = False


_checkpoint_decoder = msgspec.json.Decoder(Checkpoint)


def entry_id(base: int, n: int) -> str:
    """Message n's entry id (n from 1): `base` ms plus one ms every SEQ messages, so every
    arrival (service.timeline.arrival_of) is distinct and in file order (D116)."""
    return f"{base + n // SEQ}-{n % SEQ}"


def read_lines(path: Path, offset: int) -> Iterator[tuple[int, bytes]]:
    """The file's lines from byte `offset`, each with the offset after it (never the whole
    file in memory)."""
    with path.open("rb") as f:
        f.seek(offset)
        for line in f:
            offset += len(line)
            yield offset, line


async def read_checkpoint(client: Any, keys: StreamKeys) -> Checkpoint | None:
    raw = await client.get(keys.loading)
    return _checkpoint_decoder.decode(raw) if raw is not None else None


def same_file(path: Path, at: Checkpoint) -> bool:
    """Whether `path` holds, just before the checkpoint's offset, the last line it read."""
    if at.offset == 0:
        return True
    try:
        with path.open("rb") as f:
            f.seek(at.offset - at.last_len)
            tail = f.read(at.last_len)
    except OSError:
        return False
    return at.last_len <= at.offset and hashlib.sha256(tail).hexdigest() == at.last


class Loader:
    """One load of a history file into the store of `keys` (see the module)."""

    def __init__(
        self,
        client: Any,
        keys: StreamKeys,
        settings: Settings,
        registry: Registry,
        chunk: int = 500,
        report: Callable[[str], None] | None = None,
    ):
        self.client, self.keys, self.settings, self.registry = client, keys, settings, registry
        self.chunk = chunk
        self.report = report or (lambda line: None)
        self.ledger = MemoryLedger()
        self.at = Checkpoint(file="", base=0)
        self.pending = 0  # messages applied to the resident ledger since the last write
        self.inflight: asyncio.Future | None = None  # the last chunk's transaction (D141)
        self.today = dt.date.today()  # the current entry's UTC date (its plausible dates, D14)
        self.decoder = EntryDecoder(
            settings, registry, settings.layout.of_stream(keys.stream), clock=lambda: self.today
        )

    async def begin(self, path: Path, records: list[PlayerRecord], base: int) -> bool:
        """A fresh load (the starting list imported, the first checkpoint written) or the
        resumption of one; False when the file was loaded already."""
        found = await read_checkpoint(self.client, self.keys)
        if found is None:
            taken = [k async for k, kind in scan_store(self.client, self.keys) if kind != STORE]
            if taken:
                raise LoadRefused(
                    f"stream {self.keys.stream} already has {len(taken)} keys and no load to"
                    f" resume (e.g. {taken[0]}): load into a new stream"
                )
            self.at = Checkpoint(file=str(path), base=base)
            await self.client.set(self.keys.loading, msgspec.json.encode(self.at))
        else:
            if found.finished and same_file(path, found):
                self.at = found
                return False
            if found.finished:
                raise LoadRefused(
                    f"stream {self.keys.stream} holds a finished load of {found.file}: load"
                    f" {path} into a new stream"
                )
            if not same_file(path, found):
                raise LoadRefused(
                    f"{path}: not the file the load to resume read ({found.file}: its line"
                    f" {found.lines} differs or is missing)"
                )
            self.at = found
            if found.messages:
                await self.resume_state()
                self.ledger.track_closing()
                settle()
                return True
        if records:  # none applied yet: importing again replaces them with themselves
            await import_records(self.client, self.keys, records, stamp=self.at.base)
            self.ledger.load_records(records)
        self.ledger.track_closing()  # a FIDE close reads the players it may change (D142)
        settle()
        return True

    async def resume_state(self) -> None:
        """The resident state read back from the store: records, pool states, markers and
        each timeline's last member."""
        client, keys = self.client, self.keys
        for system, pool in await live_pools(client, keys):
            raw = await client.hgetall(keys.players(system, pool))
            self.ledger.load_records(decode_record(v) for v in raw.values())
        for value in (await client.hgetall(keys.pools)).values():
            self.ledger.load_pool(_pool_decoder.decode(value))
        self.ledger.markers.update(
            {text(k): text(v) for k, v in (await client.hgetall(keys.markers)).items()}
        )
        prefix = keys.timeline("")
        async for raw_key in client.scan_iter(match=glob_escape(prefix) + "*", count=1_000):
            key = text(raw_key)
            self.ledger.load_timeline(key[len(prefix) :], await client.zrange(key, -1, -1))

    async def run(self, path: Path, progress: Callable[[Checkpoint], None]) -> Checkpoint:
        """Read the file from the checkpoint on; write the last chunk and mark it finished."""
        try:
            at = await self.read(path, progress)
            at.finished = True
            await self.write(self.ledger, at)
            await self.landed()
        except BaseException:
            if self.inflight is not None:  # the store keeps the chunk before it, or this one
                self.inflight.cancel()
            raise
        progress(at)
        return at

    async def read(self, path: Path, progress: Callable[[Checkpoint], None]) -> Checkpoint:
        """Take each message of the file from the checkpoint on, a chunk written every
        `chunk` messages applied."""
        at = self.at
        for offset, line in read_lines(path, at.offset):
            before = msgspec.structs.replace(at)  # where a resume starts if this line is not done
            at.lines += 1
            at.offset = offset
            at.last, at.last_len = hashlib.sha256(line).hexdigest(), len(line)
            raw = line.strip()
            if not raw:
                continue
            at.messages += 1
            await self.take(self.entry(raw), f"{path}:{at.lines}", before)
            if self.pending >= self.chunk:
                await self.write(self.ledger, at)
                progress(at)
            elif self.inflight is not None:
                await self.tend()
        return at

    def entry(self, raw: bytes) -> Entry:
        """The current message as the service would take it at its entry id."""
        entry = entry_id(self.at.base, self.at.messages)
        self.today = dt.datetime.fromtimestamp(entry_ms(entry) / 1000, tz=dt.UTC).date()
        return self.decoder.decode(entry, {DATA_FIELD.encode(): raw})

    async def take(self, entry: Entry, where: str, before: Checkpoint) -> None:
        """Apply one entry: in date order to the resident ledger, else alone from the store
        (the resident changes written first, with the checkpoint `before` it)."""
        if entry.rejected is not None:
            return self.rejected(where, entry.rejected)
        assert entry.message is not None
        if isinstance(entry.message, PeriodClosed):
            # A FIDE close rates for a second or more without giving the event loop a turn:
            # no reply is left to wait through it (the socket timeout runs meanwhile).
            await self.landed()
        arrival = arrival_of(entry.id)
        if not in_order(self.ledger, entry.message, arrival, self.registry):
            await self.write(self.ledger, before)  # what it reads must be in the store first
            return await self.alone(entry, where)
        try:
            outcome = apply_message(
                self.ledger,
                entry.message,
                self.registry,
                entry.id,
                arrival,
                self.settings.max_cascade_events,
            )
        except Rejected as exc:  # the ledger is as it was
            return self.rejected(where, exc)
        self.pending += 1
        self.counted(outcome)

    def counted(self, outcome: object) -> None:
        if isinstance(outcome, Duplicate):
            self.at.duplicates += 1
        else:
            self.at.applied += 1

    def rejected(self, where: str, exc: Rejected) -> None:
        self.at.rejected += 1
        self.report(f"{where}: rejected: {exc.path}: {exc.message} ({exc.reason})")

    async def alone(self, entry: Entry, where: str) -> None:
        """A late event, correction, withdrawal or reopen: read what it re-rates from the
        store, apply it as the service's commit does, write it, and bring the resident
        records, pool states, markers and timeline tails up to date (D117)."""
        assert entry.message is not None and entry.want is not None
        want, client, keys = entry.want, self.client, self.keys
        cascade = self.settings.max_cascade_events
        await self.landed()  # what it reads is in the store
        ledger = await load_cascade(
            client, keys, entry.message, want, arrival_of(entry.id), cascade
        )
        (decision,) = await apply_reading(
            client,
            keys,
            ledger,
            lambda: apply_in_order([entry], ledger, self.registry, cascade, keys.stream),
        )
        if isinstance(decision.outcome, Rejected):
            return self.rejected(where, decision.outcome)
        self.counted(decision.outcome)
        changes = ledger.changes
        await self.write(ledger, self.at, force=True)
        await self.landed()
        resident = self.ledger
        resident.load_records(changes.records.values())  # into its close index too (D142)
        resident.pools.update(changes.pools)
        resident.markers.update(changes.markers)
        tail = await client.zrange(keys.timeline(want.domain), -1, -1)
        resident.load_timeline(want.domain, tail)

    async def write(self, ledger: MemoryLedger, at: Checkpoint, force: bool = False) -> None:
        """One chunk: the ledger's changes, the cursor (the last message `at` counts) and the
        checkpoint `at` in one MULTI/EXEC; then the ledger forgets what the store holds.

        The transaction is sent without waiting for its reply (D141): the next chunk is
        rated while Redis runs it (`tend` gives it the event loop between messages), and
        waits for it (`landed`) before its own is sent, as does anything that reads the
        store. A failure is raised there; the store then holds the chunk before it, whose
        checkpoint a second run resumes from (D118)."""
        if not (force or at.finished or (ledger is self.ledger and self.pending)):
            return
        await self.landed()
        self.at.chunks += 1
        at.chunks = self.at.chunks
        pipe = self.client.pipeline(transaction=True)
        if at.messages:
            last = entry_id(at.base, at.messages)
            queue_ledger_writes(pipe, self.keys, ledger, stamp=entry_ms(last))
            pipe.set(self.keys.cursor, last)
        pipe.set(self.keys.loading, msgspec.json.encode(at))
        self.inflight = asyncio.ensure_future(_commit(pipe))
        ledger.written()
        if ledger is self.ledger:
            self.pending = 0
        await asyncio.sleep(0)  # the transaction packed and on its way before the collection
        settle()

    async def tend(self) -> None:
        """Give the transaction in flight a turn of the event loop (its bytes written, its
        reply read) between two messages; once answered, its outcome (an error raised)."""
        assert self.inflight is not None
        if self.inflight.done():
            await self.landed()
        else:
            await asyncio.sleep(0)

    async def landed(self) -> None:
        """Wait for the transaction in flight, if any: its reply, or its error raised."""
        inflight, self.inflight = self.inflight, None
        if inflight is not None:
            await inflight


async def _commit(pipe: Any) -> None:
    """Send a chunk's MULTI/EXEC and read its reply (a failure drops the connection: a
    half-sent transaction is discarded by the server)."""
    async with pipe:
        await pipe.execute()


def settle() -> None:
    """Collect the chunk's garbage cycles, then freeze what is left, the resident state,
    out of the cyclic collector's way: its full passes over 200,000 records otherwise cost a
    third of a load's CPU (D115). Each collection scans only what came since the last
    freeze; freezing without it would keep the cycles for good. `rating-service load` runs
    with the collector off (D140), so this is the only collection: a cycle lives at most
    until its chunk is written."""
    gc.collect()
    gc.freeze()


class LoadProgress:
    """A load's progress on standard error when it is a terminal (messages, messages/s, the
    share of the file read and the time left at this rate), redrawn at most every half
    second; nothing otherwise."""

    def __init__(self, size: int, start: Checkpoint, out: TextIO, clock=time.monotonic):
        self.size, self.out, self.clock = size, out, clock
        self.tty = bool(getattr(out, "isatty", lambda: False)())
        self.began = clock()
        self.from_messages, self.from_offset = start.messages, start.offset
        self.drawn = 0.0

    def line(self, at: Checkpoint, now: float) -> str:
        spent = max(now - self.began, 1e-9)
        rate = (at.messages - self.from_messages) / spent
        bytes_rate = (at.offset - self.from_offset) / spent
        share = 100 * at.offset / self.size if self.size else 100.0
        left = (self.size - at.offset) / bytes_rate if bytes_rate > 0 else 0.0
        eta = f"{int(left) // 60}m{int(left) % 60:02d}s"
        return (
            f"load: {at.messages:,} messages, {rate:,.0f}/s, {share:.0f}% of"
            f" {self.size / 1e6:,.1f} MB, ETA {eta}"
        )

    def __call__(self, at: Checkpoint) -> None:
        if not self.tty:
            return
        now = self.clock()
        if now - self.drawn >= 0.5 or at.finished:
            self.drawn = now
            self.out.write("\r" + self.line(at, now) + "\033[K")
            if at.finished:
                self.out.write("\n")
            self.out.flush()
