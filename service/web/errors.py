"""What goes wrong, answered the same way everywhere: 404 and 400 with an ApiError body
(an HTML page on the pages), 503 with `Retry-After` when Redis does not answer (D28: the
body names no address, the log says it once per outage), 500 with `{"error": "internal",
...}` and the traceback in the log only. FastAPI's 422 for a bad parameter becomes 400
naming the parameter."""

from __future__ import annotations

from typing import Any, Literal

import msgspec
import structlog
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from schemas.common import SYSTEMS
from schemas.reads import ApiError
from schemas.systems import is_pool, pools_text
from service.web.caching import HTML, JSON
from service.web.rendering import render_page
from service.web.source import Unavailable

log = structlog.get_logger("rating.web")
PAGE_PREFIXES = ("/pools/", "/events/", "/players/")
NOT_PAGES = (
    "/v1/",
    "/health/",
    "/metrics",
    "/asyncapi.json",
    "/openapi.json",
    "/docs",
    "/static/",
    "/look.css",
)
RETRY_AFTER = 5  # seconds, in a 503's Retry-After: about how often the service asks Redis again
UNAVAILABLE = f"the ratings cannot be read right now (the database does not answer); try again in {RETRY_AFTER} s"
TITLES = {400: "Bad request", 404: "Not found", 405: "Method not allowed", 503: "Unavailable"}


class ServerError(msgspec.Struct, frozen=True):
    """The body of a 5xx (and 405) answer: never a traceback, nor an address. `error` is
    `internal` (500), `unavailable` (503: try again after `Retry-After` seconds) or
    `method_not_allowed` (405)."""

    error: Literal["internal", "unavailable", "method_not_allowed"]
    message: str


class NotFound(Exception):
    """What was asked for does not exist; `message` says what."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def check_system(system: str) -> None:
    """404 for a system the service does not rate."""
    if system not in SYSTEMS:
        raise NotFound(f"unknown system {system!r} (known: {', '.join(SYSTEMS)})")


def check_pool(system: str, pool: str) -> None:
    """404 for a system or pool the service does not rate."""
    check_system(system)
    if not is_pool(system, pool):  # a platform-named pool of a system with open pools too (D70)
        raise NotFound(f"unknown pool {pool!r} of system {system} (known: {pools_text(system)})")


def is_page(request: Request) -> bool:
    """Whether an error answers with an HTML page (is_page_path)."""
    return is_page_path(request.url.path, request.headers.get("accept", ""))


def is_page_path(path: str, accept: str) -> bool:
    """A page's path, or any path but the API's and the operators' asked for by a browser
    (`accept`: the request's Accept header)."""
    if path == "/" or path.startswith(PAGE_PREFIXES):
        return True
    if path.startswith(NOT_PAGES):
        return False
    return "text/html" in accept


def problem(
    request: Request, status: int, error: str, message: str, headers: dict[str, str] | None = None
) -> Response:
    if is_page(request):
        title = TITLES.get(status, "Error")
        return Response(
            render_page(request, "error.html", title=title, message=message, status=status),
            status,
            headers=headers,
            media_type=HTML,
        )
    body: msgspec.Struct = (
        ApiError(error=error, message=message)  # type: ignore[arg-type]  # the callers pair each status with its struct's codes
        if status < 405
        else ServerError(error=error, message=message)  # type: ignore[arg-type]  # (as above)
    )
    return Response(msgspec.json.encode(body), status, headers=headers, media_type=JSON)


async def not_found(request: Request, exc: NotFound) -> Response:
    return problem(request, 404, "not_found", exc.message)


async def unavailable(request: Request, exc: Unavailable) -> Response:
    """503: Redis did not answer (the OutageLog has said why, once per outage; D28)."""
    metrics = getattr(request.app.state, "metrics", None)
    if metrics is not None:
        metrics.http_unavailable.inc()
    return problem(
        request, 503, "unavailable", UNAVAILABLE, headers={"Retry-After": str(RETRY_AFTER)}
    )


async def bad_parameter(request: Request, exc: RequestValidationError) -> Response:
    """400 naming each wrong parameter (FastAPI would say 422 with pydantic's details)."""
    parts = []
    for error in exc.errors():
        where, *rest = error.get("loc", ("request",))
        name = ".".join(str(part) for part in rest) or str(where)
        parts.append(f"{where} parameter {name}: {error.get('msg', 'invalid')}")
    return problem(request, 400, "bad_request", "; ".join(parts) or "bad request")


async def http_error(request: Request, exc: HTTPException) -> Response:
    if exc.status_code == 404:
        return problem(request, 404, "not_found", f"no such path: {request.url.path}")
    if exc.status_code == 405:
        return problem(
            request,
            405,
            "method_not_allowed",
            f"{request.method} is not allowed here (GET and HEAD only)",
            headers={"Allow": "GET, HEAD"},
        )
    return problem(request, 400, "bad_request", str(exc.detail))


class CatchAll:
    """An exception no handler took: logged with its traceback, answered 500 in JSON.

    Inside Starlette's ServerErrorMiddleware, so that the exception goes no further (the
    middleware would send it on to uvicorn, which logs it again in its own format)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watch(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, watch)
        except Exception:
            method = scope.get("rating.method", scope.get("method"))  # HEAD, not the GET of edge.py
            log.exception("http request failed", method=method, path=scope.get("path"))
            if started:
                raise  # the answer is half sent: the server can only cut the connection
            body = msgspec.json.encode(
                ServerError(error="internal", message="internal error; see the service's log")
            )
            await Response(body, 500, media_type=JSON)(scope, receive, send)


HANDLERS: dict[Any, Any] = {
    NotFound: not_found,
    Unavailable: unavailable,
    RequestValidationError: bad_parameter,
    HTTPException: http_error,
}
