"""The data commands: `publish`, `import` and `export` (messages and player lists in and out
of Redis, JSON Lines, CSV or FIDE TRF), `convert` and `trf-ratings` (FIDE TRF,
service.formats.trf) and `replay` (service.runtime.replay). Bad input: UserError, one line
naming file and line.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import shlex
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import msgspec

from schemas.common import DEFAULT_POOL, SYSTEMS
from schemas.records import PlayerRecord, PoolState
from schemas.systems import is_pool, pools_text
from schemas.validation import InvalidMessage, decode_input
from service.cli import checks
from service.cli.errors import EXIT_OK, UserError
from service.cli.redisclient import run_redis
from service.cli.routing import layout_for, system_pool
from service.cli.settings import REDIS_HELP, cli_settings
from service.cli.trffile import (
    TrfEvent,
    add_trf_options,
    event_id_and_ids,
    is_trf,
    read_trf,
    trf_event,
    trf_given,
    trf_options,
)
from service.cli.wait import add_wait_options, finish, label_of, tails, wants_wait, watched_streams
from service.formats import trf
from service.formats.jsonlines import read_documents
from service.formats.ratinglists import (
    ListRead,
    PackedRecords,
    conflicts,
    read_list,
    read_list_report,
    render_csv,
    render_jsonl,
)
from service.rating import content_digest, marker_key
from service.runtime.entries import utc_today
from service.runtime.keys import StreamKeys, is_namespace
from service.runtime.records_io import export_pages, import_records
from service.runtime.store import decode_record, xadd
from service.timeline import decode_archived


def _check_pool(system: str, pool: str | None) -> None:
    if pool is not None and not is_pool(system, pool):
        raise UserError(f"--pool {pool!r} is not a {system} pool (one of {pools_text(system)})")


# ---------------------------------------------------------------------------- TRF
def publish_documents(args: argparse.Namespace) -> Iterator[tuple[str, bytes]]:
    """What `publish FILE` / `correct FILE` send: a TRF file as one event, else the file's
    JSON messages."""
    if is_trf(args.file):
        yield args.file, trf_event(args.file, args, utc_today(), cli_settings().limits).raw
        return
    refuse_trf_options(args)
    yield from read_documents(args.file)


def refuse_trf_options(args: argparse.Namespace) -> None:
    given = trf_given(args)
    if given:
        raise UserError(
            f"{args.file}: {', '.join(given)} apply to a TRF file only: a JSON message names its own"
        )


def cmd_convert(args: argparse.Namespace) -> int:
    """convert FILE.trf: print the event.finished/v1 JSON."""
    sys.stdout.write(trf_event(args.file, args).raw.decode() + "\n")
    return 0


async def check_not_rated(
    client: Any, keys: StreamKeys, found: TrfEvent, correct: str
) -> str | None:
    """Before publishing a TRF, look it up in the store: None when it may be sent; a message
    to print instead of sending when the tournament was already rated with these results (a
    duplicate changes nothing); UserError when it was rated with other results, which only
    `correct` may change (the service would dead-letter it as `conflict`).

    It reads the event's idempotency marker (`{S}:markers`, field `event:<event id>`: the
    digest of the content first rated, service/rating/needs.py `marker_key` / `content_digest`) and its
    archive entry (`{S}:events`: the current content, after corrections, and whether it is
    withdrawn). With no marker and an event id that is the tournament's identity, a rated
    event with the same name slug and start date but another id (its city or federation
    differ) is refused too, naming that id. `correct`: the command to suggest."""
    event = found.event
    name = f"tournament {event.name!r} (event id {event.event_id})"
    known = await client.hget(keys.markers, marker_key(event))
    if known is None:
        if found.derived_id:
            prefix = trf.identity_prefix(found.tournament)
            async for field, _ in client.hscan_iter(
                keys.markers, match=f"event:{prefix}*", count=1_000
            ):
                other = field.decode().removeprefix("event:")
                raise UserError(
                    f"{name}: a tournament with the same name and start date was already rated as event id "
                    f"{other} (its city or federation differ): if it is this one, publish it with "
                    f"`{correct} --event-id {other}`; if not, give --event-id"
                )
        return None
    digest = content_digest(event)
    raw = await client.hget(keys.events, event.event_id)
    current = decode_archived(raw) if raw is not None else None
    if current is not None and current.withdrawn:
        raise UserError(
            f"{name} was rated and then withdrawn: to count it again, publish it with `{correct}`"
        )
    same = current.event == event if current is not None else known.decode() == digest
    if same:
        return f"{name} was already rated, nothing to do"
    if known.decode() == digest:
        raise UserError(
            f"{name} was rated with these results and corrected since: to restore them, "
            f"publish it with `{correct}`"
        )
    raise UserError(f"{name} was already rated with other results: publish it with `{correct}`")


def cmd_trf_ratings(args: argparse.Namespace) -> int:
    """trf-ratings FILE.trf: rewrite the 001 ratings from the service's list (the pool
    defaults to the system's)."""
    args.system = args.system or "fide"
    _check_pool(args.system, args.pool)
    args.pool = args.pool or DEFAULT_POOL[args.system]
    tournament = read_trf(args.file)
    _, by_start, _ = event_id_and_ids(tournament, args)
    ids = [by_start[p.start] for p in tournament.players]

    async def read(client: Any) -> list:
        partition = (await layout_for(client, args.stream)).route(args.system, args.pool)
        return await client.hmget(StreamKeys(partition.input).players(args.system, args.pool), ids)

    replies = run_redis(args, read)
    ratings: dict[int, int | None] = {}
    unknown = []
    for player, pid, raw in zip(tournament.players, ids, replies):
        if raw is None:
            unknown.append(
                f"  {player.start:>4} {player.name} (id {pid}): keeps {player.rating or 'unrated'}"
            )
            continue
        ratings[player.start] = decode_record(raw).rating
    text = Path(args.file).read_bytes().decode("utf-8", errors="surrogateescape")
    new = trf.rewrite_text(text, ratings, args.file)
    if args.out:
        try:
            Path(args.out).write_bytes(new.encode("utf-8", errors="surrogateescape"))
        except OSError as exc:
            raise UserError(f"{args.out}: cannot write: {exc.strerror or exc}") from None
    else:
        sys.stdout.write(new)
        sys.stdout.flush()
    changed = sum(
        1 for p in tournament.players if p.start in ratings and ratings[p.start] != p.rating
    )
    print(
        f"{len(ratings)} players found in {args.system}/{args.pool}, {changed} ratings changed",
        file=sys.stderr,
    )
    if unknown:
        print(f"{len(unknown)} players unknown to the service keep their rating:", file=sys.stderr)
        print("\n".join(unknown), file=sys.stderr)
    return 0


