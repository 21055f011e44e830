"""Workloads of the date-order tests (design "Order (v1.1)" and "v1.1 additions").

A workload is a list of input messages in ARRIVAL order: finished events (some late, i.e.
ending before events already rated), corrections (of results, players, dates: a changed
date moves the event), withdrawals, a correction bringing a withdrawn event back,
duplicates, and messages that must be rejected (a correction changing the pool, an
unknown event id, a conflicting re-use of an id, FIDE changes to a closed period).

`Model` says what each message does from the design alone, without the ledger: which
messages are applied, duplicates or rejected (and at which field), and each event's final
content. `date_order_fold` rates the pool's final events afresh, as event.finished
messages sorted by (FIDE period,) end_date, start_date and the arrival of the event's
first finished message: what the service and `rating-service rate` must end with.

Cases: `cfc` (regular), `fide` (standard, one open period), `fide-close` (a period
closed between two periods, then changes to the closed one refused), `naspa` (nwl and
csw together: csw seeds a newcomer from nwl, so both are one ordering domain). Glicko-2
(`GLICKO2_CASES`, in platform-named pools): `glicko2-event` (blitz, each event a rating
period, events over four months so that RDs grow for the elapsed periods first, G2-8) and
`glicko2-close` (bullet, ruleset `glicko2`: a period closed between two, as `fide-close`).

The generators draw through a `Chooser`, so that hypothesis (which shrinks) and a seeded
`random.Random` (the integration tests) make the same kind of workloads.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from schemas.events import (
    EventContent,
    EventFinished,
    EventWithdrawn,
    InputMessage,
    PeriodClosed,
    PeriodReopened,
)
from schemas.glicko2 import Glicko2State
from schemas.ratings import RatingsUpdated
from schemas.reads import HistoryEntry
from schemas.records import PlayerRecord, unrated_record
from schemas.validation import decode_input
from service.engine.registry import Registry
from service.rating import Applied, MemoryLedger, apply_message
from service.timeline import as_finished

CASES = ("cfc", "fide", "fide-close", "fide-reopen", "naspa")
GLICKO2_CASES = ("glicko2-event", "glicko2-close")
# The cases whose traffic is P1's, the close of P1, then P2's (FIDE's monthly list, a Glicko-2
# rating period).
CLOSE_CASES = ("fide-close", "glicko2-close")
# FIDE with some events of the next period rated before the period closes (as FIDE allows):
# their results depend on when the list came, so no date-order fold is expected of them.
EARLY = "fide-early"


# ------------------------------------------------------------------ drawing


class Chooser:
    """Random choices: a seeded Random here; tests/unit wraps hypothesis' `data.draw`."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def chance(self, percent: int) -> bool:
        return self.integer(0, 99) < percent

    def pick(self, items: list) -> Any:
        return items[self.integer(0, len(items) - 1)]

    def sample(self, items: list, k: int) -> list:
        pool = list(items)
        return [pool.pop(self.integer(0, len(pool) - 1)) for _ in range(k)]


# ------------------------------------------------------------------ the cases


@dataclass(frozen=True)
class Case:
    name: str
    system: str
    pools: tuple[str, ...]
    start: tuple[PlayerRecord, ...]
    regulars: tuple[str, ...]  # rated in the (first) pool's list
    newcomers: tuple[str, ...]  # on no list
    other_pool: dict  # a pool of the same system an event is not in (a correction may not move it)
    ruleset: str | None = None  # every event's, where not the system's default


def glicko2_start(pool: str, regulars: tuple[str, ...]) -> tuple[PlayerRecord, ...]:
    """Glicko-2 records as an import gives them (G2-11): RDs from 50 to 260, volatilities
    around 0.06, the exact rating a quarter above the whole one, and for most the date of
    their last rated event (from which `glicko2-event` grows the RD, G2-8)."""
    records = []
    for i, p in enumerate(regulars):
        rd = 50.0 + 30 * i
        last = None if i % 3 == 0 else dt.date(2025, 5 + i % 3, 10 + i)
        records.append(
            PlayerRecord(
                system="glicko2",
                pool=pool,
                id=p,
                rating=1400 + 60 * i,
                rd=rd,
                volatility=0.058 + 0.001 * i,
                status="provisional" if rd > 110 else "established",
                games=20 + i,
                glicko2=Glicko2State(rating=1400 + 60 * i + 0.25, last_rated=last),
            )
        )
    return tuple(records)


