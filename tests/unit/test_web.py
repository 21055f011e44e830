"""The HTTP side on a fake read model (tests/fakereads.py): every route of the API and the
pages, the error bodies, the caching validators, the OpenAPI document and /docs."""

from __future__ import annotations

import re

import httpx
import msgspec
import pytest
import structlog
from openapi_schema_validator import OAS31Validator
from openapi_spec_validator import validate

from schemas.fide import FideDetails, FideGame
from schemas.ratings import RatingsUpdated
from schemas.reads import ApiError, PlayerHistory, PlayerList, PlayerView, PoolList
from schemas.records import PlayerRecord
from service.runtime.health import Health
from service.runtime.metrics import Metrics
from service.web import pages
from service.web.app import create_app
from tests.fakereads import BrokenReads, FakeReads


class Redis:
    def __init__(self, answers: bool = True):
        self.answers = answers

    async def ping(self) -> bool:
        if not self.answers:
            raise ConnectionError("Connection refused")
        return True


def app_of(reads=None, answers: bool = True):
    metrics = Metrics()
    return create_app(
        reads if reads is not None else FakeReads(), Health(Redis(answers), metrics), metrics
    )


@pytest.fixture(scope="module")
def app():
    return app_of()


async def get(app, path: str, **headers: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://rating.test") as client:
        return await client.get(path, headers=headers)


def decoded(response: httpx.Response, kind: type):
    assert response.headers["content-type"] == "application/json"
    return msgspec.json.decode(response.content, type=kind, strict=True)


# ---------------------------------------------------------------- operators' endpoints


async def test_liveness_readiness_metrics_and_asyncapi():
    app = app_of()
    assert (await get(app, "/health/live")).content == b'{"status":"live"}'
    ready = await get(app, "/health/ready")
    assert (ready.status_code, ready.content) == (200, b'{"status":"ready","redis":"ok"}')
    metrics = await get(app, "/metrics")
    assert metrics.status_code == 200 and metrics.headers["content-type"].startswith(
        "text/plain; version=0.0.4"
    )
    assert b"rating_redis_up 1.0" in metrics.content
    document = (await get(app, "/asyncapi.json")).json()
    assert document["asyncapi"].startswith("3.")


async def test_readiness_is_503_with_the_kind_of_error_when_redis_does_not_answer():
    app = app_of(answers=False)
    ready = await get(app, "/health/ready")
    assert (ready.status_code, ready.headers["retry-after"]) == (503, "5")
    # The kind of error only: its text names Redis's address (D28).
    assert ready.json() == {"status": "unready", "redis": "ConnectionError"}
    assert (await get(app, "/health/live")).status_code == 200


async def test_without_a_read_model_only_the_operators_endpoints_answer():
    metrics = Metrics()
    app = create_app(None, Health(Redis(), metrics), metrics)
    assert (await get(app, "/health/ready")).status_code == 200
    assert (await get(app, "/v1/pools")).status_code == 404


# ---------------------------------------------------------------- the read API


async def test_pools(app):
    answer = await get(app, "/v1/pools")
    found = decoded(answer, PoolList)
    assert [(p.system, p.pool) for p in found.pools] == [
        ("cfc", "regular"),
        ("fide", "standard"),
        ("naspa", "nwl"),
    ]
    assert found == await FakeReads().pools()
    assert answer.headers["last-modified"] == "Mon, 01 Dec 2025 09:30:00 GMT"  # the latest pool's
    assert answer.headers["cache-control"] == "no-cache"
    assert re.fullmatch(r'"[0-9a-f]{32}"', answer.headers["etag"])


async def test_players_pages_search_and_unrated(app):
    everyone = decoded(await get(app, "/v1/pools/fide/standard/players?unrated=true"), PlayerList)
    rated = decoded(await get(app, "/v1/pools/fide/standard/players"), PlayerList)
    assert everyone.total == 6 and rated.total == 4 and rated.limit == 50 and not rated.unrated
    assert [p.rank for p in rated.players] == [1, 2, 3, 4]
    assert [p.rating for p in rated.players] == sorted(
        (p.rating for p in rated.players), reverse=True
    )
    page = decoded(await get(app, "/v1/pools/fide/standard/players?limit=2&offset=1"), PlayerList)
    assert (page.offset, page.limit, page.players) == (1, 2, rated.players[1:3])
    found = decoded(await get(app, "/v1/pools/fide/standard/players?q=chen"), PlayerList)
    assert [p.name for p in found.players] == ["Chen Mei"] and found.q == "chen"
    answer = await get(app, "/v1/pools/fide/standard/players")
    assert answer.headers["last-modified"] == "Mon, 01 Dec 2025 09:30:00 GMT"


async def test_player_history_and_event(app):
    reads = FakeReads()
    view = decoded(await get(app, "/v1/pools/cfc/regular/players/100001"), PlayerView)
    assert view == await reads.player("cfc", "regular", "100001")
    assert (view.name, view.rank) == ("Anne Tremblay", 1)
    history = decoded(
        await get(app, "/v1/pools/fide/standard/players/2010001/history"), PlayerHistory
    )
    assert [e.kind for e in history.entries] == ["event", "list"]
    event = await get(app, "/v1/events/ottawa-fall-open-2025")
    assert decoded(event, RatingsUpdated) == await reads.event("ottawa-fall-open-2025")
    assert (
        event.headers["last-modified"] == "Mon, 03 Nov 2025 12:00:00 GMT"
    )  # its pool's last update


async def test_a_player_id_with_a_slash():
    reads = FakeReads()
    record = PlayerRecord(
        system="cfc",
        pool="regular",
        id="sn12@open/2025",
        rating=1500,
        status="established",
        games=30,
    )
    reads.ledger.records[("cfc", "regular")][record.id] = record
    app = app_of(reads)
    view = decoded(await get(app, "/v1/pools/cfc/regular/players/sn12@open%2F2025"), PlayerView)
    assert view.id == "sn12@open/2025"
    history = decoded(
        await get(app, "/v1/pools/cfc/regular/players/sn12@open/2025/history"), PlayerHistory
    )
    assert (history.id, history.entries) == ("sn12@open/2025", [])
    page = await get(app, "/pools/cfc/regular?unrated=true")
    assert 'href="/players/cfc/sn12@open%2F2025#regular"' in page.text
    moved = await get(app, "/pools/cfc/regular/players/sn12@open%2F2025")
    assert moved.headers["location"] == "/players/cfc/sn12@open%2F2025#regular"
    assert (await get(app, moved.headers["location"])).status_code == 200


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/v1/pools/go/x/players", "unknown system 'go' (known: cfc, fide, glicko2, naspa)"),
        (
            "/v1/pools/cfc/blitz/players/1",
            "unknown pool 'blitz' of system cfc (known: regular, active)",
        ),
        ("/v1/pools/fide/rapid/players", "no players in pool fide/rapid"),
        ("/v1/pools/cfc/regular/players/999", "no player '999' in pool cfc/regular"),
        ("/v1/pools/cfc/regular/players/999/history", "no player '999' in pool cfc/regular"),
        ("/v1/events/nothing-here", "no event 'nothing-here'"),
        ("/v1/nowhere", "no such path: /v1/nowhere"),
        ("/nowhere", "no such path: /nowhere"),
    ],
)
async def test_not_found_says_what(app, path, message):
    answer = await get(app, path)
    assert answer.status_code == 404
    assert decoded(answer, ApiError) == ApiError(error="not_found", message=message)


