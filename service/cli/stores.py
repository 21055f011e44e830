"""`rating-service init-store`, `upgrade-store` and `adopt-namespace`: the stores' identity
records (service/runtime/storeid.py, storeplans.py; docs/operations/upgrades.md). The first two
work on the stores of the layout the settings give (RATING_PARTITIONS, RATING_INPUT_STREAMS,
as `serve` reads them) and print one line per store; the third makes a replay's store live."""

from __future__ import annotations

import argparse
from typing import Any

from service.cli.errors import EXIT_OK, UserError
from service.cli.redisclient import run_redis
from service.cli.settings import REDIS_HELP, cli_settings, redis_url


def cmd_init_store(args: argparse.Namespace) -> int:
    """init-store: the records of a new deployment's stores, and the layout advertised."""
    from service.runtime import storeplans
    from service.runtime.storeid import StoreRefused

    layout = cli_settings().layout

    async def work(client: Any) -> list[storeplans.Step]:
        try:
            steps = await storeplans.plan_init(client, layout)
            await storeplans.apply_init(client, layout, steps)
        except StoreRefused as exc:
            raise UserError(str(exc)) from None
        return steps

    for step in run_redis(args, work):
        assert step.record is not None
        print(f"created the store of {step.stream}: {storeplans.summary(step.record)}")
    print(f"advertised the {layout.layout} layout for {layout.base} (`rating-service streams`)")
    return EXIT_OK


def cmd_upgrade_store(args: argparse.Namespace) -> int:
    """upgrade-store [--dry-run]: bring the layout's stores to this version's store format."""
    from service.runtime import storeplans
    from service.runtime.settings import redact
    from service.runtime.storeid import FORMAT, StoreRefused

    layout = cli_settings().layout
    url = redact(redis_url(args))

    async def work(client: Any) -> list[storeplans.Step]:
        try:
            steps = await storeplans.plan_upgrade(client, layout, url)
            if not args.dry_run:
                await storeplans.apply_upgrade(client, layout, steps)
        except StoreRefused as exc:
            raise UserError(str(exc)) from None
        return steps

    steps = run_redis(args, work)
    for step in steps:
        print(_step_line(step, args.dry_run))
    if args.dry_run:
        print("nothing written (--dry-run)")
    elif all(step.action == "keep" for step in steps):
        print(f"every store is at store format {FORMAT}: nothing written")
    return EXIT_OK


def _step_line(step: Any, dry_run: bool) -> str:
    from service.runtime.storeplans import summary

    record = step.record
    if step.refold is not None:
        from service.runtime.refold import said

        return f"{step.stream}: {'would refold' if dry_run else 'refolded'} {said(step.refold)}"
    if step.action == "histories":
        verb = "would make" if dry_run else "made"
        return (
            f"{step.stream}: {verb} its {len(step.histories):,} players' histories one string "
            "each (store format 3 keeps a history so, D121)"
        )
    if step.action == "keep":
        return f"{step.stream}: {step.said}: nothing to do"
    if step.action == "mark":
        verb = "would mark" if dry_run else "marked"
        return (
            f"{step.stream}: {step.said}: {verb} it migrated to the {record.migrated_to} layout "
            f"(a replica of the {record.layout} layout refuses it)"
        )
    if step.action == "raise":
        verb = "would raise" if dry_run else "raised"
        return (
            f"{step.stream}: {step.said}: {verb} it to store format {record.format} (its data is "
            f"read as it is; a replica of an earlier version refuses it)"
        )
    verb = {"write": "wrote", "create": "created"}[step.action]
    if dry_run:
        verb = "would " + {"write": "write", "create": "create"}[step.action]
    return f"{step.stream}: {step.said}: {verb} its store record ({summary(record)})"


