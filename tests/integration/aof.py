"""A power cut, as an append-only file sees it: the commands a Redis wrote after its last
fsync are gone. A SIGKILL of the server alone loses nothing it wrote (the kernel keeps the
file's pages), so the durability tests (test_durability.py) kill it and then cut its AOF where
a power cut could have: at a command of their choosing, or inside one (a torn write).

Redis 7 keeps its AOF in `appendonlydir/`: a base file and an incremental one
(`appendonly.aof.<n>.incr.aof`) of commands in the protocol's own form, in the order they ran;
the tests run the server with automatic rewrites off, so there is one incremental file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Command:
    """One command of the file: its bytes `start`..`end` and its arguments."""

    start: int
    end: int
    argv: tuple[bytes, ...]

    @property
    def name(self) -> bytes:
        return self.argv[0].upper()


def incremental_file(data_dir: str | Path) -> Path:
    """The (one) incremental AOF of a server's data directory."""
    [found] = sorted((Path(data_dir) / "appendonlydir").glob("*.incr.aof"))
    return found


def commands(path: Path) -> list[Command]:
    """Every complete command of the file, in order."""
    data = path.read_bytes()
    found, at = [], 0
    while at < len(data):
        start = at
        assert data[at : at + 1] == b"*", f"{path}: no command at byte {at}"
        line_end = data.index(b"\r\n", at)
        count, at = int(data[at + 1 : line_end]), line_end + 2
        argv = []
        for _ in range(count):
            line_end = data.index(b"\r\n", at)
            length = int(data[at + 1 : line_end])
            at = line_end + 2
            argv.append(data[at : at + length])
            at += length + 2
        found.append(Command(start, at, tuple(argv)))
    return found


def cut(path: Path, size: int) -> None:
    """Keep the first `size` bytes of the file: what a power cut left of it."""
    with path.open("r+b") as file:
        file.truncate(size)
