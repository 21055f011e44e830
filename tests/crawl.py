"""The crawl of the browser test (tests/integration/test_every_figure.py, D54): the site's
pages from `/` as headless Chromium renders them, each DOM checked against the read API by
`tests.figures.check_page`, grouped by page kind (the app's route of the page).

A page's links are its `<a href>` within the site and its GET forms submitted with their
defaults (a search box with SEARCH_WORD); an event page is also visited with `?games=true`.
The API, the operators' endpoints, the API's documentation and the static files are not
pages (NOT_PAGES). At most MAX_PAGES pages, BROWSERS Chromium processes at once.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit

import httpx

from tests.browser import dump_dom
from tests.figures import check_page

# Paths that are not pages for people: the API (what the pages are checked against), the
# operators' endpoints, the API's documentation, the static files.
NOT_PAGES = ("/v1/", "/static/", "/docs", "/openapi.json", "/asyncapi.json", "/metrics", "/health")
# Query arguments that make a page of a route a page kind of its own (the event page with
# every player's per-game figures).
VARIANTS = ("games",)
# The word typed into every search box the crawl finds (a name of the CFC list, accents
# folded: "Ólafsson").
SEARCH_WORD = "olaf"
MAX_PAGES = 400  # the crawl's bound: a workload of ~40 pages, with room for the filters' links
BROWSERS = 4  # Chromium processes at once


class _Links(HTMLParser):
    """The `<a href>` of a page, and its GET forms as the URLs they submit."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hrefs: list[str] = []
        self.forms: list[str] = []
        self._form: tuple[str, list[tuple[str, str]]] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if tag == "a" and found.get("href"):
            self.hrefs.append(found["href"])
        elif tag == "form" and found.get("method", "get").lower() == "get":
            self._form = (found.get("action", ""), [])
        elif tag in ("input", "select") and self._form is not None and found.get("name"):
            kind = found.get("type", "text")
            if kind in ("search", "text"):
                self._form[1].append((found["name"], found.get("value") or SEARCH_WORD))
            elif kind in ("checkbox", "radio"):
                if "checked" in found:
                    self._form[1].append((found["name"], found.get("value", "on")))
            elif kind not in ("submit", "button", "reset"):
                self._form[1].append((found["name"], found.get("value", "")))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form" and self._form is not None:
            action, fields = self._form
            self.forms.append(action + ("?" + urlencode(fields) if fields else ""))
            self._form = None


def page_routes() -> list[tuple[str, Any, str]]:
    """(prefix, regex, path template) of the app's GET routes: a page's kind is its route."""
    from service.web.app import create_app
    from tests.fakereads import FakeReads

    def flat(routes: list[Any], prefix: str) -> Iterator[tuple[str, Any, str]]:
        for route in routes:
            included = getattr(route, "original_router", None)  # FastAPI's included router
            if included is not None:
                yield from flat(included.routes, prefix + route.include_context.prefix)
            elif "GET" in (getattr(route, "methods", None) or ()):
                yield prefix, route.path_regex, prefix + route.path

    return list(flat(create_app(FakeReads(), None, None).routes, ""))


def kind_of(url: str, routes: list[tuple[str, Any, str]]) -> str:
    parts = urlsplit(url)
    for prefix, regex, template in routes:
        if parts.path.startswith(prefix) and regex.match(parts.path[len(prefix) :]):
            variant = [k for k, _ in parse_qsl(parts.query) if k in VARIANTS]
            return template + "".join(f" ?{k}" for k in sorted(set(variant)))
    return "(no route) " + parts.path


def within(href: str, page: str, base: str) -> str | None:
    """`href` on `page` as a URL of the site's pages (no fragment), or None."""
    url = urljoin(page, href)
    parts = urlsplit(url)
    if f"{parts.scheme}://{parts.netloc}" != base or parts.path.startswith(NOT_PAGES):
        return None
    return parts.path + (f"?{parts.query}" if parts.query else "")


