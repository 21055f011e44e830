"""The read side when Redis goes away, and its HTTP hygiene, on the real service (`python -m
service serve`) with a real Redis behind the tests' TCP proxy (tests/integration/tcpproxy.py),
its operators' endpoints on RATING_ADMIN_PORT:

- the proxy down: the API and the pages answer 503 with Retry-After and a body that names no
  address, the log says so once (one line for every request and the consumer), and once
  when Redis is back; then 200 (D28);
- any parameter value against the Redis read model: a 400 at worst, never a 500 (Hypothesis);
- HEAD, the security headers and the metrics as a client sees them; the operators' port;
- the pages and Swagger UI in headless Chromium under their Content-Security-Policy (D30)."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest
import redis as sync_redis
import redis.asyncio as aioredis
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from schemas import PlayerRecord
from service.runtime.embedded import free_port
from service.runtime.health import Health
from service.runtime.keys import StreamKeys
from service.runtime.metrics import Metrics
from service.runtime.queries import ReadModel
from service.runtime.records_io import import_records
from service.web.app import create_app
from tests.conftest import needs
from tests.integration.helpers import publish, rejections, settings_for
from tests.integration.processes import ROOT, Services, wait_until_applied
from tests.integration.tcpproxy import CuttingProxy
from tests.webfuzz import get_routes, requests

pytestmark = pytest.mark.integration
REQUESTS = 12


class OutageProxy:
    """The tests' TCP proxy on a thread of its own (its event loop outlives each test), which
    can be taken down (every connection reset, new ones refused) and brought back on its port."""

    def __init__(self, host: str, port: int):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.proxy = CuttingProxy(host, port)
        self._run(self.proxy.start())
        self.port = self.proxy.port

    def _run(self, work):
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(30)

    async def _down(self) -> None:
        assert self.proxy.server is not None
        self.proxy.server.close()
        self.proxy.cut()

    async def _up(self) -> None:
        self.proxy.server = await asyncio.start_server(
            self.proxy._accept, "127.0.0.1", self.port, reuse_address=True
        )

    def down(self) -> None:
        self._run(self._down())

    def up(self) -> None:
        self._run(self._up())

    def stop(self) -> None:
        self._run(self.proxy.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def club() -> list[PlayerRecord]:
    return [
        PlayerRecord(
            system="cfc",
            pool="regular",
            id=f"c{i}",
            rating=1500 + 60 * i,
            status="established",
            games=40,
            highest=1500 + 60 * i,
            name=f"Player {i}",
        )
        for i in range(1, 7)
    ]


EVENT = {
    "schema": "event.finished/v1",
    "event_id": "club-05",
    "system": "cfc",
    "name": "Club night",
    "start_date": "2025-10-05",
    "end_date": "2025-10-05",
    "rounds": 2,
    "players": [{"id": f"c{i}"} for i in range(1, 5)],
    "games": [
        {"round": 1, "a": "c1", "b": "c2", "score": 1},
        {"round": 2, "a": "c3", "b": "c4", "score": 0.5},
    ],
}


def through(url: str, port: int) -> str:
    """`url` with its host and port replaced by the proxy's (user, password, db kept)."""
    parts = urlsplit(url)
    user = parts.netloc.rpartition("@")[0]
    address = f"127.0.0.1:{port}"
    return urlunsplit(
        (parts.scheme, f"{user}@{address}" if user else address, parts.path, parts.query, "")
    )


class Site:
    def __init__(self, services: Services, process, proxy: OutageProxy, http: int, admin: int):
        self.services, self.process, self.proxy = services, process, proxy
        self.public = f"http://127.0.0.1:{http}"
        self.admin = f"http://127.0.0.1:{admin}"

    def get(self, path: str, method: str = "GET", base: str | None = None, **headers: str):
        return httpx.request(method, (base or self.public) + path, headers=headers, timeout=30)

    def log(self) -> str:
        return self.services.logs(self.process)


def wait_for(condition, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            found = condition()
        except httpx.HTTPError:
            found = None
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.1)


