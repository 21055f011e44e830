"""Rating list files: `player.record/v1` as JSON Lines or as CSV with a header.

CSV columns are the record's field names (any order, only `id` required; a missing or
empty cell is the field's default):

    system, pool, id, name, rating, status, games, highest, birth_year, ever_2300,
    ever_2400, k, cfc, fide

`rating` empty = unrated; `ever_2300` / `ever_2400` true/false (also 1/0, yes/no);
`cfc` and `fide` are the engines' accumulators as JSON text (what `export --format csv`
writes, so that a list goes out and back in unchanged). `system` / `pool` may come from
the command line instead (`--system`, `--pool`). A bad cell is one line naming the file,
line and field. Pure apart from reading and writing the named file.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Iterable

import msgspec

from schemas.records import PlayerRecord
from service.formats.jsonlines import FileProblem, read_documents

CSV_COLUMNS = (
    "system", "pool", "id", "name", "rating", "status", "games", "highest", "birth_year",
    "ever_2300", "ever_2400", "k", "cfc", "fide",
)  # fmt: skip
_INTEGERS = {"rating", "games", "highest", "birth_year", "k"}
_BOOLEANS = {"ever_2300", "ever_2400"}
_JSON = {"cfc", "fide"}
_TRUE, _FALSE = {"true", "1", "yes", "y", "t"}, {"false", "0", "no", "n", "f"}
_decoder = msgspec.json.Decoder(PlayerRecord)
_encoder = msgspec.json.Encoder()


class ListProblem(FileProblem):
    """A rating list that cannot be read: names the file, line and field."""


def is_csv(path: str | Path, data: bytes) -> bool:
    """CSV by extension, or by content: JSON Lines start with `{`."""
    return str(path).lower().endswith(".csv") or not data.lstrip().startswith((b"{", b"["))


def read_list(path: str | Path, system: str | None = None, pool: str | None = None) -> list[PlayerRecord]:
    """The records of a list file (JSON Lines or CSV). `system` / `pool` fill CSV rows
    without those columns and must match every record that has them."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ListProblem(f"{path}: cannot read: {exc.strerror or exc}") from None
    rows = _csv_rows(path, data, system, pool) if is_csv(path, data) else read_documents(path)
    records: list[PlayerRecord] = []
    seen: set[tuple[str, str, str]] = set()
    for location, raw in rows:
        try:
            record = _decoder.decode(raw)
        except msgspec.ValidationError as exc:
            message, _, at = str(exc).partition(" - at `")
            raise ListProblem(f"{location}: {at.rstrip('`') or '$'}: {message}") from None
        except msgspec.DecodeError as exc:
            raise ListProblem(f"{location}: not valid JSON: {exc}") from None
        for name, wanted in (("system", system), ("pool", pool)):
            if wanted is not None and getattr(record, name) != wanted:
                raise ListProblem(f"{location}: $.{name}: {getattr(record, name)!r}, but --{name} is {wanted!r}")
        key = (record.system, record.pool, record.id)
        if key in seen:
            raise ListProblem(f"{location}: $.id: player {record.id!r} appears twice in {record.system}/{record.pool}")
        seen.add(key)
        records.append(record)
    return records


def _csv_rows(path: str | Path, data: bytes, system: str | None, pool: str | None) -> Iterable[tuple[str, bytes]]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ListProblem(f"{path}: not UTF-8 text: {exc}") from None
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None:
        return
    header = [h.strip() for h in header]
    unknown = [h for h in header if h not in CSV_COLUMNS]
    if unknown:
        raise ListProblem(f"{path}:1: unknown column {unknown[0]!r} (columns: {', '.join(CSV_COLUMNS)})")
    if "id" not in header:
        raise ListProblem(f"{path}:1: the header has no `id` column")
    for name, value in (("system", system), ("pool", pool)):
        if name not in header and value is None:
            raise ListProblem(f"{path}:1: no `{name}` column: give --{name}")
    for row in reader:
        location = f"{path}:{reader.line_num}"
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise ListProblem(f"{location}: {len(row)} cells, the header has {len(header)}")
        document: dict = {"system": system, "pool": pool}
        for name, cell in zip(header, row):
            cell = cell.strip()
            if cell == "":
                if name in ("system", "pool") and document[name] is not None:
                    continue
                document.pop(name, None)
                continue
            document[name] = _cell(name, cell, location)
        yield location, _encoder.encode(document)


def _cell(name: str, cell: str, location: str) -> object:
    if name in _INTEGERS:
        try:
            return int(cell)
        except ValueError:
            raise ListProblem(f"{location}: $.{name}: {cell!r} is not a whole number") from None
    if name in _BOOLEANS:
        if cell.lower() in _TRUE:
            return True
        if cell.lower() in _FALSE:
            return False
        raise ListProblem(f"{location}: $.{name}: {cell!r} is not true or false")
    if name in _JSON:
        try:
            return msgspec.json.decode(cell)
        except msgspec.DecodeError as exc:
            raise ListProblem(f"{location}: $.{name}: not valid JSON: {exc}") from None
    return cell


def render_csv(records: Iterable[PlayerRecord]) -> str:
    """The records as CSV with the full header (accumulators as JSON text)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for record in records:
        row = []
        for name in CSV_COLUMNS:
            value = getattr(record, name)
            if value is None:
                row.append("")
            elif isinstance(value, bool):
                row.append("true" if value else "false")
            elif name in _JSON:
                row.append(_encoder.encode(value).decode())
            else:
                row.append(str(value))
        writer.writerow(row)
    return out.getvalue()


def render_jsonl(records: Iterable[PlayerRecord]) -> bytes:
    return b"".join(_encoder.encode(r) + b"\n" for r in records)


def conflicts(existing: dict[str, PlayerRecord | None], records: Iterable[PlayerRecord]) -> list[PlayerRecord]:
    """The records of an import that would overwrite a different record already in the
    pool (the import guard: a re-import of the same list changes nothing and is allowed)."""
    return [r for r in records if existing.get(r.id) is not None and existing[r.id] != r]
