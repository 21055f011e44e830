"""The OpenAPI 3.1 document at `/openapi.json`: FastAPI's paths and parameters, with the
answers' schemas taken from the msgspec Structs (`msgspec.json.schema_components`), so the
document describes exactly the bytes the API sends. FastAPI's 422 answers are gone: a bad
parameter is a 400 with an ApiError (`errors.py`). msgspec's `discriminator` object stays:
it is OpenAPI's own keyword."""

from __future__ import annotations

from typing import Any

import msgspec
from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from schemas.ratings import RatingsUpdated
from schemas.reads import (
    ApiError,
    Crosstable,
    EventList,
    EventRevisions,
    PlayerHistory,
    PlayerList,
    PlayerProfile,
    PlayerView,
    PoolChanges,
    PoolList,
)
from service.runtime.metrics import version
from service.web.errors import ServerError

ANSWERS: tuple[type, ...] = (
    PoolList,
    PlayerList,
    PlayerView,
    PlayerHistory,
    RatingsUpdated,
    ApiError,
    ServerError,
    EventList,  # the lists (D48, D49)
    PoolChanges,
    PlayerProfile,
)
ANSWERS += (Crosstable, EventRevisions)  # an event's crosstable and revisions (D42, D43)
DESCRIPTION = (
    "Read-only JSON API of the rating service: the pools, their rating lists, each player's record "
    "and history, and each event's last published result. Every 200 answer carries a strong ETag "
    "(send it back in If-None-Match for a 304) and Last-Modified, the pool's last update."
)


def components() -> dict[str, Any]:
    _, found = msgspec.json.schema_components(ANSWERS, ref_template="#/components/schemas/{name}")
    return found


def document(app: FastAPI) -> dict[str, Any]:
    """The document, built once and kept (FastAPI's `app.openapi` contract)."""
    if app.openapi_schema is None:
        spec = get_openapi(
            title="rating-service read API",
            version=version(),
            description=DESCRIPTION,
            routes=app.routes,
        )
        for operations in spec.get("paths", {}).values():
            for operation in operations.values():
                operation.get("responses", {}).pop("422", None)
        schemas = spec.setdefault("components", {}).setdefault("schemas", {})
        for name in ("HTTPValidationError", "ValidationError"):
            schemas.pop(name, None)
        schemas.update(components())
        app.openapi_schema = spec
    return app.openapi_schema
