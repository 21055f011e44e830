"""Replaying an input stream from its start into a fresh key namespace (after a rules
correction), and how the result differs from the live state.

The entries are read with XRANGE in pages and applied in stream order to a MemoryLedger,
exactly as `rating-service rate --keep-going` does (service.rating: the same use case as
the service): a rejected entry is counted and skipped, a duplicate changes nothing. The
records, pool states, idempotency markers and the cursor are then written under
`StreamKeys(stream, namespace=...)`; the live keys are only read.
"""

from __future__ import annotations

import datetime as dt
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, TextIO

import msgspec

from schemas.records import PlayerRecord, PoolState
from schemas.validation import InvalidMessage, decode_input
from service.engine.registry import Registry
from service.entryids import entry_ms
from service.rating import Duplicate, MemoryLedger, Rejected, apply_message
from service.runtime.keys import StreamKeys
from service.runtime.store import (
    DATA_FIELD,
    decode_record,
    glob_escape,
    ledger_writes,
    live_pools,
    queue,
    text,
)
from service.timeline import arrival_of

_pool_decoder = msgspec.json.Decoder(PoolState)
WRITE_BATCH = 100  # commands per pipeline of a replay's writes


@dataclass
class Counts:
    entries: int = 0
    applied: int = 0
    duplicates: int = 0
    rejected: int = 0
    last_id: str | None = None


@dataclass
class PoolDiff:
    """One pool, live against replayed: ids by kind of difference."""

    system: str
    pool: str
    identical: int = 0
    differ: list[tuple[PlayerRecord, PlayerRecord]] = field(default_factory=list)
    only_live: list[PlayerRecord] = field(default_factory=list)
    only_replay: list[PlayerRecord] = field(default_factory=list)


@dataclass
class MapDiff:
    """A hash compared entry by entry (markers, pool states)."""

    identical: int = 0
    differ: int = 0
    only_live: int = 0
    only_replay: int = 0


async def existing_keys(client: Any, keys: StreamKeys) -> list[str]:
    """The keys already under this stream's (namespaced) prefix."""
    found = []
    async for key in client.scan_iter(match=glob_escape(keys.prefix) + "*", count=1_000):
        found.append(text(key))
    return sorted(found)


async def rerate(
    client: Any,
    stream: str,
    registry: Registry,
    ledger: MemoryLedger,
    page: int = 1_000,
    progress: Callable[[int], None] | None = None,
) -> Counts:
    """Apply every entry of `stream`, from the start, to `ledger`, in pages of XRANGE."""
    counts = Counts()
    after = "-"
    while True:
        batch = await client.xrange(stream, min=after, count=page)
        if not batch:
            break
        for raw_id, fields in batch:
            entry_id = raw_id.decode()
            counts.entries += 1
            counts.last_id = entry_id
            outcome = _apply(ledger, registry, entry_id, fields)
            if outcome == "applied":
                counts.applied += 1
            elif outcome == "duplicate":
                counts.duplicates += 1
            else:
                counts.rejected += 1
        after = f"({counts.last_id}"
        if progress is not None:
            progress(counts.entries)
        if len(batch) < page:
            break
    return counts


def _apply(ledger: MemoryLedger, registry: Registry, entry_id: str, fields: dict) -> str:
    data = fields.get(DATA_FIELD.encode())
    if data is None:
        return "rejected"
    try:
        message = decode_input(data, today=arrival_date(entry_id))
        result = apply_message(
            ledger, message, registry, source_id=entry_id, arrival=arrival_of(entry_id)
        )
    except (InvalidMessage, Rejected):
        return "rejected"
    return "duplicate" if isinstance(result, Duplicate) else "applied"


def arrival_date(entry_id: str) -> dt.date:
    """The UTC date the entry was added: the service's clock when it came (its dates are
    judged plausible by it, as the service did: docs/design/decisions.md "D14 Plausible dates")."""
    return dt.datetime.fromtimestamp(entry_ms(entry_id) / 1000, tz=dt.UTC).date()


async def write_ledger(
    client: Any, keys: StreamKeys, ledger: MemoryLedger, cursor: str | None
) -> int:
    """Write the ledger's whole state under `keys` (store.ledger_writes of `whole_state()`,
    in pipelines of WRITE_BATCH commands), then the cursor; returns the number of records."""
    whole = ledger.whole_state()
    stamp = entry_ms(cursor) if cursor is not None else None
    commands = ledger_writes(keys, whole, stamp)
    while batch := list(islice(commands, WRITE_BATCH)):
        async with client.pipeline(transaction=False) as pipe:
            queue(pipe, batch)
            await pipe.execute()
    if cursor is not None:
        await client.set(keys.cursor, cursor)
    return len(whole.records)