# ---------------------------------------------------------------------------- lists
def list_rules():
    """The engines' checks of a list's records (service.rating.ListRules)."""
    from service.engine.registry import default_registry
    from service.rating import ListRules

    return ListRules(default_registry())


GUARD_PAGE = 5_000  # records per HMGET of the import guard


def read_import(args: argparse.Namespace) -> ListRead:
    """import FILE: JSON Lines or CSV records (--system / --pool fill and check them),
    each checked as the engines will read it; a missing status derived by their rules."""
    if args.system is not None:
        _check_pool(args.system, args.pool)
    return read_list_report(args.file, args.system, args.pool, list_rules())


async def guard_import(client: Any, keys: StreamKeys, records: PackedRecords, force: bool) -> None:
    """Refuse (without --force) an import that would overwrite a record different from
    the imported one: the pool has moved on since (rated events, or another list). Only
    the records whose id the pool holds are unpacked; a pool that does not exist yet is not
    read (a new pool: one EXISTS, D110)."""
    if force:
        return
    pools = records.pools()
    held = await asyncio.gather(*(client.exists(keys.players(*where)) for where in pools))
    empty = {where for where, there in zip(pools, held) if not there}  # nothing to clash with
    if len(empty) == len(pools):
        return
    clashing: dict[tuple[str, str], list[PlayerRecord]] = {}
    for start in range(0, len(records), GUARD_PAGE):  # pages: Redis is never blocked long
        by_pool: dict[tuple[str, str], list[tuple[int, str]]] = {}
        for n, (pool_of, pid) in enumerate(records.identities(start, start + GUARD_PAGE), start):
            if pool_of not in empty:
                by_pool.setdefault(pool_of, []).append((n, pid))
        for (system, pool), items in by_pool.items():
            replies = await client.hmget(keys.players(system, pool), [pid for _, pid in items])
            held = [(n, raw) for (n, _), raw in zip(items, replies) if raw is not None]
            if held:
                chunk = [records[n] for n, _ in held]
                existing: dict[str, PlayerRecord | None] = {
                    r.id: decode_record(raw) for r, (_, raw) in zip(chunk, held)
                }
                clashing.setdefault((system, pool), []).extend(conflicts(existing, chunk))
    for (system, pool), found in sorted(clashing.items()):
        if found:
            first = min(found, key=lambda r: r.id)
            raise UserError(
                f"{system}/{pool} already holds {len(found)} record(s) that differ from the list "
                f"(first: {first.id}): the pool has moved on (rated events or another list); "
                f"--force overwrites them"
            )


