"""The boundary list (docs/rules/boundaries.md) cannot rot: every `tests/...py::name` it
cites is a test file that exists and defines that test function, and every test of the
three boundary files is on the list. The same for the tests that kill the mutants of
docs/mutants.md."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "rules" / "boundaries.md"
MUTANTS_PAGE = ROOT / "docs" / "mutants.md"
CITED = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")
BOUNDARY_FILES = (
    "tests/unit/cfc/test_cfc_boundaries.py",
    "tests/unit/test_fide_boundaries.py",
    "tests/unit/naspa/test_naspa_boundaries.py",
)


def _citations(page: Path = PAGE) -> list[tuple[str, str]]:
    return CITED.findall(page.read_text(encoding="utf-8"))


def _tests_in(path: str) -> set[str]:
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
    }


@pytest.mark.parametrize(
    "page, least",
    [
        (PAGE, 50),  # the page's three tables, not an empty match
        (MUTANTS_PAGE, 20),  # the killed mutants of its tables
    ],
)
def test_every_cited_test_exists(page, least):
    citations = _citations(page)
    assert len(citations) > least
    missing = []
    for path, name in citations:
        if not (ROOT / path).is_file():
            missing.append(f"{path} (no such file)")
        elif name not in _tests_in(path):
            missing.append(f"{path}::{name} (no such test function)")
    assert missing == []


def test_every_boundary_test_is_on_the_list():
    cited = set(_citations())
    unlisted = [
        f"{path}::{name}"
        for path in BOUNDARY_FILES
        for name in sorted(_tests_in(path))
        if (path, name) not in cited
    ]
    assert unlisted == []


def test_the_check_sees_a_missing_test():
    # The pattern reads a citation as the page writes it, and a name the file lacks is found.
    assert CITED.findall("`tests/unit/x.py::test_a`, `tests/unit/y.py::test_b`") == [
        ("tests/unit/x.py", "test_a"),
        ("tests/unit/y.py", "test_b"),
    ]
    assert "test_no_such_boundary" not in _tests_in(BOUNDARY_FILES[0])
