"""Every figure of every page, number for number, as a browser shows it (issue 31, D54-D56).

The real service (`python -m service serve`, its HTTP side served by uvicorn) against a real
Redis on a key prefix of its own rates a workload of the three systems: CFC club nights with
a late event, a correction and a newcomer; FIDE standard events in a closed period (its
`period.closed` published) and in an open one, a rapid event; a NASPA event with newcomers;
the lists imported with their labels (titles, federation, sex: D35).

`test_every_page_shows_the_api_s_figures` crawls the site from `/` (every link within it,
every GET form submitted, every event page also with `?games=true`), loads each page in
headless Chromium (`--dump-dom`), and runs `tests.figures.check_page` on the DOM with
`fetch` reading the read API over HTTP. It fails listing every problem (page, field, shown,
expected), a link that does not answer 200, a player or event no link leads to, and a page
kind (a route of the app) that shows no figure at all: a page that stopped marking its
figures does not pass by showing none (D54).

`test_screenshots_of_the_pages` takes the docs' screenshots (D55): `make screenshots`
writes them into docs/guides/img/.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis

from schemas import PlayerRecord
from service.runtime.embedded import free_port
from service.runtime.keys import StreamKeys
from service.runtime.records_io import import_records
from service.web.rendering import event_url, player_url, pool_url, profile_url
from tests.browser import chromium, screenshot
from tests.crawl import MAX_PAGES, Crawl, problem_kind
from tests.integration.helpers import publish, rejections, settings_for
from tests.integration.processes import ROOT, Services, wait_until_applied

pytestmark = [pytest.mark.integration, pytest.mark.browser]

# ------------------------------------------------------------------ the workload

MONTH = {"cfc": "2025-10", "naspa": "2025-10"}


def lists() -> list[PlayerRecord]:
    """The federations' lists before the season, with their labels (D35)."""

    def record(system: str, pool: str, pid: str, rating: int | None, **more: Any) -> PlayerRecord:
        status = more.pop("status", "established" if rating is not None else "unrated")
        games = more.pop("games", 40 if rating is not None else 0)
        return PlayerRecord(
            system=system, pool=pool, id=pid, rating=rating, status=status, games=games, **more
        )

    cfc = [
        record("cfc", "regular", "c1", 1560, highest=1602, name="Ólafsson, Anna", sex="F"),
        record("cfc", "regular", "c2", 1620, highest=1620, name="Baker, Bob", federation="ON"),
        record("cfc", "regular", "c3", 1680, highest=1711, name="Carter, Chloé", federation="QC"),
        record("cfc", "regular", "c4", 1740, highest=1740),
        record("cfc", "regular", "c5", 1800, highest=1800),
        record("cfc", "regular", "c6", 2240, highest=2251, titles=["NM"], federation="BC"),
    ]
    fide = [
        record(
            "fide",
            "standard",
            "f1",
            2650,
            birth_year=1990,
            ever_2300=True,
            ever_2400=True,
            name="Hansen, Henrik",
            titles=["GM"],
            federation="NOR",
            sex="M",
        ),
        record(
            "fide",
            "standard",
            "f2",
            2385,
            birth_year=2001,
            ever_2300=True,
            name="Søndergaard, Sofie",
            titles=["IM", "WGM"],
            federation="DEN",
            sex="F",
        ),
        record(
            "fide",
            "standard",
            "f3",
            2121,
            birth_year=2009,
            name="Łukasiewicz, Łucja",
            titles=["WFM"],
            federation="POL",
            sex="F",
        ),
        record(
            "fide",
            "standard",
            "f4",
            2010,
            birth_year=1975,
            name="Đorđević, Đorđe",
            titles=["FA"],
            federation="SRB",
            sex="M",
        ),
        record("fide", "rapid", "f1", 2602, birth_year=1990, ever_2300=True, ever_2400=True),
        record("fide", "rapid", "f2", 2333, birth_year=2001, ever_2300=True),
    ]
    naspa = [
        record("naspa", "nwl", "n1", 1650, games=200, name="Nakamura, Nia", federation="USA"),
        record("naspa", "nwl", "n2", 1400, games=120, name="Okafor, Obi", federation="CAN"),
        record("naspa", "nwl", "n3", 1200, games=60, name="Papadopoulos, Petra"),
        record("naspa", "nwl", "n4", 980, games=30, name="Quinn, Quentin"),
    ]
    return cfc + fide + naspa


NEWCOMERS = {"c4": "Dubois, Dan", "c5": "Eriksen, Eva", "c7": "Gauthier, Gil"}


def cfc_event(
    event_id: str, day: int, pairs: list[tuple[str, str, float]], schema: str = "event.finished/v1"
) -> dict:
    ids = sorted({p for a, b, _ in pairs for p in (a, b)})
    return {
        "schema": schema,
        "event_id": event_id,
        "system": "cfc",
        "name": f"Club night {day}",
        "start_date": f"2025-10-{day:02d}",
        "end_date": f"2025-10-{day:02d}",
        "rounds": len(pairs),
        "players": [{"id": p, **({"name": NEWCOMERS[p]} if p in NEWCOMERS else {})} for p in ids],
        "games": [{"round": n, "a": a, "b": b, "score": s} for n, (a, b, s) in enumerate(pairs, 1)],
    }


