"""The HTTP edges (D51): HEAD answers every route as its GET does, without the body (every
route of the app walked, static files and errors included); If-Modified-Since gives 304
unless If-None-Match is there (RFC 9110 13.2.2); a request the server's HTTP parser
refuses (a raw UTF-8 byte in the query) gets the app's own 400, JSON or the HTML page,
over a socket to the real server (service/web/server.py)."""

from __future__ import annotations

import asyncio
import datetime as dt

import httpx
import msgspec
import pytest
from fastapi.routing import APIRoute
from starlette.routing import Mount, Route
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from schemas.reads import ApiError
from service.runtime.look import Look
from service.web.app import create_app
from service.web.badrequest import protocol_for
from service.web.caching import http_date
from service.web.server import HttpServer
from tests.fakereads import UPDATED, FakeReads
from tests.unit.test_web import app_of

EXAMPLES = {
    "system": "cfc",
    "pool": "regular",
    "player_id": "100001",
    "event_id": "ottawa-fall-open-2025",
}
# A file under each mount.
MOUNTED = {"/static": "/style.css", "/docs/assets": "/swagger-ui.css"}
CHANGING = {"/metrics"}  # counts the requests themselves: the same headers, not their values
ERRORS = ["/v1/pools/cfc/nope/players", "/pools/cfc/regular?offset=-1", "/no/such/path", "/v1/x"]


@pytest.fixture(scope="module")
def app():
    return app_of()


async def both(app, path: str, **headers: str) -> tuple[httpx.Response, httpx.Response]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://rating.test") as client:
        return await client.get(path, headers=headers), await client.head(path, headers=headers)


def paths_of(routes, prefix: str = "") -> list[str]:
    """A path for every GET route and mount (path parameters from EXAMPLES; an unknown one
    as `x`: whatever its GET answers, HEAD must answer the same), in included routers too."""
    paths = []
    for route in routes:
        included = getattr(route, "original_router", None)  # FastAPI's include_router
        if included is not None:
            paths += paths_of(included.routes, prefix + route.include_context.prefix)
        elif isinstance(route, Mount):
            paths.append(prefix + route.path + MOUNTED[route.path])
        elif isinstance(route, (APIRoute, Route)) and "GET" in (route.methods or ()):
            path = prefix + route.path
            for name in route.param_convertors:
                path = path.replace(f"{{{name}:path}}", EXAMPLES.get(name, "x"))
                path = path.replace(f"{{{name}}}", EXAMPLES.get(name, "x"))
            paths.append(path)
    return paths


async def test_head_answers_every_route_as_its_get_without_the_body(app):
    paths = paths_of(app.routes)
    assert {"/", "/v1/pools", "/static/style.css", "/docs", "/look.css", "/metrics"} <= set(paths)
    statuses = {}
    for path in paths + ERRORS:
        got, head = await both(app, path)
        statuses[path] = got.status_code
        assert head.status_code == got.status_code, path
        assert head.content == b"", path
        if path in CHANGING:
            assert head.headers.keys() == got.headers.keys(), path
            continue
        same = {k: v for k, v in got.headers.items() if k != "date"}
        assert {k: v for k, v in head.headers.items() if k != "date"} == same, path
        if "content-length" in got.headers:
            assert int(head.headers["content-length"]) == len(got.content), path
    assert statuses["/static/style.css"] == 200 and statuses["/pools/cfc/regular"] == 200
    assert statuses["/no/such/path"] == 404 and statuses["/pools/cfc/regular?offset=-1"] == 400
    assert statuses["/v1/pools/cfc/regular/players/100001"] == 200
    assert statuses["/events/ottawa-fall-open-2025"] == 200


async def test_head_gets_304_as_the_get_does(app):
    got, _ = await both(app, "/v1/pools")
    again, head = await both(app, "/v1/pools", **{"If-None-Match": got.headers["etag"]})
    assert (again.status_code, head.status_code, head.content) == (304, 304, b"")


