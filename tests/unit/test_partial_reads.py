"""A cascade on a ledger read in part (D65) does what it does on the whole store, and reads
only what its walk re-rates; a player whose state after an event is the stored one is clean
at once (D66). Pure: the "store" is a complete MemoryLedger, read the way
service/runtime/store.py's `load_cascade` and `load_missing` read Redis.

Each workload of tests/cascade_workload.py (late events, corrections, withdrawals; CFC,
FIDE with closes and reopens, NASPA's two pools in one domain) is applied message by message
to the complete ledger; before each message that re-rates from an earlier place, the same
message is applied to a ledger read in part from the complete one, reading as the walk asks:
the outcome, the messages published and the change set must be the same.
"""

from __future__ import annotations

import copy
import datetime as dt
import random

import pytest

from schemas.events import EventContent, EventCorrected, PeriodReopened
from schemas.records import PlayerRecord
from service.engine.registry import default_registry
from service.rating import Applied, MemoryLedger, Missing, Rejected, apply_message, in_order, needs
from service.rating.partial import PartialReads
from service.timeline import order_key, split_member
from tests.cascade_workload import CASES, Chooser, decoded, workload

REGISTRY = default_registry()


class Store:
    """A complete ledger, read in part: what load_cascade reads first, then what the walk
    asks for (counted)."""

    def __init__(self, whole: MemoryLedger):
        self.whole = whole
        self.archives_read = 0
        self.players_read = 0

    def start(self, message, arrival: int) -> MemoryLedger:
        want = needs(message, REGISTRY)
        whole = self.whole
        ledger = MemoryLedger(markers={k: v for k, v in whole.markers.items() if k == want.marker})
        archived = whole.archives.get(want.revises or "") if want.revises else None
        starts, players = [], set()
        if isinstance(message, EventContent):
            kept = int.from_bytes(archived.key[9:], "big") if archived else arrival
            starts.append(order_key(message, kept, want.order_prefix))
            players.update(p.id for p in message.players)
        if archived is not None:
            ledger.load_archive(archived)
            players.update(p.id for p in archived.event.players)
            if not archived.withdrawn:
                starts.append(archived.key)
        if not starts:
            return ledger
        start = min(starts)
        ledger.load_timeline(
            want.domain, [m for m in whole.timelines.get(want.domain, []) if m >= start]
        )
        for system, pool in want.domain_pools:
            if (system, pool) in whole.pools:
                ledger.load_pool(whole.pools[(system, pool)])
        ledger.partial = PartialReads(start, want.domain_pools)
        self._players(ledger, sorted(players), start)
        return ledger

    def load(self, ledger: MemoryLedger, missing: Missing) -> None:
        for event_id in missing.archives:
            ledger.load_archive(self.whole.archives[event_id])
            self.archives_read += 1
        assert ledger.partial is not None
        assert missing.at >= ledger.partial.start
        players = [p for p in missing.players if p not in ledger.partial.players]
        self._players(ledger, players, missing.at)  # from where the walk stopped on (D137)

    def _players(self, ledger: MemoryLedger, players: list[str], at: bytes) -> None:
        partial = ledger.partial
        assert partial is not None
        for system, pool in partial.pools:
            for pid in players:
                record = self.whole.record(system, pool, pid)
                if record is not None:
                    ledger.load_records([record])
                members = [m for m in self.whole.histories.get((system, pool, pid), []) if m >= at]
                if members:
                    ledger.load_history((system, pool, pid), members)
        self.players_read += len(players)
        partial.loaded(players, ledger.histories)


def applied(ledger: MemoryLedger, message, arrival: int, store: Store | None = None):
    """apply_message, reading as the walk asks when `store` is given; the result or the
    rejection."""
    while True:
        try:
            return apply_message(ledger, message, REGISTRY, f"s{arrival}", arrival)
        except Rejected as exc:
            return exc
        except Missing as missing:
            assert store is not None, "a complete ledger lacks nothing"
            store.load(ledger, missing)


def change_set(ledger: MemoryLedger) -> tuple:
    c = ledger.changes
    return (
        c.records,
        c.pools,
        c.markers,
        c.archives,
        {d: (m.added, m.removed) for d, m in c.timelines.items()},
        {w: (m.added, m.removed) for w, m in c.histories.items() if m.added or m.removed},
        c.results,
        c.entries,
    )


def outcome(result) -> tuple:
    if isinstance(result, Rejected):
        return ("rejected", result.reason, result.message, result.path)
    if isinstance(result, Applied):
        return ("applied", result.outputs, result.marker, result.digest, result.rerated)
    return ("duplicate", result.marker)


