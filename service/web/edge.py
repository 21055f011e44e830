"""The frame of every HTTP answer, one pure ASGI middleware around the app (`Edge`):

- HEAD on every GET route (D29): the request goes in as GET, the answer comes out with the
  GET's status and headers (Content-Length, ETag ... included) and no body.
- The security headers on every answer (D30), pages, API, errors and static files alike;
  `/docs` (Swagger UI) has a Content-Security-Policy of its own, which lets it run its
  scripts from this server and fetch `/openapi.json`; a federation's logo on another host
  (look.py, D52) is allowed by its origin in the pages' `img-src`, nothing wider.
- The operators' port (D31): with `admin_port` set, the operators' endpoints answer only
  there, and the API and pages only on the HTTP port (health on both); elsewhere 404, as for
  a path that does not exist.
- The HTTP metrics: requests by route template (never the raw path), method and status
  class, and the time to the end of the body.
"""

from __future__ import annotations

import time
from typing import Any

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.web.errors import problem

# Swagger UI (/docs): its bundle, its init script and its CSS from this server; the inline
# SVG icons of its CSS as data: images; /openapi.json fetched from here.
DOCS_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
# Everything else: the pages (no script; the stylesheet from here; the search forms go
# here), JSON, errors, static files.
PAGES_CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)


def pages_headers(logo_origin: str | None) -> list[tuple[bytes, bytes]]:
    """The pages' headers, the logo's origin (look.py) added to img-src."""
    csp = PAGES_CSP
    if logo_origin:
        csp = csp.replace("img-src 'self'", f"img-src 'self' {logo_origin}")
    return [*SECURITY, (b"content-security-policy", csp.encode())]


SECURITY: list[tuple[bytes, bytes]] = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
]
DOCS_HEADERS = [*SECURITY, (b"content-security-policy", DOCS_CSP.encode())]
PAGES_HEADERS = pages_headers(None)
# The operators' endpoints: on the operators' port only, when there is one (D31).
OPERATORS = ("/metrics", "/docs", "/openapi.json", "/asyncapi.json")
HEALTH = "/health/"
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED = "unmatched"


def is_operators(path: str) -> bool:
    return any(path == p or path.startswith(p + "/") for p in OPERATORS)


def template(scope: Scope) -> str:
    """The route's path template; a mount's path (FastAPI routes to a mount without naming it
    in `route`, but its `root_path` is the mount's); else `unmatched`."""
    route = getattr(scope.get("route"), "path", None)
    if route:
        return route
    if "endpoint" in scope and scope.get("root_path"):
        return scope["root_path"]
    return UNMATCHED


def security_headers(
    path: str, pages: list[tuple[bytes, bytes]] = PAGES_HEADERS
) -> list[tuple[bytes, bytes]]:
    return DOCS_HEADERS if path == "/docs" else pages


class Edge:
    """The middleware (outside CatchAll, so that its 500 has the headers and is counted)."""

    def __init__(self, app: ASGIApp, metrics: Any = None, admin_port: int = 0, look: Any = None):
        self.app = app
        self.pages_headers = pages_headers(look.logo_origin if look is not None else None)
        self.metrics = metrics
        self.admin_port = admin_port
        # The metrics' children by their labels (a few dozen: routes x methods x classes),
        # found once each rather than by `labels()` on every request.
        self._requests: dict[tuple[str, str, str], Any] = {}
        self._seconds: dict[str, Any] = {}

    def served(self, scope: Scope) -> bool:
        """Whether this port serves the path (D31)."""
        if not self.admin_port:
            return True
        path: str = scope["path"]
        server = scope.get("server")
        on_admin = server is not None and server[1] == self.admin_port
        if on_admin:
            return path.startswith(HEALTH) or is_operators(path)
        return not is_operators(path)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        began = time.perf_counter()
        method: str = scope["method"]
        head = method == "HEAD"
        if head:
            # D29: answered as the GET, without its body. A scope of its own: the server's
            # must still say HEAD (uvicorn sends no body for a HEAD by it).
            scope = {**scope, "method": "GET", "rating.method": method}  # (errors.CatchAll)
        headers = security_headers(scope["path"], self.pages_headers)
        status = 500

        async def framed(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message = {**message, "headers": [*message.get("headers", ()), *headers]}
            elif head and message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return
                message = {"type": "http.response.body", "body": b""}
            await send(message)

        try:
            if self.served(scope):
                await self.app(scope, receive, framed)
            else:
                scope.pop("route", None)
                missing = problem(
                    Request(scope), 404, "not_found", f"no such path: {scope['path']}"
                )
                await missing(scope, receive, framed)
        finally:
            self.count(scope, method, status, began)

    def count(self, scope: Scope, method: str, status: int, began: float) -> None:
        if self.metrics is None:
            return
        route = template(scope)
        key = (route, method if method in METHODS else "other", f"{status // 100}xx")
        counter = self._requests.get(key)
        if counter is None:
            counter = self._requests[key] = self.metrics.http_requests.labels(*key)
        counter.inc()
        seconds = self._seconds.get(route)
        if seconds is None:
            seconds = self._seconds[route] = self.metrics.http_seconds.labels(route)
        seconds.observe(time.perf_counter() - began)
