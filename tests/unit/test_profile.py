"""The player profile (D38): its assembly from the pools' records and histories (hand-made
lines, hand-worked figures), the read API `GET /v1/players/{system}/{id}` and the page
`/players/{system}/{id}` on a fake read model (tests/fakereads.py) with a second FIDE pool,
an open period and a record's labels, every figure of the page checked against the API
(tests/figures.py)."""

from __future__ import annotations

import datetime as dt
import json
import re

import msgspec
import pytest
from openapi_schema_validator import OAS31Validator

from schemas.fide import FideState, PublishedRating
from schemas.reads import ApiError, HistoryEntry, LiveRating, PlayerProfile
from schemas.records import PlayerRecord
from schemas.validation import decode_input
from service.engine.registry import default_registry
from service.profiles import PoolRead, live_rating, profile_of
from service.rating import apply_message
from tests.fakereads import FakeReads
from tests.figures import check_page
from tests.unit.test_web import accessible, app_of, decoded, get

D = dt.date


def line(kind: str = "event", **fields) -> HistoryEntry:
    base = dict(
        kind=kind,
        event_id=None if kind == "list" else "e",
        name=None,
        start_date=None,
        end_date=None,
        period=None,
        list_period=None,
        old_rating=2400,
        new_rating=2400,
        change=0,
        old_status="established",
        status="established",
        games=100,
        event_games=0 if kind == "list" else 5,
        score=0.0,
        expected=None,
        performance=None,
    )
    base.update(fields)
    return HistoryEntry(**base)  # type: ignore[arg-type]


# ---------------------------------------------------------------- the assembly, by hand

FIDE_LINES = [
    line(end_date=D(2025, 10, 5), period="2025-10", new_rating=2410, projection=True),
    line("list", period="2025-10", list_period="2025-11", new_rating=2408),
    line(end_date=D(2025, 11, 9), period="2025-11", new_rating=2411, projection=True),
    line(end_date=D(2025, 11, 23), period="2025-11", new_rating=2415, projection=True),
]


def test_the_live_rating_is_the_last_projection_after_the_last_list():
    # 2415 (the period's change so far: its last line) - 2408 (the list) = +7, two events.
    assert live_rating(FIDE_LINES, 2408) == LiveRating(
        rating=2415, change=7, period="2025-11", events=2
    )
    assert live_rating(FIDE_LINES[:2], 2408) is None  # the period closed: no live rating
    assert live_rating(FIDE_LINES[:1], None) == LiveRating(
        rating=2410, change=None, period="2025-10", events=1
    )
    not_projected = [line(end_date=D(2025, 12, 1), period="2025-12", new_rating=None)]
    assert live_rating(not_projected, 2408) is None  # an unrated player's line


def test_a_profile_takes_each_label_from_the_first_pool_that_has_it_in_the_systems_order():
    standard = PlayerRecord(
        system="fide",
        pool="standard",
        id="7",
        name="Ana",
        titles=["IM", "WGM"],
        federation="POR",
        rating=2408,
        status="established",
        games=100,
        fide=FideState(
            published=[PublishedRating("2025-10", 2400), PublishedRating("2025-11", 2408)]
        ),
    )
    blitz = PlayerRecord(
        system="fide", pool="blitz", id="7", federation="BRA", sex="F", birth_year=1990
    )
    found = profile_of(
        "fide",
        "7",
        [PoolRead("blitz", blitz, [], None), PoolRead("standard", standard, FIDE_LINES, 3)],
    )
    assert found is not None
    assert (found.name, found.titles, found.federation, found.sex, found.birth_year) == (
        "Ana",
        ["IM", "WGM"],
        "POR",  # standard comes first: its federation, not blitz's
        "F",
        1990,
    )
    first, second = found.pools
    assert (first.pool, first.rating, first.rank, first.games) == ("standard", 2408, 3, 100)
    assert first.list_period == "2025-11" and first.live is not None and first.live.change == 7
    assert first.last_event_date == D(2025, 11, 23)  # a list is not an event
    assert (second.pool, second.rating, second.rank, second.live, second.list_period) == (
        "blitz",
        None,
        None,
        None,
        None,
    )
    assert profile_of("fide", "7", []) is None