def round_robin(ids: list[str], scores: list[float], rounds: int) -> list[dict]:
    """Rounds of the circle method over `ids` (an even number), results from `scores` in turn."""
    games, order, n = [], ids[:], 0
    for r in range(1, rounds + 1):
        half = len(order) // 2
        for a, b in zip(order[:half], reversed(order[half:])):
            games.append({"round": r, "a": a, "b": b, "score": scores[n % len(scores)]})
            n += 1
        order = [order[0], order[-1], *order[1:-1]]
    return games


def event(
    event_id: str, system: str, name: str, day: str, ids: list[str], rounds: int, **more: Any
) -> dict:
    names = more.pop("names", {})
    return {
        "schema": "event.finished/v1",
        "event_id": event_id,
        "system": system,
        "name": name,
        "start_date": day,
        "end_date": day,
        "rounds": rounds,
        "players": [{"id": p, **({"name": names[p]} if p in names else {})} for p in ids],
        "games": round_robin(ids, [1, 0.5, 0, 1, 1, 0.5, 0], rounds),
        **more,
    }


def season() -> list[dict]:
    return [
        cfc_event("club-05", 5, [("c1", "c2", 1), ("c3", "c4", 0.5), ("c1", "c3", 0)]),
        cfc_event("club-12", 12, [("c2", "c5", 1), ("c4", "c6", 0), ("c2", "c4", 0.5)]),
        cfc_event(
            "club-19",
            19,
            [("c1", "c6", 1), ("c5", "c3", 0), ("c1", "c5", 1), ("c7", "c2", 1), ("c7", "c3", 0.5)],
        ),
        # Late: it ends before club-12 and club-19, which are re-rated after it (revisions).
        cfc_event("club-08", 8, [("c1", "c4", 0), ("c2", "c6", 1), ("c7", "c5", 0)]),
        # Corrected: club-05's first game went the other way, and c3-c4 is now c3-c5.
        cfc_event(
            "club-05",
            5,
            [("c1", "c2", 0), ("c3", "c5", 0.5), ("c1", "c3", 0)],
            schema="event.corrected/v1",
        ),
        event(
            "open-nov",
            "fide",
            "Autumn Open",
            "2025-11-15",
            ["f1", "f2", "f3", "f4"],
            3,
            period="2025-11",
        ),
        {"schema": "period.closed/v1", "system": "fide", "pool": "standard", "period": "2025-11"},
        event(
            "open-dec",
            "fide",
            "Winter Open",
            "2025-12-13",
            ["f1", "f2", "f3", "f4", "f5", "f6"],
            5,
            period="2025-12",
            names={"f5": "Þórsson, Þór", "f6": "Œhlenschläger, Ærø"},
        ),
        event(
            "rapid-dec",
            "fide",
            "Rapid Cup",
            "2025-12-20",
            ["f1", "f2", "f3", "f4"],
            3,
            pool="rapid",
            period="2025-12",
        ),
        event(
            "scrabble-oct",
            "naspa",
            "Club Scrabble",
            "2025-10-25",
            ["n1", "n2", "n3", "n4", "n5", "n6"],
            5,
            names={"n5": "Rossi, Rita", "n6": "Strauß, Stefan"},
        ),
    ]


EVENTS = sorted({m["event_id"] for m in season() if "event_id" in m})


@dataclass
class Site:
    base: str

    def get(self, path: str) -> httpx.Response:
        return httpx.get(self.base + path, timeout=30)


