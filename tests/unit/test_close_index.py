"""The close index (D60, service/closeindex.py) and the engine's close in pages: a record's
members, and `list_players` page by page then `clear_k` equal to `close_period` on the whole
pool, whatever the page size."""

from __future__ import annotations

import datetime as dt

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.events import PeriodClosed
from schemas.fide import FideState, InitialGame, PeriodSums
from schemas.records import PlayerRecord, PoolState
from service.bench.workloads import fide_pool_before_close
from service.closeindex import due_members, open_first, period_end, period_first, split
from service.engine.fide.lists import clear_k, close_period, list_players

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
