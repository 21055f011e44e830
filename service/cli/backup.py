"""`rating-service backup`, `restore` and `archive-inputs` (docs/operations/backups.md): a
consistent copy of the store while the service runs (service/runtime/backup.py, D20), put
back onto an empty Redis (service/runtime/restore.py, D21), and the input streams archived
to files as they grow, to re-append what came after the last backup (service/runtime/archive.py,
D22). Here: the arguments, the checks and what is printed."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from service.cli.errors import EXIT_OK, UserError
from service.cli.redisclient import run_redis
from service.cli.routing import layout_for
from service.cli.settings import REDIS_HELP, redis_url

_FORCE = "--force"


def _size(n: int) -> str:
    for unit in ("bytes", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n = n / 1000  # type: ignore[assignment]  # a float from here on
    return f"{n} bytes"


def _rows(partitions: list) -> None:
    """The partitions of a backup as a table: name, applied cursor, keys, stream entries."""
    rows = [("partition", "cursor", "keys", "entries")]
    rows += [(p.name, p.cursor or "none", str(p.keys), str(p.entries)) for p in partitions]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for row in rows:
        cells = [row[0].ljust(widths[0]), row[1].ljust(widths[1])]
        cells += [row[2].rjust(widths[2]), row[3].rjust(widths[3])]
        print("  " + "  ".join(cells).rstrip())


def cmd_backup(args: argparse.Namespace) -> int:
    """backup FILE: a consistent copy of the store, while the service runs."""
    from service.runtime.backup import BackupFailed, take_backup
    from service.runtime.backupfile import FORMAT, Header, Writer
    from service.runtime.metrics import version
    from service.runtime.settings import redact

    path = Path(args.file)
    if path.is_dir():
        raise UserError(f"{path} is a directory: give the backup's file name")
    if not path.parent.is_dir():
        raise UserError(f"{path.parent}: no such directory")
    if args.tries < 1:
        raise UserError(f"--tries {args.tries}: at least 1")
    source = redact(redis_url(args))

    async def work(client: Any) -> Any:
        layout = await layout_for(client, None)
        partitions = list(layout.partitions)
        if args.stream:
            partitions = [p for p in partitions if args.stream in (p.name, p.input)]
            if not partitions:
                names = ", ".join(p.name for p in layout.partitions)
                raise UserError(
                    f"--stream {args.stream!r} is not a partition of the {layout.layout} layout (one of {names})"
                )
        created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        header = Header(FORMAT, created, version(), "", source, layout, [])
        writer = Writer(path)
        try:
            return await take_backup(client, layout, partitions, writer, header, args.tries)
        except BackupFailed as exc:
            raise UserError(str(exc)) from None
        finally:
            writer.discard()

    header = run_redis(args, work)
    print(
        f"backup of {header.source} ({header.server}), layout {header.layout.layout}, into {path}:"
    )
    _rows(header.partitions)
    print(
        f"total: {header.keys} keys, {header.entries} stream entries, {_size(path.stat().st_size)}"
    )
    return EXIT_OK


def _read(path: Path) -> tuple[Any, Any]:
    """The backup's header and what it would write, the whole file read and checked."""
    from service.runtime.backupfile import BackupProblem, check
    from service.runtime.restore import expected

    if not path.is_file():
        raise UserError(f"{path}: no such file")
    try:
        return check(path), expected(path)
    except BackupProblem as exc:
        raise UserError(str(exc)) from None


def cmd_restore(args: argparse.Namespace) -> int:
    """restore FILE: the backup written onto an empty Redis, checked."""
    from service.runtime import restore
    from service.runtime.settings import redact

    path = Path(args.file)
    header, wanted = _read(path)
    archive = _archive_plan(args, header) if args.then_archive else None
    target = redact(redis_url(args))

    async def work(client: Any) -> tuple[list[str], list[str]]:
        there = await restore.occupied(client, header)
        if there and not args.force:
            raise UserError(
                f"{target} already holds {len(there)} keys of the backup's stores (e.g. {there[0]}): "
                f"restore onto an empty Redis, or give {_FORCE} to replace them"
            )
        if args.dry_run:
            return there, []
        await restore.clear(client, there)
        await restore.write(client, path)
        problems = await restore.differences(client, wanted)
        if archive is not None and not problems:
            await archive.append(client)
        return there, problems

    there, problems = run_redis(args, work)
    done = "would restore" if args.dry_run else "restored"
    print(f"{done} {path} onto {target}:")
    print(
        f"  taken {header.created} from {header.source} ({header.server}, rating-service {header.package})"
    )
    _rows(header.partitions)
    if problems:
        for line in problems[:5]:
            print(f"  differs: {line}", file=sys.stderr)
        raise UserError(f"{len(problems)} keys differ from the backup after writing it")
    replaced = f", replacing {len(there)} keys that were there" if there else ""
    if args.dry_run:
        print(f"total: {header.keys} keys, {header.entries} stream entries{replaced}")
        if archive is not None:
            archive.report(dry_run=True)
        print("nothing was written (--dry-run)")
        return EXIT_OK
    print(
        f"total: {header.keys} keys, {header.entries} stream entries written and checked{replaced}"
    )
    if archive is not None:
        archive.report(dry_run=False)
    print("next: start the service on it; it resumes after each partition's cursor")
    return EXIT_OK