@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        ("limit=0", "limit"),
        ("limit=501", "limit"),
        ("limit=ten", "limit"),
        ("offset=-1", "offset"),
        ("q=" + "x" * 101, "q"),
        ("unrated=perhaps", "unrated"),
    ],
)
async def test_a_bad_parameter_is_400_naming_it(app, query, parameter):
    answer = await get(app, f"/v1/pools/cfc/regular/players?{query}")
    assert answer.status_code == 400
    error = decoded(answer, ApiError)
    assert error.error == "bad_request" and error.message.startswith(
        f"query parameter {parameter}: "
    )


async def test_if_none_match_gives_304_without_a_body(app):
    for path in (
        "/v1/pools",
        "/v1/pools/cfc/regular/players",
        "/v1/pools/cfc/regular/players/100001",
        "/v1/pools/cfc/regular/players/100001/history",
        "/v1/events/ottawa-fall-open-2025",
        "/",
    ):
        first = await get(app, path)
        etag = first.headers["etag"]
        for header in (etag, f"W/{etag}", f'"other", {etag}', "*"):
            again = await get(app, path, **{"If-None-Match": header})
            assert (again.status_code, again.content, again.headers["etag"]) == (304, b"", etag), (
                path,
                header,
            )
            assert again.headers["last-modified"] == first.headers["last-modified"]
        assert (await get(app, path, **{"If-None-Match": '"other"'})).status_code == 200
    assert (await get(app, "/v1/pools?limit=1")).headers["etag"] == (
        await get(app, "/v1/pools")
    ).headers["etag"]


