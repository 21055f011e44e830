"""The apply path's helpers as they were before the hot-path work (base cae2a73), copied
verbatim from service/timeline.py, service/readmodel.py and service/rating.py: the
reference their optimized versions must match byte for byte
(tests/unit/test_previous_behaviour.py)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import msgspec

from schemas.events import EventContent, EventFinished
from schemas.ratings import RatingsUpdated
from schemas.reads import HistoryEntry
from schemas.records import PlayerRecord
from tests.previous.contract import Engine

_STATUS_CODES = {"unrated": 0, "provisional": 1, "established": 2}
_packer = msgspec.msgpack.Encoder()
_encoder = msgspec.msgpack.Encoder()


# list_field and _Packed: frozen copies of service/readmodel.py's (as of the commit that
# froze tests/previous whole), so that a change there is seen by the comparison.
def list_field(period: str) -> str:
    """The history field of the list closing `period` (event ids cannot contain '/')."""
    return f"list/{period}"


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


def order_key(event: EventContent, arrival: int) -> bytes:
    """The event's place in its domain: (FIDE period,) end_date, start_date, arrival."""
    months = 0
    if event.system == "fide" and event.period:
        year, month = event.period.split("-")
        months = int(year) * 12 + int(month) - 1
    return (
        months.to_bytes(3, "big")
        + event.end_date.toordinal().to_bytes(3, "big")
        + event.start_date.toordinal().to_bytes(3, "big")
        + arrival.to_bytes(8, "big")
    )


def pack_state(record: PlayerRecord) -> bytes:
    """A record without what its key already says (system, pool, id): its fields in a fixed
    order, trailing defaults left out, as MessagePack (a CFC established player: ~8 bytes)."""
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
        r.fide,
    ]
    n = 10
    while n and (
        values[n - 1] is None
        or values[n - 1] is False
        or (n == 3 and values[2] == 0)
        or (n == 2 and values[1] == 0)
    ):
        n -= 1
    return _packer.encode(values[:n])


def pack_entry(key: bytes, entry: HistoryEntry) -> bytes:
    """The stored value of a history line: its order key, then the entry."""
    return key + _encoder.encode(_Packed(*msgspec.structs.astuple(entry)))


def entries_of(message: RatingsUpdated) -> Iterator[tuple[str, str, HistoryEntry]]:
    """(player id, history field, line) for each player of a published message."""
    fide = message.system == "fide"
    if message.kind == "list":
        assert message.period is not None
        for r in message.players:
            yield (
                r.id,
                list_field(message.period),
                HistoryEntry(
                    kind="list",
                    event_id=None,
                    name=None,
                    start_date=None,
                    end_date=None,
                    period=message.period,
                    list_period=message.list_period,
                    old_rating=r.old_rating,
                    new_rating=r.new_rating,
                    change=r.change,
                    old_status=r.old_status,
                    status=r.status,
                    games=r.games,
                    event_games=r.event_games,
                    score=r.score,
                    expected=r.expected,
                    performance=r.performance,
                ),
            )
        return
    assert message.event_id is not None
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
            message.event_id,
            HistoryEntry(
                kind="event",
                event_id=message.event_id,
                name=message.name,
                start_date=message.start_date,
                end_date=message.end_date,
                period=message.period if fide else None,
                list_period=None,
                old_rating=r.old_rating,
                new_rating=new,
                change=change,
                old_status=r.old_status,
                status=r.status,
                games=r.games,
                event_games=r.event_games,
                score=r.score,
                expected=r.expected,
                performance=r.performance,
                revision=message.revision or 0,
                projection=projected is not None,
            ),
        )


def event_output(
    event: EventFinished,
    engine: Engine,
    results: list,
    source_id: str,
    records: Mapping[str, PlayerRecord] | None = None,
    **revision,
) -> RatingsUpdated:
    """The `ratings.updated/v1` of one event (a first result, or a revision of it). Each
    player's name is their record's (`records`: the records the event was rated from, named
    from the list, else from an event), else the event's."""
    names = {p.id: p.name for p in event.players if p.name}
    if records:
        names.update((pid, r.name) for pid, r in records.items() if r.name)
    if names:
        results = [
            msgspec.structs.replace(r, name=names[r.id]) if r.id in names else r for r in results
        ]
    kind = "revision" if revision else "event"
    return RatingsUpdated(
        kind=kind,
        system=event.system,
        pool=event.pool or "",
        ruleset=engine.ruleset,
        source_id=source_id,
        players=results,
        event_id=event.event_id,
        period=event.period,
        name=event.name,
        start_date=event.start_date,
        end_date=event.end_date,
        **revision,
    )