@pytest.fixture(scope="module")
def site(redis_url):
    parts = urlsplit(redis_url)
    proxy = OutageProxy(parts.hostname or "127.0.0.1", parts.port or 6379)
    prefix = f"t{uuid.uuid4().hex[:12]}"
    http, admin = free_port(), free_port()
    settings = settings_for(through(redis_url, proxy.port), prefix)
    services = Services(settings, command=("-m", "service", "serve"))
    services.env.update(
        {
            "RATING_HTTP_PORT": str(http),
            "RATING_HTTP_HOST": "127.0.0.1",
            "RATING_ADMIN_PORT": str(admin),
            "RATING_ADMIN_HOST": "127.0.0.1",
        }
    )
    direct = settings_for(redis_url, prefix)

    async def prepare() -> None:
        client = aioredis.Redis.from_url(redis_url)
        try:
            await import_records(client, StreamKeys(settings.input_streams[0]), club())
            await publish(client, direct, EVENT)
            await wait_until_applied(client, direct)
            assert await rejections(client, direct) == []
        finally:
            await client.aclose()

    try:
        process = services.start()
        asyncio.run(prepare())
        found = Site(services, process, proxy, http, admin)
        wait_for(lambda: found.get("/health/ready").status_code == 200, "ready")
        yield found
    finally:
        services.stop_all()
        proxy.stop()
        client = sync_redis.Redis.from_url(redis_url)
        keys = list(client.scan_iter(match=f"*{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
        client.close()


def events_of(log: str) -> list[str]:
    said = []
    for line in log.splitlines():
        try:
            said.append(json.loads(line)["event"])
        except (ValueError, KeyError):
            said.append(line)
    return said


# ------------------------------------------------------------------ Redis away (D28)


def test_redis_away_is_503_with_retry_after_said_once_then_200_again(site):
    paths = ["/v1/pools", "/v1/pools/cfc/regular/players", "/v1/events/club-05", "/"]
    paths += ["/pools/cfc/regular", "/players/cfc/c1", "/events/club-05"]
    for path in paths:
        assert site.get(path).status_code == 200, path
    before = len(site.log())
    site.proxy.down()
    hidden = ("127.0.0.1", str(site.proxy.port), "redis://", "connecting to", "Traceback")
    for n in range(REQUESTS):
        path = paths[n % len(paths)]
        answer = site.get(path)
        assert (answer.status_code, answer.headers.get("retry-after")) == (503, "5"), path
        assert not [word for word in hidden if word in answer.text], (path, answer.text)
        page = path.startswith(("/pools", "/events", "/players")) or path == "/"
        assert answer.headers["content-type"].startswith(
            "text/html" if page else "application/json"
        )
        assert answer.headers["x-content-type-options"] == "nosniff"
    ready = site.get("/health/ready")
    assert ready.status_code == 503 and ready.headers["retry-after"] == "5"
    assert ready.json()["status"] == "unready" and str(site.proxy.port) not in ready.text
    assert site.get("/health/live").status_code == 200

    site.proxy.up()
    wait_for(lambda: site.get("/v1/pools").status_code == 200, "the API answers again")
    for path in paths:
        assert site.get(path).status_code == 200, path
    wait_for(lambda: "redis reachable again" in site.log()[before:], "the recovery line")
    said = events_of(site.log()[before:])
    # One line when Redis went away, for all the requests and the consumer (one OutageLog
    # per process); one when it is back; no traceback, no line per request. A read on a
    # pooled connection the cut left dead is tried once more (source.Guarded: before, one
    # request in five failed so here with both cores busy); the consumer's own connections
    # may still fail once after the recovery: at most that one flap.
    outage = [e for e in said if e in ("redis unreachable", "redis reachable again")]
    assert outage[:2] == ["redis unreachable", "redis reachable again"], said
    assert len(outage) <= 4, said
    assert "http request failed" not in said and "Traceback" not in site.log()[before:], said
    metrics = site.get("/metrics", base=site.admin).text
    assert f"rating_http_redis_unavailable_total {float(REQUESTS)}" in metrics


# ------------------------------------------------------------------ HTTP hygiene


def test_head_headers_and_metrics_as_a_client_sees_them(site):
    # After the outage test (same site): until reads answer (a read on a pooled connection
    # the cut left dead is tried once more, source.Guarded; a 503 with Retry-After otherwise).
    for _ in range(3):
        wait_for(lambda: site.get("/v1/pools").status_code == 200, "the reads answer again")
    before = len(site.log())
    for path in ("/health/live", "/v1/pools", "/", "/pools/cfc/regular", "/static/style.css"):
        got, head = site.get(path), site.get(path, "HEAD")
        assert (head.status_code, head.content) == (200, b""), path
        assert head.headers["content-length"] == got.headers["content-length"], path
        assert head.headers.get("etag") == got.headers.get("etag"), path
        for header in ("content-security-policy", "x-frame-options", "referrer-policy"):
            assert header in got.headers and header in head.headers, (path, header)
        raw = raw_answer(site.public, f"HEAD {path} HTTP/1.1\r\nHost: x\r\nConnection: close")
        assert raw.startswith(b"HTTP/1.1 200 OK\r\n") and raw.endswith(b"\r\n\r\n"), raw
    assert "Traceback" not in site.log()[before:], site.log()[before:]  # the server is content
    metrics = site.get("/metrics", base=site.admin).text
    assert 'rating_http_requests_total{method="HEAD",route="/",status="2xx"}' in metrics
    assert re.search(r'rating_http_request_seconds_count\{route="/v1/pools"\} [1-9]', metrics)


def raw_answer(base: str, request: str) -> bytes:
    """What the server sends back for `request` (its head), read to the end of the connection."""
    host, port = urlsplit(base).hostname, urlsplit(base).port
    with socket.create_connection((host, port), timeout=30) as sock:
        sock.sendall(request.encode() + b"\r\n\r\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def test_the_operators_endpoints_are_on_the_operators_port_only(site):
    for path in ("/metrics", "/docs", "/openapi.json", "/asyncapi.json"):
        assert site.get(path, base=site.admin).status_code == 200, path
        assert site.get(path).status_code == 404, path
    for path in ("/v1/pools", "/"):
        assert site.get(path).status_code == 200, path
        assert site.get(path, base=site.admin).status_code == 404, path
    assert site.get("/health/ready", base=site.admin).status_code == 200
    assert 'href="/docs"' not in site.get("/").text


def test_an_operators_port_in_use_is_one_line_and_exit_1(site, redis_url):
    port = int(site.admin.rsplit(":", 1)[1])  # the site's: taken
    env = {**site.services.env, "RATING_REDIS_URL": redis_url}
    env.update({"RATING_HTTP_PORT": str(free_port()), "RATING_ADMIN_PORT": str(port)})
    done = subprocess.run(
        [sys.executable, "-m", "service", "serve"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"rating-service serve: operators' port 127.0.0.1:{port} is already in use "
        "(RATING_ADMIN_PORT)"
    )


# ------------------------------------------------------------------ parameters, on Redis


@pytest.fixture(scope="module")
def stored(redis_url):
    """A pool in a real Redis, for the read model the property test reads through."""
    prefix = f"t{uuid.uuid4().hex[:12]}"
    stream = f"{prefix}.events"

    async def prepare() -> None:
        client = aioredis.Redis.from_url(redis_url)
        try:
            await import_records(client, StreamKeys(stream), club())
        finally:
            await client.aclose()

    asyncio.run(prepare())
    yield redis_url, stream
    client = sync_redis.Redis.from_url(redis_url)
    keys = list(client.scan_iter(match=f"*{prefix}*", count=1000))
    if keys:
        client.delete(*keys)
    client.close()


SHAPE = create_app(object(), None, None)  # type: ignore[arg-type]  # the routes only
READING = [r for r in get_routes(SHAPE) if r.dependant.path_params or r.dependant.query_params]


async def answer_of(redis_url: str, stream: str, method: str, url: str) -> httpx.Response:
    """The answer of the app on the Redis read model (a client of this example's loop)."""
    client = aioredis.Redis.from_url(redis_url)
    try:
        metrics = Metrics()
        app = create_app(ReadModel(client, [stream]), Health(client, metrics), metrics)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://rating.test") as http:
            return await http.request(method, url)
    finally:
        await client.aclose()


@pytest.mark.parametrize("route", READING, ids=[r.path for r in READING])
@hypothesis_settings(max_examples=60, suppress_health_check=list(HealthCheck))
@given(data=st.data())
async def test_every_accepted_parameter_value_is_read_without_error(stored, route, data):
    """Every value a route's declaration accepts (limits, offsets up to their maximum,
    any search text, any id of the pattern) reaches Redis and is answered: no 400, no 5xx
    (without `le=MAX_OFFSET`, `offset=99999999999999999999` was Redis's error, a 500)."""
    redis_url, stream = stored
    method, url = data.draw(
        requests(SHAPE, pools=[("cfc", "regular")], route=route, negative=False)
    )
    answer = await answer_of(redis_url, stream, method, url)
    assert answer.status_code in (200, 301, 304, 404), (method, url, answer.text[:300])


@hypothesis_settings(max_examples=200, suppress_health_check=list(HealthCheck))
@given(data=requests(SHAPE, pools=[("cfc", "regular")]))
async def test_no_parameter_value_makes_a_500_on_the_redis_read_model(stored, data):
    redis_url, stream = stored
    method, url = data
    answer = await answer_of(redis_url, stream, method, url)
    assert answer.status_code in (200, 301, 304, 307, 400, 404), (method, url, answer.text[:300])


# ------------------------------------------------------------------ in a browser (D30)


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        needs("headless Chromium (chromium on PATH)", "apt-get install chromium")
    return found


def in_browser(url: str, profile) -> tuple[str, list[str]]:
    """The DOM after loading `url` in headless Chromium, and its console's lines (where a
    Content-Security-Policy violation is said)."""
    done = subprocess.run(
        [
            chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=10000",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    console = [line for line in done.stderr.decode().splitlines() if ":CONSOLE" in line]
    return done.stdout.decode(), console


@pytest.mark.browser
def test_the_pages_and_swagger_ui_work_under_their_csp(site, tmp_path):
    for path in ("/", "/pools/cfc/regular", "/players/cfc/c1", "/events/club-05"):
        dom, console = in_browser(site.public + path, tmp_path / "profile")
        assert "<h1" in dom and "</main>" in dom, path
        assert not [line for line in console if "Content Security Policy" in line], console
    dom, console = in_browser(site.admin + "/docs", tmp_path / "profile")
    assert not [line for line in console if "Content Security Policy" in line], console
    # Swagger UI ran: it fetched /openapi.json and drew an operation per route.
    assert dom.count('class="opblock opblock-get') >= 9, dom[-2000:]
    assert "/v1/pools/{system}/{pool}/players" in dom
