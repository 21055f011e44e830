"""The lists' routes (D48, D49): the latest events and a pool's biggest changes, as JSON
(`/v1/events`, `/v1/pools/{system}/{pool}/changes`, in OpenAPI) and as pages (`/events`,
`/pools/{system}/{pool}/changes`) showing the same documents' figures (D37)."""

from __future__ import annotations

import datetime as dt
from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Query
from starlette.requests import Request
from starlette.responses import Response

from schemas.common import SYSTEMS
from schemas.reads import EventList
from schemas.systems import pool_order
from service.web.api import answers, reads_of
from service.web.caching import HTML, cached, cached_json
from service.web.errors import NotFound, check_pool, check_system
from service.web.rendering import query_of, render_page, segment
from service.web.source import Reads

router = APIRouter()
MAX_EVENTS_OFFSET = 10_000  # the latest events are read from every pool up to offset + limit
EVENTS_PAGE = 50
EventsLimit = Annotated[int, Query(ge=1, le=200, description="Events on the page (1-200).")]
EventsOffset = Annotated[
    int, Query(ge=0, le=MAX_EVENTS_OFFSET, description="Events skipped before the page.")
]
SystemFilter = Annotated[
    str | None, Query(max_length=16, description="Only this system's pools (with `pool`: one).")
]
PoolFilter = Annotated[
    str | None,
    Query(max_length=32, description="Only the pools of this name (with `system`: one)."),
]
ChangesLimit = Annotated[int, Query(ge=1, le=100, description="Gains and losses each (1-100).")]


async def latest_update(reads: Reads, system: str | None, pool: str | None) -> dt.datetime | None:
    if system is not None and pool is not None:
        return await reads.last_update(system, pool)
    updates = [p.last_update for p in (await reads.pools()).pools if p.last_update is not None]
    return max(updates) if updates else None


async def events_of(
    request: Request, system: str | None, pool: str | None, limit: int, offset: int
) -> EventList:
    system, pool = system or None, pool or None  # a form's empty choice: no filter
    if system is not None and pool is not None:
        check_pool(system, pool)
    elif system is not None:
        check_system(system)
    found = await reads_of(request).events(system, pool, limit=limit, offset=offset)
    if found is None:
        raise NotFound(f"no players in pool {system}/{pool}")
    return found


@router.get(
    "/v1/events",
    tags=["ratings"],
    responses=answers("EventList", "The latest rated events, newest first by end date."),
    summary="The latest events",
)
async def events_api(
    request: Request,
    system: SystemFilter = None,
    pool: PoolFilter = None,
    limit: EventsLimit = 50,
    offset: EventsOffset = 0,
) -> Response:
    found = await events_of(request, system, pool, limit, offset)
    return cached_json(request, found, await latest_update(reads_of(request), system, pool))


@router.get(
    "/v1/pools/{system}/{pool}/changes",
    tags=["ratings"],
    responses=answers("PoolChanges", "The biggest gains and losses of the pool's latest list."),
    summary="A pool's biggest changes",
)
async def changes_api(
    request: Request, system: str, pool: str, limit: ChangesLimit = 20
) -> Response:
    check_pool(system, pool)
    reads = reads_of(request)
    found = await reads.changes(system, pool, limit=limit)
    if found is None:
        raise NotFound(f"no players in pool {system}/{pool}")
    return cached_json(request, found, await reads.last_update(system, pool))


@router.get("/events", include_in_schema=False)
async def events_page(
    request: Request,
    system: SystemFilter = None,
    pool: PoolFilter = None,
    offset: EventsOffset = 0,
) -> Response:
    found = await events_of(request, system, pool, EVENTS_PAGE, offset)
    rated = {(p.system, p.pool) for p in (await reads_of(request).pools()).pools}
    pools = [  # each answers; a platform's own pools too (D70)
        (s, p) for s in SYSTEMS for p in pool_order(s, (p for t, p in rated if t == s))
    ]
    body = render_page(
        request,
        "events.html",
        found=found,
        pools=pools,
        paging=Paging(offset, EVENTS_PAGE, found.total),
        api=events_api_url(system=system, pool=pool, limit=EVENTS_PAGE, offset=offset),
        events_url=events_url,
    )
    return cached(request, body, HTML, await latest_update(reads_of(request), system, pool))


@router.get("/pools/{system}/{pool}/changes", include_in_schema=False)
async def changes_page(request: Request, system: str, pool: str) -> Response:
    check_pool(system, pool)
    reads = reads_of(request)
    found = await reads.changes(system, pool)
    if found is None:
        raise NotFound(f"no players in pool {system}/{pool}")
    body = render_page(
        request,
        "changes.html",
        found=found,
        api=f"{changes_url(system, pool).replace('/pools', '/v1/pools', 1)}",
    )
    return cached(request, body, HTML, await reads.last_update(system, pool))


# ---------------------------------------------------------------- the pages' helpers


class Paging:
    """Where a page of `size` rows from `offset` lies among `total` (D47: rows x-y of N,
    page k of n, and the offsets of the first, previous, next and last pages; None where
    there is no such page)."""

    def __init__(self, offset: int, size: int, total: int):
        self.total = total
        self.first_row = offset + 1 if total and offset < total else 0
        self.last_row = min(offset + size, total)
        self.page = offset // size + 1
        self.pages = max((total + size - 1) // size, 1)
        last = (self.pages - 1) * size
        self.first = 0 if offset > 0 else None
        self.previous = max(offset - size, 0) if offset > 0 else None
        self.next = offset + size if offset + size < total else None
        self.last = last if offset < last else None


def list_api_url(system: str, pool: str, **query: object) -> str:
    """The read API's path of the document a list page shows (its `data-api`, D37)."""
    args = query_of(query)
    return f"/v1/pools/{segment(system)}/{segment(pool)}/players" + (
        f"?{urlencode(args)}" if args else ""
    )


def events_api_url(**query: object) -> str:
    args = query_of(query)
    return "/v1/events" + (f"?{urlencode(args)}" if args else "")


def changes_url(system: str, pool: str) -> str:
    return f"/pools/{segment(system)}/{segment(pool)}/changes"


def events_url(**query: object) -> str:
    args = query_of(query)
    return "/events" + (f"?{urlencode(args)}" if args else "")
