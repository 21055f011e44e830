"""FIDE's rating list downloads as tables of header and cells (D59), read by the list
reader (`ratinglists.py`) with the same FIDE column names as a CSV of them.

- **Zipped**, as downloaded (`players_list.zip`, `standard_rating_list_xml.zip`, ...): the
  archive's one list file (`.txt`, `.xml` or `.csv`) is read; the location is `FILE!MEMBER`.
- **Fixed-width text** (`players_list_foa.txt`, `standard_rating_list.txt`): the first line
  names the columns (`ID Number`, `Name`, `Fed`, `Sex`, `Tit`, `WTit`, `OTit`, `FOA`,
  `SRtng`, `SGm`, `SK`, ... `B-day`, `Flag`); each column runs from where its name starts to
  where the next one's starts (the last to the end of the line). UTF-8, else Windows-1252.
- **XML** (`players_list_xml_foa.xml`, `standard_rating_list.xml`): `<player>` elements with
  `fideid`, `name`, `country`, `sex`, `title`, `w_title`, `o_title`, `foa_title`, `rating`,
  `games`, `k`, `rapid_rating`, `rapid_games`, `rapid_k`, `blitz_rating`, `blitz_games`,
  `blitz_k`, `birthday`, `flag`; read as the text list's columns (`rating` is `SRtng` in the
  combined list, which has `rapid_*` / `blitz_*`, and `Rtng` in a one-list file). Streamed
  (expat), so a 1M-player file is never held as a tree.

The layouts are those FIDE's download page documents; no file of FIDE's own was at hand here,
so the tests read samples made in that layout (tests/unit/test_fide_downloads.py).
"""

from __future__ import annotations

import io
import re
import struct
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from xml.parsers import expat

Rows = Iterator[tuple[int, list[str]]]  # (line number, the cells)

LIST_SUFFIXES = (".txt", ".xml", ".csv")
_XML_COLUMNS = {
    "fideid": "ID Number",
    "name": "Name",
    "country": "Fed",
    "sex": "Sex",
    "title": "Tit",
    "w_title": "WTit",
    "o_title": "OTit",
    "foa_title": "FOA",
    "birthday": "B-day",
    "flag": "Flag",
    "rapid_rating": "RRtng",
    "rapid_games": "RGm",
    "rapid_k": "Rk",
    "blitz_rating": "BRtng",
    "blitz_games": "BGm",
    "blitz_k": "BK",
}
_XML_COMBINED = {"rating": "SRtng", "games": "SGm", "k": "SK"}
_XML_ONE_LIST = {"rating": "Rtng", "games": "Gms", "k": "K"}
_WORD = re.compile(r"\S+")
_TWO_WORD_NAMES = {"id number"}  # the header's names are single words but this one


class DownloadProblem(ValueError):
    """A download that cannot be read as a list (the message names the file)."""


def unzipped(path: str | Path, data: bytes) -> tuple[str, bytes]:
    """(the location to name, the list's bytes): a zip's one list file, else `data`."""
    if not data.startswith(b"PK\x03\x04"):
        return str(path), data
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = [
                m
                for m in archive.infolist()
                if not m.is_dir() and m.filename.lower().endswith(LIST_SUFFIXES)
            ]
            if len(members) != 1:
                names = ", ".join(m.filename for m in archive.infolist()) or "nothing"
                raise DownloadProblem(
                    f"{path}: a zip of one list file is read; this one holds {names}"
                )
            return f"{path}!{members[0].filename}", archive.read(members[0])
    except DownloadProblem:
        raise
    # A damaged or unusual zip raises any of these out of zipfile (a negative seek is a
    # ValueError, an encrypted member a RuntimeError, a method it lacks NotImplementedError; D81).
    except (
        zipfile.BadZipFile,
        OSError,
        EOFError,
        ValueError,
        RuntimeError,
        NotImplementedError,
        zlib.error,
        struct.error,
    ) as exc:
        raise DownloadProblem(f"{path}: not a readable zip: {exc}") from None


def is_xml(data: bytes) -> bool:
    return data.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<")


