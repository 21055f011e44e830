"""Look and access (D52, D53): the federation's header from the settings on every page; each
page of tests/fakereads.py with `lang`, one h1 and no skipped heading level, every table
header with its scope, under 100 kB; the stylesheet's text colours and the accent at least
4.5:1 on their backgrounds (WCAG AA), computed here; a bad accent or logo refused in one line."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import httpx
import pytest

from service.runtime.look import AA, Look, check_accent, contrast
from service.runtime.settings import SettingsError, load_settings
from service.web.app import create_app
from service.web.rendering import STATIC
from tests.fakereads import FakeReads
from tests.unit.test_web import app_of

MAX_PAGE = 100 * 1024
CSS = (STATIC / "style.css").read_text()


class Outline(HTMLParser):
    """What a page says about itself: its `lang`, its headings in order, its `th` without
    scope, its images without alt."""

    def __init__(self) -> None:
        super().__init__()
        self.lang: str | None = None
        self.headings: list[int] = []
        self.th_without_scope = 0
        self.img_without_alt = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag == "html":
            self.lang = named.get("lang")
        elif re.fullmatch(r"h[1-6]", tag):
            self.headings.append(int(tag[1]))
        elif tag == "th" and named.get("scope") not in ("col", "row", "colgroup", "rowgroup"):
            self.th_without_scope += 1
        elif tag == "img" and "alt" not in named:
            self.img_without_alt += 1


def outline(html: str) -> Outline:
    found = Outline()
    found.feed(html)
    return found


async def pages_of(app) -> dict[str, httpx.Response]:
    """Every page the fake read model has: the home page, each pool's list (and its search,
    its unrated), each player's profile, each event's (with its games), and the errors."""
    reads = FakeReads()
    paths = ["/", "/no/such/page", "/pools/cfc/regular?offset=-1", "/pools/cfc/nope"]
    for pool in (await reads.pools()).pools:
        base = f"/pools/{pool.system}/{pool.pool}"
        paths += [base, base + "?unrated=true", base + "?q=a"]
        listed = await reads.players(pool.system, pool.pool, limit=1000, unrated=True)
        assert listed is not None
        paths += [f"/players/{pool.system}/{p.id}" for p in listed.players]  # the profiles
    for output in reads.outputs:
        if output.event_id:
            paths += [f"/events/{output.event_id}", f"/events/{output.event_id}?games=true"]
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://rating.test", headers={"Accept": "text/html"}
    ) as client:
        return {path: await client.get(path) for path in paths}


async def test_every_page_has_lang_ordered_headings_scoped_headers_and_stays_small():
    pages = await pages_of(app_of())
    assert len(pages) > 20
    for path, page in pages.items():
        assert page.headers["content-type"].startswith("text/html"), path
        found = outline(page.text)
        assert found.lang == "en", path
        assert found.headings.count(1) == 1 and found.headings[0] == 1, (path, found.headings)
        steps = zip(found.headings, found.headings[1:])
        assert all(after <= before + 1 for before, after in steps), (path, found.headings)
        assert found.th_without_scope == 0, path
        assert found.img_without_alt == 0, path
        assert len(page.content) < MAX_PAGE, (path, len(page.content))


def colours() -> dict[str, str]:
    """The stylesheet's custom properties that are colours."""
    return dict(re.findall(r"--([a-z-]+):\s*(#[0-9a-fA-F]{3,6})\b", CSS))


# (text, background) pairs the stylesheet puts together, by custom property name.
PAIRS = [
    ("ink", "paper"),
    ("ink", "band"),
    ("muted", "paper"),
    ("muted", "band"),
    ("link", "paper"),
    ("link", "band"),
    ("on-accent", "accent"),
    ("paper", "link"),  # the button: white on the link colour
    ("focus", "paper"),  # the notice's border and the focus ring (3:1 would do: 1.4.11)
]