async def test_an_unexpected_error_is_500_in_json_and_logged_without_showing_it():
    app = app_of(BrokenReads())
    with structlog.testing.capture_logs() as logs:
        answer = await get(app, "/v1/pools")
    assert answer.status_code == 500
    assert answer.json() == {
        "error": "internal",
        "message": "internal error; see the service's log",
    }
    assert b"secret" not in answer.content and b"Traceback" not in answer.content
    [line] = [entry for entry in logs if entry["event"] == "http request failed"]
    assert line["path"] == "/v1/pools" and line["log_level"] == "error" and line["exc_info"]


async def test_a_method_other_than_get_is_405_in_json(app):
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://rating.test") as client:
        answer = await client.post("/v1/pools")
    assert answer.status_code == 405 and answer.json()["error"] == "method_not_allowed"


# ---------------------------------------------------------------- OpenAPI and /docs


async def test_the_openapi_document_is_valid_and_describes_the_structs(app):
    spec = (await get(app, "/openapi.json")).json()
    validate(spec)  # openapi-spec-validator: OpenAPI 3.1
    assert spec["openapi"].startswith("3.1")
    _, components = msgspec.json.schema_components(
        [PoolList, PlayerList, PlayerView, PlayerHistory, RatingsUpdated, ApiError],
        ref_template="#/components/schemas/{name}",
    )
    assert msgspec.json.decode(msgspec.json.encode(components)) == {
        name: schema for name, schema in spec["components"]["schemas"].items() if name in components
    }
    assert "HTTPValidationError" not in spec["components"]["schemas"]
    expected = {
        "/v1/pools": "PoolList",
        "/v1/pools/{system}/{pool}/players": "PlayerList",
        "/v1/pools/{system}/{pool}/players/{player_id}": "PlayerView",
        "/v1/pools/{system}/{pool}/players/{player_id}/history": "PlayerHistory",
        "/v1/events/{event_id}": "RatingsUpdated",
    }
    for path, name in expected.items():
        responses = spec["paths"][path]["get"]["responses"]
        assert responses["200"]["content"]["application/json"]["schema"] == {
            "$ref": f"#/components/schemas/{name}"
        }
        assert responses["404"]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/ApiError"
        }
        assert "422" not in responses
    parameters = {
        p["name"]: p
        for p in spec["paths"]["/v1/pools/{system}/{pool}/players"]["get"]["parameters"]
    }
    assert (
        parameters["limit"]["schema"]["maximum"] == 500
        and parameters["q"]["schema"]["anyOf"][0]["maxLength"] == 100
    )
    assert "400" in spec["paths"]["/v1/pools/{system}/{pool}/players"]["get"]["responses"]


async def test_the_answers_match_their_openapi_schemas(app):
    spec = (await get(app, "/openapi.json")).json()
    for path, name in [
        ("/v1/pools", "PoolList"),
        ("/v1/pools/naspa/nwl/players?unrated=true", "PlayerList"),
        ("/v1/pools/fide/standard/players/2010001", "PlayerView"),
        ("/v1/pools/fide/standard/players/2010001/history", "PlayerHistory"),
        ("/v1/events/montreal-international-2025", "RatingsUpdated"),
        ("/v1/events/nope", "ApiError"),
        ("/v1/pools/cfc/regular/players?limit=0", "ApiError"),
    ]:
        schema = {"$ref": f"#/components/schemas/{name}", "components": spec["components"]}
        OAS31Validator(schema).validate((await get(app, path)).json())