def with_games(path: str) -> str | None:
    """An event page's `?games=true` variant (None: not an event page, or already one)."""
    parts = urlsplit(path)
    query = parse_qsl(parts.query)
    if not parts.path.startswith("/events/") or any(k == "games" for k, _ in query):
        return None
    return parts.path + "?" + urlencode([*query, ("games", "true")])


@dataclass
class Page:
    """One page of the crawl: its kind, where it was found, what the checker said."""

    path: str
    kind: str
    found_on: str
    status: int = 0
    figures: int = 0
    problems: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)


class Crawl:
    """The site as a reader's browser sees it: each page's DOM checked against the API."""

    def __init__(self, base: str, profiles: Path) -> None:
        self.base = base
        self.routes = page_routes()
        self.pages: dict[str, Page] = {}
        self.documents: dict[str, Any] = {}
        self.api_problems: dict[str, str] = {}
        self.lock = threading.Lock()
        self.profiles = [profiles / f"profile-{n}" for n in range(BROWSERS)]
        self.free = list(self.profiles)

    def get(self, path: str) -> httpx.Response:
        return httpx.get(self.base + path, timeout=30)

    def fetch(self, api: str) -> Any:
        """The read API's JSON for `api`, over HTTP (once per document: the store is at rest)."""
        with self.lock:
            if api in self.documents:
                return self.documents[api]
        reply = self.get(api)
        document = reply.json() if reply.status_code == 200 else {}
        with self.lock:
            if reply.status_code != 200:
                self.api_problems[api] = f"data-api {api} answers {reply.status_code}"
            self.documents[api] = document
        return document

    def visit(self, page: Page) -> None:
        reply = self.get(page.path)
        page.status = reply.status_code
        if reply.status_code != 200 or not reply.headers.get("content-type", "").startswith(
            "text/html"
        ):
            page.problems.append(
                f"answers {reply.status_code} {reply.headers.get('content-type')} "
                f"(linked from {page.found_on})"
            )
            return
        with self.lock:
            profile = self.free.pop()
        try:
            dom = dump_dom(self.base + page.path, profile)
        finally:
            with self.lock:
                self.free.append(profile)
        page.figures, page.problems = check_page(dom, self.fetch)
        links = _Links()
        links.feed(dom)
        found = [within(h, self.base + page.path, self.base) for h in links.hrefs]
        found += [within(f, self.base + page.path, self.base) for f in links.forms]
        games = with_games(page.path)
        page.links = [u for u in [*found, games] if u is not None]

    def run(self, start: list[str]) -> None:
        """Breadth first from `start`, at most MAX_PAGES pages, BROWSERS at a time."""
        wave = [Page(p, kind_of(p, self.routes), "(start)") for p in start]
        with ThreadPoolExecutor(BROWSERS) as pool:
            while wave:
                for page in wave:
                    self.pages[page.path] = page
                list(pool.map(self.visit, wave))
                following: dict[str, Page] = {}
                for page in wave:
                    for link in page.links:
                        if link not in self.pages and link not in following:
                            following[link] = Page(link, kind_of(link, self.routes), page.path)
                room = MAX_PAGES - len(self.pages)
                wave = list(following.values())[: max(room, 0)]

    def by_kind(self) -> dict[str, list[Page]]:
        kinds: dict[str, list[Page]] = defaultdict(list)
        for page in self.pages.values():
            kinds[page.kind].append(page)
        return dict(sorted(kinds.items()))


def problem_kind(problem: str) -> str:
    """The kind of a checker's problem, for the summary."""
    for words, kind in (
        ("outside the convention", "a number outside the convention"),
        ("no such field", "a path the API lacks"),
        ("decimals is", "a wrong figure"),
        ("not a number", "not a number where the API has one"),
        ("the API says", "a figure where the API has none"),
        ("no data-api", "a figure without data-api"),
        ("data-api", "a data-api that does not answer"),
        ("answers", "a link that does not answer a page"),
    ):
        if words in problem:
            return kind
    return "other"