@pytest.fixture(scope="module")
def site(redis_url) -> Iterator[Site]:
    """The service with its HTTP side, after the season (no entry rejected)."""
    import redis as sync_redis

    prefix = f"t{uuid.uuid4().hex[:12]}"
    port = free_port()
    settings = settings_for(redis_url, prefix, http_port=port)
    services = Services(settings, command=("-m", "service", "serve"))
    services.env.update({"RATING_HTTP_PORT": str(port), "RATING_HTTP_HOST": "127.0.0.1"})

    async def prepare() -> None:
        client = aioredis.Redis.from_url(redis_url)
        try:
            await import_records(client, StreamKeys(settings.input_streams[0]), lists())
            await publish(client, settings, *season())
            services.start()
            await wait_until_applied(client, settings)
            assert await rejections(client, settings) == []
        finally:
            await client.aclose()

    try:
        asyncio.run(prepare())
        yield Site(f"http://127.0.0.1:{port}")
    finally:
        services.stop_all()
        client = sync_redis.Redis.from_url(redis_url)
        keys = list(client.scan_iter(match=f"*{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
        client.close()


# ------------------------------------------------------------------ the crawl

# Page kinds that show no figure by design (kind -> why); every other kind must show one.
WITHOUT_FIGURES: dict[str, str] = {}


def expected_pages(site: Site) -> dict[str, str]:
    """What the crawl must reach from `/`: every pool's list, every player's profile in every
    pool, every event's page with and without `?games=true` (path -> what it is)."""
    wanted = {}
    for summary in site.get("/v1/pools").json()["pools"]:
        system, pool = summary["system"], summary["pool"]
        wanted[pool_url(system, pool)] = f"the list of {system}/{pool}"
        players = site.get(f"/v1/pools/{system}/{pool}/players?limit=500&unrated=true").json()[
            "players"
        ]
        for p in players:
            # the profile, without the pool's #fragment (the crawl visits pages, not fragments)
            wanted[player_url(system, pool, p["id"]).split("#")[0]] = (
                f"{p['id']} in {system}/{pool}"
            )
    for event_id in EVENTS:
        wanted[event_url(event_id)] = f"the event {event_id}"
        wanted[event_url(event_id, games=True)] = f"the event {event_id} with its games"
    return wanted


def summary(crawl: Crawl) -> str:
    lines = ["page kind: pages, figures checked, problems (by kind)"]
    for kind, pages in crawl.by_kind().items():
        kinds = Counter(problem_kind(p) for page in pages for p in page.problems)
        said = ", ".join(f"{n} {k}" for k, n in kinds.most_common()) or "none"
        figures = sum(page.figures for page in pages)
        lines.append(f"  {kind}: {len(pages)} pages, {figures} figures, problems: {said}")
    return "\n".join(lines)


def test_every_page_shows_the_api_s_figures(site, tmp_path):
    chromium()  # skipped (or failed under RATING_TESTS_REQUIRE_ALL=1) without a browser
    crawl = Crawl(site.base, tmp_path)
    crawl.run(["/"])
    wanted = expected_pages(site)
    unreached = {path: what for path, what in wanted.items() if path not in crawl.pages}
    if unreached:  # said below, and checked all the same
        crawl.run(sorted(unreached))
    failures = [
        f"{page.path}: {problem}" for page in crawl.pages.values() for problem in page.problems
    ]
    failures += [f"{path}: no link leads here from / ({what})" for path, what in unreached.items()]
    failures += [
        f"page kind {kind}: no figure on any of its {len(pages)} pages (D37: every figure is "
        f"fig(...)), e.g. {pages[0].path}"
        for kind, pages in crawl.by_kind().items()
        if sum(page.figures for page in pages) == 0 and kind not in WITHOUT_FIGURES
    ]
    failures += sorted(crawl.api_problems.values())
    if len(crawl.pages) >= MAX_PAGES:
        failures.append(f"the crawl stopped at its bound of {MAX_PAGES} pages")
    report = summary(crawl)
    print(report)
    assert not failures, f"{report}\n{len(failures)} problems:\n" + "\n".join(failures)


# ------------------------------------------------------------------ the screenshots

IMAGES = ROOT / "docs" / "guides" / "img"
WIDTHS = {"desktop": (1280, 1000), "phone": (390, 1100)}
# (file name, page, what it shows): the docs' "The pages" section shows them (websites.md).
SHOTS = [
    ("profile", profile_url("fide", "f2"), "a FIDE profile"),
    ("event", event_url("open-dec", games=True), "an event with its crosstable"),
    ("list", pool_url("fide", "standard"), "a rating list"),
    ("search", pool_url("cfc", "regular", q="olaf"), "a search"),
]
MAX_PNG = 150_000  # bytes per screenshot once optimised (pngquant)


def optimise(png: Path) -> None:
    """256 colours (pngquant, when on PATH): a text page's screenshot loses nothing visible
    and about two thirds of its bytes."""
    quant = shutil.which("pngquant")
    if quant is not None:
        subprocess.run(
            [quant, "--force", "--skip-if-larger", "--strip", "--output", str(png), str(png)],
            check=False,
            capture_output=True,
        )


def test_screenshots_of_the_pages(site, tmp_path):
    """Every screenshot of the docs, at desktop and phone widths; with
    RATING_DOCS_SCREENSHOTS=1 (`make screenshots`) written into docs/guides/img/."""
    chromium()
    keep = os.environ.get("RATING_DOCS_SCREENSHOTS") == "1"
    out = IMAGES if keep else tmp_path
    out.mkdir(parents=True, exist_ok=True)
    for name, path, _ in SHOTS:
        assert site.get(path).status_code == 200, path
        for width_name, (width, height) in WIDTHS.items():
            png = screenshot(
                site.base + path,
                tmp_path / "profile",
                out / f"{name}-{width_name}.png",
                width,
                height,
            )
            optimise(png)
            data = png.read_bytes()
            assert data.startswith(b"\x89PNG"), png
            if keep:
                assert len(data) <= MAX_PNG or shutil.which("pngquant") is None, (png, len(data))