def test_the_stylesheets_colours_contrast_at_least_aa():
    named = colours()
    assert {"ink", "paper", "muted", "link", "band", "accent", "on-accent"} <= named.keys()
    ratios = {(a, b): round(contrast(named[a], named[b]), 2) for a, b in PAIRS}
    assert all(r >= AA for r in ratios.values()), ratios
    # Worked by hand from WCAG's formula: #1a1a1a on white is 17.4:1, #4a4a4a on white
    # 8.86:1, #0a4fa3 on white 7.89:1 (L = 0.0830).
    assert ratios[("ink", "paper")] == 17.4
    assert ratios[("muted", "paper")] == 8.86
    assert ratios[("link", "paper")] == 7.89
    assert contrast("#000000", "#ffffff") == 21 and contrast("#777777", "#777777") == 1


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        ("#ffcc00", "contrast with the header's white text 1.51:1, below 4.5:1 (WCAG AA)"),
        ("#777", "contrast with the header's white text 4.48:1, below 4.5:1"),
        ("red", "not a colour: give it as #rrggbb (or #rgb)"),
        ("#12345g", "not a colour"),
        ("#0a4fa3; background: url(x)", "not a colour"),
    ],
)
def test_an_accent_the_contrast_or_the_csp_would_not_allow_is_refused_in_one_line(raw, said):
    with pytest.raises(SettingsError) as refused:
        load_settings({"RATING_ACCENT_COLOUR": raw})
    line = str(refused.value)
    assert line.startswith(f"RATING_ACCENT_COLOUR={raw!r}: ") and said in line
    assert "\n" not in line


def test_an_accent_dark_enough_is_kept_in_lower_case():
    assert check_accent("#7A1F1F") == "#7a1f1f"
    assert check_accent("#036") == "#003366"
    assert load_settings({}).look == Look()


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        ("http://cfc.example/logo.png", "an https:// URL or a path on this server starting with /"),
        ("//cfc.example/x.png", "an https:// URL or a path on this server starting with /"),
        ("logo.png", "an https:// URL or a path on this server starting with /"),
        ("data:image/png;base64,AAAA", "an https:// URL or a path on this server starting with /"),
        ("javascript:alert(1)", "a URL without spaces, quotes, brackets or backslashes"),
    ],
)
def test_a_logo_url_other_than_https_or_a_path_here_is_refused(raw, said):
    with pytest.raises(SettingsError) as refused:
        load_settings({"RATING_LOGO_URL": raw})
    assert str(refused.value) == f"RATING_LOGO_URL={raw!r}: {said}" + (
        " (e.g. /logo.svg)" if said.startswith("an https") else ""
    )


async def test_the_federations_look_is_in_the_header_of_every_page_and_the_csp_allows_its_logo():
    look = load_settings(
        {
            "RATING_SITE_TITLE": "CFC Ratings",
            "RATING_FEDERATION_NAME": "Chess Federation of Canada",
            "RATING_LOGO_URL": "https://www.chess.ca/logo.svg",
            "RATING_ACCENT_COLOUR": "#8B0000",
        }
    ).look
    app = create_app(FakeReads(), None, None, look=look)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://rating.test", headers={"Accept": "text/html"}
    ) as client:
        for path in ["/", "/pools/cfc/regular", "/events/ottawa-fall-open-2025", "/nope"]:
            page = await client.get(path)
            assert "<title>" in page.text and " · CFC Ratings</title>" in page.text, path
            header = page.text.split("<header", 1)[1].split("</header>", 1)[0]
            assert '<img class="logo" src="https://www.chess.ca/logo.svg" alt=""' in header
            assert "CFC Ratings" in header and "Chess Federation of Canada" in header
            csp = page.headers["content-security-policy"]
            assert "img-src 'self' https://www.chess.ca;" in csp, path
        sheet = await client.get("/look.css")
        assert sheet.text == ":root { --accent: #8b0000; --on-accent: #ffffff; }\n"
        assert sheet.headers["content-type"] == "text/css; charset=utf-8"
        again = await client.get("/look.css", headers={"If-None-Match": sheet.headers["etag"]})
        assert again.status_code == 304
        api = await client.get("/v1/pools")
        assert "img-src 'self' https://www.chess.ca;" in api.headers["content-security-policy"]


def test_the_stylesheet_keeps_wide_tables_inside_their_box_on_a_phone():
    assert ".scroll { overflow-x: auto;" in CSS
    assert "@media (max-width: 40rem)" in CSS
    assert Path(STATIC / "style.css").stat().st_size < 16 * 1024
