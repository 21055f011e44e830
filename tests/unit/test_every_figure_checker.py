"""The browser test's checker catches the issue's "163" (D56): a page rendered by the pages'
own Jinja2 environment and `fig` (service/web/people.py), once with the formatter of D36 and
once with the formatter before it put back, read by `tests.figures.check_page` as the
browser test reads a DOM. And the crawl's page kinds are the app's routes."""

from __future__ import annotations

from collections import Counter

import pytest

from service.web import people
from service.web.rendering import environment
from tests.crawl import kind_of, page_routes, problem_kind
from tests.figures import check_page

# An event's results as the read API serves them: the figures (performance 1630.33
# shown as "163", 1700.2 as "17", 2000.5 as "2", 1234.5 rounded half to even).
EVENT = {
    "event_id": "open-dec",
    "players": [
        {"id": "f1", "name": "Hansen, Henrik", "new_rating": 2650, "change": -3,
         "score": 2.5, "expected": 2.675, "performance": 1630.33},
        {"id": "f2", "name": "Søndergaard, Sofie", "new_rating": 2385, "change": 12,
         "score": 3.0, "expected": 0.125, "performance": 1700.2},
        {"id": "f3", "name": "Łukasiewicz, Łucja", "new_rating": None, "change": None,
         "score": 0.5, "expected": None, "performance": 2000.5},
        {"id": "f4", "name": "Đorđević, Đorđe", "new_rating": 2010, "change": 0,
         "score": 1.0, "expected": 1.5, "performance": 1234.5},
    ],
}  # fmt: skip
PAGE = """<!doctype html><html lang="en"><body><main data-api="/v1/events/{{ event.event_id }}">
<h1 data-text>{{ event.event_id }}</h1>
<table><tbody>
{% for p in event.players %}{% set at = "players." ~ loop.index0 ~ "." %}
<tr><th scope="row" data-text>{{ p.name }} ({{ p.id }})</th>
<td>{{ fig(p.new_rating, at ~ "new_rating", empty="unrated") }}</td>
<td>{{ fig(p.change, at ~ "change", sign=True) }}</td>
<td>{{ fig(p.score, at ~ "score", 1, trim=True) }}</td>
<td>{{ fig(p.expected, at ~ "expected", 2) }}</td>
<td>{{ fig(p.performance, at ~ "performance") }}</td></tr>
{% endfor %}
</tbody></table></main></body></html>"""


def before_d36(value, places: int = 0, *, trim: bool = False) -> str:
    """The pages' formatter before D36: formatted (half to even), then trailing zeros cut."""
    if value is None:
        return ""
    return f"{float(value):.{places}f}".rstrip("0").rstrip(".")


def rendered() -> str:
    return environment.from_string(PAGE).render(event=EVENT)


def fetch(path: str) -> dict:
    assert path == "/v1/events/open-dec"
    return EVENT


def test_the_page_with_people_py_passes():
    assert check_page(rendered(), fetch) == (20, [])


def test_the_formatter_before_d36_is_caught_figure_by_figure(monkeypatch):
    monkeypatch.setattr(people, "plain", before_d36)
    checked, problems = check_page(rendered(), fetch)
    assert checked == 20
    found = {tuple(p.split("open-dec ")[1].split(":")[0].split(" shown ")): p for p in problems}
    assert set(found) == {
        ("players.0.performance", "'163'"),  # 1630.33: "1630", its zero cut
        ("players.1.performance", "'17'"),  # 1700.2
        ("players.2.performance", "'2'"),  # 2000.5: "2000" (half to even), zeros cut
        ("players.3.performance", "'1234'"),  # 1234.5: half to even
        ("players.0.expected", "'2.67'"),  # 2.675: the binary float below it
        ("players.1.expected", "'0.12'"),  # 0.125: half to even
        ("players.0.new_rating", "'265'"),  # 2650: a rating's zero cut
        ("players.3.new_rating", "'201'"),  # 2010
        ("players.3.change", "''"),  # 0: nothing left
    }, problems
    assert found[("players.0.performance", "'163'")].endswith(
        "the API's 1630.33 to 0 decimals is 1630"
    )
    assert found[("players.3.performance", "'1234'")].endswith("to 0 decimals is 1235")
    assert found[("players.3.change", "''")].endswith("not a number, the API says 0")
    assert Counter(problem_kind(p) for p in problems) == {
        "a wrong figure": 8,
        "not a number where the API has one": 1,
    }


def test_a_figure_left_unmarked_is_a_number_outside_the_convention():
    page = rendered().replace('<data value="1630.33" data-f="players.0.performance">', "<span>")
    _, problems = check_page(page.replace("1630</data>", "1630</span>"), fetch)
    assert [problem_kind(p) for p in problems] == ["a number outside the convention"]


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("/", "/"),
        ("/pools/fide/standard?offset=50", "/pools/{system}/{pool}"),
        ("/pools/cfc/regular/players/c1", "/pools/{system}/{pool}/players/{player_id:path}"),
        ("/events/open-dec", "/events/{event_id}"),
        ("/events/open-dec?games=true", "/events/{event_id} ?games"),
        ("/nowhere/at/all", "(no route) /nowhere/at/all"),
    ],
)
def test_a_page_s_kind_is_its_route(url, kind):
    assert kind_of(url, page_routes()) == kind
