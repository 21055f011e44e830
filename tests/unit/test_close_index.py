"""The close index (D60, service/closeindex.py) and the engine's close in pages: a record's
members, and `list_players` page by page then `clear_k` equal to `close_period` on the whole
pool, whatever the page size; a ledger keeping the close index in memory (D142, a streamed
load's) closes as one that reads the whole pool."""

from __future__ import annotations

import datetime as dt
import random

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.events import PeriodClosed
from schemas.fide import FideState, InitialGame, PeriodSums
from schemas.records import PlayerRecord, PoolState
from service.bench.workloads import fide_pool_before_close
from service.closeindex import due_members, open_first, period_end, period_first, split
from service.engine.fide.lists import clear_k, close_period, list_players
from service.engine.registry import default_registry
from service.rating import Applied, MemoryLedger, Rejected, apply_message
from tests.cascade_workload import EARLY, Chooser, decoded, workload

CLOSE = PeriodClosed(system="fide", pool="standard", period="2025-11", ruleset="fide-2024")
POOL = PoolState(system="fide", pool="standard")


def test_members_are_the_periods_with_games_and_an_imported_k():
    game = InitialGame(
        period="2025-10",
        event_id="e",
        start_date=dt.date(2025, 10, 4),
        opponent_rating=1900,
        score_halves=1,
    )
    sums = PeriodSums(period="2025-11", sum_hundredths=-35, games=2, points_halves=2)
    record = PlayerRecord(
        system="fide",
        pool="standard",
        id="A1",
        k=40,
        fide=FideState(periods=[sums], initial_games=[game]),
    )
    assert due_members(record) == {b"2025-11:A1", b"2025-10:A1", b"k:A1"}
    assert due_members(msgspec.structs.replace(record, k=None, fide=None)) == set()
    assert due_members(None) == set()
    cfc = PlayerRecord(system="cfc", pool="regular", id="A1", rating=1500, games=30)
    assert due_members(cfc) == set()  # no periods


def test_the_lexicographic_bounds_keep_periods_apart():
    members = sorted([b".", b"2025-10:Z", b"2025-11:A", b"2025-11:B", b"2025-12:A", b"k:A"])
    # ZRANGE BYLEX [2025-11: (2025-11; : the period's members only ('(' excludes, '[' includes)
    first, end = period_first("2025-11")[1:], period_end("2025-11")[1:]
    assert [m for m in members if first <= m < end] == [b"2025-11:A", b"2025-11:B"]
    # After a close of 2025-10, the open periods start past its members (and `.`).
    assert [m for m in members if m > open_first("2025-10")[1:] and m < b":"] == [
        b"2025-11:A",
        b"2025-11:B",
        b"2025-12:A",
    ]
    assert open_first(None) == b"[0"
    assert split(b"2025-11:A:b") == ("2025-11", "A:b")


def _pool() -> dict[str, PlayerRecord]:
    records = fide_pool_before_close(300)
    with_k = [msgspec.structs.replace(r, k=20) if n % 5 == 0 else r for n, r in enumerate(records)]
    idle = [
        PlayerRecord(system="fide", pool="standard", id=f"i{n}", rating=2000, games=40, k=10)
        for n in range(7)
    ]
    return {r.id: r for r in [*with_k, *idle]}


RECORDS = _pool()


@settings(max_examples=20)
@given(st.integers(min_value=1, max_value=400))
def test_a_close_in_pages_equals_the_whole_close(size):
    whole = close_period(CLOSE, RECORDS, POOL)
    ids = sorted(RECORDS)
    results, changed = [], {}
    for first in range(0, len(ids), size):  # the list phase, a page of ids at a time
        page = {pid: RECORDS[pid] for pid in ids[first : first + size]}
        outcome = list_players(CLOSE, page, POOL)
        assert outcome.pool == POOL
        results += outcome.results
        changed.update((r.id, r) for r in outcome.records)
    current = {**RECORDS, **changed}
    for first in range(0, len(ids), size):  # then the K phase, over the records as they are
        page = {pid: current[pid] for pid in ids[first : first + size]}
        changed.update((r.id, r) for r in clear_k(CLOSE, page))
    assert results == whole.results
    assert sorted(changed.values(), key=lambda r: r.id) == whole.records
    assert whole.pool.closed_through == "2025-11"


def _state(ledger: MemoryLedger) -> tuple:
    """What a ledger holds and changed, all of it (nothing was written)."""
    c = ledger.changes
    return (
        ledger.records,
        ledger.pools,
        ledger.markers,
        ledger.timelines,
        ledger.histories,
        ledger.projection.entries,
        ledger.projection.results,
        c.records,
        c.previous_records,
        {who: (m.added, m.removed) for who, m in c.histories.items()},
        c.entries,
        c.published,
    )


def _in_the_index(ledger: MemoryLedger) -> set[str]:
    return {pid for pid, r in ledger.records[("fide", "standard")].items() if due_members(r)}


def test_a_ledger_keeping_the_close_index_closes_as_one_reading_the_whole_pool():
    idle = [  # no games, no K: not in the close index, never read by a close that keeps it
        PlayerRecord(system="fide", pool="standard", id=f"z{n}", rating=1900, games=50)
        for n in range(5)
    ]
    cfc = PlayerRecord(system="cfc", pool="regular", id="c1", rating=1500, games=30)
    start = [*RECORDS.values(), *idle, cfc]
    whole, kept = MemoryLedger(start), MemoryLedger(start)
    kept.track_closing()
    assert set(kept.closing_records("fide", "standard")) == _in_the_index(kept)
    assert not {r.id for r in idle} & set(kept.closing_records("fide", "standard"))
    assert set(kept.closing_records("cfc", "regular")) == {"c1"}  # no paged close: every record
    registry = default_registry()
    outcomes = [apply_message(ledger, CLOSE, registry, "1-1") for ledger in (whole, kept)]
    assert isinstance(outcomes[0], Applied) and outcomes[0] == outcomes[1]
    assert _state(whole) == _state(kept)
    # After the close: only the players still in the index (pooled games too few to publish).
    assert kept.closing is not None
    assert kept.closing[("fide", "standard")] == _in_the_index(kept)
    assert len(_in_the_index(kept)) < len(RECORDS)


@pytest.mark.parametrize("name", ["fide-close", "fide-reopen", EARLY])
@pytest.mark.parametrize("seed", range(4))
def test_a_history_applied_to_a_ledger_keeping_the_close_index_equals_the_whole_pools(name, seed):
    """Events, late events, corrections, withdrawals, closes and reopens (tests/cascade_workload)
    among players some of whom carry an imported K: the same outcomes and the same ledger."""
    w = workload(Chooser(random.Random(seed)), name, events=10, extra=12)
    start = [
        msgspec.structs.replace(r, k=20) if n % 3 == 0 else r for n, r in enumerate(w.case.start)
    ]
    whole, kept = MemoryLedger(start), MemoryLedger(start)
    kept.track_closing()
    registry = default_registry()
    for arrival, message in enumerate(w.messages, 1):
        outcomes = []
        for ledger in (whole, kept):
            try:
                outcomes.append(
                    apply_message(ledger, decoded(message), registry, f"1-{arrival}", arrival)
                )
            except Rejected as exc:
                outcomes.append((exc.reason, exc.path, exc.message))
        assert outcomes[0] == outcomes[1], message
    assert _state(whole) == _state(kept)
    assert kept.closing is not None
    assert kept.closing[("fide", "standard")] >= _in_the_index(kept)