async def test_docs_load_swagger_ui_from_this_server(app):
    page = await get(app, "/docs")
    assert page.status_code == 200
    assets = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert "/docs/assets/swagger-ui-bundle.js" in assets and "/docs/assets/swagger-ui.css" in assets
    assert not [url for url in assets if "//" in url], "nothing may come from elsewhere"
    assert "<script>" not in page.text, "no inline script: the CSP allows none (D30)"
    init = (await get(app, "/docs/swagger-init.js")).text
    assert 'url: "/openapi.json"' in init and "validatorUrl: null" in init
    for url in assets:
        served = await get(app, url)
        assert served.status_code == 200 and len(served.content) > 200, url
    bundle = (await get(app, "/docs/assets/swagger-ui-bundle.js")).text
    assert "OpenAPI 3.1" in bundle or "3.1.0" in bundle  # Swagger UI 5 renders OpenAPI 3.1


# ---------------------------------------------------------------- pages


def accessible(html: str) -> None:
    assert '<html lang="en">' in html and 'href="#main"' in html and '<main id="main"' in html
    assert '<meta name="viewport"' in html and "<script" not in html


async def test_home_lists_the_pools(app):
    page = await get(app, "/")
    assert page.status_code == 200 and page.headers["content-type"] == "text/html; charset=utf-8"
    accessible(page.text)
    assert "<caption>" in page.text and '<th scope="col">List</th>' in page.text
    for system, pool in (("cfc", "regular"), ("fide", "standard"), ("naspa", "nwl")):
        assert f'href="/pools/{system}/{pool}"' in page.text
    assert (
        "2025-12-01 09:30 UTC" in page.text and "<span data-text>2025-11</span> list" in page.text
    )


async def test_the_rating_list_page_searches_and_pages(app, monkeypatch):
    page = (await get(app, "/pools/fide/standard")).text
    accessible(page)
    assert (
        '<label for="q">' in page
        and '<input id="q" name="q"' in page
        and '<label for="unrated">' in page
    )
    assert "Ana Ferreira" in page and 'href="/players/fide/2010001#standard"' in page
    assert '<th scope="row">' in page and re.search(r"Rows 1–4</span> of <data[^>]*>4<", page)
    found = (await get(app, "/pools/fide/standard?q=boris")).text
    assert "Boris Lindqvist" in found and "Ana Ferreira" not in found and 'value="boris"' in found
    with_unrated = (await get(app, "/pools/fide/standard?unrated=true")).text
    assert re.search(r"of <data[^>]*>6<", with_unrated) and " checked" in with_unrated
    assert "unrated</data></td>" in with_unrated
    monkeypatch.setattr(pages, "PAGE_SIZE", 2)
    first = (await get(app, "/pools/fide/standard?unrated=true")).text
    assert (
        'rel="next" href="/pools/fide/standard?offset=2&amp;unrated=true"' in first
        and 'rel="prev"' not in first
    )
    middle = (await get(app, "/pools/fide/standard?offset=2&unrated=true")).text
    assert (
        'rel="prev" href="/pools/fide/standard?unrated=true"' in middle and 'rel="next"' in middle
    )
    last = (await get(app, "/pools/fide/standard?offset=4&unrated=true")).text
    assert 'rel="next"' not in last and "Rows 5–6</span>" in last and "page 3 of 3" in last


async def test_the_player_page_has_the_record_the_chart_and_the_history(app):
    """The player's page is the profile now (D38, tests/unit/test_profile.py): the old
    address redirects to the pool's section of it."""
    moved = await get(app, "/pools/fide/standard/players/2010001")
    assert (moved.status_code, moved.headers["location"]) == (301, "/players/fide/2010001#standard")
    page = (await get(app, "/players/fide/2010001")).text
    accessible(page)
    assert (
        "<h1><span data-text>Ana Ferreira</span></h1>" in page
        and '<td class="num">established</td>' in page
    )
    assert '<data value="2407" data-f="pools.0.rating">2407</data>' in page
    svg = page[page.index("<svg") : page.index("</svg>")]
    assert (
        'role="img"' in svg
        and '<title id="chart-standard-title">Rating history of Ana Ferreira, FIDE standard</title>'
        in svg
    )
    assert "<desc" in svg
    assert svg.count("<circle") == 1  # one event with a rating
    assert "Montreal International, 2025-11-16: rating 2412 (projected)" in svg
    assert '<path class="lists" d="M' in svg  # the published list, as a step line
    assert 'href="/events/montreal-international-2025"' in page and "List 2025-12" in page
    # The list's line: 2412 -> 2407, a change of -5 with a minus sign.
    assert '<data value="-5" data-f="entries.1.change">\u22125</data>' in page


