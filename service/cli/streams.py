"""`rating-service streams`: the partitions and their streams, for producers that append with
a plain XADD and subscribers that read the outputs (service/runtime/partitions.py)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import msgspec

from service.cli.errors import EXIT_OK, UserError
from service.cli.redisclient import run_redis
from service.cli.routing import layout_for
from service.cli.settings import REDIS_HELP, cli_settings
from service.runtime.keys import StreamKeys
from service.runtime.partitions import DOMAINS, advertised, layout_of


def cmd_streams(args: argparse.Namespace) -> int:
    """streams: which input stream takes which pools' events, and where results and rejections go."""

    async def read(client: Any) -> tuple:
        layout = await layout_for(client, args.stream)
        return layout, await advertised(client, layout.base) is not None

    layout, live = run_redis(args, read)
    if args.json:
        sys.stdout.buffer.write(msgspec.json.encode(layout) + b"\n")
        return EXIT_OK
    source = (
        "as the service advertised"
        if live
        else "from the settings (no service has advertised its layout here)"
    )
    print(f"layout {layout.layout}, {source}:\n")
    rows = [("partition", "pools", "input (append here)", "output", "dead letters")]
    for p in layout.partitions:
        pools = (
            "any"
            if p.domains is None
            else " ".join(f"{s}/{q}" for d in p.domains for s, q in DOMAINS.pools(d))
        )
        rows.append((p.name, pools, p.input, p.output, p.dead_letter))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    return EXIT_OK


def cmd_migrate(args: argparse.Namespace) -> int:
    """migrate-partitions: copy the single layout's store into the domains layout's partitions."""
    from service.runtime import migrate

    settings = cli_settings()
    source = args.stream or settings.input_streams[0]
    layout = layout_of("domains", (source,), settings.output_stream, settings.dead_letter_stream)

    async def work(client: Any) -> migrate.Plan:
        try:
            await migrate.check(client, source, layout)
        except migrate.MigrationRefused as exc:
            raise UserError(str(exc)) from None
        found = await migrate.plan(client, source, layout)
        if args.yes:
            await migrate.apply(client, found)
            try:
                await migrate.write_records(client, source, layout)
            except migrate.MigrationRefused as exc:
                raise UserError(str(exc)) from None
        return found

    found = run_redis(args, work)
    done = "copied" if args.yes else "would copy"
    print(
        f"{source}'s store ({len(found.copies)} keys, {sum(len(m) for m in found.fields.values())} hash fields) "
        f"{done} into the domains layout's partitions:"
    )
    for partition in layout.partitions:
        n = found.counts.get(partition.name, 0)
        if n:
            print(
                f"  {partition.name:<14} {n:>8} keys and fields  -> {StreamKeys(partition.input).prefix}..."
            )
    for key in found.left:
        print(f"  not copied (unknown kind): {key}", file=sys.stderr)
    if not args.yes:
        print("nothing was written: give --yes to copy (the service stopped; the old keys stay)")
    else:
        print(
            f"wrote the partitions' store records, marked {source}'s store migrated (a replica "
            "without RATING_PARTITIONS=domains refuses it) and advertised the domains layout"
        )
        print(
            "next: start the service with RATING_PARTITIONS=domains (publish and import route by themselves)"
        )
    return EXIT_OK


def register(commands: Any) -> None:
    """Add `streams` to the command line."""
    p = commands.add_parser(
        "streams",
        help="the partitions: which input stream takes which pools, and their output streams",
        description="Print the partition layout (RATING_PARTITIONS) the service advertised, else the settings': "
        "for each partition, the pools whose events it takes, the input stream to append them to, and "
        "the output and dead-letter streams a subscriber reads.",
    )
    p.add_argument(
        "--stream", help="the base input stream (default: RATING_INPUT_STREAMS, events.finished)"
    )
    p.add_argument("--json", action="store_true", help="the layout as JSON")
    p.add_argument("--redis-url", help=REDIS_HELP)
    p.set_defaults(func=cmd_streams)

    p = commands.add_parser(
        "migrate-partitions",
        help="copy a single-layout store into the domains layout's partitions",
        description="With the service stopped and every entry applied: copy the store of the input stream (records, "
        "histories, archived events, markers, results, rankings) into the partitions of "
        "RATING_PARTITIONS=domains, each key and hash field to the partition of its pool. The old keys "
        "stay. Without --yes, says what it would copy.",
    )
    p.add_argument(
        "--stream", help="the single layout's input stream (default: RATING_INPUT_STREAMS)"
    )
    p.add_argument(
        "--yes", action="store_true", help="copy (without it: only say what would be copied)"
    )
    p.add_argument("--redis-url", help=REDIS_HELP)
    p.set_defaults(func=cmd_migrate)
