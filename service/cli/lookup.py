"""The lookup commands for people at a terminal: `player` (the record and its recent
history) and `history` (all of it, or as the API's JSON). They read what the read API
reads (runtime/queries.py)."""

from __future__ import annotations

import argparse
from typing import Any

import msgspec

from schemas.common import SYSTEMS
from schemas.reads import HistoryEntry, PlayerHistory, PlayerView
from schemas.systems import is_pool, pools_text
from service.cli.errors import EXIT_OK, UserError
from service.cli.redisclient import run_redis
from service.cli.settings import REDIS_HELP


async def _streams(client: Any, args: argparse.Namespace) -> list[str]:
    """--stream (repeatable), else every partition's input stream (service/cli/routing.py)."""
    if args.stream:
        return args.stream
    from service.cli.routing import layout_for

    return list((await layout_for(client, None)).inputs)


def _check_pool(args: argparse.Namespace) -> None:
    if not is_pool(args.system, args.pool):
        raise UserError(
            f"{args.system} has no pool {args.pool!r} (pools: {pools_text(args.system)})"
        )


def _lookup(
    args: argparse.Namespace, history: bool
) -> tuple[PlayerView | None, PlayerHistory | None]:
    from service.runtime.queries import ReadModel

    async def work(client: Any) -> tuple[PlayerView | None, PlayerHistory | None]:
        reads = ReadModel(client, await _streams(client, args))
        view = await reads.player(args.system, args.pool, args.id)
        lines = await reads.history(args.system, args.pool, args.id) if history else None
        return view, lines

    return run_redis(args, work)


def _signed(value: int | None) -> str:
    return "" if value is None else f"{value:+d}"


def _rating(value: int | None) -> str:
    return "-" if value is None else str(value)


def history_table(entries: list[HistoryEntry]) -> str:
    """The history as a plain table (FIDE lists as their own lines)."""
    rows = [("date", "event", "before", "after", "change", "games", "score")]
    for e in entries:
        if e.kind == "list":
            rows.append(
                (
                    f"list {e.list_period}",
                    f"FIDE list (closes {e.period})",
                    _rating(e.old_rating),
                    _rating(e.new_rating),
                    _signed(e.change),
                    str(e.games),
                    "",
                )
            )
            continue
        title = f"{e.name} ({e.event_id})" + (f" rev {e.revision}" if e.revision else "")
        after = _rating(e.new_rating) + (" proj" if e.projection else "")
        rows.append(
            (
                str(e.end_date),
                title,
                _rating(e.old_rating),
                after,
                _signed(e.change),
                str(e.event_games),
                f"{e.score:g}/{e.event_games}",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows
    )


def cmd_player(args: argparse.Namespace) -> int:
    """player: the current record, rank and the last events."""
    _check_pool(args)
    view, history = _lookup(args, history=True)
    if view is None:
        raise UserError(f"no player {args.id!r} in {args.system}/{args.pool}")
    if args.json:
        print(msgspec.json.encode(view).decode())
        return EXIT_OK
    print(f"{view.name or '(no name)'}  {view.system}/{view.pool} {view.id}")
    rank = f"  rank {view.rank}" if view.rank is not None else ""
    last = f"  last event {view.last_event_date}" if view.last_event_date else ""
    print(f"rating {_rating(view.rating)}  {view.status}  games {view.games}{rank}{last}")
    entries = history.entries if history is not None else []
    if entries:
        print()
        print(history_table(entries[-args.events :]))
    return EXIT_OK


def cmd_history(args: argparse.Namespace) -> int:
    """history: every rated event (and FIDE list) of the player, in date order."""
    _check_pool(args)
    _, history = _lookup(args, history=True)
    if history is None:
        raise UserError(f"no player {args.id!r} in {args.system}/{args.pool}")
    if args.json:
        print(msgspec.json.encode(history).decode())
    else:
        print(history_table(history.entries))
    return EXIT_OK


def register(commands: Any) -> None:
    """Add player and history to the command line."""
    for name, func, text in (
        (
            "player",
            cmd_player,
            "a player's current rating, rank and recent events, from the service's store",
        ),
        (
            "history",
            cmd_history,
            "a player's rating history in one pool (every event, revised figures), in date order",
        ),
    ):
        p = commands.add_parser(name, help=text, description=text)
        p.add_argument("system", metavar="SYSTEM", choices=SYSTEMS, help="cfc, fide or naspa")
        p.add_argument("pool", metavar="POOL", help="the pool (e.g. regular, standard, nwl)")
        p.add_argument("id", metavar="ID", help="the player's id")
        p.add_argument(
            "--json", action="store_true", help="print the read API's JSON instead of a table"
        )
        if name == "player":
            p.add_argument(
                "--events",
                type=int,
                default=10,
                help="how many recent events to list (default: 10)",
            )
        p.add_argument(
            "--stream",
            action="append",
            metavar="STREAM",
            help="input stream whose store to read (repeat for several; default: RATING_INPUT_STREAMS)",
        )
        p.add_argument("--redis-url", help=REDIS_HELP)
        p.set_defaults(func=func)
