"""Rating list files: `player.record/v1` as JSON Lines, or CSV with a header.

**CSV.** Cells separated by `,` or `;` (or a tab), found from the header line. Header
names in any case and spacing (`Birth Year`, `birth_year` and `BIRTH-YEAR` are one
column). The record's own field names always work (any order, only `id` required; a
missing or empty cell is the field's default):

    system, pool, id, name, titles, federation, sex, rating, status, games, highest,
    birth_year, ever_2300, ever_2400, k, cfc, fide, rd, volatility, last_rated, glicko2

(`titles`: separated by spaces, commas or semicolons, e.g. `GM` or `IM WGM`. Glicko-2's
`rd` and `volatility` are decimals, `last_rated` the date of the player's last rated event,
kept in the record's `glicko2` state: docs/rules/glicko2.md G2-11.)

With `--system` (and, for a list that carries several pools, `--pool`), the columns of the
federations' own lists are read too:

- FIDE (the TXT/XML rating list downloads): `ID Number` -> id, `Name` -> name, the
  rating column of the pool (`SRtng` standard, `RRtng` rapid, `BRtng` blitz in the
  combined list; `Rtng` or the month column, e.g. `SEP25`, in a one-pool list) -> rating,
  the pool's `K` (`SK` / `RK` / `BK`, or `K`) -> k, `B-day` -> birth_year (`0000`:
  unknown), `Fed` -> federation, `Sex` -> sex, `Tit`, `WTit` and `OTit` -> titles (in that
  order; D35). Known and not used: `FOA`, `Flag`, the other pools' columns, and `Gms` / `SGm` / `RGm` / `BGm`, which count the games of the
  last rating period, not the career games the record's `games` holds (F7: K 40 under 30
  games): a FIDE list gives no career count, so give a `games` column, or K after the
  imported `K` (which holds until the next list, F5) is derived from what the record has.
- CFC: `CFC#` / `CFC ID` / `CFC Number` -> id, `Name` -> name, the pool's rating
  (`Regular Rating` / `Regular`; `Quick Rating` / `Active Rating` / `Quick` / `Active`)
  -> rating, `Games` -> games, `Highest` / `Peak` -> highest. Known and not used:
  `Expiry`, `City`, `Province` / `Prov`, `FIDE ID`, and the other pool's rating.
- NASPA: `NASPA ID` / `Member ID` / `Player ID` -> id, `Name`, `Rating`, `Games`. Known and
  not used: `Rank`, `City`, `State`, `Province`, `Country`, `Last Played`, `Expiry`.
- Glicko-2: `Rating Deviation` / `Deviation` -> rd, `Sigma` -> volatility, `Last Played`
  -> last_rated.

(The CFC and NASPA names are those their sites and files commonly use; no published file
of theirs was at hand to check them against.) Another column is refused, naming it.

Cells: whole numbers may be written as decimals (`1500.0`; `1500.5` is refused); `rd` and
`volatility` are decimals (`151.5165`); `last_rated` an ISO date (`2025-01-31`);
`status`, `system` and `pool` in any case (`Established`); `ever_2300` / `ever_2400`
true/false (also 1/0, yes/no); `cfc`, `fide` and `glicko2` are the engines' accumulators as JSON text
(what `export --format csv` writes, so that a list goes out and back in unchanged).
`system` / `pool` may come from the command line instead (`--system`, `--pool`).

**Checks.** Given `rules` (the engines' own, service.rating.ListRules): a row without a
status gets the one its system's rules give its rating and games, and every record must
be one the engines can rate (the very check they make before rating). The whole file is
refused, nothing read, if any row is bad, and every bad row is listed (`file:line: field:
reason`, the first MAX_LISTED of them, then how many more). Pure apart from reading and
writing the named file.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Protocol, overload

import msgspec

from schemas.records import PlayerRecord
from service.formats.fidedownloads import (
    DownloadProblem,
    fixed_width_table,
    is_fixed_width,
    is_xml,
    text_of,
    unzipped,
    xml_table,
)
from service.formats.jsonlines import FileProblem, printable, read_documents

CSV_COLUMNS = (
    "system", "pool", "id", "name", "titles", "federation", "sex", "rating", "status", "games", "highest", "birth_year",
    "ever_2300", "ever_2400", "k", "cfc", "fide", "rd", "volatility", "last_rated", "glicko2",
)  # fmt: skip
MAX_LISTED = 50  # bad rows listed in full; the rest are counted
_INTEGERS = {"rating", "games", "highest", "birth_year", "k"}
_DECIMALS = {"rd", "volatility"}
_DATES = {"last_rated"}
_BOOLEANS = {"ever_2300", "ever_2400"}
_JSON = {"cfc", "fide", "glicko2"}
# A column kept inside an accumulator: `last_rated` is the record's `glicko2.last_rated`.
_INSIDE = {"last_rated": "glicko2"}
_LOWER = {"system", "pool", "status"}
_UPPER = {"sex"}
_LISTS = {"titles"}  # several columns may give them (FIDE `Tit`, `WTit`, `OTit`): joined
_TRUE, _FALSE = {"true", "1", "yes", "y", "t"}, {"false", "0", "no", "n", "f"}
_SEPARATORS = re.compile(r"[\s,;]+")
_decoder = msgspec.json.Decoder(PlayerRecord)
_encoder = msgspec.json.Encoder()
_packer = msgspec.msgpack.Encoder()
_unpacker = msgspec.msgpack.Decoder(PlayerRecord)


def header_key(name: str) -> str:
    """A header name as compared: lower case, without spaces, `_`, `-` and `.`."""
    return re.sub(r"[\s_.\-]+", "", name.lower())


# The federations' list columns (header_key -> field; None: known, not used).
_FIDE = {
    "idnumber": "id",
    "fideid": "id",
    "rtng": "rating",
    "bday": "birth_year",
    "birthday": "birth_year",
    "fed": "federation",
    "sex": "sex",
    "tit": "titles",
    "wtit": "titles",
    "otit": "titles",
    **dict.fromkeys(("foa", "flag", "gms", "sgm", "rgm", "bgm")),
}
_FIDE_POOLS = {
    "standard": {"srtng": "rating", "sk": "k"},
    "rapid": {"rrtng": "rating", "rk": "k"},
    "blitz": {"brtng": "rating", "bk": "k"},
}
_FIDE_MONTH = re.compile(
    r"^(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\d{2}$"
)  # `SEP25`: that list's rating
_CFC = {
    "cfc#": "id",
    "cfcid": "id",
    "cfcnumber": "id",
    "cfcno": "id",
    "peak": "highest",
    "highestrating": "highest",
    **dict.fromkeys(("expiry", "expires", "city", "province", "prov", "fideid", "fidenumber")),
}
_CFC_POOLS = {
    "regular": {"regularrating": "rating", "regular": "rating"},
    "active": {
        "quickrating": "rating",
        "activerating": "rating",
        "quick": "rating",
        "active": "rating",
    },
}
_NASPA = {
    "naspaid": "id",
    "memberid": "id",
    "playerid": "id",
    **dict.fromkeys(("rank", "city", "state", "province", "country", "lastplayed", "expiry")),
}
_GLICKO2: dict[str, str | None] = {
    "ratingdeviation": "rd",
    "deviation": "rd",
    "sigma": "volatility",
    "lastplayed": "last_rated",
}
_SYSTEMS: dict[str, tuple[dict[str, str | None], dict[str, dict[str, str]]]] = {
    "fide": (_FIDE, _FIDE_POOLS),
    "cfc": (_CFC, _CFC_POOLS),
    "naspa": (_NASPA, {}),
    "glicko2": (_GLICKO2, {}),
}


class ListProblem(FileProblem):
    """A rating list that cannot be read: names the file, and each bad line and field."""


class RecordRules(Protocol):
    """What the engines require of a record (service.rating.ListRules implements it)."""

    def status_for(self, system: str, pool: str, rating: int | None, games: int) -> str | None:
        """The status the system's rules give this rating and games (None: no engine)."""
        ...

    def problems(self, record: PlayerRecord) -> list[tuple[str, str]]:
        """(field, reason) for each thing the engines refuse about the record."""
        ...


