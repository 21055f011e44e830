"""`rating-service watch`: ratings.updated messages as tables, for tournament directors."""

from __future__ import annotations

import argparse
import sys
from typing import Any, Iterable

import msgspec

from schemas.ratings import PlayerResult, RatingsUpdated
from service.cli.errors import EXIT_OK, REDIS_HELP, run_redis
from service.runtime.store import DATA_FIELD

_decoder = msgspec.json.Decoder(RatingsUpdated)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _change(result: PlayerResult) -> str:
    if result.change is None:
        return "-"
    return f"{result.change:+d}"


def _projected(result: PlayerResult) -> str:
    details = result.details
    projected = getattr(details, "projected_rating", None)
    return "-" if projected is None else f"{projected} (projected)"


def render(message: RatingsUpdated) -> str:
    """One message as a heading and a table of its players."""
    what = message.event_id if message.kind == "event" else f"list {message.period} ({message.chunk}/{message.chunks})"
    lines = [f"{what}  {message.system}/{message.pool}  {message.ruleset}  entry {message.source_id}"]
    fide_event = message.system == "fide" and message.kind == "event"
    headers = ["player", "old", "new", "change", "status", "games", "event", "score"]
    if fide_event:
        headers.append("projection")
    rows = []
    for p in message.players:
        status = p.status if p.status == p.old_status else f"{p.old_status} -> {p.status}"
        row = [p.id, _cell(p.old_rating), _cell(p.new_rating), _change(p), status, _cell(p.games),
               _cell(p.event_games), _cell(p.score)]
        if fide_event:
            row.append(_projected(p))
        rows.append(row)
    lines.extend(_table(headers, rows))
    return "\n".join(lines)


def _table(headers: list[str], rows: Iterable[list[str]]) -> list[str]:
    rows = list(rows)
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    left = {0, 4}  # player ids and statuses read better left-aligned

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return ["  " + line(headers), *("  " + line(r) for r in rows)]


def decode(data: bytes) -> RatingsUpdated:
    return _decoder.decode(data)


def cmd_watch(args: argparse.Namespace) -> int:
    """watch: follow the output stream and print each message as a table."""

    async def follow(client) -> None:
        last = "0-0" if args.from_start else "$"
        shown = 0
        while args.count is None or shown < args.count:
            reply = await client.xread({args.stream: last}, block=args.block_ms, count=100)
            if not reply:
                if args.count is not None:
                    return  # nothing more within the wait: stop
                continue
            for raw_id, fields in reply[0][1]:
                last = raw_id.decode()
                try:
                    print(render(decode(fields[DATA_FIELD.encode()])) + "\n", flush=True)
                except (KeyError, msgspec.ValidationError, msgspec.DecodeError) as exc:
                    print(f"{last}: not a ratings.updated/v1 message ({exc})", file=sys.stderr)
                shown += 1

    run_redis(args, follow)
    return EXIT_OK


def register(commands: Any) -> None:
    """Add watch to the command line."""
    p = commands.add_parser("watch", help="follow ratings.updated and print each event's changes as a table")
    p.add_argument("--stream", default="ratings.updated", help="output stream (default: ratings.updated)")
    p.add_argument("--from-start", action="store_true", help="show the messages already there too")
    p.add_argument("--count", type=int, help="stop after this many messages (or when none comes within --block-ms)")
    p.add_argument("--block-ms", type=int, default=5000, help="how long one read waits (default: 5000)")
    p.add_argument("--redis-url", help=REDIS_HELP)
    p.set_defaults(func=cmd_watch)
