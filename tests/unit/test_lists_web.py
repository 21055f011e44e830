"""The lists (D46-D49) on the fake read model: the rules of service/lists.py with figures
worked by hand, the list's filters and paging in the API and on the page, the latest events,
the biggest changes, the home page; every page's figures checked against its API document
(tests/figures.py)."""

from __future__ import annotations

import datetime as dt
import json
import re

import httpx
import msgspec
import pytest

from schemas.ratings import PlayerResult, RatingsUpdated
from schemas.reads import EventList, EventSummary, PlayerList, PoolChanges, PoolList
from service.lists import (
    active_from_day,
    biggest,
    closed_list_days,
    pack_card,
    unpack_card,
    window_changes,
)
from service.web.app import create_app
from service.web.lists import Paging
from tests.fakereads import FakeReads
from tests.figures import check_page


@pytest.fixture(scope="module")
def app():
    return create_app(FakeReads(), None, None)


async def get(app, path: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://rating.test") as client:
        return await client.get(path)


async def checked(app, path: str) -> int:
    """The page's figures, each against its API document; how many there are."""
    page = await get(app, path)
    assert page.status_code == 200, page.text
    documents = {}
    for api in set(re.findall(r'data-api="([^"]+)"', page.text)):
        api = api.replace("&amp;", "&")
        answer = await get(app, api)
        assert answer.status_code == 200, (api, answer.text)
        documents[api] = answer.json()
    count, problems = check_page(page.text, lambda api: documents[api.replace("&amp;", "&")])
    assert problems == []
    assert len(page.content) < 100_000
    return count


# ---------------------------------------------------------------- the rules, by hand


def test_the_list_dates_and_the_first_active_days():
    # FIDE, closed 2025-11: the list's day is 30 November; active from the first day of the 12
    # periods 2024-12 .. 2025-11.
    assert closed_list_days("2025-11") == (
        dt.date(2025, 11, 30).toordinal(),
        dt.date(2024, 12, 1).toordinal(),
    )
    # A leap year's February: the 12 periods 2024-03 .. 2025-02, not 365 days.
    assert closed_list_days("2025-02")[1] == dt.date(2024, 3, 1).toordinal()
    # Otherwise the 365 days up to the latest event: 2026-01-20 back to 2025-01-21.
    assert active_from_day(dt.date(2026, 1, 20).toordinal()) == dt.date(2025, 1, 21).toordinal()
    assert active_from_day(0) == 0  # no event yet: nobody is active


def result(pid: str, old: int | None, change: int | None) -> PlayerResult:
    new = None if old is None or change is None else old + change
    return PlayerResult(
        id=pid,
        old_rating=old,
        new_rating=new,
        change=change,
        old_status="established",
        status="established",
        games=30,
        event_games=4,
        score=2.0,
    )


def message(event_id: str, *players: PlayerResult) -> RatingsUpdated:
    return RatingsUpdated(
        kind="event",
        system="cfc",
        pool="regular",
        ruleset="cfc-2009",
        source_id="1-0",
        players=list(players),
        event_id=event_id,
    )


def test_a_window_s_changes_add_up_per_player():
    # a: 1500 +12 then +7 -> 1519, +19 in 2 events; b: 1700 -20; c: a first rating (no
    # before): left out; d: 1600 +5 -5 = 0: neither a gain nor a loss.
    changes = window_changes(
        [
            message("e1", result("a", 1500, 12), result("b", 1700, -20), result("d", 1600, 5)),
            message("e2", result("a", 1512, 7), result("c", None, None), result("d", 1605, -5)),
        ]
    )
    by_id = {c.id: c for c in changes}
    assert (by_id["a"].old_rating, by_id["a"].new_rating, by_id["a"].change) == (1500, 1519, 19)
    assert by_id["a"].events == 2 and "c" not in by_id
    gains, losses = biggest(changes, 5)
    assert [c.id for c in gains] == ["a"] and [c.id for c in losses] == ["b"]
    assert losses[0].change == -20


def test_an_event_summary_goes_out_and_back_in():
    summary = EventSummary(
        event_id="e1",
        system="fide",
        pool="standard",
        name="Open",
        start_date=dt.date(2025, 11, 14),
        end_date=dt.date(2025, 11, 16),
        period="2025-11",
        players=8,
        revision=2,
    )
    packed = pack_card(summary)
    assert unpack_card(packed) == summary
    assert len(packed) < 60  # an array, not a map: bytes per event (issue 32)


def test_paging_says_where_the_page_lies():
    middle = Paging(100, 50, 420)
    assert (middle.first_row, middle.last_row, middle.page, middle.pages) == (101, 150, 3, 9)
    assert (middle.first, middle.previous, middle.next, middle.last) == (0, 50, 150, 400)
    last = Paging(400, 50, 420)
    assert (last.first_row, last.last_row, last.next, last.last) == (401, 420, None, None)
    first = Paging(0, 50, 3)
    assert (first.first, first.previous, first.next, first.last, first.pages) == (
        None,
        None,
        None,
        None,
        1,
    )
    assert Paging(0, 50, 0).first_row == 0 and Paging(0, 50, 0).pages == 1


# ---------------------------------------------------------------- the API


async def test_the_list_s_filters_in_the_api(app):
    fide = "/v1/pools/fide/standard/players"
    found = msgspec.json.decode((await get(app, fide)).content, type=PlayerList)
    assert found.list_date is not None and found.list_date.period == "2025-11"
    assert found.list_date.active_from == dt.date(2024, 12, 1)
    top = found.players[0]
    assert (top.id, top.titles, top.federation) == ("2010001", ["GM"], "NOR")
    assert {(c.kind, c.label) for c in found.labels} >= {("federation", "NOR"), ("title", "GM")}
    nor = msgspec.json.decode((await get(app, f"{fide}?federation=NOR")).content, type=PlayerList)
    assert {p.id for p in nor.players} == {"2010001", "2010004"} and nor.federation == "NOR"
    im = msgspec.json.decode((await get(app, f"{fide}?title=IM")).content, type=PlayerList)
    assert [p.id for p in im.players] == ["2010002"]
    active = msgspec.json.decode((await get(app, f"{fide}?active=true")).content, type=PlayerList)
    assert active.active and active.total == active.list_date.active  # type: ignore[union-attr]
    assert all(p.active for p in active.players)
    bad = await get(app, f"{fide}?federation=%2Fetc")
    assert bad.status_code == 400 and "federation" in bad.json()["message"]


async def test_the_latest_events_and_the_biggest_changes_in_the_api(app):
    everywhere = msgspec.json.decode((await get(app, "/v1/events")).content, type=EventList)
    ends = [e.end_date for e in everywhere.events]
    assert ends == sorted(ends, reverse=True) and everywhere.total == len(everywhere.events) > 1
    one = msgspec.json.decode(
        (await get(app, "/v1/events?system=cfc&pool=regular")).content, type=EventList
    )
    assert {e.system for e in one.events} == {"cfc"} and one.pool == "regular"
    cfc_only = msgspec.json.decode(
        (await get(app, "/v1/events?system=cfc")).content, type=EventList
    )
    assert {e.system for e in cfc_only.events} == {"cfc"} and cfc_only.pool is None
    assert cfc_only.total == sum(1 for e in everywhere.events if e.system == "cfc")
    regular = msgspec.json.decode(
        (await get(app, "/v1/events?pool=regular")).content, type=EventList
    )
    assert {(e.system, e.pool) for e in regular.events} == {("cfc", "regular")}
    blank = msgspec.json.decode(
        (await get(app, "/v1/events?system=&pool=")).content, type=EventList
    )
    assert blank.total == everywhere.total  # a form's empty choice: every pool
    assert (await get(app, "/v1/events?system=nope")).status_code == 404
    assert (await get(app, "/v1/events?system=cfc&pool=nope")).status_code == 404
    fide = msgspec.json.decode(
        (await get(app, "/v1/pools/fide/standard/changes")).content, type=PoolChanges
    )
    assert fide.basis == "list" and fide.period == "2025-11"
    cfc = msgspec.json.decode(
        (await get(app, "/v1/pools/cfc/regular/changes")).content, type=PoolChanges
    )
    assert cfc.basis == "days" and cfc.through is not None and cfc.events >= 1
    assert cfc.gains and cfc.losses
    etag = (await get(app, "/v1/events")).headers["etag"]
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://rating.test") as client:
        again = await client.get("/v1/events", headers={"If-None-Match": etag})
    assert again.status_code == 304


async def test_the_openapi_document_has_the_filters_and_the_lists(app):
    spec = (await get(app, "/openapi.json")).json()
    names = {
        p["name"] for p in spec["paths"]["/v1/pools/{system}/{pool}/players"]["get"]["parameters"]
    }
    assert {"active", "federation", "title"} <= names
    assert "/v1/events" in spec["paths"] and "/v1/pools/{system}/{pool}/changes" in spec["paths"]
    assert {"EventList", "PoolChanges", "ListDate", "LabelCount"} <= set(
        spec["components"]["schemas"]
    )


# ---------------------------------------------------------------- the pages


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/pools/fide/standard",
        "/pools/fide/standard?active=true",
        "/pools/fide/standard?federation=NOR&title=GM",
        "/pools/cfc/regular?unrated=true",
        "/pools/naspa/nwl",
        "/events",
        "/events?system=fide&pool=standard",
        "/pools/fide/standard/changes",
        "/pools/cfc/regular/changes",
        "/pools/naspa/nwl/changes",
    ],
)
async def test_every_figure_of_the_lists_pages_is_the_api_s(app, path):
    assert await checked(app, path) > 0