def case(name: str, tag: str = "") -> Case:
    """The starting list and players of one case; `tag` keeps ids apart when several cases
    share one stream."""
    if name == "cfc":
        regulars = tuple(f"{tag}c{i}" for i in range(8))
        start = tuple(
            PlayerRecord(
                system="cfc",
                pool="regular",
                id=p,
                rating=1400 + 60 * i,
                status="established",
                games=40,
                highest=1450 + 60 * i,
            )
            for i, p in enumerate(regulars)
        )
        return Case(
            name,
            "cfc",
            ("regular",),
            start,
            regulars,
            tuple(f"{tag}cn{i}" for i in range(3)),
            {"regular": "active"},
        )
    if name in ("fide", "fide-close", "fide-reopen", EARLY):
        regulars = tuple(f"{tag}f{i}" for i in range(8))
        start = tuple(
            PlayerRecord(
                system="fide",
                pool="standard",
                id=p,
                rating=1800 + 50 * i,
                status="established",
                games=60 + i,
                birth_year=1980 + i,
            )
            for i, p in enumerate(regulars)
        )
        return Case(
            name,
            "fide",
            ("standard",),
            start,
            regulars,
            tuple(f"{tag}fn{i}" for i in range(3)),
            {"standard": "rapid"},
        )
    if name == "naspa":
        regulars = tuple(f"{tag}w{i}" for i in range(8))
        start = tuple(
            PlayerRecord(
                system="naspa",
                pool="nwl",
                id=p,
                rating=1000 + 80 * i,
                status="established",
                games=50 + i,
            )
            for i, p in enumerate(regulars)
        )
        # Three of them are on the csw list too; the others start csw from their nwl rating.
        start += tuple(
            PlayerRecord(
                system="naspa",
                pool="csw",
                id=p,
                rating=1100 + 90 * i,
                status="established",
                games=30,
            )
            for i, p in enumerate(regulars[:3])
        )
        return Case(
            name,
            "naspa",
            ("nwl", "csw"),
            start,
            regulars,
            tuple(f"{tag}wn{i}" for i in range(3)),
            {"nwl": "csw", "csw": "nwl"},
        )
    if name in GLICKO2_CASES:
        pool = "blitz" if name == "glicko2-event" else "bullet"
        regulars = tuple(f"{tag}g{i}" for i in range(8))
        return Case(
            name,
            "glicko2",
            (pool,),
            glicko2_start(pool, regulars),
            regulars,
            tuple(f"{tag}gn{i}" for i in range(3)),
            {pool: "standard"},
            "glicko2-event" if name == "glicko2-event" else None,
        )
    raise ValueError(name)


# ------------------------------------------------------------------ events


def _day(value: dt.date) -> str:
    return value.isoformat()


@dataclass
class Window:
    """Where an event's dates may fall (and its explicit FIDE period, if any)."""

    first_end: dt.date
    last_end: dt.date
    period: str | None = None


P1, P2 = "2025-10", "2025-11"
WINDOWS = {
    "cfc": [Window(dt.date(2025, 11, 3), dt.date(2025, 11, 12))],
    "naspa": [Window(dt.date(2025, 11, 3), dt.date(2025, 11, 12))],
    "fide": [Window(dt.date(2025, 10, 5), dt.date(2025, 10, 14))],
    # Four months: a player's RD grows for the whole periods since their last event (G2-8).
    "glicko2-event": [Window(dt.date(2025, 8, 4), dt.date(2025, 11, 12))],
    # P1 events (some ending in November, counted in October: the period sorts first), then P2.
    "fide-close:1": [
        Window(dt.date(2025, 10, 5), dt.date(2025, 10, 14)),
        Window(dt.date(2025, 11, 1), dt.date(2025, 11, 2), P1),
    ],
    "fide-close:2": [Window(dt.date(2025, 11, 5), dt.date(2025, 11, 12))],
}


