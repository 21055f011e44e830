"""The pages for people: server-rendered HTML (Jinja2, `templates/`), no JavaScript. The
same read model and Structs as the API, so the pages show the API's figures."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any, NamedTuple

import msgspec
from fastapi import APIRouter, Query
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from schemas.common import PLAYER_ID_PATTERN
from service.web import people
from service.web.api import (
    MAX_OFFSET,
    EventId,
    FederationFilter,
    PlayerId,
    TitleFilter,
    pool_updated,
    reads_of,
)
from service.web.caching import HTML, cached
from service.web.errors import NotFound, check_pool
from service.web.lists import Paging, changes_url, events_api_url, events_url, list_api_url
from service.web.rendering import player_url, profile_url, render_page, segment

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
    """The event: its identity, crosstable (D42), results, each player's figures with the
    schema's labels (D44) and the revision history (D43); every figure tied to its API
    document (D37)."""
    reads = reads_of(request)
    found = await reads.event(event_id)
    table = await reads.crosstable(event_id)
    history = await reads.revisions(event_id)
    if found is None or table is None or history is None:
        raise NotFound(f"no event {event_id!r}")
    names = {p.id: p.name for p in table.players if p.name}
    message_api = f"/v1/events/{segment(event_id)}"
    panels = [
        (p, figures(p.details, f"players.{i}.details", found.system, found.pool, names))
        for i, p in enumerate(found.players)
    ]
    body = render_page(
        request,
        "event.html",
        event=found,
        table=table,
        history=history,
        panels=panels,
        games=games,
        message_api=message_api,
        projected=any(p.projection for p in table.players),
    )
    updated = await pool_updated(reads, found.system, found.pool)
    return cached(request, body, HTML, updated)


class Panel(NamedTuple):
    """One player's `details` for the page: `scalars` (label, shown) and `tables` (label,
    columns, rows of cells; a column or cell is (text, whether it holds figures))."""

    scalars: list[tuple[str, Markup]]
    tables: list[tuple[str, list[tuple[str, bool]], list[list[tuple[Markup, bool]]]]]


def figures(
    details: msgspec.Struct | None, path: str, system: str, pool: str, names: dict[str, str]
) -> Panel:
    """A player's `details` as the page shows them, whatever the system put there (D44):
    each field under the label its schema gives (`msgspec.Meta(title=...)`), in the
    Struct's order; a list of Structs as a table; a field with an exact sibling
    (`<field>_exact`) shown as the decimal the engines round to (2 places) with the exact
    value in the figure's `value`; `path` is where `details` is in the event's message."""
    panel = Panel([], [])
    if details is not None:
        _fields_of(details, path, "", panel, Links(system, pool, names))
    return panel


class Links(NamedTuple):
    system: str
    pool: str
    names: dict[str, str]


def _fields_of(struct: msgspec.Struct, path: str, prefix: str, panel: Panel, links: Links) -> None:
    for name, label, kind, value in _labelled(struct):
        if not _present(value):
            continue
        where = f"{path}.{name}"
        item = _item_of(kind)
        if isinstance(item, msgspec.inspect.StructType):
            rows = [list(_labelled(row)) for row in value]
            shown = [c for c in range(len(rows[0])) if any(_present(r[c][3]) for r in rows)]
            numbers = [all(_numeric(r[c][3]) for r in rows if _present(r[c][3])) for c in shown]
            cells = [
                [
                    (text_of(r[c][3], r[c][2], f"{where}.{n}.{r[c][0]}", links), number)
                    for c, number in zip(shown, numbers)
                ]
                for n, r in enumerate(rows)
            ]
            columns = [(rows[0][c][1], number) for c, number in zip(shown, numbers)]
            panel.tables.append((prefix + label, columns, cells))
        elif isinstance(_plain(kind), msgspec.inspect.StructType):
            _fields_of(value, where, f"{prefix}{label}: ", panel, links)
        else:
            panel.scalars.append((prefix + label, text_of(value, kind, where, links)))


def _labelled(struct: msgspec.Struct) -> Iterator[tuple[str, str, Any, Any]]:
    """(field, label, type, value) of a Struct's fields in order, the `<field>_exact` ones
    folded into their field's: its value is then (number, exact)."""
    fields = msgspec.inspect.type_info(type(struct)).fields  # type: ignore[attr-defined]  # a Struct's info is a StructType
    names = {f.name for f in fields}
    for f in fields:
        if f.name.endswith("_exact") and f.name.removesuffix("_exact") in names:
            continue
        exact = f.name + "_exact" if f.name + "_exact" in names else None
        extra = f.type.extra_json_schema if isinstance(f.type, Metadata) else None
        title = extra.get("title") if extra else None
        label = title or f.name.replace("_", " ").capitalize()
        value = getattr(struct, f.name)
        if exact is not None and getattr(struct, exact) is not None:
            value = (value, getattr(struct, exact))
        yield f.name, label, f.type, value


Metadata = msgspec.inspect.Metadata


def _present(value: Any) -> bool:
    return value is not None and value != [] and value != ""


def _numeric(value: Any) -> bool:
    """A figure (right-aligned in a table): a number, or a (number, exact) pair."""
    return isinstance(value, (int, float, tuple)) and not isinstance(value, bool)


def _plain(kind: Any) -> Any:
    """The type without its metadata, and without None in a union of one type and None."""
    while isinstance(kind, Metadata):
        kind = kind.type
    if isinstance(kind, msgspec.inspect.UnionType):
        types = [t for t in kind.types if not isinstance(t, msgspec.inspect.NoneType)]
        if len(types) == 1:
            return _plain(types[0])
    return kind


def _item_of(kind: Any) -> Any:
    """The item type of a list type (None: not a list)."""
    plain = _plain(kind)
    return _plain(plain.item_type) if isinstance(plain, msgspec.inspect.ListType) else None


def text_of(value: Any, kind: Any, path: str, links: Links) -> Markup:
    """One value as the page shows it: a number through `fig` (D37: its API path; 2
    decimals at most for a non-whole one, the exact value's when it has one), yes / no,
    a player id as a link with the name, a code (a Literal) as code, other text marked as
    text (it may hold digits: a period, an event id); a list, its items."""
    plain = _plain(kind)
    if isinstance(value, tuple):  # (number, exact): the exact one, at `<field>_exact`
        return people.figure(value[1], f"{path}_exact", 2, trim=True)
    if isinstance(value, bool):
        return Markup("yes" if value else "no")
    if isinstance(value, int):
        return people.figure(value, path)
    if isinstance(value, float):
        return people.figure(value, path, 2, trim=True)
    if isinstance(value, list):
        item = _item_of(kind)
        return Markup(", ").join(
            text_of(v, item, f"{path}.{n}", links) for n, v in enumerate(value)
        )
    if isinstance(plain, msgspec.inspect.StrType) and plain.pattern == PLAYER_ID_PATTERN:
        name = links.names.get(value)
        shown = f"{name} ({value})" if name else value
        return Markup('<a href="{}" data-text>{}</a>').format(
            player_url(links.system, links.pool, value), shown
        )
    if isinstance(plain, msgspec.inspect.LiteralType):
        return Markup("<code>{}</code>").format(value)
    return Markup("<span data-text>{}</span>").format(value)
