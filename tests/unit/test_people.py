"""The pages' numbers for people (service/web/people.py, D36) and the checker that compares
every figure a page shows with the read API (tests/figures.py)."""

from __future__ import annotations

import pytest

from service.web.people import figure, plain, rounded, score, signed
from tests.figures import check_page

MINUS = "\u2212"


@pytest.mark.parametrize(
    ("value", "places", "text"),
    [
        (1630.33, 0, "1630"),  # issue 31: was "163" (formatted, then trailing zeros stripped)
        (1700.2, 0, "1700"),  # was "17"
        (2000.5, 0, "2001"),  # was "2": half away from zero
        (1234.5, 0, "1235"),  # was "1234" (half to even)
        (1235.5, 0, "1236"),
        (-2.5, 0, MINUS + "3"),  # away from zero on the negative side too
        (-0.4, 0, "0"),  # no "-0"
        (0.125, 2, "0.13"),  # the float's shortest repr is 0.125: half up
        (2.675, 2, "2.68"),  # repr 2.675 (the binary value is 2.67499...): as printed
        (0.5, 2, "0.50"),
        (1500, 0, "1500"),
        ("12/5", 2, "2.40"),  # an exact rational of the messages
        ("-7/2", 0, MINUS + "4"),
    ],
)
def test_plain_rounds_half_away_from_zero_and_never_truncates(value, places, text):
    assert plain(value, places) == text


def test_signed_scores_and_no_value():
    assert [signed(12), signed(-11), signed(0), signed(0.4), signed(-0.5)] == [
        "+12",
        MINUS + "11",
        "0",
        "0",
        MINUS + "1",
    ]
    assert signed(2.45, 1) == "+2.5"
    assert [score(3.5), score(3.0), score(0.5), score(7)] == ["3.5", "3", "0.5", "7"]
    assert plain(None) == signed(None) == ""
    assert str(rounded(1630.33)) == "1630"


def test_figure_marks_the_field_it_shows():
    assert str(figure(1630.33, "players.0.performance")) == (
        '<data value="1630.33" data-f="players.0.performance">1630</data>'
    )
    assert str(figure(None, "rating", empty="unrated")) == (
        '<data value="" data-f="rating">unrated</data>'
    )
    assert str(figure(-5, "change", sign=True)) == (
        f'<data value="-5" data-f="change">{MINUS}5</data>'
    )


API = {"players": [{"performance": 1630.33, "change": -5, "rating": None, "score": 3.5}]}


def page(*cells: str) -> str:
    return f'<html><body><main data-api="/v1/x"><p>{"".join(cells)}</p></main></body></html>'


def test_the_checker_passes_the_right_figures():
    html = page(
        str(figure(1630.33, "players.0.performance")),
        str(figure(-5, "players.0.change", sign=True)),
        str(figure(None, "players.0.rating", empty="unrated")),
        str(figure(3.5, "players.0.score", trim=True)),
        '<span data-text>id 1503014</span> <time datetime="2025-11-02">2025-11-02</time>',
    )
    assert check_page(html, lambda path: API) == (4, [])


@pytest.mark.parametrize(
    ("cell", "problem"),
    [
        ('<data value="" data-f="players.0.performance">163</data>', "to 0 decimals is 1630"),
        ('<data value="" data-f="players.0.performance">1630.4</data>', "to 1 decimals is 1630.3"),
        ('<data value="" data-f="players.0.change">+5</data>', "to 0 decimals is -5"),
        ('<data value="" data-f="players.0.rating">1500</data>', "the API says None"),
        ('<data value="" data-f="players.0.k">20</data>', "the API has no such field"),
        ('<data value="" data-f="players.0.score">three</data>', "not a number"),
        ("Rated games 0", "a number outside the convention"),
    ],
)
def test_the_checker_finds_each_kind_of_wrong_number(cell, problem):
    checked, problems = check_page(page(cell), lambda path: API)
    assert len(problems) == 1 and problem in problems[0], problems


def test_the_checker_finds_a_half_to_even_rounding():
    api = {"performance": 1234.5}
    html = page('<data value="" data-f="performance">1234</data>')
    assert "is 1235" in check_page(html, lambda path: api)[1][0]