def _dates(choose: Chooser, windows: list[Window]) -> dict:
    window = choose.pick(windows)
    span = (window.last_end - window.first_end).days
    end = window.first_end + dt.timedelta(days=choose.integer(0, span))
    start = end - dt.timedelta(days=choose.integer(0, 2))
    if window.period == P1:  # ending in November, counted in October: it started in October
        start = min(start, dt.date(2025, 10, 31))
    dates = {"start_date": _day(start), "end_date": _day(end)}
    if window.period:
        dates["period"] = window.period
    return dates


def _players(choose: Chooser, c: Case, pool: str) -> list[str]:
    """2-3 rated players of the pool and at most one newcomer: every event is ratable."""
    regulars = list(c.regulars)
    if c.system == "naspa" and pool == "csw":
        regulars = regulars[:6]  # three on the csw list, three seeded from nwl
    ids = choose.sample(regulars, choose.integer(2, 3))
    if choose.chance(35):
        ids.append(choose.pick(list(c.newcomers)))
    return ids


def _games(choose: Chooser, ids: list[str]) -> tuple[int, list[dict]]:
    pairs = [(a, b) for i, a in enumerate(ids) for b in ids[i + 1 :]]
    games = [
        {"round": r + 1, "a": a, "b": b, "score": choose.pick([0, 0.5, 1])}
        for r, (a, b) in enumerate(pairs)
    ]
    return len(pairs), games


def new_event(choose: Chooser, c: Case, event_id: str, windows: list[Window]) -> dict:
    pool = choose.pick(list(c.pools))
    ids = _players(choose, c, pool)
    rounds, games = _games(choose, ids)
    ruleset = {"ruleset": c.ruleset} if c.ruleset else {}
    return {
        "schema": "event.finished/v1",
        "event_id": event_id,
        "system": c.system,
        "pool": pool,
        **ruleset,
        "name": f"Event {event_id}",
        **_dates(choose, windows),
        "rounds": rounds,
        "players": [
            {"id": p, "name": f"Player {p}"} if choose.chance(50) else {"id": p} for p in ids
        ],
        "games": games,
    }


def corrected(choose: Chooser, c: Case, base: dict, windows: list[Window]) -> dict:
    """A correction of `base`: some of new results, other dates (moving the event), other
    players, another name, or nothing changed at all."""
    message = json.loads(json.dumps(base))
    message["schema"] = "event.corrected/v1"
    if choose.chance(30):
        message["reason"] = "arbiter's report"
    what = choose.integer(0, 15)
    if what & 1:
        message["games"] = [dict(g, score=choose.pick([0, 0.5, 1])) for g in message["games"]]
    if what & 2:
        for name in ("start_date", "end_date", "period"):
            message.pop(name, None)
        message.update(_dates(choose, windows))
    if what & 4:
        ids = _players(choose, c, message["pool"])
        message["rounds"], message["games"] = _games(choose, ids)
        message["players"] = [{"id": p} for p in ids]
    if what & 8:
        message["name"] = f"{base['name']} (corrected)"
    return message


def withdrawn(event: dict) -> dict:
    message = {
        "schema": "event.withdrawn/v1",
        "event_id": event["event_id"],
        "system": event["system"],
        "pool": event["pool"],
    }
    return message


# ------------------------------------------------------------------ workloads


@dataclass
class Workload:
    case: Case
    messages: list[dict] = field(default_factory=list)  # in arrival order


def _place(choose: Chooser, seq: list[dict], message: dict, after: int | None, lo: int = 0) -> None:
    """Insert `message` at a random place after index `after` (mostly), else anywhere from `lo`."""
    first = after + 1 if after is not None and choose.chance(85) else lo
    seq.insert(choose.integer(first, len(seq)), message)


def _index_of_finished(seq: list[dict], event_id: str, lo: int = 0) -> int | None:
    for i in range(lo, len(seq)):
        if seq[i]["schema"] == "event.finished/v1" and seq[i]["event_id"] == event_id:
            return i
    return None