def export_format(args: argparse.Namespace) -> str:
    """JSON Lines (default) or CSV (--format csv, or an --out ending in .csv)."""
    return args.format or ("csv" if args.out and args.out.lower().endswith(".csv") else "jsonl")


async def write_export(args: argparse.Namespace, pages: AsyncIterator[list[PlayerRecord]]) -> int:
    """Write the pages as they come (to --out through a temporary file renamed at the end,
    so that a failed export leaves no half list); the number of records written."""
    csv_format = export_format(args) == "csv"
    target = Path(args.out) if args.out else None
    partial = target.with_name(f".{target.name}.partial") if target else None
    try:
        out = partial.open("wb") if partial else sys.stdout.buffer
    except OSError as exc:
        raise UserError(f"{args.out}: cannot write: {exc.strerror or exc}") from None
    written = 0
    try:
        async for page in pages:
            if csv_format:
                out.write(render_csv(page, header=written == 0).encode())
            else:
                out.write(render_jsonl(page))
            written += len(page)
        if csv_format and written == 0:
            out.write(render_csv([]).encode())
        out.flush()
    except OSError as exc:
        raise UserError(
            f"{args.out or 'standard output'}: cannot write: {exc.strerror or exc}"
        ) from None
    except BaseException:
        if partial:
            out.close()
            partial.unlink(missing_ok=True)
        raise
    if partial:
        out.close()
    if partial and target:
        try:
            partial.replace(target)
        except OSError as exc:
            raise UserError(f"{args.out}: cannot write: {exc.strerror or exc}") from None
    return written


# ---------------------------------------------------------------------------- replay
def cmd_replay(args: argparse.Namespace) -> int:
    """replay --stream S --into NS: re-rate S from the start into NS, report differences."""
    from service.engine.registry import default_registry
    from service.rating import MemoryLedger
    from service.runtime.replay import (
        Progress,
        compare,
        existing_keys,
        rerate,
        summary,
        write_ledger,
    )

    if not is_namespace(args.into or ""):
        raise UserError(f"--into {args.into!r}: a namespace is a name without ':', '{{' or '}}'")
    initial = read_list(args.ratings, rules=list_rules()) if args.ratings else []
    live = StreamKeys(args.stream)
    target = StreamKeys(args.stream, namespace=args.into)

    async def work(client: Any) -> list[str]:
        taken = await existing_keys(client, target)
        if taken and not args.force:
            raise UserError(
                f"namespace {args.into!r} already has {len(taken)} keys for stream {args.stream} "
                f"(e.g. {taken[0]}): choose another or give --force to replace them"
            )
        if taken:
            await client.delete(*taken)
        total = await client.xlen(args.stream)
        progress = Progress(total, every=args.progress_every)
        ledger = MemoryLedger(initial)
        counts = await rerate(client, args.stream, default_registry(), ledger, args.page, progress)
        progress.finish()
        written = await write_ledger(client, target, ledger, counts.last_id)
        await _replay_record(client, args.stream, args.into)
        diffs, markers, states = await compare(client, live, ledger)
        lines = [f"wrote {written:,} records under {target.prefix}*"]
        return summary(counts, diffs, markers, states, args.show) + lines

    for line in run_redis(args, work):
        print(line)
    return 0


