"""The ASGI app: `create_app(reads, health, metrics)`.

    GET /health/live, /health/ready   liveness; readiness (503 when Redis does not answer)
    GET /metrics                      Prometheus text format
    GET /asyncapi.json                the AsyncAPI 3 document of the channels
    GET /v1/...                       the read API (api.py), described at /openapi.json and /docs
    GET /, /pools/..., /events/...    the pages (pages.py)

Without a read model (`reads` None) only the operators' endpoints are served.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import msgspec
from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.staticfiles import StaticFiles

from schemas import asyncapi
from service.runtime.health import Health, Live
from service.runtime.metrics import Metrics, version
from service.web import api, pages
from service.web.caching import JSON
from service.web.errors import HANDLERS, CatchAll
from service.web.openapi import document
from service.web.rendering import STATIC
from service.web.source import Reads

METRICS_TYPE = "text/plain; version=0.0.4; charset=utf-8"
DOCS_ASSETS = "/docs/assets"


def swagger_ui_files() -> Path:
    """Swagger UI's JS and CSS as the swagger-ui-py package ships them (served from here:
    nothing is fetched from elsewhere at run time)."""
    import swagger_ui

    return Path(swagger_ui.__file__).parent / "static"


def create_app(reads: Reads | None, health: Health | None, metrics: Metrics | None) -> FastAPI:
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
    app.state.reads = reads
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
    )
    async def ready() -> Response:
        answer = await health.ready()  # type: ignore[union-attr]  # the route exists only with a health check
        return Response(
            msgspec.json.encode(answer), 200 if answer.status == "ready" else 503, media_type=JSON
        )

    @app.get("/metrics", tags=operations, summary="Prometheus metrics")
    async def scrape() -> Response:
        return Response(metrics.render(), media_type=METRICS_TYPE)  # type: ignore[union-attr]  # the route exists only with metrics

    @app.get("/asyncapi.json", tags=operations, summary="The AsyncAPI 3 document of the channels")
    async def channels() -> Response:
        return Response(asyncapi_body, media_type=JSON)

    @app.get("/docs", include_in_schema=False)
    async def docs(request: Request) -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title="rating-service read API",
            swagger_js_url=f"{DOCS_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{DOCS_ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{DOCS_ASSETS}/favicon-32x32.png",
        )

    if reads is not None:
        app.include_router(api.router)
        app.include_router(pages.router)
    app.mount(DOCS_ASSETS, StaticFiles(directory=swagger_ui_files()), name="docs-assets")
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app
