"""A FIDE TRF file as the commands read it (`publish`, `correct`, `convert`, `trf-ratings`,
`rate`, `validate`): the options they share, telling a TRF from JSON, and the checked
`event.finished/v1` with its player ids (service.formats.trf does the reading, purely).
Bad input: UserError, one line naming the file and line.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import msgspec

from schemas.common import PERIOD_PATTERN, SYSTEMS
from schemas.events import EventFinished
from schemas.plausible import round_date_problems
from schemas.records import PlayerRecord
from schemas.systems import is_pool, pools_text
from schemas.validation import InvalidMessage, Limits, check_message, decode_input
from service.cli.errors import UserError
from service.formats import trf
from service.formats.jsonlines import FileProblem

_encoder = msgspec.json.Encoder()


def add_trf_options(p: argparse.ArgumentParser, *, for_event: bool = True) -> None:
    """The options of a command that reads a TRF (`for_event`: it builds the event, so it
    takes --period too)."""
    p.add_argument(
        "--system", choices=SYSTEMS, help="for a TRF file: the rating system (default: fide)"
    )
    p.add_argument(
        "--pool",
        help="for a TRF file: the pool (default: the system's default: "
        "fide standard, cfc regular, naspa nwl)",
    )
    p.add_argument(
        "--event-id",
        help="for a TRF file: the event id (default: the tournament's identity from its "
        "012 name, 022 city, 032 federation and start date, e.g. "
        "autumn-open-2025.2025-11-01.55fb111f)",
    )
    if for_event:
        p.add_argument(
            "--period",
            metavar="YYYY-MM",
            help="for a FIDE TRF: the rating period the event is rated "
            "in (default: the month of its end date)",
        )
        p.add_argument(
            "--long-event",
            action="store_true",
            help="for a TRF file: a league or season, longer than RATING_MAX_EVENT_DAYS (90 days by "
            "default) from start to end: sent with long_event: true (up to 366 days)",
        )
    p.add_argument(
        "--ids",
        metavar="FILE.csv",
        help="for a cfc / naspa TRF: player ids from CSV columns `id` and `start`, `fide_id` or `name` "
        "(else from `XXI <start number> <id>` lines in the TRF)",
    )
    p.add_argument(
        "--local-ids",
        action="store_true",
        help="for a cfc / naspa TRF: players without an id get sn<start number>@<event id> "
        "(new to the list) instead of a refusal",
    )


def trf_given(args: argparse.Namespace) -> list[str]:
    """The TRF-only options given on the command line, as `--name`."""
    names = (
        "system",
        "pool",
        "event_id",
        "period",
        "ids",
        "local_ids",
        "ratings_from_trf",
        "long_event",
    )
    return [f"--{n.replace('_', '-')}" for n in names if getattr(args, n, None)]


def trf_options(args: argparse.Namespace) -> list[str]:
    """The TRF options given, as command-line words (for a command to suggest)."""
    words: list[str] = []
    for name in ("system", "pool", "event_id", "period", "ids"):
        value = getattr(args, name, None)
        if value:
            words += [f"--{name.replace('_', '-')}", shlex.quote(value)]
    flags = [
        f"--{n.replace('_', '-')}" for n in ("local_ids", "long_event") if getattr(args, n, False)
    ]
    return words + flags


def is_trf(path: str) -> bool:
    """A TRF file (trf.looks_like_trf: by extension, else by content); False when unreadable
    (the JSON reader then names the problem)."""
    try:
        with open(path, "rb") as f:
            head = f.read(65536)
    except OSError:
        return False
    return trf.looks_like_trf(path, head)


def read_trf(path: str) -> trf.Tournament:
    """Parse a TRF file (UTF-8, else Latin-1 as older pairing programs write)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise FileProblem(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    try:
        return trf.parse(text, path)
    except trf.TrfError as exc:
        raise UserError(str(exc)) from exc


@dataclass(frozen=True)
class TrfEvent:
    """A TRF file read as one event: the tournament, the event (checked, defaults filled),
    its JSON, its player ids by start number, and whether the event id is the tournament's
    identity (no --event-id)."""

    tournament: trf.Tournament
    event: EventFinished
    raw: bytes
    ids: dict[int, str]
    derived_id: bool


def _system(args: argparse.Namespace) -> tuple[str, str | None]:
    system = getattr(args, "system", None) or "fide"
    pool = getattr(args, "pool", None)
    if pool is not None and not is_pool(system, pool):
        raise UserError(f"--pool {pool!r} is not a {system} pool (one of {pools_text(system)})")
    return system, pool


def _period(args: argparse.Namespace, system: str) -> str | None:
    period = getattr(args, "period", None)
    if period is None:
        return None
    if system != "fide":
        raise UserError(
            f"--period applies to FIDE (rating periods); {system} rates an event when it arrives"
        )
    if not re.fullmatch(PERIOD_PATTERN, period):
        raise UserError(f"--period {period!r} is not a month YYYY-MM (e.g. 2025-12)")
    return period


def _mapping(args: argparse.Namespace, system: str) -> trf.IdMap | None:
    if system == "fide" and (getattr(args, "ids", None) or getattr(args, "local_ids", False)):
        raise UserError(
            "--ids and --local-ids apply to cfc and naspa: a FIDE TRF's player ids are its FIDE ids"
        )
    if not getattr(args, "ids", None):
        return None
    try:
        text = Path(args.ids).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(
            f"{args.ids}: cannot read: {getattr(exc, 'strerror', None) or exc}"
        ) from None
    try:
        return trf.read_ids(text, args.ids)
    except trf.TrfError as exc:
        raise UserError(str(exc)) from exc


def event_id_and_ids(
    tournament: trf.Tournament, args: argparse.Namespace
) -> tuple[str, dict[int, str], bool]:
    """(event id, player id by start number, whether the id is the tournament's identity)."""
    system, _ = _system(args)
    mapping = _mapping(args, system)
    try:
        event_id = args.event_id or trf.identity(tournament)
        ids = trf.player_ids(
            tournament, event_id, system, mapping, getattr(args, "local_ids", False)
        )
    except trf.TrfError as exc:
        raise UserError(str(exc)) from exc
    return event_id, ids, not args.event_id


def trf_event(
    path: str, args: argparse.Namespace, today: dt.date | None = None, limits: Limits = Limits()
) -> TrfEvent:
    """The checked event of a TRF file, with the options of `add_trf_options`; given `today`
    (UTC), its dates plausible too (trf_date_problems). The first problem is a UserError
    (every problem: `trf_problems`)."""
    system, pool = _system(args)
    period = _period(args, system)
    tournament = read_trf(path)
    event_id, ids, derived = event_id_and_ids(tournament, args)
    try:
        event = trf.to_event(tournament, event_id, system, pool, ids, period)
    except trf.TrfError as exc:
        raise UserError(str(exc)) from exc
    if getattr(args, "long_event", False):
        event = msgspec.structs.replace(event, long_event=True)
    raw = _encoder.encode(event)
    try:
        checked = decode_input(raw, limits)
    except InvalidMessage as exc:
        problem = exc.problems[0]
        raise UserError(f"{path}: the converted event: {problem} ({problem.reason})") from None
    if period is not None and period < f"{event.start_date:%Y-%m}":
        raise UserError(f"--period {period} is before the tournament started ({event.start_date})")
    assert isinstance(checked, EventFinished)
    if today is not None:
        implausible = trf_date_problems(tournament, checked, today, limits)
        if implausible:
            raise UserError(implausible[0]) from trf.TrfError(*implausible)
    return TrfEvent(tournament, checked, raw, ids, derived)


def trf_date_problems(
    tournament: trf.Tournament, event: EventFinished, today: dt.date, limits: Limits
) -> list[str]:
    """The TRF's implausible dates by `today` (schemas/plausible.py), each naming its file and
    line: the converted event's end date and span (052, else 132), each 132 round date
    outside 042 to 052."""
    source = tournament.source
    where = tournament.header_line("052") or tournament.header_line("132")
    lines = [
        f"{source}:{where}: the converted event: {p} ({p.reason})"
        for p in check_message(event, limits, today)
        if p.reason == "implausible"
    ]
    rounds = round_date_problems(event.start_date, event.end_date, trf.round_dates(tournament))
    at = tournament.header_line("132")
    return lines + [f"{source}:{at}: 132 {text} (implausible)" for _, text in rounds]


def trf_problems(
    path: str, args: argparse.Namespace, today: dt.date | None = None, limits: Limits = Limits()
) -> list[str]:
    """Every problem of a TRF file as `validate` lists them: each with its file and line
    (the converted event's, with its JSON path); [] when it converts to a valid, and given
    `today` plausible, event."""
    try:
        trf_event(path, args, today, limits)
    except UserError as exc:
        cause = exc.__cause__
        return list(cause.problems) if isinstance(cause, trf.TrfError) else [str(exc)]
    return []


def starting_list(found: TrfEvent) -> list[PlayerRecord]:
    """--ratings-from-trf: the records the TRF's own rating column gives (trf.starting_records)."""
    return trf.starting_records(found.tournament, found.ids, found.event.system, found.event.pool)
