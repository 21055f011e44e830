"""`rating-service import` of lists people have, as a process against a real Redis: a bad
list writes nothing and lists every bad row; FIDE's own list columns import, and the
records are rated by the service's engine."""

from __future__ import annotations

import subprocess
import sys

import pytest
import redis

from service.runtime.keys import StreamKeys
from tests.integration.processes import ROOT

pytestmark = pytest.mark.integration


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "service", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def client(redis_url):
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


def test_a_bad_csv_writes_nothing_and_lists_every_bad_row(tmp_path, redis_url, key_prefix, client):
    stream = f"{key_prefix}.events"
    path = tmp_path / "club.csv"
    path.write_text(
        "CFC#;Name;Regular Rating;Games;Status\n"
        "100001;Ann Smith;1850;120;Established\n"
        "100002;Bob Jones;1402.5;7;provisional\n"
        "100003;Cy New;1500;0;\n"
        "100004;Di Old;1700;40;unrated\n"
    )
    done = run(
        "import",
        str(path),
        "--system",
        "cfc",
        "--pool",
        "regular",
        "--stream",
        stream,
        "--redis-url",
        redis_url,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [
        f"rating-service import: {path}: 3 bad rows, the whole list is refused (nothing read):",
        f"{path}:3: $.rating: '1402.5' is not a whole number",
        f"{path}:4: $.games: a provisional rating needs at least one game (no status given: 'provisional' derived"
        " from rating 1500 and 0 games)",
        f"{path}:5: $.status: status 'unrated' with rating 1700",
        f"{path}:5: $.games: status 'unrated' with 40 games",
    ]
    assert client.exists(StreamKeys(stream).players("cfc", "regular")) == 0  # not even the good row


def test_fides_list_columns_import_with_derived_statuses(tmp_path, redis_url, key_prefix, client):
    stream = f"{key_prefix}.events"
    path = tmp_path / "players_list.csv"
    path.write_text(
        "ID Number;Name;Fed;Sex;Tit;WTit;OTit;FOA;SRtng;SGm;SK;RRtng;RGm;Rk;BRtng;BGm;BK;B-day;Flag\n"
        "1503014;Carlsen, Magnus;NOR;M;GM;;;;2837;0;10;2802;0;10;2885;9;10;1990;\n"
        "25021044;Novice, Nora;CAN;F;;;;;;;;1650;5;40;;;;2011;w\n"
    )
    done = run(
        "import",
        str(path),
        "--system",
        "fide",
        "--pool",
        "standard",
        "--stream",
        stream,
        "--redis-url",
        redis_url,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"imported 2 records into stream {stream}'s store: 2 new, 0 replaced",
        "status derived for 2 record(s) without one, by their system's rules",
    ]
    assert "1 rated FIDE record(s) came without career games" in done.stderr
    stored = client.hgetall(StreamKeys(stream).players("fide", "standard"))
    assert (
        b'"rating":2837' in stored[b"1503014"] and b'"status":"established"' in stored[b"1503014"]
    )
    assert b'"k":10' in stored[b"1503014"] and b'"birth_year":1990' in stored[b"1503014"]
    assert (
        b"rating" not in stored[b"25021044"]
    )  # unrated in standard (its 1650 is the rapid rating)
