"""FIDE Tournament Report File (TRF, FIDE Data Exchange Format 2016, "TRF16") and the
TRFx extensions that pairing engines (JaVaFo, bbpPairings) read and write.

Pure: text in, a `Tournament` (every line kept in order) out; a `Tournament` in, text
out; a `Tournament` in, an `event.finished/v1` message out; and the ratings of the 001
records rewritten. No I/O: the command line (service/cli/trffile.py) reads and writes files.

Records read (TRF16 column positions, 1-based):

    001 player: 5-8 start number, 10 sex, 11-13 title, 15-47 name, 49-52 rating,
        54-56 federation, 58-68 FIDE id, 70-79 birth date, 81-84 points, 86-89 rank,
        then per round r a 10-column block from 92 + 10 (r - 1): opponent (4, "0000"
        none), colour (w / b / -), result
    012 name, 022 city, 032 federation, 042 start date, 052 end date, 062 players,
    072 rated players, 082 teams, 092 type, 102 chief arbiter, 112 deputy arbiters,
    122 time control, 132 round dates (YY/MM/DD in the round columns), 013 team
    XXR rounds, XXC configuration, XXS scoring (TRFx), XXI player ids (this service's, see
    below), and any other XX record (kept)

Result codes: 1 = 0 played and rated; W D L played, not rated (less than one move);
+ - forfeit win / loss; H F U Z half / full / pairing-allocated / zero point bye;
blank: the player was not in the round.

How they map onto the contract (forfeits and byes are never rated):
- a played game 1/0 or =/= : a game;
- W/L, D/D and +/- : a game with `forfeit: true` (reported, never rated);
- a double forfeit -/- : a zero-point bye for each player (the contract's game holds
  scores that add up to 1);
- H F U Z (opponent 0000 or blank): a bye of 0.5, 1, the PAB score (XXS `PAB` over
  `WW`, default 1) and 0; + / - without an opponent: a bye of 1 / 0;
- a blank round: nothing (the player was not in the round).

The event id (`identity`): by default the tournament's own identity, from its 012 name,
022 city, 032 federation and start date (not the file name), so that a re-export or a
renamed copy is the same event: `<name slug>.<start date>.<8 hex digits>`.

Player ids (`player_ids`): FIDE: the FIDE id when the record has one (not blank, not 0);
otherwise `sn<start number>@<event id>` (e.g. `sn12@autumn-open-2025.2025-11-01.55fb111f`),
so that players without a FIDE id never merge across events, and stay the same across
re-exports of one tournament. CFC and NASPA: never the FIDE-id column; the id comes from a
mapping file (`read_ids`) or this service's TRFx record `XXI <start number> <player id>`
(`xx_ids`), and `sn<start number>@<event id>` only when asked for.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction

from schemas.common import DEFAULT_POOL, EVENT_ID_PATTERN, PLAYER_ID_PATTERN, System
from schemas.events import Bye, EventFinished, Game, PlayerRef
from schemas.records import PlayerRecord

PLAYER = "001"
HEADER_CODES = {
    "012": "tournament name",
    "022": "city",
    "032": "federation",
    "042": "start date",
    "052": "end date",
    "062": "number of players",
    "072": "number of rated players",
    "082": "number of teams",
    "092": "type of tournament",
    "102": "chief arbiter",
    "112": "deputy chief arbiters",
    "122": "time control",
    "132": "round dates",
    "013": "team",
}
ROUND_START = 91  # 0-based index of the first round block (column 92)
ROUND_WIDTH = 10
COLOURS = "wb- "
PLAYED = {"1": 1, "=": 0.5, "0": 0}  # played and rated
UNRATED = {"W": 1, "D": 0.5, "L": 0}  # played, not rated
FORFEITS = {"+": 1, "-": 0}
BYES = {"H": Fraction(1, 2), "F": Fraction(1), "Z": Fraction(0)}  # "U": the PAB score
RESULTS = set(PLAYED) | set(UNRATED) | set(FORFEITS) | set(BYES) | {"U", " "}


class TrfError(ValueError):
    """A malformed TRF: each problem names the file (source) and the line. `str()` is the
    first problem (and how many more there are), one line; `problems` has them all."""

    def __init__(self, *problems: str):
        self.problems = list(problems)
        more = len(problems) - 1
        super().__init__(
            problems[0]
            + (f" (and {more} more problem{'s' if more > 1 else ''})" if more > 0 else "")
        )


@dataclass(frozen=True)
class RoundEntry:
    """One round of a 001 record: opponent (None: blank field, 0: "0000"), colour, result."""

    opponent: int | None
    colour: str = " "
    result: str = " "

    @property
    def blank(self) -> bool:
        return self.opponent in (None, 0) and self.result == " "


@dataclass(frozen=True)
class PlayerLine:
    """A 001 record."""

    start: int
    name: str
    rating: int | None = None
    sex: str = ""
    title: str = ""
    federation: str = ""
    fide_id: str | None = None
    birth: str = ""
    points: Fraction | None = None
    rank: int | None = None
    rounds: tuple[RoundEntry, ...] = ()
    line: int = 0

    @property
    def birth_year(self) -> int | None:
        year = self.birth[:4]
        return int(year) if _digits(year) and int(year) > 0 else None


@dataclass(frozen=True)
class Header:
    """Any other record, kept as written: `code` (3 characters) and the rest of the line."""

    code: str
    value: str
    line: int = 0


@dataclass(frozen=True)
class Tournament:
    """A TRF file: its records in file order."""

    records: tuple[Header | PlayerLine, ...]
    source: str = "<trf>"
    players: tuple[PlayerLine, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "players", tuple(r for r in self.records if isinstance(r, PlayerLine))
        )

    def header(self, code: str) -> str | None:
        """The first record with this code (stripped), or None."""
        for record in self.records:
            if isinstance(record, Header) and record.code == code:
                return record.value.strip()
        return None

    def header_line(self, code: str) -> int:
        return next((r.line for r in self.records if isinstance(r, Header) and r.code == code), 0)


# ---------------------------------------------------------------------------- reading
_LINE_END = re.compile(r"\r\n|\r|\n")


def _digits(text: str) -> bool:
    """ASCII digits only: `str.isdigit` is true of `²` and `١` too, which `int` refuses or
    reads as another script's digits (D81)."""
    return text.isascii() and text.isdigit()


