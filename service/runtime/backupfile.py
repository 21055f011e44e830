"""The backup file (`rating-service backup` / `restore`, docs/operations/backups.md; D21):
portable across Redis and Valkey versions, since it holds each key's content by type, never
DUMP payloads (their RDB version differs from one server to the next).

    RATING-SERVICE-BACKUP 1\\n        the first line: what the file is, its format version
    {header JSON}\\n                   Header: when, from where, the layout, each partition's
                                      applied cursor, the counts, the body's size and SHA-256
    body                              gzip of frames: a 4-byte big-endian length, then one
                                      Record in MessagePack

A key is one or more records in a row (a big hash, set or list in chunks); a stream is its
entries' chunks, then its StreamState record (ids, counters, consumer groups); the last record is
End, with the counts. Values are bytes, as Redis holds them.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import struct
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import msgspec

from service.runtime.partitions import Layout

MAGIC = b"RATING-SERVICE-BACKUP"
FORMAT = 1
_LENGTH = struct.Struct(">I")
CHUNK = 10_000  # members, fields or entries per record


class BackupProblem(Exception):
    """Why a backup file cannot be read or trusted (one line, naming the file)."""


class PartitionHeader(msgspec.Struct):
    """One partition of the backup: its streams, where its applied cursor was, what it holds."""

    name: str
    input: str
    output: str
    dead_letter: str
    cursor: str | None  # the applied cursor in the snapshot (None: nothing applied yet)
    last_entry: str | None  # the input stream's last id in the snapshot (None: no stream)
    keys: int = 0
    entries: int = 0  # stream entries, of every stream of the partition


class Header(msgspec.Struct):
    format: int
    created: str  # UTC, ISO 8601
    package: str  # the rating-service version that wrote it
    server: str  # "redis 7.0.15", "valkey 9.1.2"
    source: str  # the Redis URL, password redacted
    layout: Layout
    partitions: list[PartitionHeader]
    keys: int = 0
    entries: int = 0
    body_bytes: int = 0
    sha256: str = ""


class StringKey(msgspec.Struct, array_like=True, tag="string"):
    key: bytes
    value: bytes


class HashKey(msgspec.Struct, array_like=True, tag="hash"):
    key: bytes
    items: list[bytes]  # field, value, field, value...


class ZSetKey(msgspec.Struct, array_like=True, tag="zset"):
    key: bytes
    items: list[tuple[bytes, float]]  # member, score


class SetKey(msgspec.Struct, array_like=True, tag="set"):
    key: bytes
    members: list[bytes]


class ListKey(msgspec.Struct, array_like=True, tag="list"):
    key: bytes
    items: list[bytes]  # in order


class StreamEntries(msgspec.Struct, array_like=True, tag="entries"):
    key: bytes
    entries: list[tuple[bytes, list[bytes]]]  # id, [field, value, ...]


class Group(msgspec.Struct, array_like=True):
    name: bytes
    last_delivered: bytes
    entries_read: int | None


class StreamState(msgspec.Struct, array_like=True, tag="stream"):
    """A stream's state after its entries: XSETID's and the consumer groups' (their pending
    entries and consumers are not kept: the service applies what was delivered and not
    committed from the cursor, docs/design/guarantees.md "Recovery")."""

    key: bytes
    last_id: bytes
    entries_added: int
    max_deleted: bytes
    groups: list[Group]


class End(msgspec.Struct, array_like=True, tag="end"):
    keys: int
    entries: int


Record = StringKey | HashKey | ZSetKey | SetKey | ListKey | StreamEntries | StreamState | End
_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(Record)


class _Hashing:
    """A file that counts and hashes what is written to it."""

    def __init__(self, raw: IO[bytes]):
        self.raw = raw
        self.sha = hashlib.sha256()
        self.size = 0

    def write(self, data: Any) -> int:
        self.sha.update(data)
        self.size += len(data)
        return self.raw.write(data)

    def flush(self) -> None:
        self.raw.flush()


class Writer:
    """Writes a backup: records into a temporary body, then `finish(header)` writes the file
    (first line, header, body) beside it and renames it into place, so a backup that fails
    leaves no file (and an earlier one of the same name whole)."""

    def __init__(self, path: Path):
        self.path = path
        folder = path.parent if str(path.parent) else Path(".")
        self._body = tempfile.TemporaryFile(dir=folder)
        self._hashing = _Hashing(self._body)
        self._gzip = gzip.GzipFile(fileobj=self._hashing, mode="wb", compresslevel=6, mtime=0)
        self.keys = 0
        self.entries = 0

    def write(self, record: Record) -> None:
        if isinstance(record, StreamEntries):
            self.entries += len(record.entries)
        frame = _encoder.encode(record)
        self._gzip.write(_LENGTH.pack(len(frame)) + frame)

    def key_done(self) -> None:
        self.keys += 1

    def finish(self, header: Header) -> Header:
        self.write(End(self.keys, self.entries))
        self._gzip.close()
        header.keys, header.entries = self.keys, self.entries
        header.body_bytes, header.sha256 = self._hashing.size, self._hashing.sha.hexdigest()
        partial = self.path.with_name(f".{self.path.name}.partial")
        with partial.open("wb") as out:
            out.write(MAGIC + b" " + str(FORMAT).encode() + b"\n")
            out.write(msgspec.json.encode(header) + b"\n")
            self._body.seek(0)
            while block := self._body.read(1 << 20):
                out.write(block)
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, self.path)
        self._body.close()
        return header

    def discard(self) -> None:
        self._body.close()


def read_header(path: Path) -> tuple[Header, int]:
    """The file's header and where its body starts; BackupProblem if it is not a backup."""
    try:
        with path.open("rb") as f:
            first = f.readline(100)
            if not first.startswith(MAGIC + b" "):
                raise BackupProblem(
                    f"{path}: not a rating-service backup (no {MAGIC.decode()} line)"
                )
            version = first[len(MAGIC) + 1 :].strip()
            if version != str(FORMAT).encode():
                raise BackupProblem(
                    f"{path}: backup format {version.decode(errors='replace')}, this version reads {FORMAT}"
                )
            line = f.readline(16 << 20)
            start = f.tell()
    except OSError as exc:
        raise BackupProblem(f"{path}: {exc.strerror or exc}") from None
    try:
        return msgspec.json.decode(line, type=Header), start
    except msgspec.DecodeError as exc:
        raise BackupProblem(f"{path}: the header cannot be read ({exc})") from None


