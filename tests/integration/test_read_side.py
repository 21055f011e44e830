"""The read side as a website uses it (README "For websites"): the real service (`python -m
service serve`) against a real Redis, a season with a late event, a correction and a FIDE
list; every endpoint's JSON against an offline `rate` of the same entries; the 404 / 400
answers; caching; the OpenAPI document; and the pages in headless Chromium."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path

import httpx
import msgspec
import pytest
import redis.asyncio as aioredis

from schemas import PlayerRecord, RatingsUpdated
from service.runtime.embedded import free_port
from service.runtime.keys import StreamKeys
from service.runtime.records_io import import_records
from tests.browser import browse
from tests.integration.helpers import publish, rejections, settings_for
from tests.integration.processes import ROOT, Services, wait_until_applied

pytestmark = pytest.mark.integration
NAMES = {
    "c1": "Ólafsson, Anna",
    "c2": "Baker, Bob",
    "c3": "Carter, Chloé",
    "c4": "Dubois, Dan",
    "c5": "Eriksen, Eva",
    "c6": "Fischer, Finn",
}


def club() -> list[PlayerRecord]:
    """Six established CFC players (names for c1-c3 from the list; c4-c6 get theirs from the
    events) and four FIDE players."""
    cfc = [
        PlayerRecord(
            system="cfc",
            pool="regular",
            id=f"c{i}",
            rating=1500 + 60 * i,
            status="established",
            games=40,
            highest=1500 + 60 * i,
            name=NAMES[f"c{i}"] if i <= 3 else None,
        )
        for i in range(1, 7)
    ]
    fide = [
        PlayerRecord(
            system="fide",
            pool="standard",
            id=f"f{i}",
            rating=1900 + 100 * i,
            status="established",
            games=50,
            birth_year=1990,
        )
        for i in range(1, 5)
    ]
    return cfc + fide


def cfc_event(
    event_id: str, day: int, pairs: list[tuple[str, str, float]], schema: str = "event.finished/v1"
) -> dict:
    ids = sorted({p for a, b, _ in pairs for p in (a, b)})
    return {
        "schema": schema,
        "event_id": event_id,
        "system": "cfc",
        "name": f"Club night {day}",
        "start_date": f"2025-10-{day:02d}",
        "end_date": f"2025-10-{day:02d}",
        "rounds": len(pairs),
        "players": [
            {"id": p, "name": NAMES[p]} if p in ("c4", "c5", "c6") else {"id": p} for p in ids
        ],
        "games": [{"round": n, "a": a, "b": b, "score": s} for n, (a, b, s) in enumerate(pairs, 1)],
    }


def fide_event(event_id: str, day: str, period: str) -> dict:
    return {
        "schema": "event.finished/v1",
        "event_id": event_id,
        "system": "fide",
        "name": f"Open {period}",
        "start_date": day,
        "end_date": day,
        "rounds": 3,
        "period": period,
        "players": [{"id": f"f{i}", "name": f"Player F{i}"} for i in range(1, 5)],
        "games": [
            {"round": 1, "a": "f1", "b": "f2", "score": 1},
            {"round": 1, "a": "f3", "b": "f4", "score": 0.5},
            {"round": 2, "a": "f1", "b": "f3", "score": 0},
            {"round": 2, "a": "f2", "b": "f4", "score": 1},
            {"round": 3, "a": "f1", "b": "f4", "score": 0.5},
            {"round": 3, "a": "f2", "b": "f3", "score": 0},
        ],
    }


def season() -> list[dict]:
    return [
        cfc_event("club-05", 5, [("c1", "c2", 1), ("c3", "c4", 0.5), ("c1", "c3", 0)]),
        cfc_event("club-12", 12, [("c2", "c5", 1), ("c4", "c6", 0), ("c2", "c4", 0.5)]),
        cfc_event("club-19", 19, [("c1", "c6", 1), ("c5", "c3", 0), ("c1", "c5", 1)]),
        # Late: it ends before club-12 and club-19, which are re-rated after it.
        cfc_event("club-08", 8, [("c1", "c4", 0), ("c2", "c6", 1)]),
        # Correction: club-05's first game went the other way, and c3-c4 is now c3-c5.
        cfc_event(
            "club-05",
            5,
            [("c1", "c2", 0), ("c3", "c5", 0.5), ("c1", "c3", 0)],
            schema="event.corrected/v1",
        ),
        fide_event("open-nov", "2025-11-15", "2025-11"),
        {"schema": "period.closed/v1", "system": "fide", "period": "2025-11"},
        fide_event("open-dec", "2025-12-13", "2025-12"),
    ]


class Site:
    def __init__(
        self,
        port: int,
        stream: str,
        offline: list[RatingsUpdated],
        records: dict[tuple, PlayerRecord],
    ):
        self.base = f"http://127.0.0.1:{port}"
        self.stream = stream
        self.offline = offline
        self.records = records

    def get(self, path: str, **headers: str) -> httpx.Response:
        return httpx.get(self.base + path, headers=headers, timeout=10)


def offline_rate(
    entries: list, start: list[PlayerRecord], tmp_path: Path
) -> tuple[list[RatingsUpdated], dict]:
    """`rating-service rate` over the stream's own entries: its messages and final records."""
    events = tmp_path / "stream.jsonl"
    events.write_bytes(b"".join(fields[b"__data__"] + b"\n" for _, fields in entries))
    ratings = tmp_path / "list.jsonl"
    ratings.write_bytes(b"".join(msgspec.json.encode(r) + b"\n" for r in start))
    final = tmp_path / "final.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "service",
            "rate",
            str(events),
            "--ratings",
            str(ratings),
            "--out-ratings",
            str(final),
        ],
        cwd=ROOT,
        capture_output=True,
    )
    assert done.returncode == 0, done.stderr
    messages = [
        msgspec.json.decode(line, type=RatingsUpdated)
        for line in done.stdout.splitlines()
        if line.strip()
    ]
    records = [
        msgspec.json.decode(line, type=PlayerRecord) for line in final.read_bytes().splitlines()
    ]
    return messages, {(r.system, r.pool, r.id): r for r in records}