class PackedRecords(Sequence[PlayerRecord]):
    """Records kept as MessagePack until asked for (about 120 bytes each, where a record
    object is about a kilobyte with its strings): a 1M-player list is held in ~150 MB
    (issue 32). Read like a list; `identities` says records' pools and ids unread."""

    def __init__(self) -> None:
        self._packed: list[bytes] = []
        self._pools: list[tuple[str, str]] = []
        self._ids: list[str] = []
        self._interned: dict[tuple[str, str], tuple[str, str]] = {}

    def append(self, record: PlayerRecord) -> None:
        self.append_packed(_packer.encode(record), (record.system, record.pool), record.id)

    def append_packed(self, packed: bytes, pool: tuple[str, str], player_id: str) -> None:
        self._packed.append(packed)
        self._pools.append(self._interned.setdefault(pool, pool))
        self._ids.append(player_id)

    def packed(self) -> Iterator[tuple[bytes, tuple[str, str], str]]:
        return zip(self._packed, self._pools, self._ids)

    def pools(self) -> list[tuple[str, str]]:
        """The (system, pool) of the records, each once."""
        return list(self._interned)

    def identities(self, start: int, stop: int) -> list[tuple[tuple[str, str], str]]:
        """(system, pool) and player id of the records start..stop, without unpacking them."""
        return list(zip(self._pools[start:stop], self._ids[start:stop]))

    def __len__(self) -> int:
        return len(self._packed)

    @overload
    def __getitem__(self, index: int) -> PlayerRecord: ...
    @overload
    def __getitem__(self, index: slice) -> list[PlayerRecord]: ...
    def __getitem__(self, index: int | slice) -> PlayerRecord | list[PlayerRecord]:
        if isinstance(index, slice):
            return [_unpacker.decode(raw) for raw in self._packed[index]]
        return _unpacker.decode(self._packed[index])

    def __iter__(self) -> Iterator[PlayerRecord]:
        return (_unpacker.decode(raw) for raw in self._packed)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # mutable, like a list


