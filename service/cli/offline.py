"""The commands that need no Redis: `validate` (any message of the contract), `rate`
(offline rating, the service's own code path) and `schemas` (the generated documents).

Bad input gets one line naming the file, line and field, and exit code 2; a failed
check (`validate`, `schemas --check`) exits 1. Never a traceback for the user's input.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path
from typing import Any

import msgspec

from schemas import asyncapi, jsonschema
from schemas.common import DEFAULT_POOL
from schemas.events import EventContent
from schemas.ratings import RatingsUpdated
from schemas.records import PlayerRecord
from schemas.rejected import EventRejected
from schemas.validation import InvalidMessage, Limits, decode_input, every_problem
from service.cli.errors import EXIT_FAILED, EXIT_OK, UserError
from service.cli.settings import cli_settings
from service.cli.trffile import (
    add_trf_options,
    is_trf,
    starting_list,
    trf_event,
    trf_given,
    trf_problems,
)
from service.engine.registry import Registry, default_registry
from service.formats import reports
from service.formats.jsonlines import printable, read_documents
from service.rating import Duplicate, MemoryLedger, Rejected, apply_message
from service.runtime.entries import utc_today

_encoder = msgspec.json.Encoder()
_record_decoder = msgspec.json.Decoder(PlayerRecord)
_output_decoders: dict[str, msgspec.json.Decoder[Any]] = {
    "ratings.updated/v1": msgspec.json.Decoder(RatingsUpdated),
    "event.rejected/v1": msgspec.json.Decoder(EventRejected),
    "player.record/v1": _record_decoder,
}


def _schema_name(raw: bytes) -> str | None:
    try:
        document = msgspec.json.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return None
    name = document.get("schema") if isinstance(document, dict) else None
    return name if isinstance(name, str) else None  # a non-text `schema`: every_problem says so


def _problems_of(raw: bytes, limits: Limits, today: dt.date) -> list[str]:
    """Every problem of one message of any kind of the contract, as `path: message`; an
    input message's dates judged by `today` (UTC), as `publish` and the service do."""
    name = _schema_name(raw)
    if name in _output_decoders:
        try:
            _output_decoders[name].decode(raw)
        except msgspec.ValidationError as exc:
            return [_msgspec_line(str(exc))]
        return []
    return [f"{p} ({p.reason})" for p in every_problem(raw, limits, today)]


def _msgspec_line(text: str) -> str:
    message, _, where = text.partition(" - at `")
    return f"{where.rstrip('`') or '$'}: {printable(message)}"


def cmd_validate(args: argparse.Namespace) -> int:
    """validate FILE...: print `ok` per valid file, or each problem with its location. A
    TRF file must convert to a valid event.finished/v1 (with the TRF options given)."""
    limits = cli_settings().limits
    today = utc_today()
    failed = False
    for file in args.files:
        if is_trf(file):
            failed = _validate_trf(file, args, today, limits) or failed
            continue
        count = 0
        problems = 0
        for location, raw in read_documents(file):
            count += 1
            for problem in _problems_of(raw, limits, today):
                problems += 1
                print(printable(f"{location}: {problem}"))
        if count == 0:
            print(f"{file}: no messages")
            failed = True
        elif problems:
            failed = True
        else:
            print(f"{file}: ok ({count} message{'s' if count != 1 else ''})")
    return EXIT_FAILED if failed else EXIT_OK


def _validate_trf(file: str, args: argparse.Namespace, today: dt.date, limits: Limits) -> bool:
    """Print every problem of a TRF file (one line each, with its line number), or `ok` with
    what it converts to; True when it has problems."""
    problems = trf_problems(file, args, today, limits)
    for problem in problems:
        print(printable(problem))
    if not problems:
        event = trf_event(file, args).event
        print(
            f"{file}: ok (TRF: event {event.event_id}, {event.system}/{event.pool}, {len(event.players)} players, "
            f"{event.rounds} rounds, {len(event.games)} games, {len(event.byes)} byes)"
        )
    return bool(problems)


