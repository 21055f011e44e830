"""The input streams archived to files as they grow (`rating-service archive-inputs DIR`,
docs/operations/backups.md; D22), as PostgreSQL archives its write-ahead log: with a backup,
what a federation keeps to lose nothing when its Redis is lost.

Each partition's entries go to `DIR/<partition>/<YYYY-MM-DD>.jsonl` (the UTC day of the
entry's id), one JSON line per entry: its id, its stream and its fields (text, or base64
when a field is not UTF-8). Each batch is written, flushed and fsynced before the next read;
a start goes on after the last entry archived (a line cut short by a crash is dropped
first). `restore --then-archive DIR` re-appends the entries after the backup's last input
entry, with their own ids, before a service starts: they are applied as they were first
(same order, same arrival), and an event the restored markers know changes nothing.
"""

from __future__ import annotations

import asyncio
import base64
import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from service.entryids import entry_ms, entry_order
from service.runtime.backupfile import PartitionHeader
from service.runtime.connection import on_owner, xread
from service.runtime.partitions import Partition
from service.runtime.replies import text

BATCH = 1_000
BLOCK_MS = 1_000
SUFFIX = ".jsonl"


class ArchiveProblem(Exception):
    """An archive that cannot be read or appended to (one line, naming the file)."""


class ArchivedEntry(msgspec.Struct, omit_defaults=True):
    id: str
    stream: str
    fields: list[tuple[str, str]]
    base64: bool = False

    def flat(self) -> list[bytes]:
        """The fields as XADD takes them: name, value, name, value..."""
        if self.base64:
            return [base64.b64decode(x) for pair in self.fields for x in pair]
        return [x.encode() for pair in self.fields for x in pair]


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(ArchivedEntry)


def archived(stream: str, entry_id: bytes | str, fields: dict) -> ArchivedEntry:
    """An entry as the archive keeps it."""
    pairs = list(fields.items())
    try:
        return ArchivedEntry(text(entry_id), stream, [(k.decode(), v.decode()) for k, v in pairs])
    except UnicodeDecodeError:
        b64 = [(base64.b64encode(k).decode(), base64.b64encode(v).decode()) for k, v in pairs]
        return ArchivedEntry(text(entry_id), stream, b64, base64=True)


def entries_(n: int, what: str = "entry") -> str:
    """ "1 entry", "3 entries" ("1 archived entry", ...)."""
    return f"{n} {what}" if n == 1 else f"{n} {what[:-1]}ies"


def _day(entry_id: str) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(entry_ms(entry_id) / 1000))


class PartitionArchive:
    """One partition's folder of the archive."""

    def __init__(self, root: Path, partition: Partition | PartitionHeader):
        self.folder = root / partition.name
        self.stream = partition.input

    def files(self) -> list[Path]:
        return sorted(self.folder.glob("*" + SUFFIX)) if self.folder.is_dir() else []

    def last_id(self) -> str | None:
        """The last entry archived (a last line cut short is removed first)."""
        files = self.files()
        if not files:
            return None
        last = files[-1]
        data = last.read_bytes()
        cut = data.rfind(b"\n") + 1
        if cut != len(data):
            with last.open("r+b") as f:
                f.truncate(cut)
            data = data[:cut]
        lines = data.splitlines()
        if not lines:
            return None
        return self._decode(lines[-1], last, len(lines)).id

    def _decode(self, line: bytes, path: Path, number: int) -> ArchivedEntry:
        try:
            entry = _decoder.decode(line)
        except msgspec.DecodeError as exc:
            raise ArchiveProblem(f"{path}:{number}: not an archived entry ({exc})") from None
        if entry.stream != self.stream:
            raise ArchiveProblem(
                f"{path}:{number}: an entry of {entry.stream}, not of {self.stream}: "
                "this folder is another store's archive"
            )
        return entry

    def append(self, entries: list[ArchivedEntry]) -> None:
        """Write the entries to their days' files, flushed and fsynced."""
        self.folder.mkdir(parents=True, exist_ok=True)
        by_day: dict[str, list[bytes]] = {}
        for entry in entries:
            by_day.setdefault(_day(entry.id), []).append(_encoder.encode(entry) + b"\n")
        for day, lines in sorted(by_day.items()):
            with (self.folder / (day + SUFFIX)).open("ab") as f:
                f.write(b"".join(lines))
                f.flush()
                os.fsync(f.fileno())

    def entries(self) -> Iterator[ArchivedEntry]:
        """Every entry archived, in order (ids checked to grow)."""
        last = (0, 0)
        for path in self.files():
            with path.open("rb") as f:
                for number, line in enumerate(f, 1):
                    if not line.endswith(b"\n"):
                        break  # cut short by a crash: never acknowledged as archived
                    entry = self._decode(line, path, number)
                    order = entry_order(entry.id)
                    if order <= last:
                        raise ArchiveProblem(f"{path}:{number}: entry {entry.id} is out of order")
                    last = order
                    yield entry


