"""The read model: what websites ask for (docs/guides/websites.md), kept from the published
messages so that it always says what the last messages say.

- A player's **history** in a pool holds, per rated event, the player's line of the last
  message published for that event (`kind: "event"` or `"revision"`), and, per published
  FIDE list, the player's rating on it. A revision replaces the line; a withdrawal, or a
  correction that drops the player, removes it. So a history always equals the fold of an
  offline re-rate's messages. Lines sort by the event's order key (date order,
  service/timeline.py); a FIDE list sorts after every event of the period it closes.
- The **ranking** of a pool: one sorted set, member the player id, score minus the rating
  (unrated: UNRATED_SCORE), so that its order is highest rating first, ties by id, unrated
  last; a rating change is one ZADD.
- The **name index** of a pool: `<word>\\0<id>` per word of a player's name (case and accents
  folded), for prefix search.

Pure: Structs and bytes in, bytes out.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
import sys
import unicodedata
from collections.abc import Iterable, Iterator, Mapping

import msgspec

from schemas.periods import month_index
from schemas.ratings import RatingsUpdated
from schemas.reads import HistoryEntry
from schemas.records import PlayerRecord
from service.compact import compact, expand
from service.timeline import KEY_LEN

UNRATED_SCORE = 1_000_000  # above every -rating: unrated players come last
RATED_MAX = f"({UNRATED_SCORE}"  # ZRANGE BYSCORE / ZCOUNT upper bound of the rated players


def list_key(period: str) -> bytes:
    """The order key of the FIDE list closing `period`: after every event of the period
    (an event's key starts with its period's month number; the rest is 0xff)."""
    return month_index(period).to_bytes(3, "big") + b"\xff" * (KEY_LEN - 3)


LIST_PREFIX = "list/"


def list_field(period: str) -> str:
    """The history field of the list closing `period` (event ids cannot contain '/')."""
    return f"{LIST_PREFIX}{period}"


# A HistoryEntry as stored: the same fields in the same order, as a MessagePack array.
_Packed = msgspec.defstruct(
    "_Packed",
    [
        (f.name, f.type) if f.required else (f.name, f.type, f.default)
        for f in msgspec.structs.fields(HistoryEntry)
    ],
    array_like=True,
    frozen=True,
)


_encoder = msgspec.msgpack.Encoder()
_entry_decoder = msgspec.msgpack.Decoder(_Packed)
_message_decoder = msgspec.msgpack.Decoder(RatingsUpdated)


# A history line as stored since D102: LINE_TAG (0xC1, which MessagePack never uses: an
# earlier version's line is the plain array of _Packed), then a MessagePack array: the kind
# (0 event, 1 list), the event's name, its start day and its length in days (proleptic
# ordinals: 0 and 0 for none), the period and list period as month numbers (0 none), the
# ratings, change, statuses (codes), games, event games, the score in half points, the
# expected score and performance (an integer: hundredths / itself; else the float as it is),
# the revision, the projection flag; trailing defaults left out. The event id is the field's.
# Since D122 the name is nil: the event's name is kept once, in `{S}:eventnames`, and a line
# without it fits a hash's listpack (64 bytes); a line that holds one (before D122) keeps it.
LINE_TAG = b"\xc1"
_STATUS_CODES = {"unrated": 0, "provisional": 1, "established": 2}
_STATUSES = ("unrated", "provisional", "established")
_KINDS = ("event", "list")
_line_decoder = msgspec.msgpack.Decoder(list)
_LINE_DEFAULTS = [None, 0, False]  # performance, revision, projection: left out at the end


def _is_default(value: object, default: object) -> bool:
    return value is default or (type(value) is type(default) and value == default)


def _month(period: str | None) -> int:
    return 0 if period is None else month_index(period) + 1


def _period(month: int) -> str | None:
    if month == 0:
        return None
    year, m = divmod(month - 1, 12)
    return f"{year:04d}-{m + 1:02d}"


def _hundredths(value: float | None) -> float | int | None:
    if value is None:
        return None
    scaled = round(value * 100)
    return scaled if scaled / 100 == value else value


def _whole(value: float | None) -> float | int | None:
    return int(value) if value is not None and value == int(value) else value


def pack_entry(key: bytes, entry: HistoryEntry) -> bytes:
    """The stored value of a history line: its order key, then the line (LINE_TAG's
    encoding above, D102: about 30 bytes after the key), without the event's name (D122:
    `sorted_entries` gives it back from `{S}:eventnames`)."""
    e = entry
    start = e.start_date.toordinal() if e.start_date is not None else 0
    days = (e.end_date.toordinal() - start + 1) if e.end_date is not None and start else 0
    halves = e.score * 2
    values = [
        0 if e.kind == "event" else 1,
        None,
        start,
        days,
        _month(e.period),
        _month(e.list_period),
        e.old_rating,
        e.new_rating,
        e.change,
        _STATUS_CODES[e.old_status],
        _STATUS_CODES[e.status],
        e.games,
        e.event_games,
        int(halves) if halves == int(halves) else e.score + 0.0,
        _hundredths(e.expected),
        _whole(e.performance),
        e.revision,
        e.projection,
    ]
    n = len(values)
    while n > 15 and _is_default(values[n - 1], _LINE_DEFAULTS[n - 16]):
        n -= 1
    return key + LINE_TAG + _encoder.encode(values[:n] if n < len(values) else values)


def unpack_entry(value: bytes, field: str | bytes | None = None) -> HistoryEntry:
    """A stored line; `field` (its event id) for a line of D102's encoding, whose value
    leaves it out (an earlier version's line holds it)."""
    if value[KEY_LEN : KEY_LEN + 1] != LINE_TAG:
        return HistoryEntry(*msgspec.structs.astuple(_entry_decoder.decode(value[KEY_LEN:])))
    v = _line_decoder.decode(value[KEY_LEN + 1 :])
    v += _LINE_DEFAULTS[len(v) - 15 :]
    kind = _KINDS[v[0]]
    event_id = None
    if kind == "event" and field is not None:
        event_id = field.decode() if isinstance(field, bytes) else field
    start = dt.date.fromordinal(v[2]) if v[2] else None
    end = dt.date.fromordinal(v[2] + v[3] - 1) if v[2] and v[3] else None
    score = v[13] / 2 if isinstance(v[13], int) else v[13]
    expected = v[14] / 100 if isinstance(v[14], int) else v[14]
    performance = float(v[15]) if v[15] is not None else None
    return HistoryEntry(
        kind,  # type: ignore[arg-type]  # one of _KINDS
        event_id,
        v[1],
        start,
        end,
        _period(v[4]),
        _period(v[5]),
        v[6],
        v[7],
        v[8],
        _STATUSES[v[9]],  # type: ignore[arg-type]  # one of _STATUSES
        _STATUSES[v[10]],  # type: ignore[arg-type]  # one of _STATUSES
        v[11],
        v[12],
        score,
        expected,
        performance,
        v[16],
        v[17],
    )


def sorted_entries(
    values: Iterable[tuple[str | bytes, bytes]], names: Mapping[str, str] | None = None
) -> list[HistoryEntry]:
    """History lines from (field, value) pairs, in date order (ties by field): fields are
    str in the memory ledger, bytes from Redis (one kind in one call). A line without its
    event's name (D122) takes it from `names` (event id -> name, `{S}:eventnames`)."""
    entries = [
        unpack_entry(v, f) for f, v in sorted(values, key=lambda fv: (fv[1][:KEY_LEN], fv[0]))
    ]
    if not names:
        return entries
    return [
        msgspec.structs.replace(e, name=names.get(e.event_id))
        if e.name is None and e.event_id is not None
        else e
        for e in entries
    ]


def event_fields(fields: Iterable[str | bytes]) -> list[str]:
    """The fields of a player's history lines that are events (not FIDE lists): whose names
    `{S}:eventnames` keeps (D122)."""
    out = []
    for f in fields:
        name = f.decode() if isinstance(f, bytes) else f
        if not name.startswith(LIST_PREFIX):
            out.append(name)
    return out


def pack_message(message: RatingsUpdated) -> bytes:
    """A published message as `{S}:results` keeps it: compact MessagePack (D100)."""
    return compact(_encoder.encode(message))


def unpack_message(raw: bytes) -> RatingsUpdated:
    """A stored message: compact (D100) or plain MessagePack (an earlier version's)."""
    return _message_decoder.decode(expand(raw))


def entries_of(message: RatingsUpdated) -> Iterator[tuple[str, str, HistoryEntry]]:
    """(player id, history field, line) for each player of a published message."""
    fide = message.system == "fide"
    # HistoryEntry's fields, positionally (the hot path): kind, event_id, name, start_date,
    # end_date, period, list_period, old_rating, new_rating, change, old_status, status, games,
    # event_games, score, expected, performance, revision, projection.
    period: str | None
    if message.kind == "list":
        assert message.period is not None
        field, period, list_period = list_field(message.period), message.period, message.list_period
        for r in message.players:
            yield (
                r.id,
                field,
                HistoryEntry(
                    "list",
                    None,
                    None,
                    None,
                    None,
                    period,
                    list_period,
                    r.old_rating,
                    r.new_rating,
                    r.change,
                    r.old_status,
                    r.status,
                    r.games,
                    r.event_games,
                    r.score,
                    r.expected,
                    r.performance,
                ),
            )
        return
    event_id = message.event_id
    assert event_id is not None
    name, start, end, revision = (
        message.name,
        message.start_date,
        message.end_date,
        message.revision or 0,
    )
    period = message.period if fide else None
    for r in message.players:
        new, change = r.new_rating, r.change
        projected = getattr(r.details, "projected_rating", None) if fide else None
        if (
            projected is not None
        ):  # FIDE: the rating stays until the list; the line shows the projection (F9)
            new = projected
            change = projected - r.old_rating if r.old_rating is not None else None
        yield (
            r.id,
            event_id,
            HistoryEntry(
                "event",
                event_id,
                name,
                start,
                end,
                period,
                None,
                r.old_rating,
                new,
                change,
                r.old_status,
                r.status,
                r.games,
                r.event_games,
                r.score,
                r.expected,
                r.performance,
                revision,
                projected is not None,
            ),
        )


# ------------------------------------------------------------------ ranking and names


def rank_score(record: PlayerRecord) -> int:
    """The record's score in its pool's ranking (member: its id)."""
    return UNRATED_SCORE if record.rating is None else -record.rating


def rank_order(record: PlayerRecord) -> tuple[int, str]:
    """The ranking's order: highest rating first, ties by id, unrated last."""
    return rank_score(record), record.id


# D50: Latin letters without a decomposition, as a federation's readers type them (FIDE's
# lists write them so: Søndergaard -> Sondergaard, Friðrik -> Fridrik, Łukasz -> Lukasz).
# Ligatures and letters of their own by hand; every "LETTER x WITH stroke/hook/bar/..." of
# the Latin blocks by its name (ħ -> h, ƶ -> z, ɨ -> i ...).
FOLDED_BY_HAND = {
    "æ": "ae",
    "œ": "oe",
    "ß": "ss",
    "ẞ": "ss",
    "þ": "th",
    "ð": "d",
    "ı": "i",
    "ȷ": "j",
    "ŀ": "l",
    "ĸ": "q",
    "ŋ": "n",
    "ə": "a",
    "ɛ": "e",
    "ɔ": "o",
    "ƣ": "oi",
    "ȣ": "ou",
    "ƕ": "hv",
    "ʒ": "z",
    "ƿ": "w",
    "ȝ": "y",
}
# Latin-1 Supplement, Extended-A and -B, IPA, Extended Additional, -C, -D.
LATIN_BLOCKS = ((0x80, 0x2B0), (0x1E00, 0x1F00), (0x2C60, 0x2C80), (0xA720, 0xA800))
_WITH = re.compile(r"LATIN (?:SMALL|CAPITAL) LETTER ([A-Z]) WITH ")
_WORD = re.compile(r"[^\W_]+")  # a run of letters and digits (str.isalnum)


def _letters_of_their_own() -> dict[int, str]:
    table: dict[int, str] = {}
    for code in (c for first, end in LATIN_BLOCKS for c in range(first, end)):
        char = chr(code)
        found = _WITH.match(unicodedata.name(char, ""))
        if found and not unicodedata.decomposition(char):
            table[code] = found.group(1).lower()
    for char, typed in FOLDED_BY_HAND.items():
        table[ord(char)] = typed  # (capitals: casefold() comes first)
    return table


FOLDED = _letters_of_their_own()


def fold(text: str) -> str:
    """Lower case, without accents, letters of their own as readers type them (D50):
    'Ólafsson' -> 'olafsson', 'Søndergaard' -> 'sondergaard', 'Łódź' -> 'lodz'. The table is
    applied before the decomposition (ŀ decomposes to l and a middle dot) and after it (ǿ to
    ø and an accent)."""
    if text.isascii():  # most names of most lists: the same result, 10 times sooner
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.casefold().translate(FOLDED))
    return decomposed.translate(_without_marks()).translate(FOLDED)


@functools.cache
def _without_marks() -> dict[int, None]:
    """str.translate's table that drops every combining mark (the accents NFKD split off),
    made on the first name that is not ASCII."""
    return {c: None for c in range(sys.maxunicode + 1) if unicodedata.combining(chr(c))}


def fold_before_d50(text: str) -> str:
    """The fold of the name indexes written before D50 (case and accents only): what
    upgrade-store finds in a store of an earlier version."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def name_words(name: str | None) -> list[str]:
    """The searchable words of a name ('Carlsen, Magnus' -> ['carlsen', 'magnus'])."""
    if not name:
        return []
    return sorted(set(_WORD.findall(fold(name))))


def name_members(record: PlayerRecord) -> list[bytes]:
    return [f"{word}\0{record.id}".encode() for word in name_words(record.name)]


def matches(record: PlayerRecord, words: list[str]) -> bool:
    """Whether every query word begins a word of the name (or is the id)."""
    mine = name_words(record.name)
    return all(any(w.startswith(q) for w in mine) or q == record.id.casefold() for q in words)