async def compare(
    client: Any, live: StreamKeys, ledger: MemoryLedger
) -> tuple[list[PoolDiff], MapDiff, MapDiff]:
    """The live state against the replayed ledger: per pool, markers, pool states."""
    diffs = []
    for system, pool in sorted(set(await live_pools(client, live)) | set(ledger.records)):
        diff = PoolDiff(system, pool)
        current = {
            text(k): decode_record(v)
            for k, v in (await client.hgetall(live.players(system, pool))).items()
        }
        replayed = ledger.records.get((system, pool), {})
        for pid in sorted(set(current) | set(replayed)):
            old, new = current.get(pid), replayed.get(pid)
            if old is None:
                diff.only_replay.append(new)  # type: ignore[arg-type]  # a player only in the replay: new is set
            elif new is None:
                diff.only_live.append(old)
            elif old == new:
                diff.identical += 1
            else:
                diff.differ.append((old, new))
        diffs.append(diff)
    live_markers = {text(k): text(v) for k, v in (await client.hgetall(live.markers)).items()}
    live_states = {
        text(k): _pool_decoder.decode(v) for k, v in (await client.hgetall(live.pools)).items()
    }
    replay_states = {f"{s}:{p}": v for (s, p), v in ledger.pools.items()}
    return (
        diffs,
        _compare_maps(live_markers, ledger.markers),
        _compare_maps(live_states, replay_states),
    )


def _compare_maps(live: dict, replayed: dict) -> MapDiff:
    diff = MapDiff()
    for key in set(live) | set(replayed):
        if key not in replayed:
            diff.only_live += 1
        elif key not in live:
            diff.only_replay += 1
        elif live[key] == replayed[key]:
            diff.identical += 1
        else:
            diff.differ += 1
    return diff


def _rating(record: PlayerRecord) -> str:
    rating = "unrated" if record.rating is None else str(record.rating)
    return f"{rating} ({record.status}, {record.games} games)"


def summary(
    counts: Counts, diffs: list[PoolDiff], markers: MapDiff, states: MapDiff, show: int = 50
) -> list[str]:
    """The report for a person: counts, then per pool the players whose record differs."""
    lines = [
        f"replayed {counts.entries:,} entries: {counts.applied:,} applied, {counts.duplicates:,} duplicates, "
        f"{counts.rejected:,} rejected"
    ]
    total_differ = 0
    for d in diffs:
        total_differ += len(d.differ) + len(d.only_live) + len(d.only_replay)
        lines.append(
            f"{d.system}/{d.pool}: {d.identical:,} identical, {len(d.differ):,} differ, "
            f"{len(d.only_live):,} only live, {len(d.only_replay):,} only in the replay"
        )
        shown = 0
        for old, new in d.differ:
            if shown < show:
                shown_same = (old.rating, old.status, old.games) == (
                    new.rating,
                    new.status,
                    new.games,
                )
                note = " (other fields differ)" if shown_same else ""
                lines.append(f"  {old.id}: live {_rating(old)} -> replay {_rating(new)}{note}")
            shown += 1
        for record in d.only_live:
            if shown < show:
                lines.append(f"  {record.id}: live {_rating(record)}, not in the replay")
            shown += 1
        for record in d.only_replay:
            if shown < show:
                lines.append(f"  {record.id}: only in the replay, {_rating(record)}")
            shown += 1
        if shown > show:
            lines.append(f"  ... and {shown - show:,} more")
    for name, m in (("markers", markers), ("pool states", states)):
        lines.append(
            f"{name}: {m.identical:,} identical, {m.differ:,} differ, {m.only_live:,} only live, "
            f"{m.only_replay:,} only in the replay"
        )
    lines.append(
        "no differences from the live state"
        if total_differ == 0 and not (markers.differ or markers.only_live or markers.only_replay)
        else f"{total_differ:,} players differ from the live state"
    )
    return lines


class Progress:
    """Entries done on standard error: a line redrawn in place on a terminal, else one
    line every `every` entries."""

    def __init__(self, total: int, out: TextIO | None = None, every: int = 10_000):
        self.total = total
        self.out = out if out is not None else sys.stderr
        self.every = every
        self.tty = bool(getattr(self.out, "isatty", lambda: False)())
        self.next_line = every
        self.last_draw = 0.0

    def __call__(self, done: int) -> None:
        if self.tty:
            now = time.monotonic()
            if now - self.last_draw >= 0.1 or done >= self.total:
                self.last_draw = now
                width = 30
                filled = width * done // self.total if self.total else width
                pct = 100 * done // self.total if self.total else 100
                self.out.write(
                    f"\rreplay [{'#' * filled}{'.' * (width - filled)}] {done:,}/{self.total:,} {pct}%"
                )
                self.out.flush()
        elif done >= self.next_line:
            self.out.write(f"replay: {done:,} of {self.total:,} entries\n")
            self.out.flush()
            while self.next_line <= done:
                self.next_line += self.every

    def finish(self) -> None:
        if self.tty:
            self.out.write("\n")
            self.out.flush()