def run(messages: list[dict], start: list[PlayerRecord]) -> int:
    """Apply the messages to a complete ledger, each cascade also read in part; returns how
    many cascades were compared."""
    whole = MemoryLedger(start)
    compared = 0
    for arrival, raw in enumerate(messages, 1):
        message = decoded(raw)
        cascades = not isinstance(message, PeriodReopened) and not in_order(
            whole, message, arrival, REGISTRY
        )
        if cascades:
            store = Store(whole)
            partial = store.start(message, arrival)
            mine = applied(partial, message, arrival, store)
            reference = copy.deepcopy(whole)
            reference.changes = type(reference.changes)()
            reference.projection.changed_results = reference.changes.results
            reference.projection.changed_entries = reference.changes.entries
            theirs = applied(reference, message, arrival)
            assert outcome(mine) == outcome(theirs), (arrival, raw)
            if isinstance(theirs, Applied):
                assert change_set(partial) == change_set(reference), (arrival, raw)
            compared += 1
        applied(whole, message, arrival)
    return compared


@pytest.mark.parametrize("name", CASES)
def test_a_cascade_read_in_part_does_what_it_does_on_the_whole_store(name):
    compared = 0
    for seed in range(4):
        w = workload(Chooser(random.Random(f"partial-{name}-{seed}")), name, events=14, extra=16)
        compared += run(w.messages, w.case.start)
    assert compared >= 8  # corrections, withdrawals and late events were compared


def _history(players: list[str], events: int) -> list[dict]:
    """Two-player CFC events, one a day, the first a decisive result."""
    rng = random.Random(7)
    out = []
    for n in range(events):
        a, b = rng.sample(players, 2)
        day = (dt.date(2024, 1, 1) + dt.timedelta(days=n)).isoformat()
        out.append(
            {
                "schema": "event.finished/v1",
                "event_id": f"h{n}",
                "system": "cfc",
                "name": f"Game {n}",
                "start_date": day,
                "end_date": day,
                "rounds": 1,
                "players": [{"id": a}, {"id": b}],
                "games": [{"round": 1, "a": a, "b": b, "score": 1 if n == 0 else 0.5}],
            }
        )
    return out


def test_a_correction_reads_the_archives_of_the_events_it_looks_at_only():
    """200 established players, 400 two-player games; the first game's result flipped: the
    change dies out (a CFC rating is a whole number), so most later games are passed by
    their order key alone, their archives and players never read."""
    players = [f"p{i}" for i in range(200)]
    start = [
        PlayerRecord(
            system="cfc", pool="regular", id=p, rating=1500 + 3 * i, status="established", games=50
        )
        for i, p in enumerate(players)
    ]
    history = _history(players, 400)
    whole = MemoryLedger(start)
    for arrival, raw in enumerate(history, 1):
        assert isinstance(applied(whole, decoded(raw), arrival), Applied)
    flipped = {**history[0], "schema": "event.corrected/v1"}
    flipped["games"] = [{**history[0]["games"][0], "score": 0}]
    message = decoded(flipped)
    assert isinstance(message, EventCorrected)
    store = Store(whole)
    partial = store.start(message, 401)
    result = applied(partial, message, 401, store)
    assert isinstance(result, Applied) and result.rerated >= 1
    # Read: the archive of each event a dirty player played in (the re-rated ones, and those
    # where the player turned out clean), never the 399 others.
    assert result.rerated <= store.archives_read < 50
    assert store.players_read < 100
    assert len(partial.timelines["cfc:regular"]) == 400  # the timeline is read whole
    later = {split_member(m)[1].decode() for m in partial.timelines["cfc:regular"]}
    assert len(later - set(partial.archives)) > 350
    # The same outputs as on the whole store.
    reference = copy.deepcopy(whole)
    theirs = applied(reference, message, 401)
    assert outcome(result) == outcome(theirs)


def test_one_search_gives_the_member_at_a_key_and_the_state_after_it():
    """MemoryLedger.member_and_after is member_at and packed_after (D138), at every key of a
    history, between them, before and after it, and for a player with no history."""
    players = [f"p{i}" for i in range(6)]
    start = [
        PlayerRecord(system="cfc", pool="regular", id=p, rating=1500 + i, status="established")
        for i, p in enumerate(players)
    ]
    whole = MemoryLedger(start)
    for arrival, raw in enumerate(_history(players, 30), 1):
        assert isinstance(applied(whole, decoded(raw), arrival), Applied)
    keys = sorted({split_member(m)[0] for h in whole.histories.values() for m in h})
    probes = [b"\x00" * 17, *keys, *(k[:-1] + b"\x00" for k in keys), b"\xff" * 17]
    for who in [*whole.histories, ("cfc", "regular", "nobody")]:
        for key in probes:
            expected = (whole.member_at(who, key), whole.packed_after(who, key))
            assert whole.member_and_after(who, key) == expected
