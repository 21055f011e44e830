"""The lists' rules and indexes, pure (D46-D49): who is active, the labels a list filters by,
the latest events' summaries, and the biggest changes of a window of events.

- **Active** (D46): a player is active on a pool's list when their last event with at least
  one rated game ended in the year up to the list's date: for FIDE after a close, the 12
  rating periods up to the closed one (FIDE's rule: inactive after a year without a rated
  game, counted by lists); otherwise the 365 days up to the end date of the pool's latest
  event (CFC and NASPA count activity over a year the same way). The list's date is the
  data's own, never the wall clock, so a list reads the same every day until it changes.
- **Labels** (D47): a player's federation and titles, each a ranking of its own.
- **Events** (D48): each rated event's summary, by end date.
- **Changes** (D49): FIDE: each player's change on the last list; otherwise the sum of each
  player's changes over the events of the 30 days up to the pool's latest event.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

import msgspec

from schemas.periods import add_months, first_day
from schemas.ratings import RatingsUpdated
from schemas.reads import EventSummary, PlayerChange
from schemas.records import PlayerRecord

ACTIVE_DAYS = 365  # CFC, NASPA (and FIDE before a close): the days up to the list's date
CHANGE_DAYS = 30  # the biggest changes' window of events (CFC, NASPA)
FEDERATION, TITLE = "federation", "title"


def last_day(period: str) -> dt.date:
    return first_day(add_months(period, 1)) - dt.timedelta(days=1)


def closed_list_days(period: str) -> tuple[int, int]:
    """(the list's day, the first active day) of the list closing FIDE `period`: its last
    day, and the first day of the 12 periods up to it."""
    return last_day(period).toordinal(), first_day(add_months(period, -11)).toordinal()


def active_from_day(reference: int) -> int:
    """The first active day of a list dated `reference` (day ordinals; 0: no event yet)."""
    return reference - ACTIVE_DAYS + 1 if reference else 0


def played_day(message: RatingsUpdated) -> int:
    """The day a message's event counts for activity: its end date (0: none)."""
    return message.end_date.toordinal() if message.end_date else 0


def rated_players(message: RatingsUpdated) -> list[str]:
    """The players of an event who played at least one rated game in it."""
    return [p.id for p in message.players if p.event_games > 0]


def labels_of(record: PlayerRecord | None) -> set[tuple[str, str]]:
    """(kind, label) of the record's labels (D35): its federation and each title."""
    if record is None:
        return set()
    found = {(TITLE, title) for title in record.titles}
    if record.federation:
        found.add((FEDERATION, record.federation))
    return found


def summary_of(message: RatingsUpdated) -> EventSummary:
    """The latest events' line of an event's last message."""
    assert message.event_id is not None
    return EventSummary(
        event_id=message.event_id,
        system=message.system,
        pool=message.pool,
        name=message.name,
        start_date=message.start_date,
        end_date=message.end_date,
        period=message.period if message.system == "fide" else None,
        players=len(message.players),
        revision=message.revision or 0,
    )


# A summary as stored: the same fields in the same order, as a MessagePack array.
_Card = msgspec.defstruct(
    "_Card",
    [(f.name, f.type) for f in msgspec.structs.fields(EventSummary)],
    array_like=True,
    frozen=True,
)
_encoder = msgspec.msgpack.Encoder()
_card_decoder = msgspec.msgpack.Decoder(_Card)


def pack_card(summary: EventSummary) -> bytes:
    return _encoder.encode(msgspec.structs.astuple(summary))


def unpack_card(raw: bytes) -> EventSummary:
    return EventSummary(*msgspec.structs.astuple(_card_decoder.decode(raw)))


def window_changes(messages: Iterable[RatingsUpdated]) -> list[PlayerChange]:
    """Each player's change over events (in date order): the rating before the first, after
    the last, the sum of the changes, the events counted. Players with no change known (an
    unrated player staying unrated, a first rating) are left out: a gain needs a before."""
    found: dict[str, dict] = {}
    for message in messages:
        for p in message.players:
            if p.change is None or p.old_rating is None:
                continue
            mine = found.get(p.id)
            if mine is None:
                found[p.id] = mine = {"old": p.old_rating, "change": 0, "events": 0, "name": None}
            mine["change"] += p.change
            mine["new"] = p.new_rating
            mine["events"] += 1
            mine["name"] = p.name or mine["name"]
    return [
        PlayerChange(
            id=pid,
            name=f["name"],
            titles=[],
            federation=None,
            old_rating=f["old"],
            new_rating=f["new"],
            change=f["change"],
            events=f["events"],
        )
        for pid, f in found.items()
    ]


def biggest(
    changes: list[PlayerChange], limit: int
) -> tuple[list[PlayerChange], list[PlayerChange]]:
    """The `limit` biggest gains (largest first) and losses (most negative first), ties by id."""
    gains = sorted((c for c in changes if c.change > 0), key=lambda c: (-c.change, c.id))
    losses = sorted((c for c in changes if c.change < 0), key=lambda c: (c.change, c.id))
    return gains[:limit], losses[:limit]