async def test_the_list_page_shows_titles_federations_the_date_and_where_you_are(app):
    html = (await get(app, "/pools/fide/standard")).text
    assert 'data-api="/v1/pools/fide/standard/players?limit=50"' in html
    assert '<abbr class="title" data-text>GM</abbr>' in html and ">NOR</td>" in html
    assert "rating period <span data-text>2025-11</span>" in html
    assert '<option data-text value="NOR">NOR</option>' in html
    assert re.search(r"Rows 1–\d+</span> of <data", html)
    filtered = (await get(app, "/pools/fide/standard?federation=NOR")).text
    assert '<option data-text value="NOR" selected>' in filtered
    assert "federation=NOR" in re.search(r'data-api="([^"]+)"', filtered).group(1)  # type: ignore[union-attr]


async def test_paging_links_keep_the_filters(app):
    reads = FakeReads()
    from tests.fakereads import LABELS  # noqa: F401  # the labels the fake gives

    page = await reads.players("cfc", "regular", unrated=True)
    assert page is not None
    small = create_app(reads, None, None)
    from service.web import pages

    size, pages.PAGE_SIZE = pages.PAGE_SIZE, 2
    try:
        html = (await get(small, "/pools/cfc/regular?unrated=true&offset=2")).text
    finally:
        pages.PAGE_SIZE = size
    assert "page 2 of" in html
    assert 'href="/pools/cfc/regular?unrated=true">« First</a>' in html
    assert "offset=4&amp;unrated=true" in html and "Last »" in html


async def test_the_home_page_links_the_lists_events_and_changes(app):
    html = (await get(app, "/")).text
    assert 'href="/pools/fide/standard/changes"' in html
    assert 'href="/events?system=fide&amp;pool=standard"' in html
    assert "Latest events" in html and 'data-api="/v1/events?limit=10"' in html
    pools = msgspec.json.decode((await get(app, "/v1/pools")).content, type=PoolList)
    assert all(p.list_date is not None for p in pools.pools)
    assert json.loads((await get(app, "/v1/pools")).content)["pools"][0]["list_date"]