def test_other_systems_have_no_list_and_no_live_rating():
    record = PlayerRecord(system="cfc", pool="active", id="1", rating=1500, status="established")
    lines = [line(end_date=D(2025, 3, 1), new_rating=1500, projection=True)]
    found = profile_of("cfc", "1", [PoolRead("active", record, lines, 1)])
    assert found is not None and found.pools[0].live is None and found.pools[0].list_period is None


# ---------------------------------------------------------------- on the fake read model


def event(event_id: str, pool: str, day: str, games: list[tuple[str, str, float]]) -> bytes:
    ids = sorted({p for a, b, _ in games for p in (a, b)})
    return json.dumps(
        {
            "schema": "event.finished/v1",
            "event_id": event_id,
            "system": "fide",
            "pool": pool,
            "name": f"{pool.title()} Open",
            "start_date": day,
            "end_date": day,
            "rounds": len(games),
            "players": [{"id": p} for p in ids],
            "games": [
                {"round": n, "a": a, "b": b, "score": s} for n, (a, b, s) in enumerate(games, 1)
            ],
        }
    ).encode()


class Season(FakeReads):
    """The examples, and: 2010001's labels (titles and federation on the standard record,
    sex and another federation on a rapid one), a December event in FIDE standard (its
    period open), and a rapid pool with one event."""

    def __init__(self) -> None:
        super().__init__()
        pool = self.ledger.records[("fide", "standard")]
        pool["2010001"] = msgspec.structs.replace(
            pool["2010001"], titles=["IM", "WGM"], federation="POR"
        )
        rapid = self.ledger.records.setdefault(("fide", "rapid"), {})
        for pid, rating, more in (
            ("2010001", 2350, {"sex": "F", "federation": "BRA"}),
            ("2010002", 2300, {}),
        ):
            rapid[pid] = PlayerRecord(
                system="fide",
                pool="rapid",
                id=pid,
                rating=rating,
                status="established",
                games=40,
                birth_year=1990,
                **more,  # type: ignore[arg-type]
            )
        for n, raw in enumerate(
            (
                event("dec-open", "standard", "2025-12-13", [("2010001", "2010002", 1)]),
                event("rapid-open", "rapid", "2025-11-20", [("2010001", "2010002", 0.5)]),
            )
        ):
            self.outputs += apply_message(
                self.ledger, decode_input(raw), default_registry(), source_id=f"1764600000000-{n}"
            ).outputs


@pytest.fixture(scope="module")
def reads():
    return Season()


@pytest.fixture(scope="module")
def site(reads):
    return app_of(reads)


async def documents(app, html: str) -> dict:
    found = {}
    for path in set(re.findall(r'data-api="([^"]+)"', html)):
        answer = await get(app, path)
        assert answer.status_code == 200, path
        found[path] = answer.json()
    return found