async def test_the_event_page_shows_results_and_figures_on_request(app):
    """Issue 31 changed what it shows: figures in `<data>` (D37) and the schema's labels
    for the details' fields (D44), not their names (tests/unit/test_event_page.py checks
    every figure against the API)."""
    page = (await get(app, "/events/ottawa-fall-open-2025")).text
    accessible(page)
    text = re.sub(r"<[^>]+>", "", page)
    assert "<h1 data-text>Ottawa Fall Open</h1>" in page and "2025-11-01" in page
    assert 'href="/players/cfc/100001#regular"' in page and "1850 → 1859" in text and "+9" in text
    assert "<details>" in page and "<details open>" not in page
    assert 'href="/events/ottawa-fall-open-2025?games=true"' in page
    opened = (await get(app, "/events/ottawa-fall-open-2025?games=1")).text
    assert "<details open>" in opened
    table = opened[opened.index("Anne Tremblay</span>: games") :]
    assert '<th scope="col" data-text>Opponent</th>' in table
    assert '<th scope="col" data-text>Value from</th>' in table
    assert (
        'href="/players/cfc/100002#regular" data-text>Bruno Roy (100002)</a>' in table
        and "<code>post_event</code>" in table
    )
    naspa = (await get(app, "/events/toronto-scrabble-club-2025-11-20?games=1")).text
    assert "Earned wins" in naspa
    fide = (await get(app, "/events/montreal-international-2025?games=1")).text
    assert "Rating period" in fide and "Event&#39;s change (K × sum)" in fide


async def test_pages_answer_404_and_400_in_html(app):
    for path, text in [
        ("/pools/go/x", "unknown system"),
        ("/pools/cfc/active", "no players in pool cfc/active"),
        ("/pools/cfc/regular/players/999", "no player"),
        ("/events/nope", "no event"),
    ]:
        page = await get(app, path)
        assert page.status_code == 404 and page.headers["content-type"].startswith("text/html"), (
            path
        )
        accessible(page.text)
        assert text in page.text
    bad = await get(app, "/pools/cfc/regular?offset=-2")
    assert (
        bad.status_code == 400
        and "query parameter offset" in bad.text
        and bad.headers["content-type"].startswith("text/html")
    )
    browser = await get(app, "/nowhere", Accept="text/html,application/xhtml+xml")
    assert browser.status_code == 404 and "<h1>Not found</h1>" in browser.text


async def test_the_stylesheet_is_served_and_focus_is_visible(app):
    css = await get(app, "/static/style.css")
    assert css.status_code == 200 and ":focus-visible" in css.text


def test_figures_show_any_per_game_list_and_survive_its_absence():
    """FIDE `details.games` is shown like CFC's `opponents`: a table (columns: the fields
    any row has); none at all is no table, no details no figures."""
    details = FideDetails(
        period="2025-11",
        k=20,
        event_change=None,
        projected_rating=None,
        games_counted=1,
        games=[FideGame(round=1, opponent="2010002", opponent_rating=2250, score=1)],
    )
    shown = pages.figures(details, "players.0.details", "fide", "standard", {})
    [(name, columns, rows)] = shown.tables
    assert name == "Games" and [c for c, _ in columns] == [
        "Round",
        "Opponent",
        "Opponent's rating",
        "W",
    ]
    assert len(rows) == 1
    assert pages.figures(None, "players.0.details", "fide", "standard", {}) == ([], [])
    empty = msgspec.structs.replace(details, games=[])
    assert pages.figures(empty, "players.0.details", "fide", "standard", {}).tables == []
