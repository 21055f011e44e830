"""`rating-service bench --sizing` against a real Redis, at a tiny size: the report has its
parts, every stored item is counted, and the bench removes its keys. No figure is checked
against a bound: measuring belongs to the bench, never to a test."""

from __future__ import annotations

import msgspec
import pytest
import redis

from service.bench.sizing import (
    PER_EVENT,
    PER_PLAYER,
    PER_PLAYER_EVENT,
    SHAPES,
    SYSTEMS,
    SizingSizes,
    render_sizing,
    run_sizing,
)

pytestmark = pytest.mark.integration

TINY = SizingSizes(
    player_events=64,
    pool_players=64,
    long_players=8,
    long_events=20,
    cascades=((60, (10, 20)), (200, (20,))),
    refused_limit=5,
    largest_players=100,
    close_pools=(100,),
    budget_events=(6, 20),
)


def test_the_sizing_bench_measures_every_item_and_cleans_up(redis_url):
    report = msgspec.json.decode(msgspec.json.encode(run_sizing(redis_url, True, sizes=TINY)))
    assert set(report) == {"store", "process", "summary", "recorded", "machine", "settings"}
    [store] = report["store"]  # the given URL only
    assert store["redis"] == "given URL"
    assert [(r["system"], r["shape"]) for r in store["runs"]] == [
        (system, shape.label) for system in SYSTEMS for shape in SHAPES
    ]
    for run in store["runs"] + store["long"]:
        per = run["bytes_per_item"]
        assert all(per[kind] > 0 for kind in (*PER_PLAYER, *PER_EVENT, *PER_PLAYER_EVENT))
        assert per["input"] > 0 and per["output"] > 0
        assert run["bytes_per_player_event"] > run["bytes_per_player_event_of_history"]
    budget = store["budget"]
    assert [(b["system"], b["players"], b["target"]) for b in budget] == [
        ("fide", 40, 1_000),
        ("fide", 2, 1_500),
    ]
    for b in budget:
        assert b["met"] == (b["bytes_per_player_event"] <= b["target"])
        assert b["used_memory"]["second"] > b["used_memory"]["first"] > b["used_memory"]["imported"]
        kinds = b["kinds"]  # the breakdown by kind of key (D120), biggest first
        assert {"history", "entries", "results", "events", "input"} <= set(kinds)
        assert all(kinds[kind]["bytes_per_player_event"] > 0 for kind in ("history", "input"))
        figures = [v["bytes_per_player_event"] for v in kinds.values()]
        assert figures == sorted(figures, reverse=True)
    [long_fide] = [r for r in store["long"] if r["system"] == "fide"]
    assert long_fide["periods"] == TINY.long_events  # a player's event a period, each closed
    first, second = report["process"]["cascades"]
    assert [f["later_events"] for f in first["fresh"]] == [10, 20]
    assert first["refused"]["limit"] == 5 and first["refused"]["revisions"] == 0
    assert second["refused"] is None and second["pool"] == 200
    assert first["same_process"]["later_events"] == 20
    summary = report["summary"]
    assert summary["cascade_events"] == report["recorded"]["cascade_events"]
    assert summary["steady_peak_rss_mib"] > 0
    rendered = render_sizing(report)
    assert "Redis bytes per stored item on given URL" in rendered and "fit: peak" in rendered
    assert "FIDE 40-player Swiss, 7 rounds:" in rendered and "(target <= 1,000)" in rendered
    assert "MEMORY USAGE per player-event of the whole history, the biggest kinds:" in rendered
    client = redis.Redis.from_url(redis_url)
    try:
        prefix = report["settings"]["prefix"]
        assert list(client.scan_iter(match=f"*{prefix}*", count=1000)) == []
    finally:
        client.close()