def check(path: Path) -> Header:
    """The header, once the body's size and SHA-256 are the header's (a truncated or
    damaged file is refused here, before anything is written)."""
    header, start = read_header(path)
    size = path.stat().st_size - start
    if size != header.body_bytes:
        raise BackupProblem(
            f"{path}: truncated or damaged: the body is {size} bytes, the header says {header.body_bytes}"
        )
    sha = hashlib.sha256()
    with path.open("rb") as f:
        f.seek(start)
        while block := f.read(1 << 20):
            sha.update(block)
    if sha.hexdigest() != header.sha256:
        raise BackupProblem(f"{path}: damaged: the body's SHA-256 is not the header's")
    return header


def records(path: Path) -> Iterator[Record]:
    """The body's records in order, End last (checked against the header's counts)."""
    header, start = read_header(path)
    with path.open("rb") as raw:
        raw.seek(start)
        body = gzip.GzipFile(fileobj=raw, mode="rb")
        try:
            while True:
                head = body.read(_LENGTH.size)
                if not head:
                    raise BackupProblem(f"{path}: the body ends before its last record")
                (size,) = _LENGTH.unpack(head)
                frame = body.read(size)
                if len(frame) != size:
                    raise BackupProblem(f"{path}: the body ends inside a record")
                record = _decoder.decode(frame)
                yield record
                if isinstance(record, End):
                    if (record.keys, record.entries) != (header.keys, header.entries):
                        raise BackupProblem(
                            f"{path}: the body holds {record.keys} keys and {record.entries} entries, "
                            f"the header says {header.keys} and {header.entries}"
                        )
                    return
        except (OSError, EOFError, zlib.error, struct.error, msgspec.DecodeError) as exc:
            raise BackupProblem(f"{path}: damaged body ({exc})") from None