async def test_the_api_answers_every_pool_with_labels_ranks_and_the_live_rating(site, reads):
    answer = await get(site, "/v1/players/fide/2010001")
    found = decoded(answer, PlayerProfile)
    assert found == await reads.profile("fide", "2010001")
    assert (found.name, found.titles, found.federation, found.sex, found.birth_year) == (
        "Ana Ferreira",
        ["IM", "WGM"],
        "POR",
        "F",
        1990,
    )
    assert [p.pool for p in found.pools] == ["standard", "rapid"]
    standard, rapid = found.pools
    history = (await reads.history("fide", "standard", "2010001")).entries
    assert standard.rating == 2407 and standard.list_period == "2025-12" and standard.rank == 1
    assert standard.live is not None and standard.live.period == "2025-12"
    assert standard.live.rating == history[-1].new_rating and history[-1].projection
    assert standard.live.change == history[-1].new_rating - 2407 and standard.live.events == 1
    assert standard.last_event_date == D(2025, 12, 13)
    assert rapid.rating == 2350 and rapid.list_period is None  # no rapid list published yet
    assert rapid.live is not None and rapid.live.period == "2025-11"
    assert answer.headers["last-modified"] == "Mon, 01 Dec 2025 09:30:00 GMT"


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/v1/players/fide/999", "no player '999' in system fide"),
        ("/v1/players/go/1", "unknown system 'go' (known: cfc, fide, glicko2, naspa)"),
    ],
)
async def test_an_unknown_player_or_system_is_404_with_an_api_error(site, path, message):
    answer = await get(site, path)
    assert answer.status_code == 404
    assert decoded(answer, ApiError) == ApiError(error="not_found", message=message)
    page = await get(site, path.removeprefix("/v1"))
    assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
    assert message.replace("'", "&#39;") in page.text


async def test_the_profile_and_its_page_answer_304_to_their_etag(site):
    for path in ("/v1/players/fide/2010001", "/players/fide/2010001"):
        first = await get(site, path)
        again = await get(site, path, **{"If-None-Match": first.headers["etag"]})
        assert (again.status_code, again.content) == (304, b"")


async def test_the_route_is_in_openapi_and_the_answer_matches_its_schema(site):
    spec = (await get(site, "/openapi.json")).json()
    responses = spec["paths"]["/v1/players/{system}/{player_id}"]["get"]["responses"]
    assert responses["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/PlayerProfile"
    }
    assert responses["404"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ApiError"
    }
    schema = {"$ref": "#/components/schemas/PlayerProfile", "components": spec["components"]}
    OAS31Validator(schema).validate((await get(site, "/v1/players/fide/2010001")).json())


async def test_the_page_shows_the_profile_pools_charts_and_histories_each_figure_the_apis(site):
    answer = await get(site, "/players/fide/2010001")
    page = answer.text
    accessible(page)
    assert len(answer.content) < 100_000
    checked, problems = check_page(page, (await documents(site, page)).__getitem__)
    assert problems == [] and checked > 20
    assert "<h1><span data-text>Ana Ferreira</span>" in page and "IM, WGM" in page and "POR" in page
    assert "<dd>female</dd>" in page
    # The pools side by side, the live rating beside the published list's.
    assert '<a href="#standard">standard</a>' in page and '<a href="#rapid">rapid</a>' in page
    assert 'list <time datetime="2025-12">' in page and "live, period" in page
    # One chart and one history per pool, the open period's projections labelled live.
    assert page.count("<svg") == 2 and page.count('<section id="') == 2
    assert 'data-api="/v1/pools/fide/standard/players/2010001/history"' in page
    assert (
        '<span class="note">live</span>' in page and '<span class="note">projected</span>' in page
    )
    assert 'href="/events/dec-open"' in page


async def test_every_example_players_page_passes_the_figure_check(site, reads):
    for system, pool in (("cfc", "regular"), ("fide", "standard"), ("naspa", "nwl")):
        for player in (await reads.players(system, pool, unrated=True)).players:
            page = (await get(site, f"/players/{system}/{player.id}")).text
            checked, problems = check_page(page, (await documents(site, page)).__getitem__)
            assert problems == [] and checked > 0, (system, player.id)


async def test_the_old_player_page_moves_to_the_profile(site):
    moved = await get(site, "/pools/fide/standard/players/2010001")
    assert (moved.status_code, moved.headers["location"]) == (301, "/players/fide/2010001#standard")
    assert (await get(site, "/pools/fide/standard/players/999")).status_code == 404
    assert (await get(site, "/v1/pools/fide/standard/players/2010001")).status_code == 200
