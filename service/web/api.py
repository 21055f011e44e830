"""The read API, `GET /v1/...`: read-only JSON, every body a msgspec Struct of
`schemas/reads.py` (or the `ratings.updated/v1` message of an event), encoded by msgspec.
FastAPI only routes and checks the parameters; the OpenAPI document takes the Structs'
own JSON Schemas (`openapi.py`)."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, get_args

from fastapi import APIRouter, Path, Query
from starlette.requests import Request
from starlette.responses import Response

from schemas.common import EVENT_ID_PATTERN, PLAYER_ID_PATTERN, SYSTEMS, Federation, Title
from service.web.caching import JSON, cached_json
from service.web.errors import NotFound, check_pool
from service.web.source import Reads

router = APIRouter(prefix="/v1", tags=["ratings"])

FEDERATION_PATTERN: str = get_args(Federation)[1].pattern  # the record's own (D35)
TITLE_PATTERN: str = get_args(Title)[1].pattern
MAX_OFFSET = 1_000_000_000  # more players than any pool has: beyond it, a 400, not Redis's error
Limit = Annotated[int, Query(ge=1, le=500, description="Players on the page (1-500).")]
Offset = Annotated[int, Query(ge=0, le=MAX_OFFSET, description="Players skipped before the page.")]
PlayerId = Annotated[
    str,
    Path(pattern=PLAYER_ID_PATTERN, description="Player id: 1-64 characters of [A-Za-z0-9._:@/-]."),
]
EventId = Annotated[
    str,
    Path(pattern=EVENT_ID_PATTERN, description="Event id: 1-128 characters of [A-Za-z0-9._:-]."),
]
Search = Annotated[
    str | None,
    Query(max_length=100, description="Search: any word's beginning of the name, or the id."),
]
Unrated = Annotated[
    bool, Query(description="Include the unrated players (listed after the rated ones).")
]
Active = Annotated[
    bool,
    Query(
        description="Only the players active on the list: a rated game in the year up to the "
        "list's date (FIDE: the 12 rating periods up to the last close; D46)."
    ),
]
FederationFilter = Annotated[
    str | None,
    Query(
        pattern=FEDERATION_PATTERN,
        max_length=32,
        description="Only the players of this federation (or region), as the list gives it.",
    ),
]
TitleFilter = Annotated[
    str | None,
    Query(
        pattern=TITLE_PATTERN,
        max_length=8,
        description="Only the players with this title (GM, IM, WGM, FM ...), as the list gives it.",
    ),
]


def ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def answers(
    schema: str, description: str, *, bad_request: bool = True
) -> dict[int | str, dict[str, Any]]:
    """The route's documented answers: 200 with `schema`, 404 (and 400) with ApiError, 503
    with ServerError and Retry-After."""
    documented: dict[int | str, dict[str, Any]] = {
        200: {"description": description, "content": {JSON: {"schema": ref(schema)}}},
        304: {"description": "Not modified: `If-None-Match` names the current ETag."},
        404: {
            "description": "Not found: the message says what.",
            "content": {JSON: {"schema": ref("ApiError")}},
        },
    }
    if bad_request:
        documented[400] = {
            "description": "A bad parameter, named in the message.",
            "content": {JSON: {"schema": ref("ApiError")}},
        }
    documented[503] = {
        "description": "Redis does not answer: try again after `Retry-After` seconds.",
        "headers": {
            "Retry-After": {"description": "Seconds to wait.", "schema": {"type": "integer"}}
        },
        "content": {JSON: {"schema": ref("ServerError")}},
    }
    return documented


def reads_of(request: Request) -> Reads:
    return request.app.state.reads


async def pool_updated(reads: Reads, system: str, pool: str) -> dt.datetime | None:
    """The pool's last update (Last-Modified); None for a system the service does not rate."""
    return await reads.last_update(system, pool) if system in SYSTEMS else None


@router.get(
    "/pools",
    responses=answers("PoolList", "The pools the service rates.", bad_request=False),
    summary="The pools",
)
async def pools(request: Request) -> Response:
    found = await reads_of(request).pools()
    updates = [p.last_update for p in found.pools if p.last_update is not None]
    return cached_json(request, found, max(updates) if updates else None)


@router.get(
    "/pools/{system}/{pool}/players",
    responses=answers("PlayerList", "One page of the pool's rating list, highest first."),
    summary="A pool's rating list",
)
async def players(
    request: Request,
    system: str,
    pool: str,
    limit: Limit = 50,
    offset: Offset = 0,
    q: Search = None,
    unrated: Unrated = False,
    active: Active = False,
    federation: FederationFilter = None,
    title: TitleFilter = None,
) -> Response:
    check_pool(system, pool)
    reads = reads_of(request)
    page = await reads.players(
        system,
        pool,
        limit=limit,
        offset=offset,
        q=q or None,
        unrated=unrated,
        active=active,
        federation=federation or None,
        title=title or None,
    )
    if page is None:
        raise NotFound(f"no players in pool {system}/{pool}")
    return cached_json(request, page, await pool_updated(reads, system, pool))


# The history route comes first: a player id may hold `/` (`{player_id:path}`).
@router.get(
    "/pools/{system}/{pool}/players/{player_id:path}/history",
    responses=answers("PlayerHistory", "The player's events and lists in the pool, in date order."),
    summary="A player's history",
)
async def history(request: Request, system: str, pool: str, player_id: PlayerId) -> Response:
    check_pool(system, pool)
    reads = reads_of(request)
    found = await reads.history(system, pool, player_id)
    if found is None:
        raise NotFound(f"no player {player_id!r} in pool {system}/{pool}")
    return cached_json(request, found, await pool_updated(reads, system, pool))


@router.get(
    "/pools/{system}/{pool}/players/{player_id:path}",
    responses=answers("PlayerView", "The player's current record in the pool, with the rank."),
    summary="A player",
)
async def player(request: Request, system: str, pool: str, player_id: PlayerId) -> Response:
    check_pool(system, pool)
    reads = reads_of(request)
    found = await reads.player(system, pool, player_id)
    if found is None:
        raise NotFound(f"no player {player_id!r} in pool {system}/{pool}")
    return cached_json(request, found, await pool_updated(reads, system, pool))


@router.get(
    "/events/{event_id}",
    responses=answers(
        "RatingsUpdated", "The last `ratings.updated/v1` message published for the event."
    ),
    summary="An event's result",
)
async def event(request: Request, event_id: EventId) -> Response:
    reads = reads_of(request)
    found = await reads.event(event_id)
    if found is None:
        raise NotFound(f"no event {event_id!r}")
    return cached_json(request, found, await pool_updated(reads, found.system, found.pool))
