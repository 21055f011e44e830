"""Headless Chromium for the tests that look at the pages as a browser renders them
(tests/integration/test_read_side.py, tests/integration/test_every_figure.py) and for the
screenshots of the docs (D55): the DOM after loading, and PNG screenshots at a width.

Debian's `chromium` package; without it a test is skipped with the line saying what to
install (`needs`, tests/conftest.py), a failure under RATING_TESTS_REQUIRE_ALL=1.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.conftest import needs

# Seconds one Chromium run may take on a loaded machine (a bound, not a deadline: a run
# that takes longer is a hung browser, reported with its stderr).
RUN_BOUND = 90


def chromium() -> str:
    found = (
        shutil.which("chromium")
        or shutil.which("chromium-browser")
        or shutil.which("google-chrome")
    )
    if found is None:
        needs("headless Chromium (chromium on PATH)", "apt-get install chromium")
    return found


def base_command(profile: Path) -> list[str]:
    return [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        f"--user-data-dir={profile}",
    ]


def dump_dom(url: str, profile: Path) -> str:
    """The page's DOM after loading in headless Chromium (what a reader's browser shows)."""
    dom = subprocess.run(
        [*base_command(profile), "--dump-dom", url], capture_output=True, timeout=RUN_BOUND
    )
    assert dom.returncode == 0, dom.stderr.decode()[-2000:]
    return dom.stdout.decode()


def screenshot(url: str, profile: Path, out: Path, width: int, height: int) -> Path:
    """A PNG of the page's first `height` pixels in a window `width` wide."""
    shot = subprocess.run(
        [*base_command(profile), f"--window-size={width},{height}", f"--screenshot={out}", url],
        capture_output=True,
        timeout=RUN_BOUND,
    )
    assert shot.returncode == 0 and out.exists(), shot.stderr.decode()[-2000:]
    return out


def browse(url: str, profile: Path, shot: Path | None = None) -> str:
    """The DOM after loading (and a 1000 x 1300 screenshot into `shot`, if asked)."""
    if shot is not None:
        screenshot(url, profile, shot, 1000, 1300)
    return dump_dom(url, profile)
