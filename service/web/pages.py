"""The pages for people: server-rendered HTML (Jinja2, `templates/`), no JavaScript. The
same read model and Structs as the API, so the pages show the API's figures."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from fastapi import APIRouter, Query
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from schemas.common import SYSTEMS
from service.web.api import (
    MAX_OFFSET,
    EventId,
    FederationFilter,
    PlayerId,
    TitleFilter,
    reads_of,
)
from service.web.caching import HTML, cached
from service.web.errors import NotFound, check_pool
from service.web.lists import Paging, changes_url, events_api_url, events_url, list_api_url
from service.web.rendering import profile_url, render_page

router = APIRouter(include_in_schema=False)
PAGE_SIZE = 50
HOME_EVENTS = 10  # the latest events on the home page
# The `details` fields that list one row per game (or segment): CFC `opponents`, FIDE
# `games`, NASPA `segments`; any other list of objects is shown the same way.
PER_GAME = ("opponents", "games", "segments")


@router.get("/")
async def home(request: Request) -> Response:
    """The pools with their list dates and links (list, active players, biggest changes),
    and the latest events of every pool (D48)."""
    reads = reads_of(request)
    found = await reads.pools()
    latest = await reads.events(limit=HOME_EVENTS)
    updates = [p.last_update for p in found.pools if p.last_update is not None]
    body = render_page(
        request,
        "home.html",
        pools=found.pools,
        latest=latest,
        events_api=events_api_url(limit=HOME_EVENTS),
        events_url=events_url,
        changes_url=changes_url,
    )
    return cached(request, body, HTML, max(updates) if updates else None)


@router.get("/pools/{system}/{pool}")
async def pool_list(
    request: Request,
    system: str,
    pool: str,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    q: Annotated[str | None, Query(max_length=100)] = None,
    unrated: bool = False,
    active: bool = False,
    federation: FederationFilter = None,
    title: TitleFilter = None,
) -> Response:
    """A page of the pool's list with its filters (D46, D47) and where it lies (Paging)."""
    check_pool(system, pool)
    reads = reads_of(request)
    query = {
        "q": q or None,
        "unrated": unrated,
        "active": active,
        "federation": federation or None,
        "title": title or None,
    }
    page = await reads.players(system, pool, limit=PAGE_SIZE, offset=offset, **query)  # type: ignore[arg-type]  # the filters' own types
    if page is None:
        raise NotFound(f"no players in pool {system}/{pool}")
    body = render_page(
        request,
        "pool.html",
        page=page,
        query=query,
        paging=Paging(offset, PAGE_SIZE, page.total),
        api=list_api_url(system, pool, limit=PAGE_SIZE, offset=offset, **query),
        changes_url=changes_url,
        events_url=events_url,
    )
    return cached(request, body, HTML, await reads.last_update(system, pool))


@router.get("/pools/{system}/{pool}/players/{player_id:path}")
async def player(request: Request, system: str, pool: str, player_id: PlayerId) -> Response:
    """The page before the profile: a permanent redirect to the profile's section of the
    pool (D38); the API's route of it stays as it is."""
    check_pool(system, pool)
    if await reads_of(request).player(system, pool, player_id) is None:
        raise NotFound(f"no player {player_id!r} in pool {system}/{pool}")
    return RedirectResponse(profile_url(system, player_id, pool), status_code=301)


@router.get("/events/{event_id}")
async def event(request: Request, event_id: EventId, games: bool = False) -> Response:
    reads = reads_of(request)
    found = await reads.event(event_id)
    if found is None:
        raise NotFound(f"no event {event_id!r}")
    players = [{"result": p, **figures(p.details)} for p in found.players]
    names = {p.id: p.name for p in found.players if p.name}
    body = render_page(
        request, "event.html", event=found, players=players, games=games, names=names
    )
    updated = await reads.last_update(found.system, found.pool) if found.system in SYSTEMS else None
    return cached(request, body, HTML, updated)


def figures(details: msgspec.Struct | None) -> dict[str, Any]:
    """A player's `details` for the page: `scalars` (name, text) and `tables` (name, the
    columns, the rows), whatever the system put there; nothing when absent."""
    if details is None:
        return {"scalars": [], "tables": []}
    plain = msgspec.to_builtins(details)
    scalars, tables = [], []
    for key, value in plain.items():
        if key == "system":
            continue
        if isinstance(value, list) and value and all(isinstance(row, dict) for row in value):
            columns: list[str] = []
            for row in value:
                columns += [c for c in row if c not in columns]
            tables.append((key, columns, value))
        elif value not in (None, [], {}):
            scalars.append((key, text_of(value)))
    tables.sort(key=lambda table: (table[0] not in PER_GAME, table[0]))
    return {"scalars": scalars, "tables": tables}


def text_of(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k} {text_of(v)}" for k, v in value.items() if v not in (None, [], {}))
    if isinstance(value, list):
        return ", ".join(text_of(v) for v in value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4f}".rstrip("0").rstrip(".")
    return str(value)
