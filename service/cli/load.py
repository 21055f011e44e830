"""`rating-service load`: a federation's history, a JSON Lines file in date order, streamed
into a stream's store in chunks and resumable (service/runtime/onboard.py, D115-D118)."""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path
from typing import Any

from service.cli.errors import EXIT_OK, UserError
from service.cli.redisclient import run_redis
from service.cli.settings import REDIS_HELP, cli_settings


def peak_rss_mib() -> float:
    """This process's peak resident set (Linux: ru_maxrss in KiB; macOS: in bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def cmd_load(args: argparse.Namespace) -> int:
    """load EVENTS --stream S [--ratings LIST]: the history into S's store (see the module).
    Without the cyclic garbage collector (D140): each chunk's end collects (onboard.settle)."""
    from service.cli.data import no_cycle_collection

    with no_cycle_collection():
        return _load(args)


def _load(args: argparse.Namespace) -> int:
    from service.cli.data import list_rules
    from service.engine.registry import default_registry
    from service.formats.ratinglists import read_list
    from service.runtime.keys import StreamKeys
    from service.runtime.onboard import REPLY_TIMEOUT, Loader, LoadProgress, LoadRefused

    path = Path(args.events)
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    if args.chunk < 1:
        raise UserError(f"--chunk {args.chunk}: give at least 1 message a chunk")
    settings = cli_settings()
    records = read_list(args.ratings, rules=list_rules()) if args.ratings else []
    stream = args.stream or settings.input_streams[0]
    try:
        settings.layout.of_stream(stream)
    except KeyError as exc:
        raise UserError(f"--stream {stream}: {exc.args[0]} (RATING_INPUT_STREAMS)") from None
    keys = StreamKeys(stream)
    started = time.monotonic()

    def say(line: str) -> None:
        print(line, file=sys.stderr)

    async def work(client: Any) -> list[str]:
        loader = Loader(client, keys, settings, default_registry(), args.chunk, say)
        try:
            fresh = await loader.begin(path, records, time.time_ns() // 1_000_000)
        except LoadRefused as exc:
            raise UserError(str(exc)) from None
        if not fresh:
            return [
                f"{path}: loaded already into stream {stream} ({loader.at.messages:,} messages)"
            ]
        resumed = loader.at.messages
        if resumed:
            say(f"resuming after message {resumed:,} (line {loader.at.lines:,})")
        at = await loader.run(path, LoadProgress(path.stat().st_size, loader.at, sys.stderr))
        spent = time.monotonic() - started
        done = at.messages - resumed
        return [
            f"loaded {path} into stream {stream}: {at.messages:,} messages, {at.applied:,} applied,"
            f" {at.duplicates:,} duplicates, {at.rejected:,} rejected, in {at.chunks:,} chunks",
            f"this run: {done:,} messages in {spent:.1f} s ({done / max(spent, 1e-9):,.0f}/s),"
            f" peak RSS {peak_rss_mib():,.0f} MiB",
        ]

    for line in run_redis(args, work, socket_timeout=REPLY_TIMEOUT):
        print(line)
    return EXIT_OK


def register(commands: Any) -> None:
    """Add load to the command line."""
    p = commands.add_parser(
        "load",
        help="load a federation's history (JSON Lines, in date order) into a stream's store, "
        "streamed and resumable",
    )
    p.add_argument(
        "events",
        metavar="EVENTS",
        help="the history: one input message a line (event.finished, period.closed, corrections, "
        "withdrawals, reopens), in the order the service is to apply them",
    )
    p.add_argument(
        "--stream",
        help="the input stream whose store is written (default: the first of RATING_INPUT_STREAMS); "
        "one with no store yet, or the one a crashed load left",
    )
    p.add_argument(
        "--ratings", metavar="LIST", help="the starting list, JSON Lines or CSV, imported first"
    )
    p.add_argument(
        "--chunk",
        type=int,
        default=500,
        help="messages a chunk: one transaction of writes and checkpoint (default: 500)",
    )
    p.add_argument("--redis-url", help=REDIS_HELP)
    p.set_defaults(func=cmd_load)