def parse(text: str, source: str = "<trf>") -> Tournament:
    """Read a TRF; malformed lines raise TrfError naming `source` and each line."""
    records: list[Header | PlayerLine] = []
    starts: dict[int, int] = {}
    problems: list[str] = []
    # Lines end at \n, \r\n or \r only: str.splitlines also ends one at \x1c-\x1e, \x85 and
    # \u2028, and the problems would name lines an editor does not show (D81).
    for number, raw in enumerate(_LINE_END.split(text.removesuffix("\n")), 1):
        line = raw.rstrip()
        if not line.strip():
            continue
        try:
            records.append(_record(line, f"{source}:{number}", number, starts))
        except TrfError as exc:
            problems.extend(exc.problems)
    if problems:
        raise TrfError(*problems)
    tournament = Tournament(tuple(records), source)
    if not tournament.players:
        raise TrfError(f"{source}: no player records (001)")
    return tournament


def _record(line: str, where: str, number: int, starts: dict[int, int]) -> Header | PlayerLine:
    """One non-blank line (`starts`: start number -> line, filled as 001 records are read)."""
    code = line[:3]
    if len(line) > 3 and line[3] != " ":
        raise TrfError(
            f"{where}: a record starts with a 3-character code and a space, not {line[:8]!r}"
        )
    if code == PLAYER:
        player = _player(line, where, number)
        if player.start in starts:
            raise TrfError(
                f"{where}: start number {player.start} already used on line {starts[player.start]}"
            )
        starts[player.start] = number
        return player
    if code in HEADER_CODES or code.startswith("XX"):
        _check_header(code, line[4:], where)
        return Header(code, line[4:], number)
    raise TrfError(
        f"{where}: unknown record type {code!r} (001, 012-132, 013 and XX records are read)"
    )


def _field(line: str, first: int, last: int) -> str:
    """Columns first..last (1-based, inclusive) of a line, padded."""
    return line[first - 1 : last].ljust(last - first + 1)


