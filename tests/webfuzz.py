"""Requests for any route of the HTTP side, with any parameter values (Hypothesis): the GET
routes are walked from the app's routes, so a new route or parameter is drawn without a
change here. Half the requests give every parameter a value its declaration accepts (so
that they get past the checks to the read model, where a value the checks let through can
still break a query), the others one parameter any value at all. Used by
tests/unit/test_web_guard.py (the fake read model) and
tests/integration/test_read_side_guard.py (the Redis read model)."""

from __future__ import annotations

from urllib.parse import quote, urlencode

from annotated_types import Ge, Le, MaxLen
from fastapi.routing import APIRoute, iter_route_contexts
from hypothesis import strategies as st

from schemas.common import POOLS

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
    "100001",
    "ottawa-fall-open-2025",
]
BIG = [2**31 - 1, 2**31, 2**53 + 1, 2**63 - 1, 2**63, 2**64, 10**20, 10**30]
text = st.text(st.characters(exclude_categories=("Cs",)), max_size=200)  # no lone surrogates
anything = st.one_of(
    st.sampled_from(AWKWARD),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    text,
    st.text(max_size=5000),  # long
)
# Path parameters that exist (the fixtures' pools, players and events): with them, the
# query's parameters reach the read model.
PAIRS = [(system, pool) for system, pools in POOLS.items() for pool in pools]
KNOWN = {
    "player_id": ["100001", "2010001", "c1", "c2"],
    "event_id": ["ottawa-fall-open-2025", "montreal-international-2025", "club-05"],
}


def all_routes(app) -> list:
    """Every route and mount of the app, those of the included routers too (FastAPI 0.165
    keeps an included router as one entry of `app.routes`)."""
    return [context.original_route for context in iter_route_contexts(app.routes)]


def get_routes(app) -> list[APIRoute]:
    """Every FastAPI route that answers GET (the API's, the pages', the operators')."""
    return [r for r in all_routes(app) if isinstance(r, APIRoute) and "GET" in r.methods]


def accepted(param) -> st.SearchStrategy[str]:
    """Values the parameter's declaration accepts (bounds, lengths, patterns)."""
    kind = param.field_info.annotation
    meta = {type(m): m for m in param.field_info.metadata}
    if kind is int:
        low = meta[Ge].ge if Ge in meta else None
        high = meta[Le].le if Le in meta else None
        within = [n for n in BIG if (low is None or n >= low) and (high is None or n <= high)]
        edges = [n for n in (low, high) if n is not None] + within
        return st.one_of(st.integers(low, high), st.sampled_from(edges)).map(str)
    if kind is bool:
        return st.sampled_from(["true", "false", "1", "0", "yes", "no", "on", "off"])
    pattern = next(
        (m.pattern for m in param.field_info.metadata if getattr(m, "pattern", None)), None
    )
    if pattern is not None:  # an id
        return st.one_of(
            st.sampled_from(KNOWN.get(param.name, ["x"])), st.from_regex(pattern, fullmatch=True)
        )
    longest = meta[MaxLen].max_length if MaxLen in meta else 200
    return st.text(st.characters(exclude_categories=("Cs",)), max_size=longest)


def path_of(route: APIRoute, values: dict[str, str]) -> str:
    path = route.path
    for param in route.dependant.path_params:
        for form in (f"{{{param.name}:path}}", f"{{{param.name}}}"):
            if form in path:
                keep = "/" if form.endswith(":path}") else ""
                path = path.replace(form, quote(values[param.name], safe=keep) or "-")
    return path


@st.composite
def requests(
    draw,
    app,
    pools: list[tuple[str, str]] = PAIRS,
    route: APIRoute | None = None,
    negative: bool = True,
) -> tuple[str, str]:
    """(method, URL path with its query) for `route` (default: any GET route): with
    `negative`, half the time one parameter with any value, else (and always without it)
    every parameter with a value its declaration accepts and the pool one of `pools`; each
    query parameter left out, or given once or twice; a few others."""
    route = route or draw(st.sampled_from(get_routes(app)))
    params = [*route.dependant.path_params, *route.dependant.query_params]
    broken = None
    if negative and params:
        broken = draw(st.none() | st.sampled_from([p.name for p in params]))

    def value_of(param) -> str:
        return draw(anything if param.name == broken else accepted(param))

    values = {p.name: value_of(p) for p in route.dependant.path_params}
    if {"system", "pool"} <= set(values) - {broken} and (not negative or draw(st.booleans())):
        values["system"], values["pool"] = draw(st.sampled_from(pools))
    query: list[tuple[str, str]] = []
    for param in route.dependant.query_params:
        if param.name == broken or draw(st.booleans()):
            query += [(param.alias, value_of(param)) for _ in range(draw(st.integers(1, 2)))]
    if negative:
        query += draw(st.lists(st.tuples(st.sampled_from(["x", "page", ""]), anything), max_size=2))
    url = path_of(route, values) + ("?" + urlencode(query) if query else "")
    return draw(st.sampled_from(["GET", "HEAD"])), url