@pytest.mark.parametrize("path", ["/v1/pools/cfc/regular/players", "/pools/cfc/regular"])
async def test_if_modified_since_gives_304_from_the_last_update_on(app, path):
    updated = UPDATED[("cfc", "regular")]  # 2025-11-03 12:00 UTC
    got, _ = await both(app, path)
    assert got.headers["last-modified"] == "Mon, 03 Nov 2025 12:00:00 GMT"
    for since, status in [
        (updated, 304),
        (updated + dt.timedelta(days=1), 304),
        (updated - dt.timedelta(seconds=1), 200),
    ]:
        answer, head = await both(app, path, **{"If-Modified-Since": http_date(since)})
        assert (answer.status_code, head.status_code) == (status, status), since
        assert answer.headers["etag"] == got.headers["etag"]
        assert (answer.content == b"") == (status == 304)
    # RFC 850 and asctime dates are HTTP dates too; an unreadable one is ignored.
    for since, status in [
        ("Monday, 03-Nov-25 12:00:00 GMT", 304),
        ("Mon Nov  3 12:00:00 2025", 304),
        ("yesterday", 200),
        ("", 200),
    ]:
        answer, _ = await both(app, path, **{"If-Modified-Since": since})
        assert answer.status_code == status, since


async def test_if_none_match_takes_precedence_over_if_modified_since(app):
    path = "/v1/pools/cfc/regular/players"
    got, _ = await both(app, path)
    later = http_date(UPDATED[("cfc", "regular")] + dt.timedelta(days=1))
    stale, _ = await both(app, path, **{"If-None-Match": '"other"', "If-Modified-Since": later})
    assert stale.status_code == 200 and stale.content == got.content
    fresh, _ = await both(
        app, path, **{"If-None-Match": got.headers["etag"], "If-Modified-Since": "yesterday"}
    )
    assert fresh.status_code == 304


# --------------------------------------------------------------- the server's own 400


async def raw_request(port: int, request: bytes) -> tuple[int, dict[str, str], bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    data = await reader.read()  # the server closes the connection after its 400
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    return int(status_line.split()[1]), headers, body


@pytest.mark.parametrize("base", [HttpToolsProtocol, H11Protocol], ids=["httptools", "h11"])
async def test_a_raw_utf8_byte_in_the_query_gets_the_apps_400_from_the_real_server(base):
    app = create_app(FakeReads(), None, None, look=Look(federation="Chess Federation of Canada"))
    server = HttpServer(app, "127.0.0.1", 0)
    server.config.http = protocol_for(app, base)
    await server.start()
    try:
        api = b"GET /v1/pools/cfc/regular/players?q=\xc3\xb8 HTTP/1.1\r\nHost: t\r\n\r\n"
        status, headers, body = await raw_request(server.port, api)
        assert (status, headers["content-type"]) == (400, "application/json")
        assert (
            headers["connection"] == "close"
            and "default-src 'none'" in headers["content-security-policy"]
        )
        error = msgspec.json.decode(body, type=ApiError)
        assert error.error == "bad_request"
        assert error.message == (
            "the request's target holds 'ø', a character outside ASCII: send it "
            "percent-encoded as UTF-8 (%C3%B8), as browsers do"
        )
        assert int(headers["content-length"]) == len(body)
        body_of_api = body

        page = b"GET /pools/cfc/regular?q=S\xc3\xb8ndergaard HTTP/1.1\r\nHost: t\r\n\r\n"
        status, headers, body = await raw_request(server.port, page)
        assert (status, headers["content-type"]) == (400, "text/html; charset=utf-8")
        html = body.decode()
        assert "<h1>Bad request</h1>" in html and "%C3%B8" in html
        assert "Chess Federation of Canada" in html  # the site's own page, header and all

        spaced = b"HEAD /v1/pools/cfc/regular/players?q=a b HTTP/1.1\r\nHost: t\r\n\r\n"
        status, headers, body = await raw_request(server.port, spaced)
        assert (status, headers["content-type"], body) == (400, "application/json", b"")

        # On a keep-alive connection, after a good request: the answer is to the bad one.
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"GET /v1/pools HTTP/1.1\r\nHost: t\r\n\r\n")
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        assert head.startswith(b"HTTP/1.1 200") and len(await reader.readexactly(length))
        writer.write(api)
        rest = await reader.read()
        writer.close()
        assert rest.startswith(b"HTTP/1.1 400") and rest.endswith(body_of_api)

        encoded = b"GET /v1/pools/cfc/regular/players?q=%C3%B8 HTTP/1.1\r\nHost: t\r\n"
        status, _, _ = await raw_request(server.port, encoded + b"Connection: close\r\n\r\n")
        assert status == 200
    finally:
        await server.stop()
