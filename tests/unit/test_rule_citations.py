"""Every rule the code cites resolves inside the repository (docs/rules, issue 27).

A rule id (C1.. CFC, F1.. FIDE, N1.. NASPA, A1.. audit ambiguities) cited in service/ or
schemas/ must be a heading anchor on its system's rules page, and every `docs/PAGE.md#anchor`
cited in service/, schemas/ or tests/ must name a page and a heading anchor that exist.
Nothing the project ships may point at the specification material outside the repository.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
THIS = Path(__file__).resolve()

# The page that holds each series' ids; audit ambiguities (A) may be on any rules page.
SERIES_PAGES = {
    "C": ("rules/cfc.md",),
    "F": ("rules/fide.md",),
    "N": ("rules/naspa.md",),
    "A": ("rules/cfc.md", "rules/fide.md", "rules/naspa.md"),
}
# An id, or a range of them (`N2-N4`, `F5-F7`), as the code cites them. An id written as
# code (`F12`: a forfeit cell of a crosstable) is not a rule id.
RULE_ID = re.compile(r"(?<![`\w])([CFNA])([0-9]{1,2})(?:-\1([0-9]{1,2}))?\b(?!`)")
# `docs/page.md`, `docs/page.md#anchor` or `docs/page.md "A heading"`.
DOCS_LINK = re.compile(r'\bdocs/((?:[\w.-]+/)*[\w.-]+\.md)(?:#([\w-]+)| "([^"\n]+)")?')
OUTSIDE = ("../shared", "shared/spec", "shared/seeds")

HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
ATTR_ID = re.compile(r"\s*\{:?[^}]*?#([\w-]+)[^}]*\}\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")


def slugify(text: str) -> str:
    """The anchor Python-Markdown's toc extension gives a heading without an explicit id."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link: its text
    text = re.sub(r"<[^>]+>", "", text.replace("`", ""))
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _heading_texts(page: Path) -> Iterator[str]:
    """The text of each heading of a Markdown page, in order; headings inside code fences
    are not headings."""
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        heading = None if fenced else HEADING.match(line)
        if heading is not None:
            yield heading.group(2)


def anchors(page: Path) -> set[str]:
    """The heading anchors of a Markdown page: explicit `{#id}` ones and generated slugs
    (a repeated slug gets `_1`, `_2`.. as toc does)."""
    found: set[str] = set()
    for text in _heading_texts(page):
        explicit = ATTR_ID.search(text)
        if explicit:
            found.add(explicit.group(1))
            continue
        slug = base = slugify(text)
        n = 0
        while slug in found:
            n += 1
            slug = f"{base}_{n}"
        found.add(slug)
    return found


def headings(page: Path) -> set[str]:
    """The text of every heading of a Markdown page, without its `{#id}`."""
    return {ATTR_ID.sub("", text).strip() for text in _heading_texts(page)}


def text_files(*tops: str) -> list[Path]:
    """The text files under `tops` (binary files, dependencies and caches left out)."""
    files = []
    for top in tops:
        for path in sorted((ROOT / top).rglob("*")):
            parts = set(path.relative_to(ROOT).parts)
            if not path.is_file() or parts & {"node_modules", "__pycache__"}:
                continue
            try:
                path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            files.append(path)
    return files


def cited_ids(text: str) -> set[str]:
    """The rule ids in `text`, a range `X2-X4` standing for X2, X3 and X4."""
    ids = set()
    for series, first, last in RULE_ID.findall(text):
        for number in range(int(first), int(last or first) + 1):
            ids.add(f"{series}{number}")
    return ids


def unresolved_ids(files: list[Path]) -> list[str]:
    page_anchors = {page: anchors(DOCS / page) for pages in SERIES_PAGES.values() for page in pages}
    missing = []
    for path in files:
        for rule in sorted(cited_ids(path.read_text(encoding="utf-8"))):
            pages = SERIES_PAGES[rule[0]]
            if not any(rule.lower() in page_anchors[page] for page in pages):
                missing.append(
                    f"{path.relative_to(ROOT)}: {rule} (no {{#{rule.lower()}}} in {pages})"
                )
    return missing


def unresolved_links(files: list[Path]) -> list[str]:
    missing = []
    for path in files:
        for page, anchor, heading in DOCS_LINK.findall(path.read_text(encoding="utf-8")):
            target = DOCS / page
            if not target.is_file():
                missing.append(f"{path.relative_to(ROOT)}: docs/{page} does not exist")
            elif anchor and anchor not in anchors(target):
                missing.append(f"{path.relative_to(ROOT)}: docs/{page}#{anchor} is no heading")
            elif heading and heading not in headings(target):
                missing.append(f'{path.relative_to(ROOT)}: docs/{page} has no heading "{heading}"')
    return missing


def test_every_rule_id_cited_in_the_code_is_a_heading_of_its_rules_page():
    files = text_files("service", "schemas")
    assert unresolved_ids(files) == []
    # The scan sees the citations (not an empty pass): a few it must find.
    seen = set().union(*(cited_ids(p.read_text(encoding="utf-8")) for p in files))
    assert {"C1", "C11", "F3", "F6", "N2", "N3", "N6", "F10"} <= seen
    assert "F12" not in seen  # `F12` in service/formats/reports.py is a crosstable cell


def test_every_docs_link_cited_in_the_code_and_the_tests_resolves():
    files = [p for p in text_files("service", "schemas", "tests") if p != THIS]
    assert unresolved_links(files) == []


def test_the_rules_pages_have_the_article_anchors_the_code_cites():
    expected = {
        "rules/cfc.md": {f"cfc-{a}" for a in ("714", "714a", "714b", "714c", "715", "716", "717")},
        "rules/fide.md": {
            *(f"fide-{a}" for a in ("7-1-4", "7-2-1", "8-1-1", "8-1-2", "8-2", "8-3")),
            *(f"fide-{a}" for a in ("8-3-1", "8-3-2", "8-3-3", "8-3-4", "title-1-4")),
        },
        "rules/naspa.md": {f"naspa-{a}" for a in ("basics", "segments", "variants", "newcomers")},
    }
    for page, wanted in expected.items():
        assert wanted <= anchors(DOCS / page), page


def test_nothing_shipped_points_at_the_specification_outside_the_repository():
    files = text_files("service", "schemas", "docs", "deploy") + [ROOT / "README.md"]
    outside = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in files
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if any(marker in line for marker in OUTSIDE)
    ]
    assert outside == []


def test_the_anchor_parser_reads_explicit_ids_and_slugs(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "# How the rules are read\n\n### C1 Cumulative rating {#c1}\n\n"
        "## `cfc-2009` and 714a\n\n```md\n# not a heading\n```\n\n## Rounding\n\n## Rounding\n"
    )
    assert anchors(page) == {
        "how-the-rules-are-read",
        "c1",
        "cfc-2009-and-714a",
        "rounding",
        "rounding_1",
    }
    assert cited_ids("N2-N4, C11 and `F12`; 0x1F2 F-strings") == {"N2", "N3", "N4", "C11"}
