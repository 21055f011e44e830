"""A player's profile across the pools of one system (D38): the read API's
`GET /v1/players/{system}/{player_id}` and the page `/players/{system}/{player_id}` that
shows it, with each pool's chart (chart.py) and history (the history route's JSON)."""

from __future__ import annotations

import asyncio
import datetime as dt
from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Path
from starlette.requests import Request
from starlette.responses import Response

from schemas.common import SYSTEMS
from schemas.reads import HistoryEntry, PlayerProfile, ProfilePool
from service.web.api import PlayerId, answers, reads_of
from service.web.caching import HTML, cached, cached_json
from service.web.chart import Chart, rating_chart
from service.web.errors import NotFound
from service.web.rendering import render_page, segment

api = APIRouter(prefix="/v1", tags=["ratings"])
pages = APIRouter(include_in_schema=False)
router = APIRouter()
SEX = {"F": "female", "M": "male"}
# A system's name (cfc, fide, naspa): declared, so that a value with a `/` is a 400 and not
# a different player id; an unknown name is a 404.
SystemName = Annotated[
    str, Path(pattern=r"^[a-z][a-z0-9]{0,31}$", description="Rating system: cfc, fide or naspa.")
]


def check_system(system: str) -> None:
    if system not in SYSTEMS:
        raise NotFound(f"unknown system {system!r} (known: {', '.join(SYSTEMS)})")


def updated(profile: PlayerProfile) -> dt.datetime | None:
    """The latest update of the player's pools (Last-Modified)."""
    times = [p.last_update for p in profile.pools if p.last_update is not None]
    return max(times) if times else None


async def profile_of(request: Request, system: str, player_id: str) -> PlayerProfile:
    check_system(system)
    found = await reads_of(request).profile(system, player_id)
    if found is None:
        raise NotFound(f"no player {player_id!r} in system {system}")
    return found


def profile_api(system: str, player_id: str) -> str:
    return f"/v1/players/{segment(system)}/{segment(player_id)}"


def history_api(system: str, pool: str, player_id: str) -> str:
    return f"/v1/pools/{segment(system)}/{segment(pool)}/players/{segment(player_id)}/history"


@api.get(
    "/players/{system}/{player_id:path}",
    responses=answers(
        "PlayerProfile", "The player in every pool of the system: labels, ratings, live ratings."
    ),
    summary="A player's profile",
)
async def profile(request: Request, system: SystemName, player_id: PlayerId) -> Response:
    found = await profile_of(request, system, player_id)
    return cached_json(request, found, updated(found))


@dataclass(frozen=True)
class Section:
    """One pool of the page: its entry in the profile, its history and chart, and which
    history lines are of the open period (shown as "live")."""

    index: int  # in the profile's `pools`
    pool: ProfilePool
    api: str  # the history's read API path
    entries: list[HistoryEntry]
    chart: Chart | None
    live_from: int  # entries from this index on are after the last list


def section(
    system: str, player_id: str, name: str, index: int, pool: ProfilePool, entries: list
) -> Section:
    lists = [i for i, e in enumerate(entries) if e.kind == "list"]
    return Section(
        index=index,
        pool=pool,
        api=history_api(system, pool.pool, player_id),
        entries=entries,
        chart=rating_chart(
            entries, name=f"{name}, {system.upper()} {pool.pool}", current=pool.rating
        ),
        live_from=lists[-1] + 1 if lists else 0,
    )


@pages.get("/players/{system}/{player_id:path}")
async def profile_page(request: Request, system: SystemName, player_id: PlayerId) -> Response:
    found = await profile_of(request, system, player_id)
    reads = reads_of(request)
    histories = await asyncio.gather(
        *(reads.history(system, p.pool, player_id) for p in found.pools)
    )
    name = found.name or found.id
    sections = [
        section(system, player_id, name, n, pool, h.entries if h is not None else [])
        for n, (pool, h) in enumerate(zip(found.pools, histories))
    ]
    body = render_page(
        request,
        "profile.html",
        profile=found,
        api=profile_api(system, player_id),
        sections=sections,
        sex=SEX.get(found.sex or "", ""),
    )
    return cached(request, body, HTML, updated(found))


router.include_router(api)
router.include_router(pages)
