"""Strict decoding of input messages, and the cross-field rules a type cannot express.

Every problem is reported with the JSON path of the offending value (`$.games[3].score`)
and the dead-letter reason it maps to.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import get_args

import msgspec

from schemas.common import DEFAULT_POOL, PERIOD_SYSTEMS, POOLS
from schemas.events import EventContent, EventWithdrawn, InputMessage, PeriodClosed, PeriodReopened
from schemas.periods import month_of
from schemas.plausible import DEFAULT_MAX_EVENT_DAYS, date_problems
from schemas.shapes import walk
from schemas.systems import BY_NAME, is_pool, rates_in_periods

VALID_SCORES = (0.0, 0.5, 1.0)
_PATH = re.compile(r" - at `(\$[^`]*)`$")


class Limits(msgspec.Struct, frozen=True):
    """Size limits of one input message (the service's settings, the CLI's defaults)."""

    max_bytes: int = 16 * 1024 * 1024
    max_players: int = 5_000
    max_games: int = 100_000
    max_event_days: int = DEFAULT_MAX_EVENT_DAYS


class Problem(msgspec.Struct, frozen=True):
    """One thing wrong with a message: where, what, and the dead-letter reason."""

    path: str
    message: str
    reason: str = "invalid"

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class InvalidMessage(Exception):
    """A message that cannot be accepted; `problems` lists every reason found."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))

    @property
    def reason(self) -> str:
        return self.problems[0].reason

    @property
    def path(self) -> str:
        return self.problems[0].path


_decoder = msgspec.json.Decoder(InputMessage)
INPUT_SCHEMAS = (
    "'event.finished/v1', 'period.closed/v1', 'event.corrected/v1', 'event.withdrawn/v1',"
    " 'period.reopened/v1'"
)


def decode_input(
    data: bytes | str, limits: Limits = Limits(), today: dt.date | None = None
) -> InputMessage:
    """Decode one input message strictly, check its cross-field rules and, given `today`
    (the adapter's UTC date), its dates' plausibility (schemas/plausible.py); fill its
    defaults. `today=None` (a re-rate of recorded history) checks no date against a clock.

    Raises InvalidMessage with every problem found (type errors stop at the first one,
    as msgspec reports them; the cross-field rules all report).
    """
    size = len(data.encode() if isinstance(data, str) else data)
    if size > limits.max_bytes:
        raise InvalidMessage(
            [
                Problem(
                    "$",
                    f"message is {size:,} bytes, over the limit of {limits.max_bytes:,} (RATING_MAX_BYTES)",
                    "too_large",
                )
            ]
        )
    try:
        message = _decoder.decode(data)
    except msgspec.ValidationError as exc:
        _require_json(data)  # msgspec stops at the first wrong value, before trailing bytes (D81)
        raise InvalidMessage([_problem_from_msgspec(str(exc))]) from None
    except msgspec.DecodeError as exc:
        raise InvalidMessage([Problem("$", f"not valid JSON: {exc}", "malformed")]) from None
    except RecursionError:
        raise InvalidMessage([Problem("$", "JSON nested too deeply", "malformed")]) from None
    problems = check_message(message, limits, today)
    if problems:
        raise InvalidMessage(problems)
    return normalize(message)


def _require_json(data: bytes | str) -> None:
    """Raise InvalidMessage (`malformed`) when `data` is not one JSON document at all."""
    try:
        msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        raise InvalidMessage([Problem("$", f"not valid JSON: {exc}", "malformed")]) from None
    except RecursionError:
        raise InvalidMessage([Problem("$", "JSON nested too deeply", "malformed")]) from None


_BY_TAG = {kind.__struct_config__.tag: kind for kind in get_args(InputMessage)}
_LISTED = re.compile(r"^\$\.(players|games|byes)\[(\d+)\]")