def _traffic(
    choose: Chooser,
    c: Case,
    events: list[dict],
    windows: list[Window],
    seq: list[dict],
    lo: int,
    extra: int,
    tag: str,
) -> None:
    """The events in a random order from index `lo` of `seq`, then `extra` changes, duplicates
    and invalid messages placed at random (changes mostly after their event's finished)."""
    for event in choose.sample(events, len(events)):
        seq.insert(choose.integer(lo, len(seq)), event)
    for n in range(extra):
        kind = choose.integer(0, 9)
        target = choose.pick(events)
        after = _index_of_finished(seq, target["event_id"], lo)
        if kind <= 3:  # a correction
            _place(choose, seq, corrected(choose, c, target, windows), after, lo)
        elif (
            kind <= 5
        ):  # a withdrawal, sometimes followed by a correction that brings the event back
            _place(choose, seq, withdrawn(target), after, lo)
            if choose.chance(50):
                at = next(i for i in range(lo, len(seq)) if seq[i] == withdrawn(target))
                seq.insert(choose.integer(at + 1, len(seq)), corrected(choose, c, target, windows))
        elif kind <= 7:  # a duplicate of a message already there
            at = choose.integer(lo, len(seq) - 1)
            seq.insert(choose.integer(at + 1, len(seq)), json.loads(json.dumps(seq[at])))
        elif kind == 8:  # a correction that moves the event to another pool: invalid ($.pool)
            bad = corrected(choose, c, target, windows)
            bad["pool"] = c.other_pool[target["pool"]]
            bad.pop("ruleset", None)
            _place(choose, seq, bad, after, lo)
        else:  # an unknown event id ($.event_id), or the same id re-used with other content (conflict)
            choice = choose.integer(0, 2)
            if choice == 0:
                ghost = dict(corrected(choose, c, target, windows), event_id=f"{tag}ghost{n}")
                _place(choose, seq, ghost, None, lo)
            elif choice == 1:
                _place(choose, seq, dict(withdrawn(target), event_id=f"{tag}ghost{n}"), None, lo)
            else:
                _place(choose, seq, dict(target, name="Same id, other event"), after, lo)