def _player(line: str, where: str, number: int) -> PlayerLine:
    def integer(first: int, last: int, what: str, blank_ok: bool = True) -> int | None:
        text = _field(line, first, last).strip()
        if not text:
            if blank_ok:
                return None
            raise TrfError(f"{where}: columns {first}-{last}: {what} is missing")
        if not _digits(text):
            raise TrfError(f"{where}: columns {first}-{last}: {what} {text!r} is not a number")
        return int(text)

    start = integer(5, 8, "start number", blank_ok=False)
    assert start is not None
    if start == 0:
        raise TrfError(f"{where}: columns 5-8: start number 0")
    name = _field(line, 15, 47).strip()
    if not name:
        raise TrfError(f"{where}: columns 15-47: the player's name is missing")
    rating = integer(49, 52, "rating")
    fide_id = integer(58, 68, "FIDE id")
    birth = _field(line, 70, 79).strip()
    if birth and not re.fullmatch(r"[0-9]{4}([./-][0-9]{2}[./-][0-9]{2})?", birth):
        raise TrfError(f"{where}: columns 70-79: birth date {birth!r} is not YYYY/MM/DD")
    if birth and 0 < int(birth[:4]) and not 1850 <= int(birth[:4]) <= 2200:
        raise TrfError(f"{where}: columns 70-79: birth year {birth[:4]} is out of range")
    points_text = _field(line, 81, 84).strip()
    if points_text and not re.fullmatch(r"[0-9]{1,3}(\.[0-9])?", points_text):
        raise TrfError(f"{where}: columns 81-84: points {points_text!r} is not a number like 5.5")
    rounds = []
    for index, begin in enumerate(range(ROUND_START, len(line), ROUND_WIDTH), 1):
        block = line[begin : begin + ROUND_WIDTH].ljust(ROUND_WIDTH)
        rounds.append(_round(block, where, begin + 1, index))
    if len(line) > 89 and line[89:91].strip():
        raise TrfError(f"{where}: columns 90-91 must be blank (round 1 starts at column 92)")
    while rounds and rounds[-1] == RoundEntry(None):
        rounds.pop()
    return PlayerLine(
        start=start,
        name=name,
        rating=rating or None,
        sex=_field(line, 10, 10).strip(),
        title=_field(line, 11, 13).strip(),
        federation=_field(line, 54, 56).strip(),
        fide_id=str(fide_id) if fide_id else None,
        birth=birth,
        points=Fraction(points_text) if points_text else None,
        rank=integer(86, 89, "rank"),
        rounds=tuple(rounds),
        line=number,
    )


def _round(block: str, where: str, column: int, index: int) -> RoundEntry:
    at = f"{where}: round {index} (column {column})"
    opponent_text, colour, result = block[0:4], block[5], block[7]
    if block[4] != " " or block[6] != " " or block[8:].strip():
        raise TrfError(
            f"{at}: a round is `OOOO C R` (opponent, colour, result), not {block.rstrip()!r}"
        )
    if opponent_text.strip() and not _digits(opponent_text.strip()):
        raise TrfError(f"{at}: opponent {opponent_text.strip()!r} is not a start number")
    if colour not in COLOURS:
        raise TrfError(f"{at}: colour {colour!r} is not w, b or -")
    if result not in RESULTS:
        raise TrfError(
            f"{at}: result {result!r} is not a TRF result code (1 = 0 W D L + - H F U Z)"
        )
    opponent = int(opponent_text.strip()) if opponent_text.strip() else None
    return RoundEntry(opponent, colour, result)


def _check_header(code: str, value: str, where: str) -> None:
    text = value.strip()
    if code in ("042", "052") and text and parse_date(text) is None:
        raise TrfError(
            f"{where}: {HEADER_CODES[code]} {text!r} is not a date (YYYY/MM/DD or DD.MM.YYYY)"
        )
    if code in ("062", "072", "082", "XXR") and text and not _digits(text):
        raise TrfError(
            f"{where}: {HEADER_CODES.get(code, 'number of rounds')} {text!r} is not a number"
        )
    if code == "XXS":
        scoring(text, where)
    if code == "132":
        for index, begin in enumerate(range(ROUND_START - 4, len(value), ROUND_WIDTH), 1):
            date = value[begin : begin + 8].strip()
            if date and _round_date(date) is None:
                raise TrfError(f"{where}: round {index}: date {date!r} is not YY/MM/DD")


def parse_date(text: str) -> dt.date | None:
    """042 / 052 dates as programs write them: 2025/11/01, 2025-11-01, 2025.11.01,
    01.11.2025, 01/11/2025, "28. 07. 2005"."""
    parts = re.split(r"[./-]", text.replace(" ", ""))
    if len(parts) != 3 or not all(_digits(p) for p in parts):
        return None
    if len(parts[0]) == 4:
        year, month, day = parts
    elif len(parts[2]) == 4:
        day, month, year = parts
    else:
        return None
    try:
        return dt.date(int(year), int(month), int(day))
    except (ValueError, OverflowError):  # day 99999999999999999999: OverflowError (D81)
        return None


