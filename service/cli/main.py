"""The `rating-service` command line: validate, rate offline, generate schemas.

Bad input gets one line naming the file, line and field, and exit code 2; a failed
check (`validate`, `schemas --check`) exits 1. Never a traceback for the user's input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable, Sequence

import msgspec

from schemas import asyncapi, jsonschema
from schemas.common import POOLS, SYSTEMS
from schemas.ratings import RatingsUpdated
from schemas.records import PlayerRecord
from schemas.rejected import EventRejected
from schemas.validation import InvalidMessage, Limits, decode_input
from service.cli import data as datacommands
from service.engine.registry import Registry, default_registry
from service.formats.jsonlines import FileProblem, read_documents
from service.rating import Duplicate, MemoryLedger, Rejected

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class UserError(Exception):
    """A problem with the user's input: printed as one line, exit code 2."""


_encoder = msgspec.json.Encoder()
_record_decoder = msgspec.json.Decoder(PlayerRecord)
_output_decoders = {
    "ratings.updated/v1": msgspec.json.Decoder(RatingsUpdated),
    "event.rejected/v1": msgspec.json.Decoder(EventRejected),
    "player.record/v1": _record_decoder,
}


def _schema_name(raw: bytes) -> str | None:
    try:
        document = msgspec.json.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return None
    return document.get("schema") if isinstance(document, dict) else None


def _problems_of(raw: bytes, limits: Limits) -> list[str]:
    """Every problem of one message of any kind of the contract, as `path: message`."""
    name = _schema_name(raw)
    if name in _output_decoders:
        try:
            _output_decoders[name].decode(raw)
        except msgspec.ValidationError as exc:
            return [_msgspec_line(str(exc))]
        return []
    try:
        decode_input(raw, limits)
    except InvalidMessage as exc:
        return [f"{p} ({p.reason})" for p in exc.problems]
    return []


def _msgspec_line(text: str) -> str:
    message, _, where = text.partition(" - at `")
    return f"{where.rstrip('`') or '$'}: {message}"


def cmd_validate(args: argparse.Namespace) -> int:
    """validate FILE...: print `ok` per valid file, or each problem with its location."""
    limits = Limits()
    failed = False
    for file in args.files:
        count = 0
        problems = 0
        for location, raw in read_documents(file):
            count += 1
            for problem in _problems_of(raw, limits):
                problems += 1
                print(f"{location}: {problem}")
        if count == 0:
            print(f"{file}: no messages")
            failed = True
        elif problems:
            failed = True
        else:
            print(f"{file}: ok ({count} message{'s' if count != 1 else ''})")
    return EXIT_FAILED if failed else EXIT_OK


def cmd_rate(args: argparse.Namespace, registry: Registry | None = None) -> int:
    """rate EVENTS: rate the messages in order, print one `ratings.updated` per line."""
    registry = registry if registry is not None else default_registry()
    from service.formats.ratinglists import read_list

    ledger = MemoryLedger(read_list(args.ratings) if args.ratings else [])
    out = sys.stdout.buffer
    for location, raw in read_documents(args.events):
        try:
            message = decode_input(raw)
        except InvalidMessage as exc:
            problem = exc.problems[0]
            raise UserError(f"{location}: {problem} ({problem.reason})") from None
        try:
            result = ledger.process(message, registry, source_id=location)
        except Rejected as exc:
            line = f"{location}: {exc.path}: {exc.message} ({exc.reason})"
            if not args.keep_going:
                raise UserError(line) from None
            print(f"rejected: {line}", file=sys.stderr)
            continue
        if isinstance(result, Duplicate):
            print(f"{location}: {result.marker} already applied, skipped", file=sys.stderr)
            continue
        for output in result.outputs:
            out.write(_encoder.encode(output) + b"\n")
    out.flush()
    if args.out_ratings:
        write_records(args.out_ratings, ledger.all_records())
    return EXIT_OK


def write_records(path: str, records: list[PlayerRecord]) -> None:
    try:
        with open(path, "wb") as f:
            for record in records:
                f.write(_encoder.encode(record) + b"\n")
    except OSError as exc:
        raise UserError(f"{path}: cannot write: {exc.strerror or exc}") from None