def workload(
    choose: Chooser, name: str, events: int = 5, extra: int = 6, tag: str = ""
) -> Workload:
    """One case's messages in arrival order (event ids are `<tag>e<n>`)."""
    c = case(name, tag)
    seq: list[dict] = []
    if name == "fide-reopen":
        return reopen_workload(choose, c, events, extra, tag)
    if name not in (*CLOSE_CASES, EARLY):
        windows = WINDOWS[name]
        made = [new_event(choose, c, f"{tag}e{n}", windows) for n in range(events)]
        _traffic(choose, c, made, windows, seq, 0, extra, tag)
        return Workload(c, seq)
    # Period P1's traffic, its closing, then P2's traffic with some late changes to P1 (refused).
    w1, w2 = WINDOWS["fide-close:1"], WINDOWS["fide-close:2"]
    first = [new_event(choose, c, f"{tag}e{n}", w1) for n in range(max(2, events // 2))]
    second = [new_event(choose, c, f"{tag}e{n}", w2) for n in range(len(first), events + 1)]
    _traffic(choose, c, first, w1, seq, 0, extra // 2, tag)
    seq.append({"schema": "period.closed/v1", "system": c.system, "pool": c.pools[0], "period": P1})
    lo = len(seq)
    _traffic(choose, c, second, w2, seq, lo, extra - extra // 2, tag + "x")
    for _ in range(choose.integer(1, 3)):
        late = choose.integer(0, 3)
        if late == 0:  # a late event of the closed period
            seq.insert(
                choose.integer(lo, len(seq)), new_event(choose, c, f"{tag}late{len(seq)}", w1)
            )
        elif late == 1:  # a correction of a closed period's event
            seq.insert(choose.integer(lo, len(seq)), corrected(choose, c, choose.pick(first), w1))
        elif late == 2:  # its withdrawal
            seq.insert(choose.integer(lo, len(seq)), withdrawn(choose.pick(first)))
        else:  # a correction moving an open period's event into the closed one
            target = choose.pick(second)
            after = _index_of_finished(seq, target["event_id"], lo)
            _place(choose, seq, corrected(choose, c, target, w1), after, lo)
    if name == EARLY:  # some of the next period's events come before the closing
        close = seq.index(
            {"schema": "period.closed/v1", "system": "fide", "pool": "standard", "period": P1}
        )
        for event in choose.sample(second, choose.integer(1, len(second))):
            at = _index_of_finished(seq, event["event_id"], close + 1)
            if at is not None:
                seq.insert(choose.integer(0, close), seq.pop(at))
                close += 1
    return Workload(c, seq)


CLOSE_P1 = {"schema": "period.closed/v1", "system": "fide", "pool": "standard", "period": P1}
REOPEN_P1 = {"schema": "period.reopened/v1", "system": "fide", "pool": "standard", "period": P1}


def reopen_workload(choose: Chooser, c: Case, events: int, extra: int, tag: str) -> Workload:
    """P1's traffic, its close (sometimes twice: a duplicate), changes refused while it is
    closed, its reopen (a wrong period refused, a duplicate), more P1 traffic (late events,
    corrections, withdrawals: accepted again), the close again, then P2's traffic; now and
    then the close reopened and closed once more."""
    w1, w2 = WINDOWS["fide-close:1"], WINDOWS["fide-close:2"]
    first = [new_event(choose, c, f"{tag}e{n}", w1) for n in range(max(2, events // 2))]
    second = [new_event(choose, c, f"{tag}e{n}", w2) for n in range(len(first), events + 1)]
    seq: list[dict] = []
    _traffic(choose, c, first, w1, seq, 0, extra // 3, tag)
    seq.append(CLOSE_P1)
    if choose.chance(30):
        seq.append(corrected(choose, c, choose.pick(first), w1))  # refused: period_closed
    if choose.chance(30):
        seq.append(dict(REOPEN_P1, period=P2))  # refused: not the latest close
    seq.append(dict(REOPEN_P1, reason="closed too early"))
    if choose.chance(30):
        seq.append(dict(REOPEN_P1, reason="closed too early"))  # a duplicate
    lo = len(seq)
    late = [new_event(choose, c, f"{tag}late{n}", w1) for n in range(choose.integer(0, 2))]
    _traffic(choose, c, late, w1, seq, lo, 0, tag + "l")
    for _ in range(choose.integer(1, 3)):
        kind = choose.integer(0, 1)
        target = choose.pick(first)
        seq.append(withdrawn(target) if kind else corrected(choose, c, target, w1))
    seq.append(CLOSE_P1)
    if choose.chance(40):
        seq.extend([REOPEN_P1, corrected(choose, c, choose.pick(first), w1), CLOSE_P1])
    lo = len(seq)
    _traffic(choose, c, second, w2, seq, lo, extra - extra // 3, tag + "x")
    if choose.chance(30):
        seq.append(REOPEN_P1)  # refused: events of P2 count
    return Workload(c, seq)


def current_lists(outputs: Iterable[RatingsUpdated]) -> list[RatingsUpdated]:
    """The list messages still in force: a reopen's revision withdraws its period's list."""
    lists: list[RatingsUpdated] = []
    for out in outputs:
        if out.kind == "list":
            lists.append(out)
        elif out.event_id is None and out.withdrawn:
            where = (out.system, out.pool, out.period)
            lists = [o for o in lists if (o.system, o.pool, o.period) != where]
    return lists


def interleave(choose: Chooser, workloads: list[Workload]) -> list[tuple[int, dict]]:
    """Several cases' messages in one stream: each case's own order kept; (case index, message)."""
    queues = [list(w.messages) for w in workloads]
    merged = []
    while any(queues):
        i = choose.pick([i for i, q in enumerate(queues) if q])
        merged.append((i, queues[i].pop(0)))
    return merged


def encode(message: dict) -> bytes:
    return json.dumps(message).encode()


# ------------------------------------------------------------------ the model


@dataclass
class ModelEvent:
    first: EventFinished  # the first accepted finished message (its idempotency marker)
    arrival: int  # its arrival: the tie-break of equal dates
    content: EventFinished  # what the event is now
    withdrawn: bool = False


class Model:
    """What each message does, by the design's rules alone (no ledger involved)."""

    def __init__(self) -> None:
        self.events: dict[str, ModelEvent] = {}
        self.closed: dict[tuple[str, str], str] = {}
        self.closes: list[PeriodClosed] = []
        self.reopened: list[PeriodReopened] = []  # the reopens applied, last first checked

    def _closed(self, event: EventFinished) -> bool:
        through = self.closed.get((event.system, event.pool or ""))
        return through is not None and event.period is not None and event.period <= through

    def apply(self, message: InputMessage, arrival: int) -> tuple[str, str | None, str | None]:
        """("applied" | "duplicate" | "rejected", reason, path)."""
        if isinstance(message, PeriodClosed):
            self.closed[(message.system, message.pool or "")] = message.period
            self.closes.append(message)
            return ("applied", None, None)
        if isinstance(message, PeriodReopened):
            return self._reopen(message)
        known = self.events.get(message.event_id)
        if isinstance(message, EventFinished):
            if known is not None:
                return (
                    ("duplicate", None, None)
                    if message == known.first
                    else ("rejected", "conflict", "$")
                )
            if self._closed(message):
                return ("rejected", "period_closed", "$.period")
            self.events[message.event_id] = ModelEvent(message, arrival, message)
            return ("applied", None, None)
        if known is None:
            return ("rejected", "invalid", "$.event_id")
        if message.pool != known.content.pool:
            return ("rejected", "invalid", "$.pool")
        if isinstance(message, EventWithdrawn):
            if known.withdrawn:
                return ("duplicate", None, None)
            if self._closed(known.content):
                return ("rejected", "period_closed", "$.period")
            known.withdrawn = True
            return ("applied", None, None)
        content = as_finished(message)
        if not known.withdrawn and content == known.content:
            return ("duplicate", None, None)
        if (not known.withdrawn and self._closed(known.content)) or self._closed(content):
            return ("rejected", "period_closed", "$.period")
        known.content, known.withdrawn = content, False
        return ("applied", None, None)

    def _reopen(self, message: PeriodReopened) -> tuple[str, str | None, str | None]:
        """F11: the latest close undone; a duplicate of the last reopen changes nothing."""
        where = (message.system, message.pool or "")
        if self.closed.get(where) != message.period:
            if self.reopened and self.reopened[-1] == message:
                return ("duplicate", None, None)
            return ("rejected", "invalid", "$.period")
        if any(
            not e.withdrawn and (e.content.period or "") > message.period
            for e in self.events.values()
            if (e.content.system, e.content.pool) == where
        ):
            return ("rejected", "invalid", "$.period")
        mine = [c for c in self.closes if (c.system, c.pool) == where]
        self.closes.remove(mine[-1])
        earlier = [c.period for c in mine[:-1]]
        if earlier:
            self.closed[where] = earlier[-1]
        else:
            del self.closed[where]
        self.reopened.append(message)
        return ("applied", None, None)

    def final_events(self) -> list[EventFinished]:
        """The current, not withdrawn, events in date order: (FIDE period,) end, start, arrival."""
        live = [e for e in self.events.values() if not e.withdrawn]
        return [e.content for e in sorted(live, key=lambda e: order_of(e.content, e.arrival))]


def order_of(event: EventContent, arrival: int) -> tuple:
    """(period, end, start, arrival): an event of a ruleset with periods (FIDE, Glicko-2's
    `glicko2`) has one, and its period sorts first; the others have none."""
    return (event.period or "", event.end_date, event.start_date, arrival)


def decoded(message: dict) -> InputMessage:
    return decode_input(encode(message))


# ------------------------------------------------------------------ the date-order fold


@dataclass
class Fold:
    ledger: MemoryLedger
    last: dict[str, RatingsUpdated]  # per event id
    lists: list[RatingsUpdated]


def date_order_fold(start: Iterable[PlayerRecord], models: list[Model], registry: Registry) -> Fold:
    """A fresh ledger fed the final events as event.finished messages in date order (each
    period's closing after its events)."""
    items: list[tuple[tuple, InputMessage]] = []
    for model in models:
        for arrival, event in enumerate(model.final_events()):
            items.append(
                (
                    (
                        event.system,
                        event.pool if event.system != "naspa" else "",
                        order_of(event, 0)[:3],
                        arrival,
                    ),
                    event,
                )
            )
        for close in model.closes:
            items.append(
                (
                    (close.system, close.pool, (close.period, dt.date.max, dt.date.max), 1 << 30),
                    close,
                )
            )
    # Date order within each domain; domains are independent, so any order between them.
    items.sort(key=lambda item: item[0])
    ledger = MemoryLedger(start)
    last: dict[str, RatingsUpdated] = {}
    lists: list[RatingsUpdated] = []
    for _, message in items:
        applied = apply_message(ledger, message, registry, source_id="fold")
        assert isinstance(applied, Applied), (message, applied)
        for out in applied.outputs:
            assert out.kind in ("event", "list"), out
            if out.kind == "list":
                lists.append(out)
            else:
                last[out.event_id] = out  # type: ignore[index]
    return Fold(ledger, last, lists)


def figures(out: RatingsUpdated) -> tuple:
    """What a subscriber reads from a message, less where and when it was published, and
    less the players' names: a name is a label kept once known (README "For websites"), so
    which players have one depends on which events arrived before."""
    players = [msgspec.structs.replace(p, name=None) for p in out.players]
    return (
        out.system,
        out.pool,
        out.ruleset,
        out.event_id,
        out.period,
        out.name,
        out.start_date,
        out.end_date,
        out.withdrawn,
        players,
    )


def significant(records: Iterable[PlayerRecord]) -> dict[tuple, PlayerRecord]:
    """Records by (system, pool, id), without their names, less those equal to a never-seen
    player's (a withdrawn event's newcomer is left unrated: the same as absent). A name is
    a label kept once known (README "For websites"), not rating state: which events named
    a player first depends on the arrival order."""
    stripped = (msgspec.structs.replace(r, name=None) for r in records)
    return {
        (r.system, r.pool, r.id): r for r in stripped if r != unrated_record(r.system, r.pool, r.id)
    }


def check_against_fold(
    records: Iterable[PlayerRecord],
    last: dict[str, RatingsUpdated],
    lists: list[RatingsUpdated],
    models: list[Model],
    fold: Fold,
) -> None:
    """The records and the last message per event id equal the fold's; a withdrawn event's
    last message says so, with no players."""
    assert significant(records) == significant(fold.ledger.all_records())
    events = {eid: e for model in models for eid, e in model.events.items()}
    assert set(last) == set(events), sorted(set(last) ^ set(events))
    for eid, event in events.items():
        out = last[eid]
        if event.withdrawn:
            assert out.withdrawn and out.players == [] and out.kind == "revision", out
        else:
            assert figures(out) == figures(fold.last[eid]), (eid, out, fold.last[eid])

    # Per pool in order; pools are independent (a FIDE and a Glicko-2 close arrive in any order).
    def per_pool(found: list[RatingsUpdated]) -> list[tuple]:
        ordered = sorted(found, key=lambda o: (o.system, o.pool or ""))
        return [(o.system, o.pool, o.period, o.chunk, o.players) for o in ordered]

    assert per_pool(lists) == per_pool(fold.lists)


def check_histories(
    history_of: Callable[[str, str, str], list[HistoryEntry]],
    players: Iterable[tuple[str, str, str]],
    fold: Fold,
) -> None:
    """Every player's history (from `history_of`) equals the fold's, line for line, but for
    the revision counts (a fold publishes each event once). `players`: whose histories
    the tested side holds (none may be missing from the fold, nor the fold's from it)."""

    def plain(entries: list[HistoryEntry]) -> list[HistoryEntry]:
        return [msgspec.structs.replace(e, revision=0) for e in entries]

    expected = {who for who, lines in fold.ledger.projection.entries.items() if lines}
    assert set(players) == expected, sorted(set(players) ^ expected)
    for who in sorted(expected):
        assert plain(history_of(*who)) == plain(fold.ledger.history(*who)), who


def check_revisions(outputs: list[RatingsUpdated]) -> None:
    """Per event: one first message (kind event), then revisions 1, 2, ... once each, in order."""
    seen: dict[str, int] = {}
    for out in outputs:
        if out.kind == "list" or out.event_id is None:  # a list, or a list's withdrawal
            continue
        eid = out.event_id
        if out.kind == "event":
            assert eid not in seen and out.revision is None and out.cause is None, out
            seen[eid] = 0  # type: ignore[index]
        else:
            assert out.revision == seen.get(eid, -1) + 1 and out.cause is not None, (
                out,
                seen.get(eid),
            )  # type: ignore[arg-type]
            seen[eid] = out.revision  # type: ignore[index]
