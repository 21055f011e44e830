"""bench --scale's bulk stages (service/bench/bulk.py) on a small list: the FIDE-like list
is the same on every run and imports as a federation's download; the import and export run
as processes, measured, and leave no key behind; their targets are judged as the bench's."""

from __future__ import annotations

import hashlib

import pytest
import redis

from service.bench.bulk import bench_bulk, render_bulk, write_fide_list
from service.bench.scale import check_scale_targets
from service.cli.data import list_rules
from service.formats.ratinglists import read_list_report

pytestmark = pytest.mark.integration


def test_the_list_is_deterministic_and_reads_as_fide_standard(tmp_path):
    one, two = tmp_path / "one.csv", tmp_path / "two.csv"
    assert write_fide_list(one, 2_000) == write_fide_list(two, 2_000) == one.stat().st_size
    assert hashlib.sha256(one.read_bytes()).digest() == hashlib.sha256(two.read_bytes()).digest()
    read = read_list_report(one, "fide", "standard", list_rules())
    records = list(read.records)
    assert [r.id for r in records] == [str(1_000_001 + n) for n in range(2_000)]
    rated = [r for r in records if r.rating is not None]
    assert 0.85 < len(rated) / len(records) < 0.97 and all(r.games >= 30 for r in rated)
    assert {"GM", "WIM"} <= {t for r in records for t in r.titles}
    assert all(r.name and ", " in r.name for r in records) and read.fide_without_games == 0


def test_the_stages_import_and_export_the_list_and_leave_nothing(redis_url, key_prefix):
    report = bench_bulk(redis_url, key_prefix, 500, lambda _: None, runs=3)
    assert report["players"] == 500 and len(report["import_runs"]) == 3
    for stage in ("import", "export"):
        runs = report[f"{stage}_runs"]
        assert all(
            r["seconds"] > 0 and r["user_seconds"] > 0 and r["peak_rss_mb"] > 20 for r in runs
        )
        assert report[stage]["seconds"] == sorted(r["seconds"] for r in runs)[1]  # the median
    assert all(r["bytes"] > 500 * 150 for r in report["export_runs"])  # every record out
    client = redis.Redis.from_url(redis_url)
    try:
        assert not list(client.scan_iter(match=f"*{key_prefix}*"))
    finally:
        client.close()
    targets = {t["name"]: t for t in check_scale_targets({"bulk": report, "close": _close()})}
    assert targets["an import of 1M players: peak RSS"]["met"]  # 500 players: far under
    assert targets["an import of 1M players: wall time"]["target"] == "< 20 s"
    text = "\n".join(render_bulk(report))
    assert "medians of 3 run(s)" in text and "import" in text and "export" in text


def _close() -> dict:
    return {"redis_longest_block_ms": None, "service_peak_rss_mb": 1.0}
