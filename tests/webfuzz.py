"""Requests for any route of the HTTP side, with any parameter values (Hypothesis): the GET
routes are walked from `app.routes`, so a new route or parameter is drawn without a change
here. Used by tests/unit/test_web_guard.py (the fake read model) and
tests/integration/test_read_side_guard.py (the Redis read model)."""

from __future__ import annotations

from urllib.parse import quote, urlencode

from fastapi.routing import APIRoute, iter_route_contexts
from hypothesis import strategies as st

# Values that have broken parsers somewhere: beyond int64, floats, blanks, signs, radix
# prefixes, a huge exponent, words.
AWKWARD = [
    "",
    " ",
    "0",
    "-0",
    "-1",
    "00",
    "1.0",
    "1e3",
    "1e309",
    "nan",
    "inf",
    "0x10",
    "1_000",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "99999999999999999999",
    "true",
    "false",
    "yes",
    "null",
    "%",
    "%00",
    "..",
    "../..",
    "cfc",
    "regular",
    "fide",
    "standard",
    "naspa",
    "nwl",
    "100001",
    "2010001",
    "ottawa-fall-open-2025",
]
text = st.text(st.characters(exclude_categories=("Cs",)), max_size=200)  # no lone surrogates
value = st.one_of(
    st.sampled_from(AWKWARD),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    text,
    st.text(max_size=5000),  # long
)


def all_routes(app) -> list:
    """Every route and mount of the app, those of the included routers too (FastAPI 0.165
    keeps an included router as one entry of `app.routes`)."""
    return [context.original_route for context in iter_route_contexts(app.routes)]


def get_routes(app) -> list[APIRoute]:
    """Every FastAPI route that answers GET (the API's, the pages', the operators')."""
    return [r for r in all_routes(app) if isinstance(r, APIRoute) and "GET" in r.methods]


def path_of(route: APIRoute, values: dict[str, str]) -> str:
    path = route.path
    for param in route.dependant.path_params:
        for form in (f"{{{param.name}:path}}", f"{{{param.name}}}"):
            if form in path:
                keep = "/" if form.endswith(":path}") else ""
                path = path.replace(form, quote(values[param.name], safe=keep) or "-")
    return path


@st.composite
def requests(draw, app) -> tuple[str, str]:
    """(method, URL path with its query) for one route, the route's own parameters and a
    few others, each with any value (or left out)."""
    route = draw(st.sampled_from(get_routes(app)))
    values = {p.name: draw(value) for p in route.dependant.path_params}
    query: list[tuple[str, str]] = []
    for param in route.dependant.query_params:
        if draw(st.booleans()):
            query += [(param.alias, draw(value)) for _ in range(draw(st.integers(1, 2)))]
    query += draw(
        st.lists(st.tuples(st.sampled_from(["x", "limit", "page", ""]), value), max_size=2)
    )
    url = path_of(route, values) + ("?" + urlencode(query) if query else "")
    return draw(st.sampled_from(["GET", "HEAD"])), url
