"""Date order (docs/design/guarantees.md "Order"): the keys that put a pool's events in order, and the
compact encodings of what the service keeps so that it can re-rate from any point.

- An **ordering domain** is the set of pools whose events form one sequence: one pool, or
  pools that read each other (service/engine/domains.py, from the engines' seed pools).
- An event's **order key** sorts as its place in the domain: by the engine's prefix, then
  `end_date`, then `start_date`, then arrival (input-stream order). FIDE counts events in
  their rating period, so its prefix is the period: a closed period is never re-entered.
- The **timeline** of a domain is its events' keys in order (`key + event_id`, bytes that
  sort as the key); the **archive** holds each event's current content, revision count and
  a digest of its last published results; a player's **history** holds, per event, the
  player's record just before it (`key + packed record`).

Pure: bytes in, bytes out.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from bisect import bisect_left
from collections.abc import Iterable

import msgspec

from schemas.events import Bye, EventContent, EventFinished, Game, PlayerRef
from schemas.fide import FideState, FirstEvent, InitialGame, PeriodSums, PublishedRating
from schemas.periods import month_index, period_of
from schemas.ratings import PlayerResult
from schemas.records import PlayerRecord
from service.compact import compact, expand
from service.entryids import entry_order

KEY_LEN = 17  # period months (3 bytes) + end (3) + start (3) + arrival (8)


def arrival_of(entry_id: str) -> int:
    """A stream entry id ("1700000000000-3") as one sortable integer."""
    ms, seq = entry_order(entry_id)
    return (ms << 16) | min(seq, 0xFFFF)


def order_key(event: EventContent, arrival: int, prefix: int) -> bytes:
    """The event's place in its domain: `prefix` (the engine's `order_prefix`: FIDE's period
    month number), end_date, start_date, arrival: 3, 3, 3 and 8 big-endian bytes (written as
    one integer: the hot path)."""
    if not 0 <= arrival < _ARRIVAL_LIMIT:
        raise OverflowError(f"arrival {arrival} does not fit the order key's 8 bytes")
    return (
        (prefix << 112)
        | (event.end_date.toordinal() << 88)
        | (event.start_date.toordinal() << 64)
        | arrival
    ).to_bytes(KEY_LEN, "big")


_ARRIVAL_LIMIT = 1 << 64


def end_date_of(key: bytes) -> dt.date:
    """The end date an order key holds (its bytes 3-6)."""
    return dt.date.fromordinal(int.from_bytes(key[3:6], "big"))


def timeline_member(key: bytes, event_id: str) -> bytes:
    return key + event_id.encode()


def split_member(member: bytes) -> tuple[bytes, bytes]:
    """(order key, payload) of a timeline or history member."""
    return member[:KEY_LEN], member[KEY_LEN:]


# ------------------------------------------------------------------ player states

_STATUS_CODES = {"unrated": 0, "provisional": 1, "established": 2}
_STATUSES = ("unrated", "provisional", "established")
_STATE_FIELDS = (
    "rating",
    "status",
    "games",
    "highest",
    "birth_year",
    "ever_2300",
    "ever_2400",
    "k",
    "cfc",
    "fide",
    "rd",
    "volatility",
    "glicko2",
)
_packer = msgspec.msgpack.Encoder()
_list_decoder = msgspec.msgpack.Decoder(list)


def _runs(games: list[InitialGame]) -> list[list]:
    """FIDE games as runs of one period, event and start day (D123): [month, event id, start
    day, [opponent's rating, half points, ...]] a run, in order."""
    runs: list[list] = []
    if not games:
        return runs
    last = None
    for g in games:
        at = (g.period, g.event_id, g.start_date)
        if at != last:
            runs.append([month_index(g.period), g.event_id, g.start_date.toordinal(), []])
            last = at
        runs[-1][3] += (g.opponent_rating, g.score_halves)
    return runs


def _games(runs: list[list]) -> list[InitialGame]:
    out = []
    for month, event_id, day, pairs in runs:
        period, start = period_of(month), dt.date.fromordinal(day)
        for i in range(0, len(pairs), 2):
            out.append(InitialGame(period, event_id, start, pairs[i], pairs[i + 1]))
    return out


def _fide_values(state: FideState) -> list:
    """A FIDE state as arrays (D123), where msgspec writes maps with field names: the
    published lists [month, rating, K], the open periods [month, sum, games, half points,
    runs], the pooled initial games' runs, the first event [start day, event id]; trailing
    empties left out."""
    values: list = [
        [[month_index(p.period), p.rating, p.k] for p in state.published],
        [
            [
                month_index(s.period),
                s.sum_hundredths,
                s.games,
                s.points_halves,
                _runs(s.games_played),
            ]
            for s in state.periods
        ],
        _runs(state.initial_games),
        [state.first_event.start_date.toordinal(), state.first_event.event_id]
        if state.first_event is not None
        else None,
    ]
    while values and not values[-1]:
        values.pop()
    return values


def _fide_state(values: list) -> FideState:
    values = values + [[], [], [], None][len(values) :]
    published, periods, initial, first = values
    return FideState(
        published=[PublishedRating(period_of(m), rating, k) for m, rating, k in published],
        periods=[
            PeriodSums(period_of(m), total, n, halves, _games(runs))
            for m, total, n, halves, runs in periods
        ],
        initial_games=_games(initial),
        first_event=FirstEvent(dt.date.fromordinal(first[0]), first[1]) if first else None,
    )


def pack_state(record: PlayerRecord) -> bytes:
    """A record without what its key already says (system, pool, id): its fields in a fixed
    order, trailing defaults left out, as MessagePack (a CFC established player: ~8 bytes),
    a FIDE state as arrays (D123), compact where that is shorter (service/compact.py, D100:
    a FIDE record's lists and games deflate to about a fifth)."""
    r = record
    values = [
        r.rating,
        _STATUS_CODES[r.status],
        r.games,
        r.highest,
        r.birth_year,
        r.ever_2300,
        r.ever_2400,
        r.k,
        r.cfc,
        _fide_values(r.fide) if r.fide is not None else None,
        r.rd,
        r.volatility,
        r.glicko2,
    ]
    n = len(values)
    while n > 3 and (values[n - 1] is None or values[n - 1] is False):  # None / False: the defaults
        n -= 1
    if n == 3 and values[2] == 0:  # no games
        n = 2
        if values[1] == 0:  # unrated
            n = 1 if values[0] is not None else 0
    return compact(_packer.encode(values if n == len(values) else values[:n]))


def unpack_state(system: str, pool: str, player_id: str, packed: bytes) -> PlayerRecord:
    """A packed state: compact (D100) or plain MessagePack (an earlier version's)."""
    values = _list_decoder.decode(expand(packed))
    fields = dict(zip(_STATE_FIELDS, values))
    if "status" in fields:
        fields["status"] = _STATUSES[fields["status"]]
    fide = fields.pop("fide", None)
    record = msgspec.convert(
        {"system": system, "pool": pool, "id": player_id, **fields}, PlayerRecord
    )
    if fide is None:
        return record
    if isinstance(fide, dict):  # a state packed before D123: msgspec's map
        state = msgspec.convert(fide, FideState)
    else:
        state = _fide_state(fide)
    return msgspec.structs.replace(record, fide=state)


# ------------------------------------------------------------------ the archive


class _Player(msgspec.Struct, frozen=True, array_like=True, omit_defaults=True):
    id: str
    name: str | None = None
    birth_year: int | None = None


class _Game(msgspec.Struct, frozen=True, array_like=True, omit_defaults=True):
    round: int
    a: str
    b: str
    halves: int  # a's score in half points: 2, 1, 0
    forfeit: bool = False


class _Bye(msgspec.Struct, frozen=True, array_like=True, omit_defaults=True):
    round: int
    player: str
    halves: int


class _Event(msgspec.Struct, frozen=True, array_like=True, omit_defaults=True):
    """An event in the archive: its fields in a fixed order, dates as day numbers, scores in
    half points, trailing defaults left out (a two-player event: about 120 bytes)."""

    event_id: str
    system: str
    pool: str
    ruleset: str
    name: str
    start: int
    end: int
    rounds: int
    players: list[_Player]
    games: list[_Game]
    byes: list[_Bye] = []
    period: str | None = None
    one_third_rated: bool = False


def _pack_event(event: EventFinished) -> _Event:
    return _Event(
        event.event_id,
        event.system,
        event.pool or "",
        event.ruleset or "",
        event.name,
        event.start_date.toordinal(),
        event.end_date.toordinal(),
        event.rounds,
        [_Player(p.id, p.name, p.birth_year) for p in event.players],
        [_Game(g.round, g.a, g.b, round(g.score * 2), g.forfeit) for g in event.games],
        [_Bye(b.round, b.player, round(b.score * 2)) for b in event.byes],
        event.period,
        event.one_third_rated,
    )


def _unpack_event(packed: _Event) -> EventFinished:
    """The archived event, built field by field: it was validated when it was accepted, and a
    cascade reads hundreds (msgspec.convert of its dict took 190 µs a 40x7 event)."""
    return EventFinished(
        event_id=packed.event_id,
        system=packed.system,  # type: ignore[arg-type]  # a System: it was validated so
        name=packed.name,
        start_date=dt.date.fromordinal(packed.start),
        end_date=dt.date.fromordinal(packed.end),
        rounds=packed.rounds,
        players=[PlayerRef(p.id, p.name, p.birth_year) for p in packed.players],
        games=[Game(g.round, g.a, g.b, g.halves / 2, g.forfeit) for g in packed.games],
        byes=[Bye(b.round, b.player, b.halves / 2) for b in packed.byes],
        pool=packed.pool,
        ruleset=packed.ruleset,
        period=packed.period,
        one_third_rated=packed.one_third_rated,
    )


REVISION_CAUSES = ("corrected", "withdrawn", "inserted")  # a Note's `cause`, by its code


class Note(msgspec.Struct, frozen=True, array_like=True, omit_defaults=True):
    """One line of an event's revision log (D43): revision `revision` was published for the
    input entry of `arrival` (its stream id as `arrival_of` numbers it: when) because
    `cause` (a REVISION_CAUSES code) of event `other` ("": this event itself), with the
    input's `reason` when it was this event's own correction or withdrawal. MessagePack: 14
    bytes for this event's correction without a reason (msgspec writes an array_like
    Struct's defaults too), plus the other event's id or the reason."""

    revision: int
    cause: int
    arrival: int
    other: str = ""
    reason: str = ""


class _Stored(msgspec.Struct, frozen=True, array_like=True, omit_defaults=True):
    key: bytes
    event: _Event
    revision: int = 0
    digest: bytes = b""
    withdrawn: bool = False
    log: tuple[Note, ...] = ()


class Archived(msgspec.Struct, frozen=True):
    """One rated event as kept for re-rating: where it stands (`key`; a withdrawn event keeps
    it, for its arrival), its current content, how many revisions were published, and a digest of the players'
    results last published (a re-rate that gives the same results publishes nothing); `log`
    says when and why each revision was published (D43: empty for the revisions published
    before the log was kept)."""

    key: bytes
    event: EventFinished
    revision: int = 0
    digest: bytes = b""
    withdrawn: bool = False
    log: tuple[Note, ...] = ()

    def noted(self, note: Note) -> tuple[Note, ...]:
        """The log with one more line."""
        return (*self.log, note)


_archive_encoder = msgspec.msgpack.Encoder()
_archive_decoder = msgspec.msgpack.Decoder(_Stored)


def encode_archived(archived: Archived) -> bytes:
    stored = _Stored(
        archived.key,
        _pack_event(archived.event),
        archived.revision,
        archived.digest,
        archived.withdrawn,
        archived.log,
    )
    return compact(_archive_encoder.encode(stored))  # D100


def decode_archived(raw: bytes) -> Archived:
    """An archived event: compact (D100) or plain MessagePack (an earlier version's)."""
    stored = _archive_decoder.decode(expand(raw))
    return Archived(
        stored.key,
        _unpack_event(stored.event),
        stored.revision,
        stored.digest,
        stored.withdrawn,
        stored.log,
    )


def results_digest(results: Iterable[PlayerResult]) -> bytes:
    """8 bytes that change when any published figure of the results changes."""
    return hashlib.blake2b(_packer.encode(results), digest_size=8).digest()


def as_finished(event: EventContent) -> EventFinished:
    """The content of a correction as the event it now is (what the engines rate)."""
    if type(event) is EventFinished:
        return event
    fields = {f: getattr(event, f) for f in EventFinished.__struct_fields__}
    return EventFinished(**fields)


# ------------------------------------------------------------------ sorted members


def first_at_or_after(members: list[bytes], key: bytes) -> int:
    """Index of the first member whose key is `key` or later (members sort by their key)."""
    return bisect_left(members, key)


# ------------------------------------------------------------------ a history as one value (D121)

MEMBER_LIMIT = (1 << 23) - 1  # the longest member a history's length trailer can say


def _trailer(size: int) -> bytes:
    """A member's length after it: one byte under 128, else three (low, middle, 0x80 | high)."""
    if size < 0x80:
        return bytes((size,))
    if size > MEMBER_LIMIT:
        raise OverflowError(f"a history member of {size:,} bytes (the limit is {MEMBER_LIMIT:,})")
    return bytes((size & 0xFF, (size >> 8) & 0xFF, 0x80 | (size >> 16)))


def join_history(members: Iterable[bytes]) -> bytes:
    """A player's history as stored (D121): the members in order, each followed by its length,
    so that the last member, and the members from a key on, are read from the end."""
    return b"".join(member + _trailer(len(member)) for member in members)


class HistoryError(ValueError):
    """A stored history whose lengths do not add up (damaged bytes)."""


def split_history(stored: bytes) -> list[bytes]:
    """The members of a stored history (join_history's), in order."""
    out: list[bytes] = []
    pos = len(stored)
    while pos > 0:
        last = stored[pos - 1]
        if last < 0x80:
            size, head = last, 1
        elif pos >= 3:
            size, head = ((last & 0x7F) << 16) | (stored[pos - 2] << 8) | stored[pos - 3], 3
        else:
            raise HistoryError("a stored history cut short: its first member's length is damaged")
        stop = pos - head
        if size > stop:
            raise HistoryError(f"a stored history whose member of {size:,} bytes overruns it")
        out.append(stored[stop - size : stop])
        pos = stop - size
    out.reverse()
    return out