def _round_date(text: str) -> dt.date | None:
    """132 round dates: YY/MM/DD (20YY)."""
    match = re.fullmatch(r"([0-9]{2})[./-]([0-9]{2})[./-]([0-9]{2})", text)
    if not match:
        return parse_date(text)
    try:
        return dt.date(2000 + int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return None


def scoring(text: str, where: str = "") -> dict[str, Fraction]:
    """TRFx XXS: `KEY=VALUE` pairs (WW, BW, WD, BD, WL, BL, ZPB, HPB, FPB, PAB, FW, FL)."""
    points: dict[str, Fraction] = {}
    for token in text.split():
        key, _, value = token.partition("=")
        try:
            points[key.upper()] = Fraction(value)
        except (ValueError, ZeroDivisionError):
            raise TrfError(f"{where}: XXS {token!r} is not KEY=points") from None
    return points


# ---------------------------------------------------------------------------- writing
def render(tournament: Tournament) -> str:
    """The TRF text: headers as `CODE value`, 001 records in TRF16 columns."""
    lines = []
    for record in tournament.records:
        if isinstance(record, Header):
            lines.append(f"{record.code} {record.value}".rstrip())
        else:
            lines.append(render_player(record))
    return "\n".join(lines) + "\n"


def render_player(p: PlayerLine) -> str:
    points = "" if p.points is None else _points(p.points)
    head = (
        f"001 {p.start:>4} {p.sex:1}{p.title:>3} {p.name:<33} {_rating(p.rating)} {p.federation:<3} "
        f"{p.fide_id or '':>11} {p.birth:<10} {points:>4} {'' if p.rank is None else p.rank:>4}  "
    )
    blocks = "".join(f"{_opponent(r.opponent)} {r.colour} {r.result}  " for r in p.rounds)
    return (head + blocks).rstrip()


def _opponent(start: int | None) -> str:
    return "    " if start is None else "0000" if start == 0 else f"{start:>4}"


def _rating(rating: int | None) -> str:
    return f"{rating:>4}" if rating else "    "


def _points(points: Fraction) -> str:
    return f"{points.numerator // points.denominator}.{5 if points.denominator == 2 else 0}"


def rewrite_ratings(tournament: Tournament, ratings: Mapping[int, int | None]) -> Tournament:
    """The tournament with the rating (columns 49-52) of the players in `ratings` (by
    start number) replaced; None writes a blank field (unrated)."""
    records = tuple(
        replace(r, rating=ratings[r.start])
        if isinstance(r, PlayerLine) and r.start in ratings
        else r
        for r in tournament.records
    )
    return replace(tournament, records=records)


def rewrite_text(text: str, ratings: Mapping[int, int | None], source: str = "<trf>") -> str:
    """`text` with only columns 49-52 of the 001 records in `ratings` changed: every other
    character stays as the pairing program wrote it (the file is checked first)."""
    parse(text, source)
    out = []
    for raw in text.splitlines(keepends=True):
        body = raw.rstrip("\r\n")
        ending = raw[len(body) :]
        if (
            body.startswith(PLAYER + " ")
            and _digits(body[4:8].strip())
            and int(body[4:8].strip()) in ratings
        ):
            body = body.ljust(52)
            body = body[:48] + _rating(ratings[int(body[4:8].strip())]) + body[52:]
            body = body.rstrip() if len(raw.rstrip("\r\n")) < 52 else body
        out.append(body + ending)
    return "".join(out)


# ---------------------------------------------------------------------------- identity
IDENTITY_CODES = ("012", "022", "032")  # name, city, federation; and the start date
SLUG_LENGTH = 32


def normal_text(text: str) -> str:
    """A header field as the identity compares it: accents dropped (NFKD, combining marks
    removed), case folded, every run of characters other than letters and digits one space,
    trimmed. "  Montréal " and "MONTREAL" are equal; so are "Autumn Open, 2025" and
    "autumn open 2025"."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return " ".join(re.sub(r"[\W_]+", " ", plain.casefold()).split())


def identity(tournament: Tournament) -> str:
    """The tournament's stable event id: `<name slug>.<start date>.<8 hex digits>`, e.g.
    `autumn-open-2025.2025-11-01.3c2e5b1a`, so that re-exports and renamed copies of the same
    tournament are the same event (the idempotency key).

    The fields: 012 name, 022 city, 032 federation (each `normal_text`; a missing line is
    empty) and the start date (042, else the first 132 round date; any date format, as ISO).
    The digits are the first 8 hex digits of the SHA-256 of those four values joined by
    U+001F. The slug is the normalized name in ASCII letters and digits joined by '-', at
    most 32 characters ('tournament' when none is left). Not in it: the end date (052),
    which a director may correct after the fact; a changed end date is the same tournament
    with other content, i.e. a correction. A TRF without a 012 name or a start date has no
    identity: TrfError (give the event id)."""
    source = tournament.source
    name = normal_text(tournament.header("012") or "")
    start = _start_date(tournament)
    if not name or start is None:
        missing = " and ".join(
            w for w, gone in (("name (012)", not name), ("start date (042)", start is None)) if gone
        )
        raise TrfError(
            f"{source}: no tournament {missing} to identify the tournament by: give --event-id"
        )
    fields = [
        name,
        normal_text(tournament.header("022") or ""),
        normal_text(tournament.header("032") or ""),
        start.isoformat(),
    ]
    digest = hashlib.sha256("\x1f".join(fields).encode()).hexdigest()[:8]
    return f"{identity_prefix(tournament)}{digest}"


def identity_prefix(tournament: Tournament) -> str:
    """`<name slug>.<start date>.`: what the identities of tournaments with the same name and
    start date share (whatever their city or federation)."""
    name = normal_text(tournament.header("012") or "")
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    slug = "-".join(re.findall(r"[a-z0-9]+", ascii_name))
    if len(slug) > SLUG_LENGTH:
        cut = slug[: SLUG_LENGTH + 1].rfind("-")
        slug = slug[: cut if cut > 0 else SLUG_LENGTH]
    start = _start_date(tournament)
    return f"{slug or 'tournament'}.{start.isoformat() if start else ''}."


def _start_date(tournament: Tournament) -> dt.date | None:
    text = tournament.header("042")
    if text:
        return parse_date(text)
    rounds = _round_dates(tournament)
    return min(rounds) if rounds else None


# ---------------------------------------------------------------------------- player ids
XX_IDS = "XXI"  # `XXI <start number> <player id>`: a player's id in the rating system (this service's TRFx record)
ID_KEYS = (
    "start",
    "fide_id",
    "name",
)  # the columns of an --ids mapping that find a player, in this order


@dataclass(frozen=True)
class IdMap:
    """A player-id mapping file: player id by start number, by FIDE id and by name
    (`normal_text`), from CSV columns `start`, `fide_id`, `name` and `id`."""

    by_start: Mapping[int, str]
    by_fide_id: Mapping[str, str]
    by_name: Mapping[str, str]
    source: str = "<ids>"

    def find(self, player: PlayerLine) -> str | None:
        """The player's id: by start number, else FIDE id, else name; None when not listed."""
        if player.start in self.by_start:
            return self.by_start[player.start]
        if player.fide_id and player.fide_id in self.by_fide_id:
            return self.by_fide_id[player.fide_id]
        return self.by_name.get(normal_text(player.name))


def read_ids(text: str, source: str = "<ids>") -> IdMap:
    """An --ids mapping: CSV with a header naming `id` (the player id in the rating system)
    and at least one of `start` (start number), `fide_id`, `name`; other columns are ignored,
    so a federation's list with those columns serves. A row may leave key columns empty. A
    key given twice with different ids, or a bad id, raises TrfError naming the line."""
    reader = csv.DictReader(io.StringIO(text, newline=""))  # the csv module's own line ends
    try:
        return _read_ids(reader, source)
    except csv.Error as exc:  # a quote left open at the end, a field past the size limit
        raise TrfError(f"{source}:{reader.reader.line_num}: not CSV: {exc}") from None


def _read_ids(reader: csv.DictReader, source: str) -> IdMap:
    """read_ids, on the open reader."""
    header = [h.strip() for h in reader.fieldnames or []]
    reader.fieldnames = header
    if "id" not in header or not any(k in header for k in ID_KEYS):
        raise TrfError(
            f"{source}:1: the header needs a column `id` and one of {', '.join(ID_KEYS)} (has: {', '.join(map(repr, header)) or 'none'})"
        )
    maps: dict[str, dict] = {k: {} for k in ID_KEYS}
    seen: dict[tuple[str, object], int] = {}
    problems = []
    for row in reader:
        where = f"{source}:{reader.line_num}"
        pid = (row.get("id") or "").strip()
        if not re.fullmatch(PLAYER_ID_PATTERN, pid):
            problems.append(f"{where}: id {pid!r} is not 1-64 of [A-Za-z0-9._:@/-]")
            continue
        for key in ID_KEYS:
            value = (row.get(key) or "").strip()
            if not value:
                continue
            if key == "start" and not _digits(value):
                problems.append(f"{where}: start {value!r} is not a start number")
                continue
            found = int(value) if key == "start" else normal_text(value) if key == "name" else value
            if found in maps[key] and maps[key][found] != pid:
                problems.append(
                    f"{where}: {key} {value!r} already has id {maps[key][found]} on line {seen[key, found]}"
                )
                continue
            maps[key][found] = pid
            seen[key, found] = reader.line_num
    if problems:
        raise TrfError(*problems)
    return IdMap(maps["start"], maps["fide_id"], maps["name"], source)


def xx_ids(tournament: Tournament) -> dict[int, str]:
    """The `XXI <start number> <player id>` records: player id by start number."""
    starts = {p.start for p in tournament.players}
    ids: dict[int, str] = {}
    problems = []
    for record in tournament.records:
        if not (isinstance(record, Header) and record.code == XX_IDS):
            continue
        where = f"{tournament.source}:{record.line}"
        parts = record.value.split()
        if len(parts) != 2 or not _digits(parts[0]):
            problems.append(
                f"{where}: {XX_IDS} is `{XX_IDS} <start number> <player id>`, not {record.value.strip()!r}"
            )
        elif int(parts[0]) not in starts:
            problems.append(f"{where}: {XX_IDS}: start number {int(parts[0])} has no 001 record")
        elif not re.fullmatch(PLAYER_ID_PATTERN, parts[1]):
            problems.append(f"{where}: {XX_IDS}: id {parts[1]!r} is not 1-64 of [A-Za-z0-9._:@/-]")
        elif int(parts[0]) in ids and ids[int(parts[0])] != parts[1]:
            problems.append(
                f"{where}: {XX_IDS}: start number {int(parts[0])} already has id {ids[int(parts[0])]}"
            )
        else:
            ids[int(parts[0])] = parts[1]
    if problems:
        raise TrfError(*problems)
    return ids


def local_id(player: PlayerLine, event_id: str) -> str:
    """`sn<start>@<event id>`: a player known only at this event (never merged across events)."""
    return f"sn{player.start}@{event_id}"


def player_ids(
    tournament: Tournament,
    event_id: str,
    system: str = "fide",
    mapping: IdMap | None = None,
    local_ids: bool = False,
) -> dict[int, str]:
    """Player id by start number.

    FIDE: the FIDE id (columns 58-68), else `sn<start>@<event id>`.
    CFC, NASPA: the FIDE-id column is never used. The id comes from the mapping (`--ids`),
    else from the TRF's `XXI` records; where both give one they must agree. A player with
    neither gets `sn<start>@<event id>` only with `local_ids`; otherwise TrfError names the
    players without ids."""
    source = tournament.source
    if system == "fide":
        return {p.start: p.fide_id or local_id(p, event_id) for p in tournament.players}
    listed = xx_ids(tournament)
    ids: dict[int, str] = {}
    missing, problems = [], []
    for p in tournament.players:
        mapped = mapping.find(p) if mapping else None
        given = listed.get(p.start)
        if mapped and given and mapped != given:
            problems.append(
                f"{source}:{p.line}: player {p.start} {p.name}: {XX_IDS} says {given}, "
                f"{mapping.source if mapping else ''} says {mapped}"
            )
        pid = mapped or given or (local_id(p, event_id) if local_ids else None)
        if pid is None:
            missing.append(p)
        else:
            ids[p.start] = pid
    if problems:
        raise TrfError(*problems)
    if missing:
        named = ", ".join(f"{p.start} {p.name} (line {p.line})" for p in missing[:10])
        more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
        raise TrfError(
            f"{source}: no {system} player id for {len(missing)} player{'s' if len(missing) > 1 else ''}: "
            f"{named}{more}; give `{XX_IDS} <start number> <id>` lines, --ids FILE.csv, or --local-ids"
        )
    return ids


# ---------------------------------------------------------------------------- starting list
# --ratings-from-trf: the career games a record read from the TRF is given. The TRF has no
# game count; each figure is the least with which the system treats a rated player as
# established: FIDE 30 (8.3.3: under 30 games K would be 40), CFC 25 (715: established from
# the 25th game), NASPA 50 (N5: under 50 games the higher multiplier).
ASSUMED_GAMES = {"fide": 30, "cfc": 25, "naspa": 50}


def starting_records(
    tournament: Tournament, ids: Mapping[int, str], system: System, pool: str | None = None
) -> list[PlayerRecord]:
    """The starting list a TRF gives for an offline preview: a record per player with a
    rating (columns 49-52) in `system` / `pool`: status established, `ASSUMED_GAMES`, the
    name. FIDE adds the K inputs of 8.3.3 the TRF has: birth year (junior), and ever 2300 /
    2400 from the current rating (a rating of 2400 or more has been published; an earlier
    higher rating is unknown), so K is 10 from 2400, 40 for a junior under 2300, else 20.
    CFC adds `highest` = the rating (714c: an earlier higher rating is unknown). Players
    with a blank or 0 rating get no record: unrated."""
    pool = pool or DEFAULT_POOL[system]
    records = []
    for p in tournament.players:
        if not p.rating:
            continue
        extra: dict = {}
        if system == "fide":
            extra = {
                "birth_year": p.birth_year,
                "ever_2300": p.rating >= 2300,
                "ever_2400": p.rating >= 2400,
            }
        elif system == "cfc":
            extra = {"highest": p.rating}
        records.append(
            PlayerRecord(
                system=system,
                pool=pool,
                id=ids[p.start],
                name=p.name[:200] or None,
                rating=p.rating,
                status="established",
                games=ASSUMED_GAMES[system],
                **extra,
            )
        )
    return records


# ---------------------------------------------------------------------------- the event
def to_event(
    tournament: Tournament,
    event_id: str,
    system: str = "fide",
    pool: str | None = None,
    ids: Mapping[int, str] | None = None,
    period: str | None = None,
) -> EventFinished:
    """The `event.finished/v1` of a finished tournament (mapping in the module's doc);
    `ids`: player id by start number (default `player_ids`); `period` (FIDE): the rating
    period, default (in the service) the month of the end date."""
    source = tournament.source
    if not re.fullmatch(EVENT_ID_PATTERN, event_id):
        raise TrfError(
            f"{source}: event id {event_id!r} is not 1-128 of [A-Za-z0-9._:-] (give --event-id)"
        )
    ids = dict(ids) if ids is not None else player_ids(tournament, event_id, system)
    problems = _id_problems(tournament, ids)
    try:
        bye_scores = _bye_scores(tournament)
    except TrfError as exc:
        problems.extend(exc.problems)
        bye_scores = {}
    games: list[tuple[int, int, Game]] = []
    byes: list[tuple[int, int, Bye]] = []
    last_round = _read_rounds(tournament, ids, bye_scores, games, byes, problems)
    try:
        start, end = _dates(tournament)
    except TrfError as exc:
        problems.extend(exc.problems)
    if last_round == 0:
        problems.append(f"{source}: no round has a result")
    if problems:
        raise TrfError(*problems)
    name = tournament.header("012") or event_id
    return EventFinished(
        event_id=event_id,
        system=system,  # type: ignore[arg-type]  # the callers pass a System (the CLI offers those only)
        pool=pool or DEFAULT_POOL.get(system),
        name=name[:200],
        start_date=start,
        end_date=end,
        rounds=last_round,
        period=period,
        players=[
            PlayerRef(id=ids[p.start], name=p.name[:200], birth_year=p.birth_year)
            for p in tournament.players
        ],
        games=[g for *_, g in sorted(games, key=lambda t: (t[0], t[1]))],
        byes=[b for *_, b in sorted(byes, key=lambda t: (t[0], t[1]))],
    )


def _id_problems(tournament: Tournament, ids: Mapping[int, str]) -> list[str]:
    """Each player id that is not one the schema accepts (schemas.common
    PLAYER_ID_PATTERN), or that two 001 records share."""
    source = tournament.source
    problems = []
    owner: dict[str, PlayerLine] = {}
    for p in tournament.players:
        pid = ids[p.start]
        if not re.fullmatch(PLAYER_ID_PATTERN, pid):
            problems.append(
                f"{source}:{p.line}: player id {pid!r} is not 1-64 of [A-Za-z0-9._:@/-] (shorten --event-id)"
            )
        elif pid in owner:
            problems.append(
                f"{source}:{p.line}: player id {pid} is also player {owner[pid].start}'s (line {owner[pid].line})"
            )
        owner.setdefault(pid, p)
    return problems


def _read_rounds(
    tournament: Tournament,
    ids: Mapping[int, str],
    bye_scores: Mapping[str, float],
    games: list,
    byes: list,
    problems: list[str],
) -> int:
    """Every round entry of every 001 record (`_read_round`), appending the games and byes
    (with the round and start number they sort by) and every problem found; the last round
    with a result (0: none)."""
    source = tournament.source
    by_start = {p.start: p for p in tournament.players}
    last_round = 0
    for p in tournament.players:
        for number, entry in enumerate(p.rounds, 1):
            if entry.blank:
                continue
            last_round = max(last_round, number)
            try:
                _read_round(
                    p,
                    number,
                    entry,
                    by_start,
                    ids,
                    bye_scores,
                    games,
                    byes,
                    f"{source}:{p.line}: round {number}",
                )
            except TrfError as exc:
                problems.extend(exc.problems)
    return last_round


def _read_round(
    p: PlayerLine,
    number: int,
    entry: RoundEntry,
    by_start: Mapping[int, PlayerLine],
    ids: Mapping[int, str],
    bye_scores: Mapping[str, float],
    games: list,
    byes: list,
    at: str,
) -> None:
    """One round of one 001 record: appends its bye, or (read from the lower start number)
    the pairing's game or double-forfeit byes."""
    if entry.opponent in (None, 0):
        if entry.result in bye_scores:
            byes.append(
                (
                    number,
                    p.start,
                    Bye(round=number, player=ids[p.start], score=bye_scores[entry.result]),
                )
            )
            return
        raise TrfError(f"{at}: result {entry.result!r} needs an opponent")
    if entry.result in BYES or entry.result == "U":
        raise TrfError(
            f"{at}: bye {entry.result!r} with an opponent ({entry.opponent}); byes have 0000"
        )
    if entry.result == " ":
        raise TrfError(f"{at}: opponent {entry.opponent} without a result")
    other = by_start.get(entry.opponent)
    if other is None:
        raise TrfError(f"{at}: opponent {entry.opponent} has no 001 record")
    if other.start == p.start:
        raise TrfError(f"{at}: player {p.start} cannot play itself")
    theirs = other.rounds[number - 1] if number <= len(other.rounds) else RoundEntry(None)
    if theirs.opponent != p.start:
        raise TrfError(
            f"{at}: player {p.start} plays {other.start}, but line {other.line} says "
            f"{'nobody' if theirs.opponent in (None, 0) else theirs.opponent}"
        )
    if p.start > other.start:
        return  # the pair is read once, from the lower start number
    outcome = _pairing(entry, theirs, at)
    if outcome is None:  # double forfeit
        for q in (p, other):
            byes.append((number, q.start, Bye(round=number, player=ids[q.start], score=0)))
        return
    mine, forfeit = outcome
    white_first = not (entry.colour == "b" or theirs.colour == "w")
    a, b, score = (p, other, mine) if white_first else (other, p, 1 - mine)
    games.append(
        (
            number,
            a.start,
            Game(round=number, a=ids[a.start], b=ids[b.start], score=score, forfeit=forfeit),
        )
    )


def _pairing(mine: RoundEntry, theirs: RoundEntry, at: str) -> tuple[float, bool] | None:
    """(my score, forfeit) of one pairing from both records; None for a double forfeit."""
    pair = mine.result + theirs.result
    if pair == "--":
        return None
    if mine.colour == theirs.colour and mine.colour in "wb":
        raise TrfError(f"{at}: both players have colour {mine.colour!r}")
    for table, forfeit in ((PLAYED, False), (UNRATED, True), (FORFEITS, True)):
        if (
            mine.result in table
            and theirs.result in table
            and table[mine.result] + table[theirs.result] == 1
        ):
            return table[mine.result], forfeit
    raise TrfError(
        f"{at}: results {mine.result!r} and {theirs.result!r} of the two players do not match"
    )


def _bye_scores(tournament: Tournament) -> dict[str, float]:
    """Scores of a round without an opponent: H F Z, U (XXS PAB over WW), + and -."""
    points = scoring(
        tournament.header("XXS") or "", f"{tournament.source}:{tournament.header_line('XXS')}"
    )
    win = points.get("WW", Fraction(1))
    pab = points.get("PAB", win) / win if win else Fraction(1)
    if pab not in (0, Fraction(1, 2), 1):
        where = f"{tournament.source}:{tournament.header_line('XXS')}"
        raise TrfError(f"{where}: XXS PAB is {pab} of a win: the contract's byes score 1, 0.5 or 0")
    scores = {code: _score(value) for code, value in BYES.items()}
    scores.update({"U": _score(pab), "+": 1, "-": 0})
    return scores


def _score(value: Fraction) -> float:
    """1, 0.5 or 0 as JSON writes them best (1, not 1.0)."""
    return int(value) if value.denominator == 1 else float(value)


def _round_dates(tournament: Tournament) -> list[dt.date]:
    """The dates of the 132 records' round columns."""
    return [date for _, date in round_dates(tournament)]


def round_dates(tournament: Tournament) -> list[tuple[int, dt.date]]:
    """(round number, date) of each dated round column of the 132 records."""
    rounds: list[tuple[int, dt.date]] = []
    for record in tournament.records:
        if isinstance(record, Header) and record.code == "132":
            for number, begin in enumerate(
                range(ROUND_START - 4, len(record.value), ROUND_WIDTH), 1
            ):
                date = _round_date(record.value[begin : begin + 8].strip())
                if date is not None:
                    rounds.append((number, date))
    return rounds


def _dates(tournament: Tournament) -> tuple[dt.date, dt.date]:
    """042 / 052, else the first / last 132 round date."""
    source = tournament.source
    rounds = _round_dates(tournament)
    start_text, end_text = tournament.header("042"), tournament.header("052")
    start = parse_date(start_text) if start_text else (min(rounds) if rounds else None)
    end = parse_date(end_text) if end_text else (max(rounds) if rounds else start)
    if start is None:
        raise TrfError(f"{source}: no start date (042, or round dates in 132)")
    assert end is not None
    if end < start:
        raise TrfError(
            f"{source}:{tournament.header_line('052')}: end date {end} is before start date {start}"
        )
    return start, end


TRF_SUFFIXES = (".trf", ".trfx")


def looks_like_trf(name: str, data: bytes) -> bool:
    """A TRF by extension (.trf, .trfx), or by content (any other name, e.g. `.txt`): its
    first non-blank line is a TRF record (`012 `, `001 `, `XXR ` ...) and some line starts
    with `001 ` or `012 `. JSON never does: it starts with `{`, `[` or a value."""
    if name.lower().endswith(TRF_SUFFIXES):
        return True
    lines = [line for line in data.splitlines() if line.strip()]
    if not lines or not re.match(rb"(\d{3}|XX[A-Z]) ", lines[0]):
        return False
    return any(line.startswith((b"001 ", b"012 ")) for line in lines)