class ListRead(msgspec.Struct, frozen=True):
    """The records of a list, and how many rows had their status derived."""

    records: PackedRecords
    derived: int = 0
    fide_without_games: int = 0  # FIDE records read from a CSV without a `games` column


def is_csv(path: str | Path, data: bytes) -> bool:
    """CSV by extension, or by content: JSON Lines start with `{`."""
    return str(path).lower().endswith(".csv") or not data.lstrip().startswith((b"{", b"["))


def read_list(
    path: str | Path,
    system: str | None = None,
    pool: str | None = None,
    rules: RecordRules | None = None,
) -> list[PlayerRecord]:
    """The records of a list file (JSON Lines or CSV). `system` / `pool` fill CSV rows
    without those columns and must match every record that has them; `rules` derive a
    missing status and check every record as the engines will read it."""
    return list(read_list_report(path, system, pool, rules).records)


def read_list_report(
    path: str | Path,
    system: str | None = None,
    pool: str | None = None,
    rules: RecordRules | None = None,
) -> ListRead:
    """`read_list`, with how many statuses were derived (for the import's summary)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ListProblem(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return _read(path, data, system, pool, rules)
    except DownloadProblem as exc:
        raise ListProblem(str(exc)) from None


def _read(
    path: str | Path,
    data: bytes,
    system: str | None,
    pool: str | None,
    rules: RecordRules | None,
) -> ListRead:
    problems: list[str] = []
    where, data = unzipped(path, data)
    csv_file = is_xml(data) or is_csv(path, data)
    rows: Iterator[tuple[str, dict | bytes]]
    if is_xml(data):
        header, cells = xml_table(where, data)
        columns, rows = _table_rows(where, header, cells, system, pool, problems)
    elif csv_file:
        columns, rows = _csv_rows(where, data, system, pool, problems)
    else:
        columns, rows = None, _json_rows(path)
    records = PackedRecords()
    seen: dict[tuple[str, str], set[str]] = {}
    derived = 0
    for location, document in rows:
        status = None  # a derived status, said in a problem found afterwards
        if rules is not None and isinstance(document, dict) and document.get("status") is None:
            status = _derive(document, rules)
            if status is not None:
                document["status"] = status
                derived += 1
        record = _decode_row(location, document, problems)
        if record is None:
            continue
        bad = _row_problems(location, record, status, system, pool, rules, seen)
        if bad:
            problems.extend(bad)
        else:
            records.append(record)
    if problems:
        raise ListProblem(_refusal(path, problems))
    fide_without_games = 0
    if csv_file and columns is not None and "games" not in columns:
        fide_without_games = sum(1 for r in records if r.system == "fide" and r.rating is not None)
    return ListRead(records, derived, fide_without_games)


def _decode_row(location: str, document: dict | bytes, problems: list[str]) -> PlayerRecord | None:
    """One row as a `player.record/v1` (the schema's own checks), or None with its problem
    appended (`file:line: field: reason`)."""
    try:
        if isinstance(document, bytes):
            return _decoder.decode(document)
        return msgspec.convert(document, PlayerRecord)  # the decoder's checks, without JSON
    except msgspec.ValidationError as exc:
        message, _, at = str(exc).partition(" - at `")
        problems.append(f"{location}: {at.rstrip('`') or '$'}: {message}")
    except msgspec.DecodeError as exc:
        problems.append(f"{location}: not valid JSON: {exc}")
    except RecursionError:  # a value nested thousands deep (D81)
        problems.append(f"{location}: JSON nested too deeply")
    return None


def _row_problems(
    location: str,
    record: PlayerRecord,
    derived: str | None,
    system: str | None,
    pool: str | None,
    rules: RecordRules | None,
    seen: dict[tuple[str, str], set[str]],
) -> list[str]:
    """What is wrong with a decoded record in its list: a system or pool other than the
    command line's, a player the list has already (recorded in `seen`), else whatever the
    engines refuse about it (`rules`; `derived`: the status derived for it, if it was)."""
    problems = []
    if (system is not None and record.system != system) or (
        pool is not None and record.pool != pool
    ):
        for name, wanted in (("system", system), ("pool", pool)):
            if wanted is not None and getattr(record, name) != wanted:
                problems.append(
                    f"{location}: $.{name}: {getattr(record, name)!r}, but --{name} is {wanted!r}"
                )
    ids = seen.setdefault((record.system, record.pool), set())
    if record.id in ids:
        problems.append(
            f"{location}: $.id: player {record.id!r} appears twice in {record.system}/{record.pool}"
        )
    ids.add(record.id)
    if rules is not None and not problems:
        found = rules.problems(record)
        if found:  # the derivation's text only for a bad row (a 1M list: 2 s less)
            given = f" (no status given: {_derivation(derived, record)})" if derived else ""
            problems.extend(f"{location}: $.{field}: {reason}{given}" for field, reason in found)
    return problems


def _refusal(path: str | Path, problems: list[str]) -> str:
    """One problem: its line. More: one line per problem, at most MAX_LISTED of them,
    under a line that says what happened."""
    problems = [printable(p) for p in problems]  # a value's own line break stays in its line
    if len(problems) == 1:
        return problems[0]
    rows = len({p.split(": ", 1)[0] for p in problems})
    lines = [
        f"{path}: {rows} bad row{'s' if rows != 1 else ''}, the whole list is refused (nothing read):"
    ]
    lines += problems[:MAX_LISTED]
    if len(problems) > MAX_LISTED:
        lines.append(f"... and {len(problems) - MAX_LISTED} more problem(s) not listed")
    return "\n".join(lines)


def _derivation(status: str, record: PlayerRecord) -> str:
    from_rating = "no rating" if record.rating is None else f"rating {record.rating}"
    return f"{status!r} derived from {from_rating} and {record.games or 0} games"


def _derive(document: dict, rules: RecordRules) -> str | None:
    get = document.get
    system, pool, rating, games = get("system"), get("pool"), get("rating"), get("games")
    if not isinstance(system, str) or not isinstance(pool, str):
        return None
    if not (rating is None or isinstance(rating, int)) or not isinstance(games, (int, type(None))):
        return None  # the decoder names the bad cell
    return rules.status_for(system, pool, rating, games or 0)


def _json_rows(path: str | Path) -> Iterator[tuple[str, dict | bytes]]:
    """JSON Lines: a record without a `status` comes as a dict (to derive it), else as is."""
    for location, raw in read_documents(path):
        if b'"status"' not in raw:
            try:
                document = msgspec.json.decode(raw)
            except (msgspec.DecodeError, RecursionError):
                document = None
            if isinstance(document, dict):
                yield location, document
                continue
        yield location, raw


def _delimiter(first_line: str) -> str:
    """`,`, `;` or a tab: what the header line is split by (csv.Sniffer on it), else `,`."""
    try:
        return csv.Sniffer().sniff(first_line, delimiters=",;\t").delimiter
    except csv.Error:
        return ","


def resolve_header(
    header: list[str], system: str | None, pool: str | None, path: str | Path
) -> list[str | None]:
    """The record field of each column (None: a known column that is not used)."""
    native = {header_key(c): c for c in CSV_COLUMNS}
    aliases: dict[str, str | None] = {}
    pooled: dict[str, tuple[str, str]] = {}  # the pool-specific names: key -> (pool, field)
    if system in _SYSTEMS:
        common, pools = _SYSTEMS[system]
        aliases.update(common)
        for name, mapping in pools.items():
            for key, field in mapping.items():
                pooled[key] = (name, field)
    fields: list[str | None] = []
    for name in header:
        key = header_key(name)
        if key in native:
            fields.append(native[key])
        elif key in aliases:
            fields.append(aliases[key])
        elif key in pooled:
            of_pool, field = pooled[key]
            if pool is None:
                raise ListProblem(
                    f"{path}:1: column {name!r} is the {system} {of_pool} list's {field}: give --pool"
                )
            fields.append(field if of_pool == pool else None)
        elif system == "fide" and _FIDE_MONTH.match(key):
            fields.append("rating")  # a one-pool FIDE list names its rating column after its month
        else:
            hint = "" if system else " (a federation's own list columns are read with --system)"
            raise ListProblem(
                f"{path}:1: unknown column {name!r} (columns: {', '.join(CSV_COLUMNS)}){hint}"
            )
    used = [f for f in fields if f is not None]
    for field in set(used) - _LISTS:
        if used.count(field) > 1:
            names = [h for h, f in zip(header, fields) if f == field]
            raise ListProblem(
                f"{path}:1: columns {' and '.join(map(repr, names))} both give the record's `{field}`"
            )
    return fields


def _csv_rows(
    path: str | Path, data: bytes, system: str | None, pool: str | None, problems: list[str]
) -> tuple[set[str], Iterator[tuple[str, dict]]]:
    """The fields a CSV list's header gives (`resolve_header`), and its rows as documents
    (`_csv_documents`, read as they are asked for). Refused: not UTF-8, no `id` column, or
    no `system` / `pool` column without `--system` / `--pool`."""
    utf8 = True
    try:
        data.decode("utf-8-sig")  # checked whole but not kept: a CSV's rows are decoded as read
    except UnicodeDecodeError as exc:
        if not is_fixed_width(data.split(b"\n", 1)[0].decode("ascii", "replace")):
            raise ListProblem(f"{path}: not UTF-8 text: {exc}") from None
        utf8 = False
    first = data.split(b"\n", 1)[0].decode("utf-8-sig", "replace")
    if is_fixed_width(first):  # FIDE's text lists: Windows-1252 where not UTF-8
        text = data.decode("utf-8-sig") if utf8 else text_of(str(path), data)
        header, cells = fixed_width_table(text)
        return _table_rows(path, header, cells, system, pool, problems)
    # newline="": the csv module's own reading of \r, \n and \r\n (and of a quoted cell's).
    stream = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline="")
    reader = csv.reader(stream, delimiter=_delimiter(first))
    rows = _csv_lines(path, reader)
    names = next(rows, (0, None))[1]
    if names is None:
        return set(), iter(())
    return _table_rows(path, names, rows, system, pool, problems)


def _csv_lines(path: str | Path, reader: Any) -> Iterator[tuple[int, list[str]]]:
    """(line number, cells) of each row; what the csv module cannot split (a quote left
    open at the end, a field past its size limit) is a ListProblem naming the line (D81)."""
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise ListProblem(f"{path}:{reader.line_num}: not CSV: {exc}") from None
        yield reader.line_num, row


def _table_rows(
    path: str | Path,
    header: list[str],
    rows: Iterable[tuple[int, list[str]]],
    system: str | None,
    pool: str | None,
    problems: list[str],
) -> tuple[set[str], Iterator[tuple[str, dict]]]:
    """A table's header resolved to fields and checked, and its rows as documents."""
    if not header:
        return set(), iter(())
    header = [h.strip() for h in header]
    fields = resolve_header(header, system, pool, path)
    columns = {f for f in fields if f is not None}
    if "id" not in columns:
        raise ListProblem(f"{path}:1: the header has no `id` column")
    for name, value in (("system", system), ("pool", pool)):
        if name not in columns and value is None:
            raise ListProblem(f"{path}:1: no `{name}` column: give --{name}")
    return columns, _csv_documents(rows, path, len(header), fields, system, pool, problems)


def _csv_documents(
    rows: Iterable[tuple[int, list[str]]],
    path: str | Path,
    width: int,
    fields: list[str | None],
    system: str | None,
    pool: str | None,
    problems: list[str],
) -> Iterator[tuple[str, dict]]:
    """Each non-blank row of `width` cells as a document of its fields (`_cell`), `system`
    and `pool` from the command line unless a cell gives them; an empty cell (and FIDE's
    B-day 0000) leaves the field to its default. A bad row's problems are appended to
    `problems` and the row is left out."""
    prefix = f"{path}:"
    columns = [(n, name, _converter(name)) for n, name in enumerate(fields) if name is not None]
    inside = [(name, state) for name, state in _INSIDE.items() if name in fields]
    for line, row in rows:
        if not "".join(row).strip():  # every cell blank
            continue
        location = f"{prefix}{line}"
        if len(row) != width:
            problems.append(f"{location}: {len(row)} cells, the header has {width}")
            continue
        document: dict = {"system": system, "pool": pool}
        bad = False
        for n, name, convert in columns:
            cell = row[n].strip()
            if not cell or (name == "birth_year" and not cell.strip("0")):  # FIDE's 0000: unknown
                if name in _LISTS or (name in ("system", "pool") and document[name] is not None):
                    continue
                document.pop(name, None)
                continue
            if convert is str:  # a text field: the cell as it is
                document[name] = cell
                continue
            try:
                value = convert(cell)
            except ValueError as exc:
                problems.append(f"{location}: $.{name}: {exc}")
                bad = True
                continue
            if isinstance(value, list):  # titles: several columns add to them
                had = document.get(name, [])
                value = had + [v for v in value if v not in had]
            document[name] = value
        for name, state in inside:
            if not bad and name in document and not _put_inside(document, name, state):
                problems.append(
                    f"{location}: $.{name}: {document[name]!r}, but the {state} cell has"
                    f" {name} {document[state][name]!r}"
                )
                bad = True
        if not bad:
            yield location, document


def _put_inside(document: dict, name: str, state: str) -> bool:
    """The column `name` moved into the accumulator `state` (False: it holds another value)."""
    value = document.pop(name)
    held = document.get(state)
    if held is None:
        document[state] = {name: value}
        return True
    if not isinstance(held, dict):
        return True  # the decoder names the bad accumulator cell
    if held.get(name) not in (None, value):
        document[name] = value
        return False
    held[name] = value
    return True


def _converter(name: str | None) -> Callable[[str], object]:
    """How a column's stripped, non-empty cell becomes its field's value (ValueError: why not)."""
    if name in _INTEGERS:
        return _whole_number
    if name in _DECIMALS:
        return _decimal
    if name in _DATES:
        return _date_cell
    if name in _BOOLEANS:
        return _boolean
    if name in _JSON:
        return _json_cell
    if name in _LOWER:
        return str.lower
    if name in _UPPER:
        return str.upper
    if name in _LISTS:
        return _list_cell
    return str


def _boolean(cell: str) -> bool:
    if cell.lower() in _TRUE:
        return True
    if cell.lower() in _FALSE:
        return False
    raise ValueError(f"{cell!r} is not true or false")


def _json_cell(cell: str) -> object:
    try:
        return msgspec.json.decode(cell)
    except msgspec.DecodeError as exc:
        raise ValueError(f"not valid JSON: {exc}") from None
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def _list_cell(cell: str) -> list[str]:
    return [part for part in _SEPARATORS.split(cell) if part]


def _whole_number(cell: str) -> int:
    """`1500` or `1500.0` (a whole number written as a decimal); `1500.5` is refused."""
    if len(cell) <= 18 and cell.isascii() and cell.isdigit():  # the common case: no Decimal
        return int(cell)
    try:
        value = Decimal(cell)
    except InvalidOperation:
        raise ValueError(f"{cell!r} is not a whole number") from None
    if not value.is_finite() or value != value.to_integral_value():
        raise ValueError(f"{cell!r} is not a whole number")
    if value.adjusted() > 18:  # int() of `1e10000000` would take minutes (D81)
        raise ValueError(f"{cell!r} is too large")
    return int(value)


def _decimal(cell: str) -> float:
    """A finite decimal number (`151.5165`, `3e-2`); the schema checks its range."""
    try:
        value = float(cell)
    except ValueError:
        raise ValueError(f"{cell!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{cell!r} is not a finite number")
    return value


def _date_cell(cell: str) -> str:
    """An ISO date (`2025-01-31`), as the schema reads it."""
    try:
        dt.date.fromisoformat(cell)
    except ValueError:
        raise ValueError(f"{cell!r} is not a date (YYYY-MM-DD)") from None
    return cell


def _csv_value(record: PlayerRecord, name: str) -> object:
    """A record's value for the CSV column `name`: a field, or (`_INSIDE`) a field of an
    accumulator, which is then written without it (each value written once)."""
    if name in _INSIDE:
        state = getattr(record, _INSIDE[name])
        return None if state is None else getattr(state, name)
    value = getattr(record, name)
    inside = [field for field, state in _INSIDE.items() if state == name]
    if value is not None and inside:
        value = msgspec.structs.replace(value, **dict.fromkeys(inside))
        if value == type(value)():
            return None
    return value


def render_csv(records: Iterable[PlayerRecord], header: bool = True) -> str:
    """The records as CSV with the full header (accumulators as JSON text); `header` False:
    the rows only (a page of a streamed export)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if header:
        writer.writerow(CSV_COLUMNS)
    for record in records:
        row = []
        for name in CSV_COLUMNS:
            value: Any = _csv_value(record, name)
            if value is None:
                row.append("")
            elif isinstance(value, bool):
                row.append("true" if value else "false")
            elif name in _JSON:
                row.append(_encoder.encode(value).decode())
            elif name in _LISTS:
                row.append(" ".join(value))
            else:
                row.append(str(value))
        writer.writerow(row)
    return out.getvalue()


def render_jsonl(records: Iterable[PlayerRecord]) -> bytes:
    return b"".join(_encoder.encode(r) + b"\n" for r in records)


def conflicts(
    existing: dict[str, PlayerRecord | None], records: Iterable[PlayerRecord]
) -> list[PlayerRecord]:
    """The records of an import that would overwrite a different record already in the
    pool (the import guard: a re-import of the same list changes nothing and is allowed)."""
    return [r for r in records if existing.get(r.id) is not None and existing[r.id] != r]
