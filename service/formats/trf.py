"""FIDE Tournament Report File (TRF, FIDE Data Exchange Format 2016, "TRF16") and the
TRFx extensions that pairing engines (JaVaFo, bbpPairings) read and write.

Pure: text in, a `Tournament` (every line kept in order) out; a `Tournament` in, text
out; a `Tournament` in, an `event.finished/v1` message out; and the ratings of the 001
records rewritten. No I/O: the command line (service.trfcli) reads and writes files.

Records read (TRF16 column positions, 1-based):

    001 player: 5-8 start number, 10 sex, 11-13 title, 15-47 name, 49-52 rating,
        54-56 federation, 58-68 FIDE id, 70-79 birth date, 81-84 points, 86-89 rank,
        then per round r a 10-column block from 92 + 10 (r - 1): opponent (4, "0000"
        none), colour (w / b / -), result
    012 name, 022 city, 032 federation, 042 start date, 052 end date, 062 players,
    072 rated players, 082 teams, 092 type, 102 chief arbiter, 112 deputy arbiters,
    122 time control, 132 round dates (YY/MM/DD in the round columns), 013 team
    XXR rounds, XXC configuration, XXS scoring (TRFx), and any other XX record (kept)

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

Player ids: the FIDE id when the record has one (not blank, not 0); otherwise
`sn<start number>@<event id>` (e.g. `sn12@club-open-2025`), so that players without a
FIDE id never merge across events.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Mapping

from schemas.common import DEFAULT_POOL, EVENT_ID_PATTERN, PLAYER_ID_PATTERN
from schemas.events import Bye, EventFinished, Game, PlayerRef

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
    """A malformed TRF: the message names the file (source) and the line."""


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
        return int(year) if year.isdigit() and int(year) > 0 else None


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
        object.__setattr__(self, "players", tuple(r for r in self.records if isinstance(r, PlayerLine)))

    def header(self, code: str) -> str | None:
        """The first record with this code (stripped), or None."""
        for record in self.records:
            if isinstance(record, Header) and record.code == code:
                return record.value.strip()
        return None

    def header_line(self, code: str) -> int:
        return next((r.line for r in self.records if isinstance(r, Header) and r.code == code), 0)


# ---------------------------------------------------------------------------- reading
def parse(text: str, source: str = "<trf>") -> Tournament:
    """Read a TRF; a malformed line raises TrfError naming `source` and the line."""
    records: list[Header | PlayerLine] = []
    starts: dict[int, int] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip("\r\n").rstrip()
        if not line.strip():
            continue
        code = line[:3]
        where = f"{source}:{number}"
        if len(line) > 3 and line[3] != " ":
            raise TrfError(f"{where}: a record starts with a 3-character code and a space, not {line[:8]!r}")
        if code == PLAYER:
            player = _player(line, where, number)
            if player.start in starts:
                raise TrfError(f"{where}: start number {player.start} already used on line {starts[player.start]}")
            starts[player.start] = number
            records.append(player)
        elif code in HEADER_CODES or code.startswith("XX"):
            records.append(Header(code, line[4:], number))
            _check_header(code, line[4:], where)
        else:
            raise TrfError(f"{where}: unknown record type {code!r} (001, 012-132, 013 and XX records are read)")
    tournament = Tournament(tuple(records), source)
    if not tournament.players:
        raise TrfError(f"{source}: no player records (001)")
    return tournament


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
        if not text.isdigit():
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
    if birth and not re.fullmatch(r"\d{4}([./-]\d{2}[./-]\d{2})?", birth):
        raise TrfError(f"{where}: columns 70-79: birth date {birth!r} is not YYYY/MM/DD")
    if birth and 0 < int(birth[:4]) and not 1850 <= int(birth[:4]) <= 2200:
        raise TrfError(f"{where}: columns 70-79: birth year {birth[:4]} is out of range")
    points_text = _field(line, 81, 84).strip()
    if points_text and not re.fullmatch(r"\d{1,3}(\.\d)?", points_text):
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
        raise TrfError(f"{at}: a round is `OOOO C R` (opponent, colour, result), not {block.rstrip()!r}")
    if opponent_text.strip() and not opponent_text.strip().isdigit():
        raise TrfError(f"{at}: opponent {opponent_text.strip()!r} is not a start number")
    if colour not in COLOURS:
        raise TrfError(f"{at}: colour {colour!r} is not w, b or -")
    if result not in RESULTS:
        raise TrfError(f"{at}: result {result!r} is not a TRF result code (1 = 0 W D L + - H F U Z)")
    opponent = int(opponent_text) if opponent_text.strip() else None
    return RoundEntry(opponent, colour, result)


def _check_header(code: str, value: str, where: str) -> None:
    text = value.strip()
    if code in ("042", "052") and text and parse_date(text) is None:
        raise TrfError(f"{where}: {HEADER_CODES[code]} {text!r} is not a date (YYYY/MM/DD or DD.MM.YYYY)")
    if code in ("062", "072", "082", "XXR") and text and not text.isdigit():
        raise TrfError(f"{where}: {HEADER_CODES.get(code, 'number of rounds')} {text!r} is not a number")
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
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    if len(parts[0]) == 4:
        year, month, day = parts
    elif len(parts[2]) == 4:
        day, month, year = parts
    else:
        return None
    try:
        return dt.date(int(year), int(month), int(day))
    except ValueError:
        return None


def _round_date(text: str) -> dt.date | None:
    """132 round dates: YY/MM/DD (20YY)."""
    match = re.fullmatch(r"(\d{2})[./-](\d{2})[./-](\d{2})", text)
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
    blocks = "".join(
        f"{_opponent(r.opponent)} {r.colour} {r.result}  " for r in p.rounds
    )
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
        replace(r, rating=ratings[r.start]) if isinstance(r, PlayerLine) and r.start in ratings else r
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
        if body.startswith(PLAYER + " ") and body[4:8].strip().isdigit() and int(body[4:8]) in ratings:
            body = body.ljust(52)
            body = body[:48] + _rating(ratings[int(body[4:8])]) + body[52:]
            body = body.rstrip() if len(raw.rstrip("\r\n")) < 52 else body
        out.append(body + ending)
    return "".join(out)


# ---------------------------------------------------------------------------- the event
def player_id(player: PlayerLine, event_id: str) -> str:
    """The FIDE id; without one, `sn<start>@<event id>` (never merged across events)."""
    return player.fide_id if player.fide_id else f"sn{player.start}@{event_id}"


def default_event_id(name: str) -> str:
    """An event id from a file name: characters outside [A-Za-z0-9._:-] become '-'."""
    stem = re.sub(r"\.(trf|txt|trfx)$", "", name.rsplit("/", 1)[-1], flags=re.IGNORECASE)
    return re.sub(r"[^A-Za-z0-9._:-]", "-", stem)[:128] or "trf"


def to_event(tournament: Tournament, event_id: str, system: str = "fide", pool: str | None = None) -> EventFinished:
    """The `event.finished/v1` of a finished tournament (mapping in the module's doc)."""
    source = tournament.source
    if not re.fullmatch(EVENT_ID_PATTERN, event_id):
        raise TrfError(f"{source}: event id {event_id!r} is not 1-128 of [A-Za-z0-9._:-] (give --event-id)")
    by_start = {p.start: p for p in tournament.players}
    ids = {}
    for p in tournament.players:
        pid = player_id(p, event_id)
        if not re.fullmatch(PLAYER_ID_PATTERN, pid):
            raise TrfError(f"{source}:{p.line}: player id {pid!r} is not 1-64 of [A-Za-z0-9._:@/-] (shorten --event-id)")
        if pid in ids.values():
            raise TrfError(f"{source}:{p.line}: FIDE id {pid} appears twice")
        ids[p.start] = pid
    start, end = _dates(tournament)
    bye_scores = _bye_scores(tournament)
    games: list[tuple[int, int, Game]] = []
    byes: list[tuple[int, int, Bye]] = []
    last_round = 0
    for p in tournament.players:
        for number, entry in enumerate(p.rounds, 1):
            at = f"{source}:{p.line}: round {number}"
            if entry.blank:
                continue
            last_round = max(last_round, number)
            if entry.opponent in (None, 0):
                if entry.result in bye_scores:
                    byes.append((number, p.start, Bye(round=number, player=ids[p.start], score=bye_scores[entry.result])))
                    continue
                raise TrfError(f"{at}: result {entry.result!r} needs an opponent")
            if entry.result in BYES or entry.result == "U":
                raise TrfError(f"{at}: bye {entry.result!r} with an opponent ({entry.opponent}); byes have 0000")
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
                continue  # the pair is read once, from the lower start number
            outcome = _pairing(entry, theirs, at)
            if outcome is None:  # double forfeit
                for q in (p, other):
                    byes.append((number, q.start, Bye(round=number, player=ids[q.start], score=0)))
                continue
            mine, forfeit = outcome
            white_first = not (entry.colour == "b" or theirs.colour == "w")
            a, b, score = (p, other, mine) if white_first else (other, p, 1 - mine)
            games.append((number, a.start, Game(round=number, a=ids[a.start], b=ids[b.start], score=score, forfeit=forfeit)))
    if last_round == 0:
        raise TrfError(f"{source}: no round has a result")
    name = tournament.header("012") or event_id
    return EventFinished(
        event_id=event_id,
        system=system,  # type: ignore[arg-type]
        pool=pool or DEFAULT_POOL.get(system),
        name=name[:200],
        start_date=start,
        end_date=end,
        rounds=last_round,
        players=[
            PlayerRef(id=ids[p.start], name=p.name[:200], birth_year=p.birth_year) for p in tournament.players
        ],
        games=[g for *_, g in sorted(games, key=lambda t: (t[0], t[1]))],
        byes=[b for *_, b in sorted(byes, key=lambda t: (t[0], t[1]))],
    )


def _pairing(mine: RoundEntry, theirs: RoundEntry, at: str) -> tuple[float, bool] | None:
    """(my score, forfeit) of one pairing from both records; None for a double forfeit."""
    pair = mine.result + theirs.result
    if pair == "--":
        return None
    if mine.colour == theirs.colour and mine.colour in "wb":
        raise TrfError(f"{at}: both players have colour {mine.colour!r}")
    for table, forfeit in ((PLAYED, False), (UNRATED, True), (FORFEITS, True)):
        if mine.result in table and theirs.result in table and table[mine.result] + table[theirs.result] == 1:
            return table[mine.result], forfeit
    raise TrfError(f"{at}: results {mine.result!r} and {theirs.result!r} of the two players do not match")


def _bye_scores(tournament: Tournament) -> dict[str, float]:
    """Scores of a round without an opponent: H F Z, U (XXS PAB over WW), + and -."""
    points = scoring(tournament.header("XXS") or "", f"{tournament.source}:{tournament.header_line('XXS')}")
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


def _dates(tournament: Tournament) -> tuple[dt.date, dt.date]:
    """042 / 052, else the first / last 132 round date."""
    source = tournament.source
    rounds: list[dt.date] = []
    for record in tournament.records:
        if isinstance(record, Header) and record.code == "132":
            for begin in range(ROUND_START - 4, len(record.value), ROUND_WIDTH):
                date = _round_date(record.value[begin : begin + 8].strip())
                if date is not None:
                    rounds.append(date)
    start_text, end_text = tournament.header("042"), tournament.header("052")
    start = parse_date(start_text) if start_text else (min(rounds) if rounds else None)
    end = parse_date(end_text) if end_text else (max(rounds) if rounds else start)
    if start is None:
        raise TrfError(f"{source}: no start date (042, or round dates in 132)")
    assert end is not None
    if end < start:
        raise TrfError(f"{source}:{tournament.header_line('052')}: end date {end} is before start date {start}")
    return start, end


def looks_like_trf(name: str, data: bytes) -> bool:
    """A TRF by extension (.trf, .trfx) or by content (a first record `001 `, `012 ` ...)."""
    if name.lower().endswith((".trf", ".trfx")):
        return True
    first = data.lstrip()[:4]
    return bool(re.fullmatch(rb"(\d{3}|XX[A-Z]) ", first))
