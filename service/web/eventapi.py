"""The read API of an event beyond its last message: `GET /v1/events/{event_id}/crosstable`
(D42), `GET /v1/events/{event_id}/revisions` (D43) and one revision's message (D101), msgspec Structs of
`schemas/reads.py` with the same validators and 304 as every route (caching.py)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter
from fastapi import Path as FastPath
from starlette.requests import Request
from starlette.responses import Response

from service.web.api import EventId, answers, pool_updated, reads_of
from service.web.caching import cached_json
from service.web.errors import NotFound

router = APIRouter(prefix="/v1", tags=["ratings"])


@router.get(
    "/events/{event_id}/crosstable",
    responses=answers(
        "Crosstable",
        "The event's crosstable: the players by points, each round's opponent and result, "
        "the running score, the ratings (an open FIDE period's projection).",
    ),
    summary="An event's crosstable",
)
async def crosstable(request: Request, event_id: EventId) -> Response:
    reads = reads_of(request)
    found = await reads.crosstable(event_id)
    if found is None:
        raise NotFound(f"no event {event_id!r}")
    return cached_json(request, found, await pool_updated(reads, found.system, found.pool))


@router.get(
    "/events/{event_id}/revisions",
    responses=answers(
        "EventRevisions",
        "The event's published results, oldest first: rated, corrected, withdrawn, re-rated "
        "after another event changed; when, and why where the input said.",
    ),
    summary="An event's revisions",
)
async def revisions(request: Request, event_id: EventId) -> Response:
    reads = reads_of(request)
    found = await reads.revisions(event_id)
    if found is None:
        raise NotFound(f"no event {event_id!r}")
    return cached_json(request, found, await pool_updated(reads, found.system, found.pool))


@router.get(
    "/events/{event_id}/revisions/{revision}",
    responses=answers(
        "RatingsUpdated",
        "The `ratings.updated/v1` message the event's revision published, every figure "
        "included (revision 0: its first result): the audit trail kept in Redis (D101).",
    ),
    summary="One revision's message",
)
async def revision_message(
    request: Request, event_id: EventId, revision: Annotated[int, FastPath(ge=0, le=1_000_000)]
) -> Response:
    reads = reads_of(request)
    found = await reads.revision_message(event_id, revision)
    if found is None:
        raise NotFound(f"no revision {revision} of event {event_id!r}")
    return cached_json(request, found, await pool_updated(reads, found.system, found.pool))