@pytest.fixture(scope="module")
def site(redis_url, tmp_path_factory):
    """The service with its HTTP side, after the season; the offline `rate` of the same entries."""
    import uuid

    import redis as sync_redis

    prefix = f"t{uuid.uuid4().hex[:12]}"
    port = free_port()
    settings = settings_for(redis_url, prefix, http_port=port)
    services = Services(settings, command=("-m", "service", "serve"))
    services.env.update({"RATING_HTTP_PORT": str(port), "RATING_HTTP_HOST": "127.0.0.1"})

    async def prepare() -> list:
        client = aioredis.Redis.from_url(redis_url)
        try:
            await import_records(client, StreamKeys(settings.input_streams[0]), club())
            await publish(client, settings, *season())
            services.start()
            await wait_until_applied(client, settings)
            assert await rejections(client, settings) == []
            return await client.xrange(settings.input_streams[0])
        finally:
            await client.aclose()

    try:
        entries = asyncio.run(prepare())
        offline, records = offline_rate(entries, club(), tmp_path_factory.mktemp("offline"))
        yield Site(port, settings.input_streams[0], offline, records)
    finally:
        services.stop_all()
        client = sync_redis.Redis.from_url(redis_url)
        keys = list(client.scan_iter(match=f"*{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
        client.close()


def last_per_event(messages: list[RatingsUpdated]) -> dict[str, RatingsUpdated]:
    return {m.event_id: m for m in messages if m.event_id is not None}


def without_source(message: dict) -> dict:
    return {k: v for k, v in message.items() if k != "source_id"}


def test_every_event_answers_its_last_message_as_offline(site):
    last = last_per_event(site.offline)
    assert set(last) == {"club-05", "club-08", "club-12", "club-19", "open-nov", "open-dec"}
    for event_id, message in last.items():
        reply = site.get(f"/v1/events/{event_id}")
        assert reply.status_code == 200, reply.text
        assert without_source(reply.json()) == without_source(
            json.loads(msgspec.json.encode(message))
        ), event_id
    # The late event and the correction revised later events: the API holds the revisions.
    assert site.get("/v1/events/club-19").json()["kind"] == "revision"
    assert site.get("/v1/events/club-05").json()["cause"] == {
        "type": "corrected",
        "event_id": "club-05",
    }


def expected_history(
    messages: list[RatingsUpdated], system: str, pool: str, pid: str
) -> list[dict]:
    """From the offline messages alone: per event, the player's line in the event's last
    message (none if that message does not have them); per FIDE list, their line; in date
    order (a list after its period's events)."""
    lines = []
    for m in last_per_event(messages).values():
        for p in m.players:
            if (m.system, m.pool, p.id) == (system, pool, pid):
                lines.append(
                    (
                        (
                            m.period or "" if m.system == "fide" else "",
                            str(m.end_date),
                            str(m.start_date),
                        ),
                        m.event_id,
                        m,
                        p,
                    )
                )
    for m in messages:
        if m.kind == "list":
            for p in m.players:
                if (m.system, m.pool, p.id) == (system, pool, pid):
                    lines.append(((m.period, "9999", "9999"), None, m, p))
    lines.sort(key=lambda line: line[0])

    def after(m: RatingsUpdated, p) -> tuple:
        """FIDE: an event's line shows the projection (the rating itself stays until the list)."""
        projected = (
            getattr(p.details, "projected_rating", None)
            if m.kind != "list" and m.system == "fide"
            else None
        )
        if projected is None:
            return p.new_rating, p.change
        return projected, projected - p.old_rating

    return [
        {
            "event_id": eid,
            "kind": "list" if eid is None else "event",
            "name": m.name if eid else None,
            "old_rating": p.old_rating,
            "new_rating": after(m, p)[0],
            "change": after(m, p)[1],
            "games": p.games,
            "event_games": p.event_games,
            "score": p.score,
            "revision": (m.revision or 0) if eid else 0,
            "list_period": m.list_period,
        }
        for _, eid, m, p in lines
    ]


@pytest.mark.parametrize(
    "who",
    [("cfc", "regular", f"c{i}") for i in range(1, 7)]
    + [("fide", "standard", f"f{i}") for i in range(1, 5)],
)
def test_every_history_is_the_offline_messages_fold(site, who):
    system, pool, pid = who
    reply = site.get(f"/v1/pools/{system}/{pool}/players/{pid}/history")
    assert reply.status_code == 200, reply.text
    got = [
        {
            k: line[k]
            for k in (
                "event_id",
                "kind",
                "name",
                "old_rating",
                "new_rating",
                "change",
                "games",
                "event_games",
                "score",
                "revision",
                "list_period",
            )
        }
        for line in reply.json()["entries"]
    ]
    assert got == expected_history(site.offline, system, pool, pid)
    assert got, "every player played"
    if pid == "c4":  # dropped from club-05 by the correction: the line is gone
        assert "club-05" not in [line["event_id"] for line in got]
    if system == "fide":
        assert [line["kind"] for line in got] == ["event", "list", "event"]
        assert got[1]["list_period"] == "2025-12"


def test_players_and_the_ranked_list_are_the_offline_records(site):
    for system, pool in (("cfc", "regular"), ("fide", "standard")):
        records = sorted(
            (r for (s, p, _), r in site.records.items() if (s, p) == (system, pool)),
            key=lambda r: (r.rating is None, -(r.rating or 0), r.id),
        )
        page = site.get(f"/v1/pools/{system}/{pool}/players?limit=500&unrated=true").json()
        assert [(p["id"], p["rating"], p["status"], p["games"]) for p in page["players"]] == [
            (r.id, r.rating, r.status, r.games) for r in records
        ]
        assert page["total"] == len(records)
        for record in records:
            view = site.get(f"/v1/pools/{system}/{pool}/players/{record.id}").json()
            assert msgspec.convert(view["record"], PlayerRecord) == record
            assert view["name"] == record.name
            lines = site.get(f"/v1/pools/{system}/{pool}/players/{record.id}/history").json()[
                "entries"
            ]
            assert view["last_event_date"] == max(
                line["end_date"] for line in lines if line["end_date"]
            )
            page_row = next(p for p in page["players"] if p["id"] == record.id)
            assert (
                view["rank"]
                == page_row["rank"]
                == 1 + sum((r.rating or 0) > (record.rating or 0) for r in records)
            )
    # Names: from the list (c1-c3), else from the events (c4-c6); search by a word's beginning.
    names = {
        p["id"]: p["name"] for p in site.get("/v1/pools/cfc/regular/players").json()["players"]
    }
    assert names == NAMES
    found = site.get("/v1/pools/cfc/regular/players?q=olaf").json()
    assert [p["id"] for p in found["players"]] == ["c1"] and found["total"] == 1
    pools = {(p["system"], p["pool"]): p for p in site.get("/v1/pools").json()["pools"]}
    assert (
        pools[("cfc", "regular")]["players"] == 6
        and pools[("fide", "standard")]["closed_through"] == "2025-11"
    )


@pytest.mark.parametrize(
    "path, status, words",
    [
        ("/v1/pools/cfc/nope/players", 404, "nope"),
        ("/v1/pools/xyz/regular/players", 404, "xyz"),
        ("/v1/pools/cfc/active/players", 404, "cfc/active"),
        ("/v1/pools/cfc/regular/players/c99", 404, "c99"),
        ("/v1/pools/cfc/regular/players/c99/history", 404, "c99"),
        ("/v1/events/no-such-event", 404, "no-such-event"),
        ("/v1/pools/cfc/regular/players?limit=0", 400, "limit"),
        ("/v1/pools/cfc/regular/players?limit=ten", 400, "limit"),
        ("/v1/pools/cfc/regular/players?offset=-1", 400, "offset"),
        ("/v1/nothing-here", 404, ""),
    ],
)
def test_what_is_not_there_is_404_and_a_bad_parameter_is_400_with_a_json_reason(
    site, path, status, words
):
    reply = site.get(path)
    assert reply.status_code == status
    body = reply.json()
    assert (
        body["error"] == ("not_found" if status == 404 else "bad_request")
        and words in body["message"]
    )
    assert "Traceback" not in reply.text


def test_answers_carry_an_etag_and_last_modified_and_a_matching_etag_is_304(site):
    first = site.get("/v1/pools/cfc/regular/players/c1/history")
    assert first.headers["etag"] and first.headers["last-modified"]
    again = site.get(
        "/v1/pools/cfc/regular/players/c1/history", **{"If-None-Match": first.headers["etag"]}
    )
    assert again.status_code == 304 and again.content == b""


def test_the_openapi_document_validates_and_documents_every_route(site):
    from openapi_spec_validator import validate

    document = site.get("/openapi.json").json()
    validate(document)
    assert {
        "/v1/pools",
        "/v1/pools/{system}/{pool}/players",
        "/v1/pools/{system}/{pool}/players/{player_id}",
        "/v1/pools/{system}/{pool}/players/{player_id}/history",
        "/v1/events/{event_id}",
    } <= set(document["paths"])
    assert site.get("/docs").status_code == 200


# ------------------------------------------------------------------ the pages, in a browser


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


@pytest.mark.browser
def test_the_pages_in_a_browser_show_the_same_figures(site, tmp_path):
    shots = tmp_path  # the docs' screenshots: make screenshots (D55)
    records = {pid: r for (s, _, pid), r in site.records.items() if s == "cfc"}

    page = browse(f"{site.base}/pools/cfc/regular", tmp_path / "profile", shots / "rating-list.png")
    words = text_of(page)
    for pid, record in records.items():
        assert NAMES[pid] in page.replace("&amp;", "&") or NAMES[pid] in words
        assert str(record.rating) in words

    history = site.get("/v1/pools/cfc/regular/players/c1/history").json()["entries"]
    page = browse(
        f"{site.base}/pools/cfc/regular/players/c1", tmp_path / "profile", shots / "player.png"
    )
    words = text_of(page)
    assert "Ólafsson, Anna" in words and str(records["c1"].rating) in words
    svg = re.search(r"<svg.*?</svg>", page, re.S)
    assert svg is not None, "no chart"
    points = re.findall(r"<circle\b", svg.group(0))
    assert len(points) == sum(
        1 for line in history if line["kind"] == "event" and line["new_rating"] is not None
    )
    for line in history:
        assert line["name"] in words

    page = browse(f"{site.base}/events/club-19?games=1", tmp_path / "profile", shots / "event.png")
    words = text_of(page)
    message = site.get("/v1/events/club-19").json()
    assert message["name"] in words
    for player in message["players"]:
        assert str(player["new_rating"]) in words and NAMES[player["id"]] in words


async def test_pools_stored_before_the_read_model_are_ranked_and_searchable_at_start_up(
    client, key_prefix
):
    """A players hash written without the indexes (as before the read model): indexing at
    start-up ranks it, makes its names searchable and lists the pool; an indexed pool is
    left alone."""
    from service.runtime.backfill import index_existing
    from service.runtime.queries import ReadModel
    from service.runtime.store import encode, live_pools

    keys = StreamKeys(f"{key_prefix}.events")
    await client.hset(
        keys.players("cfc", "regular"),
        mapping={r.id: encode(r) for r in club() if r.system == "cfc"},
    )
    reads = ReadModel(client, [keys.stream])
    assert (await reads.pools()).pools == []
    assert await index_existing(client, keys, await live_pools(client, keys)) == [
        ("cfc", "regular")
    ]
    page = await reads.players("cfc", "regular", limit=3)
    assert [p.id for p in page.players] == ["c6", "c5", "c4"] and page.total == 6
    assert [p.id for p in (await reads.players("cfc", "regular", q="baker")).players] == ["c2"]
    assert [(p.system, p.pool, p.players) for p in (await reads.pools()).pools] == [
        ("cfc", "regular", 6)
    ]
    assert await index_existing(client, keys, await live_pools(client, keys)) == []


def test_the_player_and_history_commands_print_the_same_figures(site, redis_url):
    """`rating-service player` and `history` at a terminal, against the same store."""
    stream = site.stream
    run = lambda *args: subprocess.run(
        [sys.executable, "-m", "service", *args, "--redis-url", redis_url, "--stream", stream],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    shown = run("player", "cfc", "regular", "c1")
    assert shown.returncode == 0, shown.stderr
    record = site.records[("cfc", "regular", "c1")]
    assert (
        "Ólafsson, Anna" in shown.stdout
        and f"rating {record.rating}  established  games {record.games}" in shown.stdout
    )
    lines = site.get("/v1/pools/cfc/regular/players/c1/history").json()
    table = run("history", "cfc", "regular", "c1")
    assert table.returncode == 0, table.stderr
    for line in lines["entries"]:
        assert (
            f"{line['name']} ({line['event_id']})" in table.stdout
            and f"{line['change']:+d}" in table.stdout
        )
    as_json = run("history", "cfc", "regular", "c1", "--json")
    assert json.loads(as_json.stdout) == lines
    missing = run("player", "cfc", "regular", "nobody")
    assert (
        missing.returncode == 2
        and missing.stderr.strip() == "rating-service player: no player 'nobody' in cfc/regular"
    )
