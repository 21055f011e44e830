"""The fuzz tier: every test here has the `fuzz` marker (`python -m pytest -m fuzz`). It runs
in the README's test command with a few examples per test; `make fuzz` runs it longer
(FUZZ_EXAMPLES, the `fuzz` Hypothesis profile: new examples every run)."""

from __future__ import annotations

from pathlib import Path

import pytest

_HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE in Path(item.path).parents:
            item.add_marker(pytest.mark.fuzz)
