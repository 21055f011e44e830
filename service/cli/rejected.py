"""`rating-service rejected`: the dead letters (event.rejected/v1), for the people who fix
them: `list`, `show ID`, `redrive ID... [--file FIXED.json]`, `purge`.

The dead-letter stream stays an append-only audit: a redrive re-appends the letter's message
(or a fixed one) to the input stream it came from and records, in the stream's redrive ledger
(hash `<dead-letter stream>:redriven`: letter id -> new entry id; service/runtime/deadletters.py),
which entry it became, in one atomic step. `list` shows each letter's state from it; the
service's `rating_dead_letter_oldest_age_seconds` counts only letters not redriven. Only
`purge` removes letters (and their ledger fields). What touches Redis is in
service/runtime/deadletters.py; here: the arguments, the checks and what is printed.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from typing import Any

import msgspec

from schemas.rejected import REASONS, EventRejected
from service.cli.checks import require_stores
from service.cli.data import checked
from service.cli.errors import EXIT_OK, UserError
from service.cli.redisclient import run_redis
from service.cli.routing import layout_for, system_pool
from service.cli.settings import REDIS_HELP, cli_settings
from service.cli.wait import add_wait_options, finish, label_of, tails, wants_wait, watched_streams
from service.cli.watch import fields_table, rejection_rows, table
from service.entryids import entry_age
from service.formats.jsonlines import read_documents
from service.runtime import deadletters
from service.runtime.deadletters import Letters, Redrive, original_data, states
from service.runtime.partitions import Layout, Partition
from service.runtime.store import DATA_FIELD

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def _partition(layout: Layout, stream: str) -> Partition:
    """The partition of an input stream a letter came from (one of another layout: the
    settings' output and dead-letter streams)."""
    if stream in layout.inputs:
        return layout.of_stream(stream)
    settings = cli_settings()
    return Partition(stream, stream, settings.output_stream, settings.dead_letter_stream)


def parse_age(value: str) -> int:
    """An age such as `45s`, `90m`, `12h`, `30d`, `2w` (or `1d12h`), in seconds."""
    parts = re.fullmatch(r"(?:\d+[smhdw])+", value.strip().lower())
    if not parts:
        raise UserError(
            f"--before {value!r}: an age is a number and a unit, s m h d or w (e.g. 30d, 12h, 1d12h)"
        )
    return sum(int(n) * _UNITS[u] for n, u in re.findall(r"(\d+)([smhdw])", value.strip().lower()))


def format_age(seconds: float) -> str:
    """An age for a table: `45s`, `12m`, `3h 05m`, `2d 04h` (the two largest units)."""
    s = max(0, int(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m"
    if s < 86400:
        return f"{s // 3600}h {s % 3600 // 60:02d}m"
    return f"{s // 86400}d {s % 86400 // 3600:02d}h"


async def _dead_letter_streams(client: Any, args: argparse.Namespace) -> list[str]:
    """--dead-letter-stream, else every partition's (service/cli/routing.py)."""
    if args.dead_letter_stream:
        return [args.dead_letter_stream]
    layout = await layout_for(client, None)
    return list(dict.fromkeys(p.dead_letter for p in layout.partitions))


async def _find(
    client: Any, args: argparse.Namespace, letter_id: str
) -> tuple[str, EventRejected, str | None]:
    """The dead letter `letter_id`: the stream that holds it, the letter, the entry it was last
    redriven as (service/runtime/deadletters.py `find_letter`); none, or an entry that is not
    a letter, is a user error."""
    streams = await _dead_letter_streams(client, args)
    found = await deadletters.find_letter(client, streams, letter_id)
    if found is None:
        raise UserError(
            f"no dead letter {letter_id} in {' or '.join(streams)} (rating-service rejected list shows them)"
        )
    if found.letter is None:
        raise UserError(f"{found.stream} {letter_id}: not an event.rejected/v1 message")
    return found.stream, found.letter, found.redriven_as


# ---------------------------------------------------------------------------- list
def cmd_list(args: argparse.Namespace) -> int:
    """rejected list: the dead letters as a table (oldest first, partition by partition), or
    JSON Lines."""

    async def read(client: Any) -> list:
        return [
            (stream, *await deadletters.read_letters(client, stream))
            for stream in await _dead_letter_streams(client, args)
        ]

    found = run_redis(args, read)
    shown_any = False
    for stream, letters, ledger in found:
        if len(found) > 1 and not letters and not args.json:
            continue
        shown_any = True
        _list_one(args, stream, letters, ledger)
    if not shown_any:
        print("no dead letters in " + ", ".join(s for s, _, _ in found))
    return EXIT_OK


def _list_one(
    args: argparse.Namespace,
    stream: str,
    letters: Letters,
    ledger: dict[str, str],
) -> None:
    state = states(letters, ledger)
    now = time.time()
    shown = [
        (i, l)
        for i, l in letters
        if (args.reason is None or (l is not None and l.reason == args.reason))
        and (not args.open or state[i] == "open")
    ]
    if args.limit:
        shown = shown[-args.limit :]
    if args.json:
        for letter_id, letter in shown:
            record = {
                "id": letter_id,
                "stream": stream,
                "age_seconds": round(entry_age(letter_id, now), 3),
                "redriven_as": ledger.get(letter_id),
                "letter": letter,
            }
            sys.stdout.buffer.write(msgspec.json.encode(record) + b"\n")
        sys.stdout.buffer.flush()
        return
    if not shown:
        print(f"no dead letters in {stream}" + (" matching" if args.reason or args.open else ""))
        return
    rows = []
    for letter_id, letter in shown:
        if letter is None:
            rows.append(
                [
                    letter_id,
                    format_age(entry_age(letter_id, now)),
                    "?",
                    "(not an event.rejected/v1 message)",
                    "-",
                    state[letter_id],
                ]
            )
            continue
        rows.append(
            [
                letter_id,
                format_age(entry_age(letter_id, now)),
                letter.reason,
                letter.event_id or "-",
                letter.source_id,
                state[letter_id],
            ]
        )
    print(
        "\n".join(
            line[2:]
            for line in table(
                ["letter", "age", "reason", "event", "entry", "state"],
                rows,
                left={0, 1, 2, 3, 4, 5},
            )
        )
    )
    opened = sum(1 for i, _ in shown if state[i] == "open")
    print(f"\n{len(shown)} dead letter(s) in {stream}, {opened} open\n")


# ---------------------------------------------------------------------------- show
def cmd_show(args: argparse.Namespace) -> int:
    """rejected show ID: one dead letter in full, with the original message."""

    async def read(client: Any) -> tuple:
        _, letter, new = await _find(client, args, args.id)
        return letter, new, await deadletters.still_in_stream(client, letter)

    letter, new, still = run_redis(args, read)
    if args.json:
        record = {"id": args.id, "redriven_as": new, "entry_in_stream": still, "letter": letter}
        sys.stdout.buffer.write(msgspec.json.encode(record) + b"\n")
        return EXIT_OK
    print(
        f"{letter.event_id or '(no readable event id)'}  REJECTED: {letter.reason}  dead letter {args.id}"
    )
    where = (
        "still in the input stream"
        if still
        else "no longer in the input stream (trimmed or deleted)"
    )
    rows = [
        *rejection_rows(letter),
        ["entry", f"{letter.source_id} of {letter.source_stream}, {where}"],
        ["age", format_age(entry_age(args.id, time.time()))],
        ["state", f"redriven as {new}" if new else "open"],
    ]
    print("\n".join(fields_table(rows)))
    data = original_data(letter)
    others = {k: v for k, v in letter.fields.items() if k != DATA_FIELD}
    print("\nthe message:")
    if data is None:
        print("  (the entry had no __data__ field)")
    else:
        try:
            print(msgspec.json.format(data.decode(), indent=2))
        except (UnicodeDecodeError, msgspec.DecodeError):
            print(data.decode("utf-8", "backslashreplace"))
    if others or letter.fields_base64:
        print("\nother fields of the entry:")
        for name, value in sorted(others.items()):
            print(f"  {name}: {value}")
        for name in sorted(k for k in letter.fields_base64 if k != DATA_FIELD):
            print(f"  {name}: (base64) {letter.fields_base64[name]}")
    return EXIT_OK


# ---------------------------------------------------------------------------- redrive
def _fixed(path: str) -> bytes:
    documents = list(read_documents(path))
    if len(documents) != 1:
        raise UserError(f"{path}: a fixed message is one message, not {len(documents)}")
    location, raw = documents[0]
    return checked(location, raw)


async def _plan(
    client: Any, args: argparse.Namespace, layout: Layout, letter_id: str, fixed: bytes | None
) -> Redrive:
    """What redriving `letter_id` appends (its message, or the fixed one), checked first: a
    letter redriven already (without --again), one without a message (without --file), a
    message still invalid or for another partition is a user error."""
    stream, letter, new = await _find(client, args, letter_id)
    if new is not None and not args.again:
        raise UserError(
            f"dead letter {letter_id} was redriven already, as entry {new} of "
            f"{letter.source_stream}: --again redrives it once more"
        )
    data = fixed if fixed is not None else original_data(letter)
    if data is None:
        raise UserError(
            f"dead letter {letter_id} ({letter.reason}): the entry had no {DATA_FIELD} field: "
            f"give the fixed message with --file"
        )
    if fixed is None:
        try:
            checked(f"dead letter {letter_id}", data)
        except UserError as exc:
            raise UserError(
                f"{exc}: the message is still invalid, give a fixed one with --file"
            ) from None
    right = layout.route(*system_pool(data))
    if right.input != letter.source_stream and letter.source_stream in layout.inputs:
        # The ledger is in the slot of the stream the letter came from: a message for
        # another partition is published, not redriven.
        raise UserError(
            f"dead letter {letter_id}: the message belongs on {right.input}, not "
            f"{letter.source_stream}: publish it there (rating-service publish FILE routes it), "
            f"then purge the letter"
        )
    return Redrive(letter_id, stream, letter, data)


def cmd_redrive(args: argparse.Namespace) -> int:
    """rejected redrive ID... [--file FIXED.json]: re-append to the source input stream."""
    if args.file and len(args.ids) > 1:
        raise UserError("--file gives the fixed message of one dead letter: give one ID")
    fixed = _fixed(args.file) if args.file else None
    waiting = wants_wait(args)

    async def redrive(client: Any) -> int:
        layout = await layout_for(client, None)
        plans = [await _plan(client, args, layout, i, fixed) for i in args.ids]
        sources = list(dict.fromkeys(plan.letter.source_stream for plan in plans))
        await require_stores(client, args, layout, [s for s in sources if s in layout.inputs])
        watched = [watched_streams(args, _partition(layout, source)) for source in sources]
        since = await tails(client, *(s for w in watched for s in w[1:])) if waiting else {}
        done = []
        for plan in plans:
            letter = plan.letter
            fresh, entry_id = await deadletters.redrive(client, plan, args.again)
            if not fresh:
                print(
                    f"dead letter {plan.letter_id}: redriven meanwhile by someone else, as entry {entry_id}",
                    file=sys.stderr,
                )
                continue
            what = "the fixed message" if fixed is not None else "its message"
            print(
                f"dead letter {plan.letter_id} ({letter.reason}, {letter.event_id or 'no event id'}): {what} "
                f"appended to {letter.source_stream} as entry {entry_id}"
            )
            done.append((letter.source_stream, entry_id, label_of(plan.data)))
        if not waiting or not done:
            return EXIT_OK
        return await finish(
            client, args, done, [w for w in watched if any(w[0] == d[0] for d in done)], since
        )

    return run_redis(args, redrive)


# ---------------------------------------------------------------------------- purge
def cmd_purge(args: argparse.Namespace) -> int:
    """rejected purge --before AGE | --all [--yes]: remove dead letters (and their ledger)."""
    if bool(args.before) == bool(args.all):
        raise UserError("give --before AGE (e.g. 30d) or --all")
    min_id = None if args.all else f"{int((time.time() - parse_age(args.before)) * 1000)}-0"

    async def purge(client: Any) -> str:
        said = [
            await purge_one(client, stream) for stream in await _dead_letter_streams(client, args)
        ]
        done = [line for line in said if not line.startswith("nothing to remove")]
        return "\n".join(done or said)

    async def purge_one(client: Any, stream: str) -> str:
        plan = await deadletters.plan_purge(client, stream, min_id)
        what = f"{plan.letters} dead letter(s) of {stream} ({plan.opened} open, never redriven)"
        if not plan.letters:
            return f"nothing to remove: no dead letter in {stream}" + (
                f" older than {args.before}" if min_id else ""
            )
        if not args.yes:
            raise UserError(f"would remove {what}: give --yes to remove them")
        await deadletters.purge(client, plan)
        return f"removed {what}"

    print(run_redis(args, purge))
    return EXIT_OK


def register(commands: Any) -> None:
    """Add `rejected` (list, show, redrive, purge) to the command line."""
    p = commands.add_parser(
        "rejected",
        help="the dead letters: list, show, redrive (re-append, fixed or not), purge",
        description="What the service refused (the dead-letter stream, event.rejected/v1), and what to do about "
        "it. A redrive re-appends the letter's message, or a fixed one, to the input stream it came "
        "from and records it: the dead-letter stream itself stays as it was, an audit.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument(
            "--dead-letter-stream", help="default: RATING_DEAD_LETTER_STREAM, events.rejected"
        )
        q.add_argument("--redis-url", help=REDIS_HELP)

    q = actions.add_parser(
        "list", help="the dead letters as a table: reason, event, source entry, age, state"
    )
    q.add_argument("--reason", choices=REASONS, help="only the letters of this reason")
    q.add_argument("--open", action="store_true", help="only the letters not redriven")
    q.add_argument("--limit", type=int, metavar="N", help="only the N newest (of those chosen)")
    q.add_argument(
        "--json",
        action="store_true",
        help="JSON Lines: id, age_seconds, redriven_as and the letter",
    )
    common(q)
    q.set_defaults(func=cmd_list)

    q = actions.add_parser(
        "show", help="one dead letter in full: why, where from, state, the original message"
    )
    q.add_argument(
        "id", metavar="ID", help="the dead letter's id (its entry id in the dead-letter stream)"
    )
    q.add_argument(
        "--json",
        action="store_true",
        help="the letter as JSON, with redriven_as and entry_in_stream",
    )
    common(q)
    q.set_defaults(func=cmd_show)

    q = actions.add_parser(
        "redrive",
        help="re-append dead letters' messages (or a fixed one) to their input stream",
        description="Re-append each letter's original message, or with --file the fixed message, to the input "
        "stream the letter came from, and record it (a second redrive of the same letter is refused "
        "without --again). Useful once the cause is gone: a fix (--file), an imported list "
        "(unratable), an upgrade (unknown_system), a bug fixed (poison). A message that is still "
        "invalid is refused before anything is appended.",
    )
    q.add_argument("ids", nargs="+", metavar="ID", help="dead letter id(s)")
    q.add_argument(
        "--file", metavar="FIXED.json", help="the fixed message to append instead (one ID only)"
    )
    q.add_argument(
        "--again", action="store_true", help="redrive letters that were redriven already"
    )
    q.add_argument("--redis-url", help=REDIS_HELP)
    add_wait_options(q)  # with --dead-letter-stream
    q.set_defaults(func=cmd_redrive)

    q = actions.add_parser("purge", help="remove old dead letters (asks for --yes)")
    q.add_argument(
        "--before", metavar="AGE", help="remove the letters older than AGE: 45s, 90m, 12h, 30d, 2w"
    )
    q.add_argument("--all", action="store_true", help="remove every letter")
    q.add_argument(
        "--yes", action="store_true", help="do it (without it: say what would go, exit 2)"
    )
    common(q)
    q.set_defaults(func=cmd_purge)