def cmd_schemas(args: argparse.Namespace) -> int:
    """schemas: write the JSON Schemas and the AsyncAPI document, or check they are current."""
    out = Path(args.out) if args.out else jsonschema.JSON_DIR
    api = (Path(args.out) if args.out else asyncapi.ASYNCAPI_FILE.parent) / asyncapi.ASYNCAPI_FILE.name
    if args.check:
        stale = [str(out / name) for name in jsonschema.stale(out)] + ([str(api)] if asyncapi.stale(api) else [])
        for path in stale:
            print(f"{path}: stale, run `rating-service schemas`")
        return EXIT_FAILED if stale else EXIT_OK
    for path in jsonschema.write(out):
        print(path)
    api.write_text(asyncapi.render(), encoding="utf-8")
    print(api)
    return EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    """serve: run the service until SIGTERM / SIGINT."""
    import asyncio

    from service.runtime.app import serve
    from service.runtime.settings import SettingsError, load_settings

    try:
        settings = load_settings(redis_url=args.redis_url, consumer=args.consumer)
    except SettingsError as exc:
        raise UserError(str(exc)) from None
    asyncio.run(serve(settings))
    return EXIT_OK


def _redis_url(args: argparse.Namespace) -> str:
    from service.runtime.settings import load_settings

    return args.redis_url or load_settings().redis_url


def _run_redis(args: argparse.Namespace, work: Callable) -> object:
    """Run `work(client)` against the Redis of --redis-url; a connection failure is one line."""
    import asyncio

    import redis.asyncio as aioredis
    from redis.exceptions import RedisError

    async def main() -> object:
        client = aioredis.Redis.from_url(_redis_url(args))
        try:
            return await work(client)
        finally:
            await client.aclose()

    try:
        return asyncio.run(main())
    except (RedisError, OSError) as exc:
        from service.runtime.settings import redact, redact_error

        url = _redis_url(args)
        raise UserError(f"Redis at {redact(url)}: {redact_error(exc, url)}") from None


def cmd_import(args: argparse.Namespace) -> int:
    """import FILE: load player records into the store (replacing records with the same id)."""
    from service.cli.data import guard_import, read_import
    from service.runtime.store import StreamKeys, import_records

    records = read_import(args)
    keys = StreamKeys(args.stream)

    async def load(client):
        await guard_import(client, keys, records, args.force)
        return await import_records(client, keys, records)

    new, replaced = _run_redis(args, load)  # type: ignore[misc]
    print(f"imported {len(records)} records into stream {args.stream}'s store: {new} new, {replaced} replaced")
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    """export: dump one pool's records as JSON Lines of player.record/v1."""
    from service.runtime.store import StreamKeys, export_records

    if args.pool not in POOLS[args.system]:
        raise UserError(f"--pool {args.pool!r} is not a {args.system} pool (one of {', '.join(POOLS[args.system])})")
    records = _run_redis(args, lambda client: export_records(client, StreamKeys(args.stream), args.system, args.pool))
    from service.cli.data import write_export

    write_export(args, records)  # type: ignore[arg-type]
    return EXIT_OK


def cmd_publish(args: argparse.Namespace) -> int:
    """publish FILE: append the file's messages to the input stream, each checked first."""
    from service.cli.data import publish_documents
    from service.runtime.store import xadd

    limits = Limits()
    messages = []
    for location, raw in publish_documents(args):
        try:
            decode_input(raw, limits)
        except InvalidMessage as exc:
            problem = exc.problems[0]
            raise UserError(f"{location}: {problem} ({problem.reason})") from None
        messages.append(raw)
    if not messages:
        raise UserError(f"{args.file}: no messages")

    async def send(client) -> list[str]:
        async with client.pipeline(transaction=False) as pipe:
            for raw in messages:
                xadd(pipe, args.stream, raw)
            return [i.decode() for i in await pipe.execute()]

    for entry_id in _run_redis(args, send):  # type: ignore[union-attr]
        print(entry_id)
    return EXIT_OK


