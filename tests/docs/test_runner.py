"""The runner end to end, on a page of its own (tests/data/docs-harness-page.md): a serve,
an import, a publish waited for, an export, a mistake with its exit status; and the same
page with one figure changed fails, naming the command and the line that differs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.pages import parse_page
from tests.docs.runner import ROOT, PageFailed, run_page

pytestmark = pytest.mark.integration

NAME = "tests/data/docs-harness-page.md"
TEXT = (ROOT / NAME).read_text(encoding="utf-8")


def test_the_page_runs_with_its_serve(redis_url: str, tmp_path: Path) -> None:
    page = parse_page(TEXT, NAME)
    assert page.serve
    assert run_page(page, NAME, redis_url, tmp_path) == 6


def test_a_changed_figure_fails(redis_url: str, tmp_path: Path) -> None:
    row = "  100002  Bruno Roy      1620  1609     -11"
    assert TEXT.count(row) == 1
    page = parse_page(TEXT.replace(row, "  100002  Bruno Roy      1620  1608     -11"), NAME)
    with pytest.raises(PageFailed) as failed:
        run_page(page, NAME, redis_url, tmp_path)
    message = str(failed.value)
    assert message.startswith(f"{NAME}:12: $ rating-service publish deploy/examples/cfc-event.json")
    assert "-  100002  Bruno Roy      1620  1608     -11" in message
    assert "+  100002  Bruno Roy      1620  1609     -11" in message
    assert "the serve's log" in message
