"""Every number a page shows, checked against the read API (D36, issue 31).

The convention the pages keep (service/web/people.py):

- a figure is `<data value="..." data-f="PATH">TEXT</data>`, PATH the field in the JSON of
  the read API path named by the nearest `data-api="/v1/..."` above it (dots between keys
  and list indexes: `players.3.details.games.0.expected`);
- any other text with a digit in it is inside `<time>` (a date), `<svg>` (the chart, whose
  ticks are checked by its own tests), `<code>`, or an element marked `data-text` (an id, a
  name, a period, a round's number: text, not a figure).

`check_page(html, fetch)` returns the problems: a figure whose TEXT is not the API's value
rounded half away from zero to the decimals TEXT shows (computed here with Decimal, not by
the pages' own formatter), a path the API does not have, a number outside the convention.
`fetch(path)` gives the API's JSON document for a path.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from fractions import Fraction
from html.parser import HTMLParser
from typing import Any

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
TEXT_TAGS = {"time", "svg", "code", "script", "style", "title"}
DIGIT = re.compile(r"\d")
MISSING = object()


class Figure:
    def __init__(self, api: str | None, path: str, value: str, line: int) -> None:
        self.api, self.path, self.value, self.line = api, path, value, line
        self.text = ""


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, dict[str, str | None], Figure | None]] = []
        self.figures: list[Figure] = []
        self.loose: list[tuple[int, str]] = []  # (line, text) of numbers outside the convention
        self.in_main = False

    def api(self) -> str | None:
        for _, attrs, _ in reversed(self.stack):
            if attrs.get("data-api"):
                return attrs["data-api"]
        return None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID:
            return
        found = dict(attrs)
        figure = None
        if tag == "data" and "data-f" in found:
            figure = Figure(
                self.api(), found["data-f"] or "", found.get("value") or "", self.getpos()[0]
            )
            self.figures.append(figure)
        self.stack.append((tag, found, figure))

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        while self.stack:
            top, _, _ = self.stack.pop()
            if top == tag:
                break

    def handle_data(self, data: str) -> None:
        if not self.stack or not DIGIT.search(data):
            for _, _, figure in self.stack:
                if figure is not None:
                    figure.text += data
            return
        inside_main = any(tag == "main" for tag, _, _ in self.stack)
        for tag, attrs, figure in reversed(self.stack):
            if figure is not None:
                figure.text += data
                return
            if tag in TEXT_TAGS or "data-text" in attrs:
                return
        if inside_main:
            self.loose.append((self.getpos()[0], data.strip()))


def value_at(document: Any, path: str) -> Any:
    here = document
    for part in path.split("."):
        if isinstance(here, list) and part.isdigit() and int(part) < len(here):
            here = here[int(part)]
        elif isinstance(here, dict) and part in here:
            here = here[part]
        else:
            return MISSING
    return here


def shown(text: str) -> Decimal | None:
    cleaned = text.strip().replace("\u2212", "-").lstrip("+")
    if cleaned.endswith("%"):
        cleaned = cleaned[:-1]
    try:
        return Decimal(cleaned)
    except InvalidOperation:
        return None


def exact(value: Any) -> Decimal:
    if isinstance(value, str) and "/" in value:
        fraction = Fraction(value)
        return Decimal(fraction.numerator) / Decimal(fraction.denominator)
    return Decimal(str(value))


def check_figure(figure: Figure, document: Any) -> str | None:
    where = f"line {figure.line}: {figure.api} {figure.path} shown {figure.text.strip()!r}"
    value = value_at(document, figure.path)
    if value is MISSING:
        return f"{where}: the API has no such field"
    number = shown(figure.text)
    if value is None or isinstance(value, bool):
        return None if number is None else f"{where}: the API says {value!r}"
    if number is None:
        return f"{where}: not a number, the API says {value!r}"
    places = max(-number.as_tuple().exponent, 0)  # type: ignore[operator]  # finite
    want = exact(value).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    if want != number:
        return f"{where}: the API's {value!r} to {places} decimals is {want}"
    return None


def check_page(html: str, fetch: Callable[[str], Any]) -> tuple[int, list[str]]:
    """(figures checked, problems) of one page; `fetch(api_path)` -> the API's JSON."""
    reader = _Reader()
    reader.feed(html)
    problems = [
        f"line {line}: a number outside the convention: {text!r}" for line, text in reader.loose
    ]
    documents: dict[str, Any] = {}
    for figure in reader.figures:
        if figure.api is None:
            problems.append(f"line {figure.line}: {figure.path}: no data-api above the figure")
            continue
        if figure.api not in documents:
            documents[figure.api] = fetch(figure.api)
        problem = check_figure(figure, documents[figure.api])
        if problem:
            problems.append(problem)
    return len(reader.figures), problems