def cmd_watch(args: argparse.Namespace) -> int:
    """watch: follow the output stream and print each message as a table."""
    from service.runtime.store import DATA_FIELD
    from service.cli.watch import decode, render

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

    _run_redis(args, follow)
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rating-service",
        description="Rating microservice for chess and Scrabble federations (CFC, FIDE, NASPA).",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = commands.add_parser("validate", help="check JSON / JSON Lines messages against the contract")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.set_defaults(func=cmd_validate)

    p = commands.add_parser("rate", help="rate events offline and print the ratings.updated messages")
    p.add_argument("events", metavar="EVENTS", help="event.finished / period.closed messages, in order")
    p.add_argument(
        "--ratings", metavar="LIST", help="starting player records, JSON Lines or CSV (default: everyone unrated)"
    )
    p.add_argument("--out-ratings", metavar="FILE", help="write the final player records here (JSON Lines)")
    p.add_argument(
        "--keep-going",
        action="store_true",
        help="report a rejected message on standard error and go on, as the service does",
    )
    p.set_defaults(func=cmd_rate)

    from service.runtime.settings import describe

    p = commands.add_parser(
        "serve",
        help="run the service: consume events, rate them, publish ratings",
        description="Run the rating service. Settings come from environment variables.",
        epilog=describe(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--redis-url", help="overrides RATING_REDIS_URL / REDIS_URL")
    p.add_argument("--consumer", help="overrides RATING_CONSUMER")
    p.set_defaults(func=cmd_serve)

    p = commands.add_parser("publish", help="append event.finished / period.closed messages to the input stream")
    p.add_argument("file", metavar="FILE", help="JSON or JSON Lines messages, or a FIDE TRF file (one event)")
    p.add_argument("--stream", default="events.finished", help="input stream (default: events.finished)")
    p.add_argument("--redis-url", help="default: RATING_REDIS_URL / REDIS_URL, else redis://127.0.0.1:6379/0")
    datacommands.add_trf_options(p)
    p.set_defaults(func=cmd_publish)

    p = commands.add_parser("import", help="load player records (JSON Lines or CSV) into the service's store")
    p.add_argument("file", metavar="FILE", help="player.record/v1 JSON Lines, or CSV with a header of field names")
    p.add_argument("--system", choices=SYSTEMS, help="the records' system (fills CSV rows, checks every record)")
    p.add_argument("--pool", help="the records' pool (fills CSV rows, checks every record)")
    p.add_argument("--force", action="store_true", help="overwrite records that differ from the list (rated since)")
    p.add_argument("--stream", default="events.finished", help="input stream whose store to load (default: events.finished)")
    p.add_argument("--redis-url", help="default: RATING_REDIS_URL / REDIS_URL, else redis://127.0.0.1:6379/0")
    p.set_defaults(func=cmd_import)

    p = commands.add_parser("export", help="dump one pool's player records as JSON Lines")
    p.add_argument("--system", required=True, choices=SYSTEMS)
    p.add_argument("--pool", required=True)
    p.add_argument("--stream", default="events.finished", help="input stream whose store to read (default: events.finished)")
    p.add_argument("--out", metavar="FILE", help="write here instead of standard output")
    p.add_argument("--format", choices=("jsonl", "csv"), help="default: jsonl (csv for an --out ending in .csv)")
    p.add_argument("--redis-url", help="default: RATING_REDIS_URL / REDIS_URL, else redis://127.0.0.1:6379/0")
    p.set_defaults(func=cmd_export)

    p = commands.add_parser("watch", help="follow ratings.updated and print each event's changes as a table")
    p.add_argument("--stream", default="ratings.updated", help="output stream (default: ratings.updated)")
    p.add_argument("--from-start", action="store_true", help="show the messages already there too")
    p.add_argument("--count", type=int, help="stop after this many messages (or when none comes within --block-ms)")
    p.add_argument("--block-ms", type=int, default=5000, help="how long one read waits (default: 5000)")
    p.add_argument("--redis-url", help="default: RATING_REDIS_URL / REDIS_URL, else redis://127.0.0.1:6379/0")
    p.set_defaults(func=cmd_watch)

    p = commands.add_parser("schemas", help="write the JSON Schemas of every message and the AsyncAPI document")
    p.add_argument("--out", metavar="DIR", help="folder to write to (default: the package's schemas/json)")
    p.add_argument("--check", action="store_true", help="exit 1 if the files there are stale")
    p.set_defaults(func=cmd_schemas)
    datacommands.register(commands)

    from service.cli.calc import register as register_calculators

    register_calculators(commands)
    from service.bench.benchmark import register as register_bench

    register_bench(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except (UserError, FileProblem) as exc:
        print(f"rating-service {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
