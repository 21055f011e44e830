"""The HTTP side's hygiene on the fake read model (tests/fakereads.py): Redis away is a 503
with Retry-After, said once per outage (D28); any parameter value is a 400 at worst, never a
500 (Hypothesis over every route's parameters); HEAD on every GET route (D29); the security
headers on every answer (D30); the operators' port (D31); the HTTP metrics."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import httpx
import pytest
import structlog
from fastapi.routing import APIRoute
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from prometheus_client.parser import text_string_to_metric_families
from redis.exceptions import BusyLoadingError, ClusterDownError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from starlette.routing import Mount, Route

from service.runtime import outage
from service.runtime.health import Health
from service.runtime.metrics import Metrics
from service.runtime.outage import OutageLog
from service.web.app import create_app
from service.web.edge import DOCS_CSP, PAGES_CSP
from tests.fakereads import FakeReads
from tests.unit.test_redis_checks import fresh_log
from tests.webfuzz import all_routes, get_routes, path_of, requests

ADDRESS = "10.1.2.3:6390"  # what a redis-py error says, and an answer must not


class Redis:
    async def ping(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class AwayReads(FakeReads):
    """A read model whose every read fails with `error` while it is set."""

    def __init__(self) -> None:
        super().__init__()
        self.error: BaseException | None = None
        self.hang = False

    def __getattribute__(self, name: str):
        found = super().__getattribute__(name)
        if name in ("pools", "players", "player", "history", "event", "last_update"):

            async def read(*args, **kwargs):
                if self.hang:
                    await asyncio.sleep(3600)
                if self.error is not None:
                    raise self.error
                return await found(*args, **kwargs)

            return read
        return found


def app_of(reads=None, outage=None, admin_port: int = 0, read_timeout: float = 5.0):
    metrics = Metrics()
    app = create_app(
        reads if reads is not None else FakeReads(),
        Health(Redis(), metrics),
        metrics,
        outage,
        admin_port=admin_port,
        read_timeout=read_timeout,
    )
    return app, metrics


@pytest.fixture(scope="module")
def app():
    return app_of()[0]


async def ask(app, path: str, method: str = "GET", base: str = "http://rating.test", **headers):
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=base) as client:
        return await client.request(method, path, headers=headers)


def said(logs: list[dict], event: str) -> list[dict]:
    return [line for line in logs if line["event"] == event]


# ---------------------------------------------------------------- Redis away: 503 (D28)


@pytest.mark.parametrize(
    "error",
    [
        RedisConnectionError(f"Error 111 connecting to {ADDRESS}. Connection refused."),
        BusyLoadingError("Redis is loading the dataset in memory"),
        RedisTimeoutError(f"Timeout connecting to {ADDRESS}"),
        ConnectionResetError(104, "Connection reset by peer"),
        ClusterDownError("CLUSTERDOWN The cluster is down"),
    ],
    ids=["refused", "loading", "timeout", "reset", "clusterdown"],
)
async def test_redis_away_is_503_with_retry_after_and_names_no_address(error):
    reads = AwayReads()
    reads.error = error
    app, metrics = app_of(reads)
    api = await ask(app, "/v1/pools/cfc/regular/players")
    assert (api.status_code, api.headers["retry-after"]) == (503, "5")
    assert api.headers["content-type"] == "application/json"
    assert api.json() == {
        "error": "unavailable",
        "message": "the ratings cannot be read right now (the database does not answer); "
        "try again in 5 s",
    }
    page = await ask(app, "/pools/cfc/regular")
    assert (page.status_code, page.headers["retry-after"]) == (503, "5")
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert "<h1>Unavailable</h1>" in page.text and "try again in 5 s" in page.text
    for answer in (api, page):
        assert "10.1.2.3" not in answer.text and "6390" not in answer.text
        assert "Traceback" not in answer.text and str(error) not in answer.text
    assert metrics.http_unavailable._value.get() == 2


async def test_an_outage_is_said_once_and_the_recovery_once(monkeypatch):
    clock = Clock()
    reads = AwayReads()
    app, _ = app_of(reads, OutageLog(every=60, settle=1.0, clock=clock))
    with fresh_log(monkeypatch, outage) as logs:
        assert (await ask(app, "/v1/pools")).status_code == 200
        reads.error = RedisConnectionError(f"Error 111 connecting to {ADDRESS}.")
        for n in range(12):
            clock.now += 0.5
            path = ("/v1/pools", "/", "/pools/cfc/regular", "/events/ottawa-fall-open-2025")[n % 4]
            assert (await ask(app, path)).status_code == 503
        reads.error = None
        clock.now += 2  # past the settle time: the first read that succeeds says so
        for _ in range(3):
            assert (await ask(app, "/v1/pools")).status_code == 200
    [down] = said(logs, "redis unreachable")
    assert down["log_level"] == "error" and ADDRESS in down["error"]  # the log has it
    [back] = said(logs, "redis reachable again")
    assert back["down_seconds"] == 7.5  # from the first failure to the first success
    assert [line["event"] for line in logs] == ["redis unreachable", "redis reachable again"]


async def test_a_read_that_hangs_is_503_after_the_timeout(monkeypatch):
    reads = AwayReads()
    reads.hang = True
    app, _ = app_of(reads, read_timeout=0.05)
    with fresh_log(monkeypatch, outage) as logs:
        answer = await ask(app, "/v1/events/ottawa-fall-open-2025")
    assert (answer.status_code, answer.json()["error"]) == (503, "unavailable")
    [down] = said(logs, "redis unreachable")
    assert down["error"] == "no answer within 0.05 s"


async def test_an_unexpected_error_is_500_with_its_traceback_logged_once_per_request():
    reads = AwayReads()
    reads.error = KeyError("a bug")
    app, metrics = app_of(reads)
    with structlog.testing.capture_logs() as logs:
        answer = await ask(app, "/v1/pools")
    assert answer.status_code == 500 and answer.json()["error"] == "internal"
    assert "retry-after" not in answer.headers
    [line] = logs
    assert line["event"] == "http request failed" and line["exc_info"]
    assert metrics.http_unavailable._value.get() == 0


# ---------------------------------------------------------------- parameters: 400, never 500


@pytest.mark.parametrize(
    ("path", "parameter"),
    [
        ("/v1/pools/cfc/regular/players?offset=99999999999999999999", "query parameter offset"),
        ("/v1/pools/cfc/regular/players?offset=1000000001", "query parameter offset"),
        ("/v1/pools/cfc/regular/players?offset=-1", "query parameter offset"),
        ("/v1/pools/cfc/regular/players?limit=9223372036854775808", "query parameter limit"),
        ("/v1/pools/cfc/regular/players?limit=1.5", "query parameter limit"),
        ("/v1/pools/cfc/regular/players/%C3%93lafsson", "path parameter player_id"),
        ("/v1/pools/cfc/regular/players/" + "1" * 65, "path parameter player_id"),
        ("/v1/pools/cfc/regular/players/a%20b/history", "path parameter player_id"),
        ("/v1/events/a%20b", "path parameter event_id"),
        ("/v1/events/" + "e" * 129, "path parameter event_id"),
        ("/pools/cfc/regular?offset=99999999999999999999", "query parameter offset"),
        ("/pools/cfc/regular/players/%00", "path parameter player_id"),
        ("/events/ottawa%20fall", "path parameter event_id"),
        ("/events/ottawa-fall-open-2025?games=maybe", "query parameter games"),
    ],
)
async def test_a_parameter_out_of_range_or_malformed_is_400_naming_it(app, path, parameter):
    answer = await ask(app, path)
    assert answer.status_code == 400, answer.text
    assert parameter in answer.text


async def test_the_largest_offset_is_an_empty_page(app):
    answer = await ask(app, "/v1/pools/cfc/regular/players?offset=1000000000")
    assert answer.status_code == 200 and answer.json()["players"] == []


FUZZED = app_of()[0]


@hypothesis_settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(data=requests(FUZZED))
async def test_no_parameter_value_makes_a_500(data):
    method, url = data
    answer = await ask(FUZZED, url, method)
    # 301: the old player page's redirect to the profile (D38).
    assert answer.status_code in (200, 301, 304, 307, 400, 404), (method, url, answer.text[:300])
    if answer.status_code == 400 and method == "GET":
        assert "parameter" in answer.text, answer.text


# ---------------------------------------------------------------- HEAD (D29)


# The old player page redirects to the profile (D38).
MOVED = {"/pools/cfc/regular/players/100001"}


def sample_paths(app) -> list[str]:
    """One path that answers 200 for each GET route and each mount (walked from
    app.routes: a new route is covered without a change here)."""
    values = {
        "system": "cfc",
        "pool": "regular",
        "player_id": "100001",
        "event_id": "ottawa-fall-open-2025",
        "revision": "0",  # its first result (D101)
    }
    paths = [path_of(route, values) for route in get_routes(app)]
    for route in all_routes(app):
        if isinstance(route, Mount):
            first = sorted(p for p in Path(route.app.directory).iterdir() if p.is_file())[0]  # type: ignore[attr-defined]
            paths.append(f"{route.path}/{first.name}")
        elif isinstance(route, Route) and not isinstance(route, APIRoute):
            assert "GET" in route.methods, route  # the OpenAPI document's
            paths.append(route.path)
    return paths


async def test_head_answers_every_get_route_with_the_gets_headers_and_no_body(app):
    paths = sample_paths(app)
    assert {
        "/health/live",
        "/metrics",
        "/openapi.json",
        "/v1/pools",
        "/v1/pools/cfc/regular/players/100001/history",
        "/",
        "/events/ottawa-fall-open-2025",
        "/docs",
        "/static/style.css",
    } <= set(paths)
    assert any(p.startswith("/docs/assets/") for p in paths)
    for path in paths:
        got = await ask(app, path)
        head = await ask(app, path, "HEAD")
        want = 301 if path in MOVED else 200
        assert got.status_code == want, path
        assert (head.status_code, head.content) == (want, b""), path
        skip = {"date"} | ({"content-length"} if path == "/metrics" else set())  # it moves
        assert {k: v for k, v in head.headers.items() if k not in skip} == {
            k: v for k, v in got.headers.items() if k not in skip
        }, path
    # The validators hold for HEAD too, and an error keeps its status.
    etag = (await ask(app, "/v1/pools")).headers["etag"]
    assert (await ask(app, "/v1/pools", "HEAD", **{"If-None-Match": etag})).status_code == 304
    missing = await ask(app, "/v1/events/nope", "HEAD")
    assert (missing.status_code, missing.content) == (404, b"")
    refused = await ask(app, "/v1/pools", "POST")
    assert (refused.status_code, refused.headers["allow"]) == (405, "GET, HEAD")
    assert refused.json()["message"] == "POST is not allowed here (GET and HEAD only)"


# ---------------------------------------------------------------- security headers (D30)


async def test_every_answer_has_the_security_headers(app):
    reads = AwayReads()
    reads.error = RedisConnectionError("away")
    away, _ = app_of(reads)
    broken = AwayReads()
    broken.error = KeyError("bug")
    bug, _ = app_of(broken)
    etag = (await ask(app, "/")).headers["etag"]
    answers = [
        (await ask(app, "/"), 200),
        (await ask(app, "/pools/cfc/regular/players/100001"), 301),
        (await ask(app, "/players/cfc/100001"), 200),
        (await ask(app, "/v1/pools"), 200),
        (await ask(app, "/", **{"If-None-Match": etag}), 304),
        (await ask(app, "/static/style.css"), 200),
        (await ask(app, "/v1/pools/cfc/regular/players?limit=0"), 400),
        (await ask(app, "/nowhere"), 404),
        (await ask(app, "/v1/pools", "DELETE"), 405),
        (await ask(bug, "/v1/pools"), 500),
        (await ask(away, "/pools/cfc/regular"), 503),
        (await ask(app, "/health/ready"), 200),
        (await ask(app, "/metrics"), 200),
        (await ask(app, "/docs"), 200),
    ]
    for answer, status in answers:
        where = (answer.request.method, answer.request.url.path, status)
        assert answer.status_code == status, where
        assert answer.headers["x-content-type-options"] == "nosniff", where
        assert answer.headers["referrer-policy"] == "no-referrer", where
        assert answer.headers["x-frame-options"] == "DENY", where
        csp = answer.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in csp and "default-src 'none'" in csp, where
        assert csp == (DOCS_CSP if answer.request.url.path == "/docs" else PAGES_CSP), where
        assert len(answer.headers.get_list("content-security-policy")) == 1, where
    assert "'unsafe-inline'" not in DOCS_CSP + PAGES_CSP and "'unsafe-eval'" not in DOCS_CSP


async def test_the_pages_need_nothing_the_csp_refuses(app):
    """No inline script or style, no style attribute, nothing from elsewhere (the pages in
    a browser: tests/integration/test_read_side_guard.py)."""
    for path in (
        "/",
        "/pools/fide/standard",
        "/pools/fide/standard/players/2010001",
        "/events/ottawa-fall-open-2025?games=1",
        "/nowhere",
    ):
        html = (await ask(app, path, Accept="text/html")).text
        assert "<script" not in html and "<style" not in html, path
        assert not re.search(r"\sstyle=", html), path
        assert not re.search(r'(?:src|href|action)="(?:https?:)?//', html), path


# ---------------------------------------------------------------- the operators' port (D31)


async def test_with_an_operators_port_the_operators_endpoints_answer_there_only():
    app, _ = app_of(admin_port=9091)
    public, admin = "http://rating.test:8080", "http://rating.test:9091"
    operators = ["/metrics", "/docs", "/docs/swagger-init.js", "/openapi.json", "/asyncapi.json"]
    operators.append("/docs/assets/swagger-ui.css")
    for path in operators:
        assert (await ask(app, path, base=admin)).status_code == 200, path
        hidden = await ask(app, path, base=public)
        assert (hidden.status_code, hidden.json()["message"]) == (404, f"no such path: {path}")
    for path in ("/v1/pools", "/", "/pools/cfc/regular", "/static/style.css"):
        assert (await ask(app, path, base=public)).status_code == 200, path
        assert (await ask(app, path, base=admin)).status_code == 404, path
    for path in ("/health/live", "/health/ready"):
        for base in (public, admin):
            assert (await ask(app, path, base=base)).status_code == 200, (base, path)
    home = (await ask(app, "/", base=public)).text
    assert 'href="/docs"' not in home and "<code>/v1/</code>" in home  # no link to a 404
    assert 'href="/docs"' in (await ask(app_of()[0], "/")).text  # without one: as before


# ---------------------------------------------------------------- the HTTP metrics


async def test_requests_are_counted_by_route_template_method_and_status_class():
    reads = AwayReads()
    app, metrics = app_of(reads)
    for path in ("/v1/pools/cfc/regular/players/100001", "/v1/pools/cfc/regular/players/100002"):
        await ask(app, path)
    await ask(app, "/v1/pools/cfc/regular/players/999")
    await ask(app, "/pools/cfc/regular", "HEAD")
    await ask(app, "/static/style.css")
    await ask(app, "/no/such/thing")
    await ask(app, "/v1/pools", "BREW")
    reads.error = RedisConnectionError("away")
    await ask(app, "/v1/pools")
    text = (await ask(app, "/metrics")).text
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }
    counted = {
        (labels["method"], labels["route"], labels["status"]): value
        for (name, items), value in samples.items()
        if name == "rating_http_requests_total"
        for labels in [dict(items)]
    }
    player = "/v1/pools/{system}/{pool}/players/{player_id:path}"
    assert counted == {
        ("GET", player, "2xx"): 2,
        ("GET", player, "4xx"): 1,
        ("HEAD", "/pools/{system}/{pool}", "2xx"): 1,
        ("GET", "/static", "2xx"): 1,
        ("GET", "unmatched", "4xx"): 1,
        ("other", "/v1/pools", "4xx"): 1,
        ("GET", "/v1/pools", "5xx"): 1,
    }
    assert samples[("rating_http_request_seconds_count", (("route", player),))] == 3
    assert samples[("rating_http_redis_unavailable_total", ())] == 1
    assert not [r for r in get_routes(app) if not isinstance(r, APIRoute)]