async def archive_inputs(
    client: Any,
    partitions: list[Partition],
    root: Path,
    once: bool,
    say: Callable[[str], None],
    stop: asyncio.Event | None = None,
) -> dict[str, int]:
    """Archive every partition's input stream, from its last archived entry on: until
    caught up (`once`), else until SIGTERM / SIGINT (or `stop`). The entries archived, by
    partition."""
    archives = {p.input: PartitionArchive(root, p) for p in partitions}
    names = {p.input: p.name for p in partitions}
    after = {s: a.last_id() or "0-0" for s, a in archives.items()}
    counts = dict.fromkeys(names.values(), 0)
    stop = stop or _stopped_by_signals()
    while not stop.is_set():
        replies = await xread(client, dict(after), count=BATCH, block=None if once else BLOCK_MS)
        if not replies:
            if once:
                break
            continue
        for raw_stream, entries in replies:
            stream = text(raw_stream)
            batch = [archived(stream, i, f) for i, f in entries]
            archives[stream].append(batch)
            after[stream] = batch[-1].id
            counts[names[stream]] += len(batch)
            if not once:
                say(f"{names[stream]}: {entries_(len(batch))} archived, up to {batch[-1].id}")
    return counts


def _stopped_by_signals() -> asyncio.Event:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    return stop


class Replay(msgspec.Struct):
    """The archived entries a restore re-appends: per partition, those after the backup's
    last input entry."""

    streams: dict[str, list[ArchivedEntry]]
    notes: list[str]

    async def append(self, client: Any) -> None:
        """XADD each entry with its own id, in order (the stream's last id is the backup's)."""
        for stream, entries in self.streams.items():
            for start in range(0, len(entries), BATCH):
                chunk = entries[start : start + BATCH]

                async def run(owner: Any, s: str = stream, c: list = chunk) -> None:
                    await _xadd(owner, s, c)

                await on_owner(client, stream, run)

    def report(self, dry_run: bool) -> None:
        verb = "would re-append" if dry_run else "re-appended"
        for stream, entries in self.streams.items():
            if entries:
                print(
                    f"then: {verb} {entries_(len(entries), 'archived entry')} to {stream}, up to {entries[-1].id}"
                )
            else:
                print(f"then: nothing archived after the backup for {stream}")
        for note in self.notes:
            print(f"note: {note}")


async def _xadd(client: Any, stream: str, entries: list[ArchivedEntry]) -> None:
    async with client.pipeline(transaction=False) as pipe:
        for entry in entries:
            pipe.execute_command("XADD", stream, entry.id, *entry.flat())
        await pipe.execute()


def plan_replay(root: Path, partitions: list[PartitionHeader]) -> Replay:
    """The entries of `root` after each partition's last input entry in the backup."""
    streams: dict[str, list[ArchivedEntry]] = {}
    notes = []
    for partition in partitions:
        since = entry_order(partition.last_entry or "0-0")
        chosen, first = [], None
        for entry in PartitionArchive(root, partition).entries():
            first = first or entry.id
            if entry_order(entry.id) > since:
                chosen.append(entry)
        if first is not None and entry_order(first) > since and partition.last_entry:
            notes.append(
                f"the archive of {partition.name} starts at {first}, after the backup's last entry "
                f"{partition.last_entry}: entries between them may be missing"
            )
        streams[partition.input] = chosen
    return Replay(streams, notes)