async def _replay_record(client: Any, stream: str, namespace: str) -> None:
    """The identity record of the store a replay wrote (service/runtime/storeid.py)."""
    from service.runtime.storeid import StoreRefused, decode, encode, replay_record

    raw = await client.get(StreamKeys(stream).store)
    try:
        live = decode(raw, stream) if raw is not None else None
    except StoreRefused:
        live = None
    record = replay_record(live, stream, namespace)
    await client.set(StreamKeys(stream, namespace=namespace).store, encode(record))


def cmd_import(args: argparse.Namespace) -> int:
    """import FILE: load player records into the store (replacing records with the same id)."""
    with no_cycle_collection():
        return _import(args)


@contextlib.contextmanager
def no_cycle_collection() -> Iterator[None]:
    """The cyclic garbage collector off for a command that makes millions of short-lived,
    acyclic objects (a list's rows and records, their commands: D113): each of its passes
    walks every tracked object for nothing. Reference counting frees them as before."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _import(args: argparse.Namespace) -> int:
    read = read_import(args)
    records = read.records

    async def load(client):
        layout = await layout_for(client, args.stream)
        routes = {where: layout.route(*where).input for where in records.pools()}
        by_stream: dict[str, PackedRecords] = {}  # still packed: a 1M list is never all objects
        if len(set(routes.values())) == 1:  # one partition takes the whole list: no copy
            by_stream[next(iter(routes.values()))] = records
        else:
            for packed, where, pid in records.packed():
                by_stream.setdefault(routes[where], PackedRecords()).append_packed(
                    packed, where, pid
                )
        await checks.require_stores(client, args, layout, by_stream)
        for stream, chunk in by_stream.items():
            await guard_import(client, StreamKeys(stream), chunk, args.force)
        counts = [
            await import_records(client, StreamKeys(stream), chunk)
            for stream, chunk in by_stream.items()
        ]
        return sum(c[0] for c in counts), sum(c[1] for c in counts), list(by_stream)

    new, replaced, where = run_redis(args, load)
    stores = " and ".join(f"{s}'s" for s in where) if where else "the"
    print(
        f"imported {len(records)} records into {'stream ' if where else ''}{stores} store: {new} new, "
        f"{replaced} replaced"
    )
    if read.derived:
        print(f"status derived for {read.derived} record(s) without one, by their system's rules")
    if read.fide_without_games:
        print(
            f"note: {read.fide_without_games} rated FIDE record(s) came without career games (a `games` column;"
            " FIDE's Gms is one period's games): K is derived from games 0 once the list's own K ends (F7: 40 under"
            " 30 games)",
            file=sys.stderr,
        )
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    """export: dump one pool's records (the system's default pool unless --pool) as JSON
    Lines of player.record/v1. An empty pool is said on standard error (exit 0: there is
    nothing wrong in asking)."""
    pool = args.pool or DEFAULT_POOL[args.system]
    _check_pool(args.system, pool)

    async def read(client: Any) -> tuple[str, int]:
        partition = (await layout_for(client, args.stream)).route(args.system, pool)
        keys = StreamKeys(partition.input)
        pages = export_pages(client, keys, args.system, pool)
        return partition.input, await write_export(args, pages)

    stream, written = run_redis(args, read)
    if not written:
        print(
            f"rating-service export: {args.system}/{pool} holds no records in stream {stream}'s "
            "store: nothing exported (load a list with rating-service import FILE; "
            f"--stream names another store, --pool another of {pools_text(args.system)})",
            file=sys.stderr,
        )
    return EXIT_OK


def cmd_publish(args: argparse.Namespace) -> int:
    """publish FILE: append the file's messages to the input stream, each checked first. A
    TRF is first looked up in the store (check_not_rated): a tournament already rated is
    not sent again."""
    if is_trf(args.file):
        return publish_trf(args)
    messages = [checked(location, raw) for location, raw in publish_documents(args)]
    if not messages:
        raise UserError(f"{args.file}: no messages")
    return send_messages(args, messages)


def publish_trf(args: argparse.Namespace) -> int:
    found = trf_event(args.file, args, utc_today(), cli_settings().limits)
    correct = " ".join(["rating-service correct", shlex.quote(args.file), *trf_options(args)])

    async def look_up(client: Any) -> str | None:
        partition = (await layout_for(client, args.stream)).route(*system_pool(found.raw))
        return await check_not_rated(client, StreamKeys(partition.input), found, correct)

    said = run_redis(args, look_up)
    if said is not None:
        print(said)
        return EXIT_OK
    return send_messages(args, [found.raw], checks.file_ratings(found))


def send_messages(
    args: argparse.Namespace, messages: list[bytes], given: dict[str, int | None] | None = None
) -> int:
    """Append checked messages, each to the input stream of its partition (service/cli/routing.py),
    in one round trip, once the store was looked up (service/cli/checks.py; `given`: a TRF's
    ratings by player id); print their entry ids, or, waiting (service/cli/wait.py), what
    became of them."""
    waiting = wants_wait(args)

    async def send(client) -> int:
        layout = await layout_for(client, args.stream)
        routed = [layout.route(*system_pool(raw)) for raw in messages]
        await checks.require_stores(client, args, layout, [p.input for p in routed])
        looked = [(StreamKeys(p.input), decode_input(raw)) for p, raw in zip(routed, messages)]
        said = await checks.before_append(client, args, looked, given)
        if said is not None:
            print(said)
            return EXIT_OK
        watched = [watched_streams(args, p) for p in dict.fromkeys(routed)]
        since = await tails(client, *(s for w in watched for s in w[1:])) if waiting else {}
        async with client.pipeline(transaction=False) as pipe:
            for partition, raw in zip(routed, messages):
                xadd(pipe, partition.input, raw)
            ids = [i.decode() for i in await pipe.execute()]
        if not waiting:
            for entry_id in ids:
                print(entry_id)
            return EXIT_OK
        if sys.stderr.isatty():
            where = ", ".join(dict.fromkeys(p.input for p in routed))
            print(
                f"appended {len(ids)} entr{'y' if len(ids) == 1 else 'ies'} to {where}; waiting up to "
                f"{args.timeout:g} s for the service (Ctrl-C stops waiting, not the rating)",
                file=sys.stderr,
            )
        entries = [
            (p.input, entry_id, label_of(raw)) for p, entry_id, raw in zip(routed, ids, messages)
        ]
        return await finish(client, args, entries, watched, since)

    return run_redis(args, send)


def cmd_correct(args: argparse.Namespace) -> int:
    """correct FILE: publish the file's event (JSON, or a FIDE TRF) as event.corrected/v1,
    the new content of the rated event with the same id."""
    messages = []
    for location, raw in publish_documents(args):
        try:
            document = msgspec.json.decode(raw)
        except (msgspec.DecodeError, RecursionError) as exc:
            raise UserError(f"{location}: not valid JSON: {exc}") from None
        if not isinstance(document, dict) or document.get("schema") not in (
            "event.finished/v1",
            "event.corrected/v1",
        ):
            raise UserError(
                f"{location}: not an event (schema event.finished/v1 or event.corrected/v1)"
            )
        document["schema"] = "event.corrected/v1"
        if args.reason:
            document["reason"] = args.reason
        messages.append(checked(location, msgspec.json.encode(document)))
    if not messages:
        raise UserError(f"{args.file}: no messages")
    given = checks.file_ratings(trf_event(args.file, args)) if is_trf(args.file) else None
    return send_messages(args, messages, given)


def cmd_withdraw(args: argparse.Namespace) -> int:
    """withdraw EVENT_ID --system S --pool P: publish event.withdrawn/v1."""
    document = {"schema": "event.withdrawn/v1", "event_id": args.event_id, "system": args.system}
    if args.pool:
        document["pool"] = args.pool
    if args.reason:
        document["reason"] = args.reason
    return send_messages(args, [checked("withdraw", msgspec.json.encode(document))])


def _pool_and_period(args: argparse.Namespace) -> tuple[str | None, str]:
    """The [POOL] PERIOD of `close-period` and `reopen-period` (the pool checked; None: the
    system's default)."""
    if len(args.what) > 2:
        raise UserError(
            f"too many arguments: {' '.join(args.what)} (give [POOL] PERIOD, e.g. standard 2025-11)"
        )
    pool, period = (None, *args.what) if len(args.what) == 1 else args.what
    _check_pool(args.system, pool)
    return pool, period


def cmd_close_period(args: argparse.Namespace) -> int:
    """close-period SYSTEM [POOL] PERIOD: publish period.closed/v1."""
    pool, period = _pool_and_period(args)
    document = {"schema": "period.closed/v1", "system": args.system, "period": period}
    if pool:
        document["pool"] = pool
    return send_messages(args, [checked("close-period", msgspec.json.encode(document))])


def cmd_reopen_period(args: argparse.Namespace) -> int:
    """reopen-period SYSTEM [POOL] PERIOD: publish period.reopened/v1, once the store says
    PERIOD is the pool's latest close (else one line, exit 2, nothing appended)."""
    pool, period = _pool_and_period(args)
    document = {"schema": "period.reopened/v1", "system": args.system, "period": period}
    if pool:
        document["pool"] = pool
    if args.reason:
        document["reason"] = args.reason
    raw = checked("reopen-period", msgspec.json.encode(document))
    if not args.no_check:
        run_redis(args, lambda client: check_reopenable(client, args, pool, period))
    return send_messages(args, [raw])


async def check_reopenable(
    client: Any, args: argparse.Namespace, pool: str | None, period: str
) -> None:
    """UserError unless `period` is the pool's latest close and one a reopen can undo (what
    the service checks first: docs/rules/fide.md "F11 A close can be undone")."""
    pool = pool or DEFAULT_POOL[args.system]
    layout = await layout_for(client, args.stream)
    partition = layout.route(args.system, pool)
    await checks.require_stores(client, args, layout, [partition.input])
    raw = await client.hget(StreamKeys(partition.input).pools, f"{args.system}:{pool}")
    state = msgspec.json.decode(raw, type=PoolState) if raw is not None else None
    where = f"{args.system}/{pool}"
    if state is None or state.closed_through is None:
        raise UserError(f"nothing to reopen: {where} has no closed period")
    if state.closed_through != period:
        raise UserError(
            f"nothing to reopen: {period} is not the latest closed period of {where} (closed through"
            f" {state.closed_through}; only the latest close can be reopened)"
        )
    if not state.reopen_to:
        raise UserError(
            f"cannot reopen {period} of {where}: it was closed before closes kept what a reopen needs"
        )


def checked(location: str, raw: bytes) -> bytes:
    """The message, when it is valid and its dates plausible by today's date (UTC); else a
    UserError naming its first problem."""
    try:
        decode_input(raw, cli_settings().limits, utc_today())
    except InvalidMessage as exc:
        problem = exc.problems[0]
        raise UserError(f"{location}: {problem} ({problem.reason})") from None
    return raw


STREAM_HELP = (
    "input stream: the base name whose partitions the service advertised, or one partition's own "
    "stream (default: RATING_INPUT_STREAMS, events.finished); messages and records go to their "
    "partition's (RATING_PARTITIONS)"
)


def register(commands: Any) -> None:
    """Add the data commands to the command line, by group: the messages (publish,
    correct, withdraw, close-period), the lists (import, export), the TRF files (convert,
    trf-ratings) and replay."""
    _register_messages(commands)
    _register_lists(commands)
    _register_trf(commands)
    _register_replay(commands)


def _register_messages(commands: Any) -> None:
    """The commands that append a message to the input stream."""
    _register_publish(commands)
    _register_correct(commands)
    _register_withdraw(commands)
    _register_close_period(commands)
    _register_reopen_period(commands)


def _register_lists(commands: Any) -> None:
    """The commands that load player lists into the store and dump them out of it."""
    _register_import(commands)
    _register_export(commands)


def _register_trf(commands: Any) -> None:
    """The commands that read a FIDE TRF file (the event, or its players' ratings)."""
    _register_convert(commands)
    _register_trf_ratings(commands)


def _register_publish(commands: Any) -> None:
    """`publish` and its arguments."""
    p = commands.add_parser(
        "publish",
        help="append event.finished / period.closed messages to the input stream",
        description="Check the file's messages, append them to the input stream, and print their entry ids; "
        "with --wait (the default at a terminal), wait for the service and print what became of "
        "each: the rating changes as a table, a duplicate, or why it was rejected.",
    )
    p.add_argument(
        "file", metavar="FILE", help="JSON or JSON Lines messages, or a FIDE TRF file (one event)"
    )
    p.add_argument("--stream", help=STREAM_HELP)
    p.add_argument("--redis-url", help=REDIS_HELP)
    add_trf_options(p)
    checks.add_check_options(p)
    add_wait_options(p)
    p.set_defaults(func=cmd_publish)


def _register_correct(commands: Any) -> None:
    """`correct` and its arguments."""
    p = commands.add_parser(
        "correct",
        help="publish a rated event's new content (event.corrected/v1): it and later events are re-rated",
        description="Publish the new content of an already-rated event (same event id, system and pool): "
        "results, players or dates. The service re-rates it and every later event whose figures "
        "change, and publishes each changed result as a revision.",
    )
    p.add_argument(
        "file",
        metavar="FILE",
        help="the event as JSON (event.finished/v1 or event.corrected/v1), or a FIDE TRF file",
    )
    p.add_argument(
        "--reason", help="why, for the audit (e.g. 'round 3 result entered the wrong way round')"
    )
    p.add_argument("--stream", help=STREAM_HELP)
    p.add_argument("--redis-url", help=REDIS_HELP)
    add_trf_options(p)
    checks.add_check_options(p)
    add_wait_options(p)
    p.set_defaults(func=cmd_correct)


def _register_withdraw(commands: Any) -> None:
    """`withdraw` and its arguments."""
    p = commands.add_parser(
        "withdraw",
        help="publish event.withdrawn/v1: the event stops counting, later events are re-rated",
    )
    p.add_argument("event_id", metavar="EVENT_ID", help="the id of the rated event")
    p.add_argument("--system", required=True, choices=SYSTEMS, help="the event's rating system")
    p.add_argument("--pool", help="the event's pool (default: the system's default)")
    p.add_argument("--reason", help="why, for the audit")
    p.add_argument("--stream", help=STREAM_HELP)
    p.add_argument("--redis-url", help=REDIS_HELP)
    checks.add_check_options(p, events=False)
    add_wait_options(p)
    p.set_defaults(func=cmd_withdraw)


def _register_close_period(commands: Any) -> None:
    """`close-period` and its arguments."""
    p = commands.add_parser(
        "close-period",
        help="publish period.closed/v1: close a FIDE rating period and publish the new list",
        usage="rating-service close-period [options] SYSTEM [POOL] PERIOD",
        description="Close a rating period of one pool (FIDE): the service computes the new list and "
        "publishes it on the output stream (kind list, in chunks). Events of a closed period "
        "can no longer be inserted, corrected or withdrawn (period_closed). "
        "Example: rating-service close-period fide standard 2025-11",
    )
    _add_period_arguments(p)
    p.add_argument("--stream", help=STREAM_HELP)
    p.add_argument("--redis-url", help=REDIS_HELP)
    checks.add_check_options(p, events=False)
    add_wait_options(p)
    p.set_defaults(func=cmd_close_period)


def _add_period_arguments(p: argparse.ArgumentParser) -> None:
    """SYSTEM [POOL] PERIOD, as `close-period` and `reopen-period` take them."""
    p.add_argument(
        "system",
        metavar="SYSTEM",
        choices=SYSTEMS,
        help=f"the rating system ({', '.join(SYSTEMS)})",
    )
    p.add_argument(
        "what",
        nargs="+",
        metavar="[POOL] PERIOD",
        help="the pool (default: the system's default) and the period, YYYY-MM",
    )


def _register_reopen_period(commands: Any) -> None:
    """`reopen-period` and its arguments."""
    p = commands.add_parser(
        "reopen-period",
        help="publish period.reopened/v1: undo the latest close of a FIDE rating period",
        usage="rating-service reopen-period [options] SYSTEM [POOL] PERIOD",
        description="Undo the pool's latest close (FIDE): the list it published is withdrawn (one "
        "revision, cause reopened), each player's record is back to before the close, and the "
        "period's events are open again: correct, withdraw or publish into it, then close it "
        "again. Refused while events of a later period count in the pool. "
        "Example: rating-service reopen-period fide standard 2025-11",
    )
    _add_period_arguments(p)
    p.add_argument("--reason", help="why, for people (kept in the audit stream)")
    p.add_argument(
        "--no-check",
        action="store_true",
        help="append without looking the pool up first (for scripts)",
    )
    p.add_argument("--stream", help=STREAM_HELP)
    p.add_argument("--redis-url", help=REDIS_HELP)
    add_wait_options(p)
    p.set_defaults(func=cmd_reopen_period)


def _register_import(commands: Any) -> None:
    """`import` and its arguments."""
    p = commands.add_parser(
        "import", help="load player records (JSON Lines or CSV) into the service's store"
    )
    p.add_argument(
        "file",
        metavar="FILE",
        help="player.record/v1 JSON Lines, or CSV (`,` or `;`) with a header of field"
        " names or, with --system, the federation list's own columns",
    )
    p.add_argument(
        "--system",
        choices=SYSTEMS,
        help="the records' system (fills CSV rows, checks every record)",
    )
    p.add_argument("--pool", help="the records' pool (fills CSV rows, checks every record)")
    p.add_argument(
        "--force",
        action="store_true",
        help="overwrite records that differ from the list (rated since)",
    )
    p.add_argument(
        "--no-check",
        action="store_true",
        help="load without looking for the store's identity record first (for scripts)",
    )
    p.add_argument("--stream", help=STREAM_HELP)
    p.add_argument("--redis-url", help=REDIS_HELP)
    p.set_defaults(func=cmd_import)


def _register_export(commands: Any) -> None:
    """`export` and its arguments."""
    p = commands.add_parser("export", help="dump one pool's player records as JSON Lines")
    p.add_argument("--system", required=True, choices=SYSTEMS)
    p.add_argument(
        "--pool",
        help="the pool (default: the system's default: "
        + ", ".join(f"{system} {pool}" for system, pool in DEFAULT_POOL.items())
        + ")",
    )
    p.add_argument("--stream", help=STREAM_HELP)
    p.add_argument("--out", metavar="FILE", help="write here instead of standard output")
    p.add_argument(
        "--format",
        choices=("jsonl", "csv"),
        help="default: jsonl (csv for an --out ending in .csv)",
    )
    p.add_argument("--redis-url", help=REDIS_HELP)
    p.set_defaults(func=cmd_export)


def _register_convert(commands: Any) -> None:
    """`convert` and its arguments."""
    p = commands.add_parser("convert", help="print a FIDE TRF file as an event.finished/v1 message")
    p.add_argument("file", metavar="FILE.trf")
    add_trf_options(p)
    p.set_defaults(func=cmd_convert)


def _register_trf_ratings(commands: Any) -> None:
    """`trf-ratings` and its arguments."""
    p = commands.add_parser(
        "trf-ratings",
        help="rewrite the ratings of a TRF's player records from the service's current list",
    )
    p.add_argument("file", metavar="FILE.trf")
    add_trf_options(p, for_event=False)
    p.add_argument("--stream", help=STREAM_HELP)
    p.add_argument(
        "--out", metavar="FILE", help="write the new TRF here instead of standard output"
    )
    p.add_argument("--redis-url", help=REDIS_HELP)
    p.set_defaults(func=cmd_trf_ratings)


def _register_replay(commands: Any) -> None:
    """`replay` and its arguments."""
    p = commands.add_parser(
        "replay", help="re-rate a whole input stream into a fresh key namespace and compare"
    )
    p.add_argument(
        "--stream",
        default="events.finished",
        help="input stream to replay (default: events.finished)",
    )
    p.add_argument(
        "--into",
        required=True,
        metavar="NAMESPACE",
        help="key namespace to write the replayed state to",
    )
    p.add_argument(
        "--ratings", metavar="LIST", help="the list the live state started from (JSON Lines or CSV)"
    )
    p.add_argument(
        "--force", action="store_true", help="replace the namespace's keys if it has any"
    )
    p.add_argument(
        "--page", type=int, default=1_000, help="entries per XRANGE page (default: 1000)"
    )
    p.add_argument(
        "--show", type=int, default=50, help="differing players listed per pool (default: 50)"
    )
    p.add_argument(
        "--progress-every",
        type=int,
        default=10_000,
        help="off a terminal, a progress line every N entries",
    )
    p.add_argument("--redis-url", help=REDIS_HELP)
    p.set_defaults(func=cmd_replay)