def cmd_adopt_namespace(args: argparse.Namespace) -> int:
    """adopt-namespace NS [--stream S] [--keep-as OLD] [--yes]: make a replay's store live."""
    from service.runtime import storeplans
    from service.runtime.keys import StreamKeys, is_namespace
    from service.runtime.storeid import StoreRefused

    for option, name in (("NAMESPACE", args.namespace), ("--keep-as", args.keep_as)):
        if not is_namespace(name):
            raise UserError(f"{option} {name!r}: a namespace is a name without ':', '{{' or '}}'")
    if args.keep_as == args.namespace:
        raise UserError("--keep-as names the namespace being made live: give another")
    stream = args.stream or cli_settings().input_streams[0]

    async def work(client: Any) -> storeplans.Adoption:
        try:
            plan = await storeplans.plan_adopt(client, stream, args.namespace, args.keep_as)
            if args.yes:
                await storeplans.apply_adopt(client, plan)
        except StoreRefused as exc:
            raise UserError(str(exc)) from None
        return plan

    plan = run_redis(args, work)
    kept = StreamKeys(stream, args.keep_as).prefix
    if not args.yes:
        print(
            f"would move the {len(plan.live)} keys of {stream}'s live store under {kept}... and "
            f"make the {len(plan.adopted)} keys of namespace {args.namespace} live"
        )
        print("nothing moved: give --yes (with every replica stopped)")
        return EXIT_OK
    print(
        f"moved the {len(plan.live)} keys of {stream}'s live store under {kept}... (back: "
        f"rating-service adopt-namespace {args.keep_as} --keep-as {args.namespace} --yes)"
    )
    print(
        f"made the {len(plan.adopted)} keys of namespace {args.namespace} live: {stream}'s store "
        f"now ({storeplans.summary(plan.record)})"
    )
    return EXIT_OK


def register(commands: Any) -> None:
    """Add init-store and upgrade-store to the command line."""
    p = commands.add_parser(
        "init-store",
        help="create the stores of a new deployment (their identity records), once",
        description="On a Redis that holds none of the layout's stores (RATING_PARTITIONS, "
        "RATING_INPUT_STREAMS): write each store's identity record and advertise the layout, so "
        "that `serve` and the writing commands find it. Refused, listing what is there, when a "
        "store has a record or keys. Run it once per deployment: a replica refuses an empty "
        "store, which is also what a restore that did not load looks like.",
    )
    p.add_argument("--redis-url", help=REDIS_HELP)
    p.set_defaults(func=cmd_init_store)

    p = commands.add_parser(
        "upgrade-store",
        help="bring the stores to this version's store format (their identity records)",
        description="Write the identity record of each store of the layout written by a version "
        "before store formats (keys, no record), and of an empty store beside them; mark a "
        "single-layout store copied into the domains layout before store formats as migrated. "
        "Refused for a store of a newer format, or one whose record disagrees with the settings.",
    )
    p.add_argument(
        "--dry-run", action="store_true", help="say what it would write, and write nothing"
    )
    p.add_argument("--redis-url", help=REDIS_HELP)
    p.set_defaults(func=cmd_upgrade_store)

    p = commands.add_parser(
        "adopt-namespace",
        help="make a replay's store (replay --into NAMESPACE) the live one, keeping the old",
        description="With every replica stopped: rename the live store's keys of the input stream "
        "under --keep-as, then the namespace's keys (written by `rating-service replay --into "
        "NAMESPACE`) to the live names, and rewrite both stores' records. The lease keys stay. "
        "The replicas started again go on from the replay's cursor (the entries after it are "
        "applied); the output stream is not rewritten. Without --yes, says what it would move.",
    )
    p.add_argument("namespace", metavar="NAMESPACE", help="the replay's namespace")
    p.add_argument(
        "--stream", help="the input stream (default: RATING_INPUT_STREAMS, events.finished)"
    )
    p.add_argument(
        "--keep-as",
        default="previous",
        metavar="NAMESPACE",
        help="where the live store's keys go (default: previous)",
    )
    p.add_argument("--yes", action="store_true", help="move (without it: only say what would move)")
    p.add_argument("--redis-url", help=REDIS_HELP)
    p.set_defaults(func=cmd_adopt_namespace)