def _archive_plan(args: argparse.Namespace, header: Any) -> Any:
    """The archived entries after the backup (restore --then-archive DIR), read and checked."""
    from service.runtime.archive import ArchiveProblem, plan_replay

    folder = Path(args.then_archive)
    if not folder.is_dir():
        raise UserError(f"--then-archive {folder}: no such directory")
    try:
        return plan_replay(folder, header.partitions)
    except ArchiveProblem as exc:
        raise UserError(str(exc)) from None


def cmd_archive(args: argparse.Namespace) -> int:
    """archive-inputs DIR: append each input stream's entries to files there, as they come."""
    from service.runtime.archive import ArchiveProblem, archive_inputs, entries_

    folder = Path(args.dir)
    if folder.exists() and not folder.is_dir():
        raise UserError(f"{folder} is not a directory")
    folder.mkdir(parents=True, exist_ok=True)

    async def work(client: Any) -> dict[str, int]:
        layout = await layout_for(client, None)
        try:
            return await archive_inputs(client, list(layout.partitions), folder, args.once, _said)
        except ArchiveProblem as exc:
            raise UserError(str(exc)) from None

    counts = run_redis(args, work)
    total = sum(counts.values())
    streams = "input stream" if len(counts) == 1 else "input streams"
    print(f"archived {entries_(total, 'new entry')} of {len(counts)} {streams} into {folder}")
    return EXIT_OK


def _said(line: str) -> None:
    print(line, flush=True)


def register(commands: Any) -> None:
    """Add `backup`, `restore` and `archive-inputs` to the command line."""
    p = commands.add_parser(
        "backup",
        help="a consistent copy of the whole store (or one partition's) into a file",
        description="Copy every key of the service's store into FILE, while the service runs: each partition's "
        "keys, its input, output and dead-letter streams (entry ids and consumer groups), its redrive "
        "ledger and the advertised layout, read by type (portable across Redis and Valkey versions), "
        "with each partition's applied cursor in the header. Keys with a time to live (the leases) "
        "are not copied.",
    )
    p.add_argument("file", help="the backup file to write (replaced whole, once complete)")
    p.add_argument("--stream", help="only this partition (its name or input stream)")
    p.add_argument(
        "--tries",
        type=int,
        default=20,
        help="copies of a partition tried while commits land during them",
    )
    p.add_argument("--redis-url", help=REDIS_HELP)
    p.set_defaults(func=cmd_backup)

    p = commands.add_parser(
        "restore",
        help="write a backup onto an empty Redis, and check it",
        description="Check FILE (its size, SHA-256 and every record), write it onto a Redis that holds none of "
        "its stores' keys, then check each key's type and size. A service started on it resumes after "
        "each partition's applied cursor.",
    )
    p.add_argument("file", help="a file written by `rating-service backup`")
    p.add_argument(
        _FORCE,
        action="store_true",
        help="write even over a Redis that holds keys of the backup's stores (the service stopped): "
        "they are deleted first",
    )
    p.add_argument(
        "--dry-run", action="store_true", help="say what would be written, write nothing"
    )
    p.add_argument(
        "--then-archive",
        metavar="DIR",
        help="then re-append the entries archived in DIR (archive-inputs) after the backup, with their ids",
    )
    p.add_argument("--redis-url", help=REDIS_HELP + "; the Redis to restore onto")
    p.set_defaults(func=cmd_restore)

    p = commands.add_parser(
        "archive-inputs",
        help="append every input stream's entries to files in DIR, as they come",
        description="Follow the input streams and append each entry, with its id, to DIR/<partition>/<day>.jsonl "
        "(fsynced), starting after the last entry archived there: what a restore re-appends after "
        "the last backup (restore --then-archive DIR). Stops on SIGTERM or Ctrl-C.",
    )
    p.add_argument("dir", help="the archive's directory")
    p.add_argument("--once", action="store_true", help="archive what is there now, then exit")
    p.add_argument("--redis-url", help=REDIS_HELP)
    p.set_defaults(func=cmd_archive)
