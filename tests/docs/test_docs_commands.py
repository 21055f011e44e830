"""Every command shown in the docs (docs/*.md and README.md) runs, and prints what the page
shows (docs/development.md, "Commands in the docs"): one test per page with console blocks."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.pages import PageError, parse_page
from tests.docs.runner import ROOT, run_page

pytestmark = pytest.mark.integration


def pages_with_commands() -> list[str]:
    """The pages with console blocks (and those that cannot be parsed: their test says why)."""
    found = []
    for path in [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]:
        name = path.relative_to(ROOT).as_posix()
        try:
            if parse_page(path.read_text(encoding="utf-8"), name).blocks:
                found.append(name)
        except PageError:
            found.append(name)
    return found


@pytest.mark.parametrize("name", pages_with_commands())
def test_page_commands(name: str, redis_url: str, tmp_path: Path) -> None:
    page = parse_page((ROOT / name).read_text(encoding="utf-8"), name)
    run_page(page, name, redis_url, tmp_path)