def every_problem(
    data: bytes | str, limits: Limits = Limits(), today: dt.date | None = None
) -> list[Problem]:
    """Every problem of one input message, shape and logic, each with its path (what
    `validate` lists): decode_input's, and where msgspec stopped at the first wrong shape,
    each field checked on its own (schemas/shapes.py) and the cross-field rules run on the
    rest. decode_input's first problem stays first (the service's dead-letter reason)."""
    try:
        decode_input(data, limits, today)
    except InvalidMessage as exc:
        first = exc.problems
    else:
        return []
    if first[0].reason in ("too_large", "malformed"):
        return first
    document = msgspec.json.decode(data)
    tag = document.get("schema") if isinstance(document, dict) else None
    kind = _BY_TAG.get(tag) if isinstance(tag, str) else None
    found = walk(document, kind) if kind is not None else None
    if found is None or not found.problems:
        return first  # the shapes are right: decode_input checked the rest
    problems = list(first)
    for path, message in found.problems:
        problem = _problem_from_msgspec(f"{message} - at `{path}`")
        if (problem.path, problem.message) != (first[0].path, first[0].message):
            problems.append(problem)
    if found.repaired is not None and kind is not None:
        problems.extend(_logic_of_rest(found.repaired, kind, found.index, limits, today))
    return problems


def _logic_of_rest(
    repaired: dict, kind: type, index: dict[str, list[int]], limits: Limits, today: dt.date | None
) -> list[Problem]:
    """The cross-field problems of a repaired document, at the original document's paths."""
    try:
        message: InputMessage = msgspec.json.decode(msgspec.json.encode(repaired), type=kind)
    except msgspec.ValidationError:
        return []

    def original(path: str) -> str:
        match = _LISTED.match(path)
        if match is None:
            return path
        position = index[f"$.{match[1]}"][int(match[2])]
        return f"$.{match[1]}[{position}]{path[match.end() :]}"

    return [
        msgspec.structs.replace(p, path=original(p.path))
        for p in check_message(message, limits, today)
    ]


