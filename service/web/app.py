"""The ASGI app: `create_app(reads, health, metrics, outage)`.

    GET /health/live, /health/ready   liveness; readiness (503 when Redis does not answer)
    GET /metrics                      Prometheus text format
    GET /asyncapi.json                the AsyncAPI 3 document of the channels
    GET /v1/...                       the read API (api.py), described at /openapi.json and /docs
    GET /, /pools/..., /events/...    the pages (pages.py)

Every GET also answers HEAD; every answer has the security headers; with `admin_port` the
operators' endpoints answer on that port only (edge.py: D29-D31). The reads go through
`source.Guarded` (D28: 503 when Redis does not answer, said once per outage to `outage`,
the service's OutageLog). Without a read model (`reads` None) only the operators' endpoints
are served.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from pathlib import Path

import msgspec
from fastapi import FastAPI
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.staticfiles import StaticFiles

from schemas import asyncapi
from service.runtime.health import Health, Live, Ready
from service.runtime.look import Look
from service.runtime.metrics import Metrics, version
from service.runtime.outage import OutageLog
from service.web import api, eventapi, lists, lookcss, pages, profile
from service.web.caching import JSON
from service.web.edge import Edge
from service.web.errors import HANDLERS, RETRY_AFTER, CatchAll
from service.web.openapi import document
from service.web.rendering import STATIC
from service.web.source import READ_TIMEOUT, Guarded, Reads, describe

METRICS_TYPE = "text/plain; version=0.0.4; charset=utf-8"
DOCS_ASSETS = "/docs/assets"
DOCS_INIT = "/docs/swagger-init.js"
# /docs: Swagger UI from the packaged files, started by a script of this server's rather
# than an inline one, so that the page runs under a CSP without 'unsafe-inline' (D30).
DOCS_PAGE = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>rating-service read API</title>
<link rel="stylesheet" href="{DOCS_ASSETS}/swagger-ui.css">
<link rel="icon" type="image/png" href="{DOCS_ASSETS}/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="{DOCS_ASSETS}/swagger-ui-bundle.js"></script>
<script src="{DOCS_INIT}"></script>
</body>
</html>
"""
DOCS_SCRIPT = b"""window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  layout: "BaseLayout",
  deepLinking: true,
  showExtensions: true,
  showCommonExtensions: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
});
"""


def swagger_ui_files() -> Path:
    """Swagger UI's JS and CSS as the swagger-ui-py package ships them (served from here:
    nothing is fetched from elsewhere at run time)."""
    import swagger_ui

    return Path(swagger_ui.__file__).parent / "static"


def create_app(
    reads: Reads | None,
    health: Health | None,
    metrics: Metrics | None,
    outage: OutageLog | None = None,
    *,
    admin_port: int = 0,
    read_timeout: float = READ_TIMEOUT,
    reason: Callable[[BaseException], str] = describe,
    look: Look | None = None,
) -> FastAPI:
    """The app. `outage`: the process's OutageLog (a private one when None); `admin_port`:
    the operators' port, where /metrics and the documents answer instead of every port
    (0: none; D31); `read_timeout`: seconds a read may take before it is a 503; `reason`:
    an error as the log says it; `look`: the federation's header on the pages (D52)."""
    app = FastAPI(
        title="rating-service read API",
        version=version(),
        docs_url=None,
        redoc_url=None,
        openapi_url="/openapi.json",
        exception_handlers=HANDLERS,
    )
    app.openapi = lambda: document(app)  # type: ignore[method-assign]  # FastAPI's documented way to replace the OpenAPI document
    app.add_middleware(CatchAll)
    look = look or Look()
    app.add_middleware(Edge, metrics=metrics, admin_port=admin_port, look=look)
    app.state.reads = (
        Guarded(reads, outage or OutageLog(), read_timeout, reason) if reads is not None else None
    )
    app.state.metrics = metrics
    app.state.look = look
    app.state.public_docs = not admin_port
    operations: list[str | Enum] = ["operations"]
    live_body = msgspec.json.encode(Live())
    asyncapi_body = asyncapi.render().encode()

    @app.get("/health/live", tags=operations, summary="Liveness: 200 while the process answers")
    async def live() -> Response:
        return Response(live_body, media_type=JSON)

    @app.get(
        "/health/ready",
        tags=operations,
        summary="Readiness: 200 when Redis answers a PING within a second, else 503 with the reason",
        responses={
            503: {
                "description": "Redis does not answer: `redis` is the kind of error "
                "(ConnectionError, TimeoutError, BusyLoadingError ...), never its address; "
                "with Retry-After."
            }
        },
    )
    async def ready() -> Response:
        return await readiness(health)  # type: ignore[arg-type]  # the route exists only with a health check

    @app.get(
        "/metrics",
        tags=operations,
        summary="Prometheus metrics",
        response_class=PlainTextResponse,  # the document says text/plain, as it is (D83)
        responses={200: {"description": "The Prometheus text format, version 0.0.4"}},
    )
    async def scrape() -> Response:
        return Response(metrics.render(), media_type=METRICS_TYPE)  # type: ignore[union-attr]  # the route exists only with metrics

    @app.get("/asyncapi.json", tags=operations, summary="The AsyncAPI 3 document of the channels")
    async def channels() -> Response:
        return Response(asyncapi_body, media_type=JSON)

    if reads is not None:
        app.include_router(api.router)
        app.include_router(pages.router)
        app.include_router(lists.router)  # the latest events, the biggest changes (D48, D49)
        app.include_router(profile.router)
        app.include_router(eventapi.router)  # an event's crosstable and revisions (D42, D43)
    app.include_router(lookcss.router)
    add_docs(app)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app


async def readiness(health: Health) -> Response:
    """200 with `ready`, else 503 with Retry-After. A check's hold (redischecks.py) says why
    without an address; a PING that failed says its error's kind only (ConnectionError,
    TimeoutError, BusyLoadingError ...): its text names Redis's address, which the log has
    (D28); a store without its record (storegate.py) names the stream and the key."""
    answer = await health.ready()
    if answer.status == "ready":
        return Response(msgspec.json.encode(answer), media_type=JSON)
    held = "; ".join(health.unready.values())
    said = (
        answer
        if answer.redis == held
        else Ready(status=answer.status, redis=answer.redis.partition(":")[0], stores=answer.stores)
    )
    return Response(
        msgspec.json.encode(said), 503, headers={"Retry-After": str(RETRY_AFTER)}, media_type=JSON
    )


def add_docs(app: FastAPI) -> None:
    """/docs: Swagger UI from the packaged files, started by DOCS_SCRIPT (D30)."""

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return HTMLResponse(DOCS_PAGE)

    @app.get(DOCS_INIT, include_in_schema=False)
    async def docs_init() -> Response:
        return Response(DOCS_SCRIPT, media_type="text/javascript; charset=utf-8")

    app.mount(DOCS_ASSETS, StaticFiles(directory=swagger_ui_files()), name="docs-assets")