def cmd_rate(args: argparse.Namespace, registry: Registry | None = None) -> int:
    """rate EVENTS: rate the messages in order, print one `ratings.updated` per line, or with
    --table each as a report for people (service.formats.reports). A TRF file is one event;
    --ratings-from-trf takes its starting list from the TRF itself."""
    registry = registry if registry is not None else default_registry()
    from service.formats.ratinglists import read_list
    from service.rating import ListRules

    if args.ratings and args.ratings_from_trf:
        raise UserError("--ratings and --ratings-from-trf: give one starting list")
    if is_trf(args.events):
        found = trf_event(args.events, args)
        documents = [(args.events, found.raw)]
        records = starting_list(found) if args.ratings_from_trf else []
    else:
        given = trf_given(args)
        if given:
            raise UserError(
                f"{args.events}: {', '.join(given)} apply to a TRF file only: a JSON message names its own"
            )
        documents = read_documents(args.events)  # type: ignore[assignment]  # an iterator of the same (location, bytes) pairs as the list
        records = []
    ledger = MemoryLedger(
        read_list(args.ratings, rules=ListRules(registry)) if args.ratings else records
    )
    out = sys.stdout.buffer
    contents: dict[tuple[str, str, str], EventContent] = {}  # the events read, for their reports
    names: dict[
        tuple[str, str], dict[str, str]
    ] = {}  # per pool, the players' names the events gave
    for location, raw in documents:
        try:
            message = decode_input(raw)
        except InvalidMessage as exc:
            problem = exc.problems[0]
            raise UserError(f"{location}: {problem} ({problem.reason})") from None
        try:
            result = apply_message(ledger, message, registry, source_id=location)
        except Rejected as exc:
            line = f"{location}: {exc.path}: {exc.message} ({exc.reason})"
            if not args.keep_going:
                raise UserError(line) from None
            print(f"rejected: {line}", file=sys.stderr)
            continue
        if isinstance(result, Duplicate):
            print(f"{location}: {result.marker} already applied, skipped", file=sys.stderr)
            continue
        if args.table and isinstance(message, EventContent):  # kept only for the reports
            pool = message.pool or DEFAULT_POOL[message.system]
            contents[(message.system, pool, message.event_id)] = message
            names.setdefault((message.system, pool), {}).update(
                {p.id: p.name for p in message.players if p.name}
            )
        for output in result.outputs:
            if args.table:
                event = contents.get((output.system, output.pool, output.event_id or ""))
                text = reports.render(output, event, names.get((output.system, output.pool)))
                out.write((text + "\n\n").encode())
            else:
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
    api = (
        Path(args.out) if args.out else asyncapi.ASYNCAPI_FILE.parent
    ) / asyncapi.ASYNCAPI_FILE.name
    if args.check:
        stale = [str(out / name) for name in jsonschema.stale(out)] + (
            [str(api)] if asyncapi.stale(api) else []
        )
        for path in stale:
            print(f"{path}: stale, run `rating-service schemas`")
        return EXIT_FAILED if stale else EXIT_OK
    for written in jsonschema.write(out):
        print(written)
    api.write_text(asyncapi.render(), encoding="utf-8")
    print(api)
    return EXIT_OK


def register(commands: Any) -> None:
    """Add validate, rate and schemas to the command line."""
    p = commands.add_parser(
        "validate", help="check JSON / JSON Lines messages (or FIDE TRF files) against the contract"
    )
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="JSON / JSON Lines messages of any kind, or a TRF file (must convert to a valid event)",
    )
    add_trf_options(p)
    p.set_defaults(func=cmd_validate)

    p = commands.add_parser(
        "rate", help="rate events offline and print the ratings.updated messages"
    )
    p.add_argument(
        "events",
        metavar="EVENTS",
        help="event.finished / period.closed messages, in order, or a TRF file (one event)",
    )
    p.add_argument(
        "--ratings",
        metavar="LIST",
        help="starting player records, JSON Lines or CSV (default: everyone unrated)",
    )
    p.add_argument(
        "--ratings-from-trf",
        action="store_true",
        help="for a TRF file: start from its own rating column (49-52): a rated player is established with the "
        "least career games that make them so (fide 30, cfc 25, naspa 50); blank or 0 is unrated",
    )
    add_trf_options(p)
    p.add_argument(
        "--out-ratings", metavar="FILE", help="write the final player records here (JSON Lines)"
    )
    p.add_argument(
        "--keep-going",
        action="store_true",
        help="report a rejected message on standard error and go on, as the service does",
    )
    p.add_argument(
        "--table",
        action="store_true",
        help="print each result as a report for people instead of JSON: the CFC crosstable, the FIDE "
        "rating calculator's per-game figures, NASPA's tsh-style report; a FIDE list's changes",
    )
    p.set_defaults(func=cmd_rate)

    p = commands.add_parser(
        "schemas", help="write the JSON Schemas of every message and the AsyncAPI document"
    )
    p.add_argument(
        "--out", metavar="DIR", help="folder to write to (default: the package's schemas/json)"
    )
    p.add_argument("--check", action="store_true", help="exit 1 if the files there are stale")
    p.set_defaults(func=cmd_schemas)