def printable(text: str) -> str:
    """`text` with each character a terminal would act on (a line break other than none, CR,
    ESC, any control or separator) written as its escape, `\\x1b`: a problem quoting a file's
    bytes stays the one line it is, and cannot move the cursor or clear the screen (D81)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _problem_from_msgspec(text: str) -> Problem:
    match = _PATH.search(text)
    path = match.group(1) if match else "$"
    message = text[: match.start()] if match else text
    message = printable(message)  # a quoted value's line break or escape stays one line (D81)
    if path == "$" and "tag" in message.lower():
        message = f"{message}: field `schema` must be one of {INPUT_SCHEMAS}"
    if path == "$.schema":
        message = f"{message}: expected one of {INPUT_SCHEMAS}"
    reason = "unknown_system" if path == "$.system" and "enum" in message else "invalid"
    if path == "$" and message.startswith("Expected `object`"):
        reason = "malformed"
    return Problem(path, message, reason)


def check_message(
    message: InputMessage, limits: Limits = Limits(), today: dt.date | None = None
) -> list[Problem]:
    """Every cross-field problem of a decoded input message (empty when it is valid); given
    `today`, its implausible dates too (after the others)."""
    problems: list[Problem] = []
    if message.pool is not None and not is_pool(message.system, message.pool):
        allowed = ", ".join(POOLS[message.system])
        if BY_NAME[message.system].open_pools:
            allowed = f"{allowed}, or a name of lower-case letters, digits, _ and -"
        problems.append(
            Problem(
                "$.pool", f"unknown pool {message.pool!r} for {message.system} (one of {allowed})"
            )
        )
    if isinstance(message, PeriodClosed | PeriodReopened) and message.system not in PERIOD_SYSTEMS:
        verb = "close" if isinstance(message, PeriodClosed) else "reopen"
        problems.append(
            Problem(
                "$.system",
                f"{message.system} has no rating periods: it rates each event as it ends, so there is no period to"
                f" {verb} (the systems with rating periods: {', '.join(PERIOD_SYSTEMS)})",
            )
        )
    if isinstance(message, EventContent):
        problems.extend(_check_event(message, limits))
    if today is not None:
        problems.extend(
            Problem(path, text, "implausible")
            for path, text in date_problems(message, today, limits.max_event_days)
        )
    return problems


def _check_event(event: EventContent, limits: Limits) -> list[Problem]:
    """Every cross-field problem of an event's content: its dates and sizes, its players
    declared once, each game's and bye's score, round and players; a too-large message's
    problems first."""
    problems = _check_sizes(event, limits)
    declared: set[str] = set()
    for i, player in enumerate(event.players):
        if player.id in declared:
            problems.append(
                Problem(f"$.players[{i}].id", f"player {player.id!r} is declared twice")
            )
        declared.add(player.id)
    problems.extend(_check_games(event, declared))
    problems.extend(_check_byes(event, declared))
    # A too-large message is reported as such first: it is the reason a producer must fix.
    problems.sort(key=lambda p: p.reason != "too_large")
    return problems


def _check_sizes(event: EventContent, limits: Limits) -> list[Problem]:
    """The end date not before the start, the players and games within `limits`
    (`too_large`), at least one player."""
    problems: list[Problem] = []
    if event.end_date < event.start_date:
        problems.append(
            Problem(
                "$.end_date", f"end_date {event.end_date} is before start_date {event.start_date}"
            )
        )
    if len(event.players) > limits.max_players:
        problems.append(
            Problem(
                "$.players",
                f"{len(event.players)} players, over the limit of {limits.max_players} (RATING_MAX_PLAYERS)",
                "too_large",
            )
        )
    if len(event.games) > limits.max_games:
        problems.append(
            Problem(
                "$.games",
                f"{len(event.games)} games, over the limit of {limits.max_games} (RATING_MAX_GAMES)",
                "too_large",
            )
        )
    if not event.players:
        problems.append(Problem("$.players", "an event needs at least one player"))
    return problems


def _check_games(event: EventContent, declared: set[str]) -> list[Problem]:
    """Each game: a score of 1, 0.5 or 0, a round within the event's, two different
    declared players."""
    problems: list[Problem] = []
    for i, game in enumerate(event.games):
        where = f"$.games[{i}]"
        if game.score not in VALID_SCORES:
            problems.append(
                Problem(f"{where}.score", f"score {game.score} is not one of 1, 0.5, 0")
            )
        if game.round > event.rounds:
            problems.append(
                Problem(
                    f"{where}.round", f"round {game.round} is after the last round {event.rounds}"
                )
            )
        for side in ("a", "b"):
            pid = getattr(game, side)
            if pid not in declared:
                problems.append(
                    Problem(f"{where}.{side}", f"player {pid!r} is not declared in players")
                )
        if game.a == game.b:
            problems.append(Problem(f"{where}.b", f"player {game.a!r} cannot play itself"))
    return problems


def _check_byes(event: EventContent, declared: set[str]) -> list[Problem]:
    """Each bye: a score of 1, 0.5 or 0, a round within the event's, a declared player."""
    problems: list[Problem] = []
    for i, bye in enumerate(event.byes):
        where = f"$.byes[{i}]"
        if bye.score not in VALID_SCORES:
            problems.append(Problem(f"{where}.score", f"score {bye.score} is not one of 1, 0.5, 0"))
        if bye.round > event.rounds:
            problems.append(
                Problem(
                    f"{where}.round", f"round {bye.round} is after the last round {event.rounds}"
                )
            )
        if bye.player not in declared:
            problems.append(
                Problem(f"{where}.player", f"player {bye.player!r} is not declared in players")
            )
    return problems


def default_ruleset(system: str, pool: str) -> str:
    """The ruleset a message without one is rated by."""
    info = BY_NAME[system]
    return info.pool_rulesets.get(pool, info.ruleset)


def normalize(message: InputMessage) -> InputMessage:
    """Fill the defaults: pool, ruleset, and (a ruleset rating into periods: FIDE, Glicko-2)
    the period from `end_date`."""
    pool = message.pool or DEFAULT_POOL[message.system]
    if isinstance(message, EventWithdrawn | PeriodReopened):
        return msgspec.structs.replace(message, pool=pool)
    ruleset = message.ruleset or default_ruleset(message.system, pool)
    changes: dict = {"pool": pool, "ruleset": ruleset}
    if (
        isinstance(message, EventContent)
        and message.period is None
        and rates_in_periods(message.system, ruleset)
    ):
        changes["period"] = month_of(message.end_date)
    return msgspec.structs.replace(message, **changes)


__all__ = [
    "InvalidMessage",
    "Limits",
    "PeriodClosed",
    "Problem",
    "check_message",
    "decode_input",
    "default_ruleset",
    "every_problem",
    "normalize",
]
