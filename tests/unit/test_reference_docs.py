"""The Reference pages (docs/reference/) are what docs/gen_reference.py makes from the code:
a change to the parser, the settings, the metrics, the keys or the Structs that was not
followed by `.venv/bin/python docs/gen_reference.py` fails here, naming the stale page."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_reference_pages_are_generated_from_the_code():
    check = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "gen_reference.py"), "--check"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert check.returncode == 0, check.stderr.strip()