def is_fixed_width(first_line: str) -> bool:
    """FIDE's text list: it starts with `ID Number` and separates names by spaces only."""
    return first_line.lstrip().lower().startswith("id number") and not any(
        c in first_line for c in ",;\t"
    )


def fixed_width_table(text: str) -> tuple[list[str], Rows]:
    """The header's column names and each row's cells, cut where the names start."""
    lines = text.splitlines()
    if not lines:
        return [], iter(())
    spans: list[tuple[int, str]] = []
    for m in _WORD.finditer(lines[0]):
        if spans and f"{spans[-1][1]} {m.group()}".lower() in _TWO_WORD_NAMES:
            spans[-1] = (spans[-1][0], f"{spans[-1][1]} {m.group()}")
        else:
            spans.append((m.start(), m.group()))
    header = [name for _, name in spans]
    starts = [start for start, _ in spans]
    ends = starts[1:] + [None]

    def rows() -> Rows:
        for number, line in enumerate(lines[1:], start=2):
            yield number, [line[a:b] if b is not None else line[a:] for a, b in zip(starts, ends)]

    return header, rows()


def text_of(location: str, data: bytes) -> str:
    """A text list's characters: UTF-8 (with or without BOM), else Windows-1252."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        try:
            return data.decode("cp1252")
        except UnicodeDecodeError as exc:
            raise DownloadProblem(f"{location}: neither UTF-8 nor Windows-1252: {exc}") from None


def xml_table(location: str, data: bytes) -> tuple[list[str], Rows]:
    """The players of a FIDE XML list as the text list's columns, with each `<player>`'s
    line. The header is the first player's elements; a later player's other element is a
    problem of its line (DownloadProblem names it)."""
    players = list(_xml_players(location, data, limit=1))
    if not players:
        return [], iter(())
    first = players[0][1]
    combined = any(tag.startswith(("rapid_", "blitz_")) for tag in first)
    names = {**_XML_COLUMNS, **(_XML_COMBINED if combined else _XML_ONE_LIST)}
    tags = list(first)
    for tag in tags:
        if tag not in names:
            raise DownloadProblem(f"{location}:{players[0][0]}: unknown element <{tag}>")
    header = [names[tag] for tag in tags]

    def rows() -> Rows:
        for line, fields in _xml_players(location, data):
            extra = [tag for tag in fields if tag not in tags]
            if extra:
                raise DownloadProblem(
                    f"{location}:{line}: element <{extra[0]}> is not in the first player's"
                )
            yield line, [fields.get(tag, "") for tag in tags]

    return header, rows()


def _xml_players(
    location: str, data: bytes, limit: int | None = None
) -> Iterator[tuple[int, dict[str, str]]]:
    """(line, {element: text}) per `<player>`, streamed in chunks through expat."""
    parser = expat.ParserCreate()
    done: list[tuple[int, dict[str, str]]] = []
    state: dict = {"player": None, "tag": None, "line": 0}

    def start(tag: str, attrs: dict) -> None:
        if tag == "player":
            state["player"], state["line"] = {}, parser.CurrentLineNumber
        elif state["player"] is not None:
            state["tag"] = tag
            state["player"].setdefault(tag, "")

    def end(tag: str) -> None:
        if tag == "player" and state["player"] is not None:
            done.append((state["line"], state["player"]))
            state["player"] = None
        state["tag"] = None

    def chars(text: str) -> None:
        if state["player"] is not None and state["tag"] is not None:
            state["player"][state["tag"]] += text

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    given = 0
    view = memoryview(data)
    step = 1 << 20
    try:
        for at in range(0, len(data) or 1, step):
            parser.Parse(bytes(view[at : at + step]), at + step >= len(data))
            for player in done:
                yield player
                given += 1
                if limit is not None and given >= limit:
                    return
            done.clear()
    except expat.ExpatError as exc:
        raise DownloadProblem(f"{location}:{exc.lineno}: not well-formed XML: {exc}") from None
    except (LookupError, ValueError) as exc:  # encoding="uft-8", encoding="utf-7" (D81)
        raise DownloadProblem(f"{location}:1: the XML's encoding: {exc}") from None
