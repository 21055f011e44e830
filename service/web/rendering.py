"""The pages' Jinja2 environment (templates in `templates/`, autoescaped) and the small
formatting filters they share (numbers: `people.py`)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import jinja2
from markupsafe import Markup

from schemas.systems import BY_NAME
from service.web import people

HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"


def number(value: float | int | None, places: int = 2) -> str:
    """A figure with at most `places` decimals, half away from zero (people.plain)."""
    return people.plain(value, places, trim=True)


def rating(value: int | None) -> str:
    return "unrated" if value is None else str(value)


def when(value: dt.date | dt.datetime | None) -> str:
    if value is None:
        return ""
    if isinstance(value, dt.datetime):
        return (
            value.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
            if value.tzinfo
            else value.strftime("%Y-%m-%d %H:%M")
        )
    return value.isoformat()


def segment(text: str) -> str:
    """One path segment (an id may hold `/`: it is kept by the `:path` routes)."""
    return quote(text, safe="@:")


def query_of(query: dict[str, Any]) -> dict[str, Any]:
    """The query's arguments that are set (true as `true`)."""
    return {
        k: "true" if v is True else v for k, v in query.items() if v not in (None, "", False, 0)
    }


def pool_url(system: str, pool: str, **query: Any) -> str:
    args = query_of(query)
    return f"/pools/{segment(system)}/{segment(pool)}" + (f"?{urlencode(args)}" if args else "")


def player_url(system: str, pool: str, player_id: str) -> str:
    """Where a page links a player of a pool: the profile, at the pool's section (D38; the
    old `/pools/.../players/...` page redirects there)."""
    return profile_url(system, player_id, pool)


def profile_url(system: str, player_id: str, pool: str | None = None) -> str:
    """The player's profile (D38), at the pool's section when one is named."""
    return f"/players/{segment(system)}/{segment(player_id)}" + (f"#{pool}" if pool else "")


def event_url(event_id: str, **query: Any) -> str:
    args = query_of(query)
    return f"/events/{segment(event_id)}" + (f"?{urlencode(args)}" if args else "")


environment = jinja2.Environment(
    loader=jinja2.FileSystemLoader(TEMPLATES),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def system_title(system: str) -> str:
    """The system's name for people, from the systems table (schemas/systems.py: "Glicko-2")."""
    info = BY_NAME.get(system)
    return info.title if info is not None else system.upper()


def system_name(system: str) -> Markup:
    """The system's name in a page: text, not a figure (the 2 of Glicko-2, D37)."""
    return Markup("<span data-text>{}</span>").format(system_title(system))


environment.filters.update(signed=people.signed, number=number, rating=rating, when=when)
environment.filters.update(system_name=system_name, system_title=system_title)
environment.globals.update(
    fig=people.figure,
    pool_url=pool_url,
    player_url=player_url,
    profile_url=profile_url,
    event_url=event_url,
)


def render(template: str, **context: Any) -> bytes:
    return environment.get_template(template).render(**context).encode()


def render_page(request: Any, template: str, **context: Any) -> bytes:
    """A page of the app serving `request` (page_of)."""
    return page_of(request.app.state, template, **context)


def page_of(state: Any, template: str, **context: Any) -> bytes:
    """A page of the app whose `app.state` is `state`: the federation's header (`look`,
    look.py: D52), its links to the API's documentation only where `/docs` is served on
    this port (D31: not with an operators' port)."""
    from service.runtime.look import Look

    docs = getattr(state, "public_docs", True)
    look = getattr(state, "look", None) or Look()
    return render(template, docs_link="/docs" if docs else None, look=look, **context)
