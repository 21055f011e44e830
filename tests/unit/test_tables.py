"""The official tables, checked at every band edge against the rule texts."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.engine.tables import (
    CFC_EXPECTED_BANDS,
    FIDE_DP,
    FIDE_PD_BANDS,
    cfc_expected,
    cfc_expected_higher,
    fide_dp,
    fide_pd,
    fide_pd_higher,
)
from tests.unit.printed_tables import CFC_PRINTED, FIDE_PRINTED_8_1_1, FIDE_PRINTED_8_1_2

DOCS_RULES = Path(__file__).resolve().parents[2] / "docs" / "rules"


@pytest.mark.parametrize("low,high,value", CFC_PRINTED)
def test_cfc_every_band_edge(low, high, value):
    # Both ends of the band read the band's value; the next integer reads the next band.
    assert cfc_expected_higher(low) == value
    assert cfc_expected_higher(high) == value
    assert cfc_expected_higher(high + 1) == (value + 1 if high < 734 else 100)


def test_cfc_734_735_and_beyond():
    assert cfc_expected_higher(734) == 99  # 620-734: .99
    assert cfc_expected_higher(735) == 100  # "735 and over": 1.00
    assert cfc_expected_higher(2000) == 100


def test_cfc_lower_player_gets_the_complement():
    # 1600 vs 1400: difference 200 is in 198-206 -> .76 for the higher, .24 for the lower.
    assert cfc_expected(1600, 1400) == 76
    assert cfc_expected(1400, 1600) == 24
    # 3/4 edge: difference 3 -> .50 / .50; difference 4 -> .51 / .49.
    assert cfc_expected(1503, 1500) == 50 and cfc_expected(1500, 1503) == 50
    assert cfc_expected(1504, 1500) == 51 and cfc_expected(1500, 1504) == 49


def printed_rows(page: str, anchor: str) -> list[list[str]]:
    """The body rows of the first table after the heading `{#anchor}` of docs/rules/`page`."""
    lines = (DOCS_RULES / page).read_text(encoding="utf-8").splitlines()
    start = next(
        i for i, line in enumerate(lines) if line.startswith("#") and f"{{#{anchor}}}" in line
    )
    rows = []
    for line in lines[start + 1 :]:
        if line.startswith("#"):
            break
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
        elif rows:
            break
    return rows[2:]  # after the header and the |---| line


def hundredths(text: str) -> int:
    whole, _, fraction = text.partition(".")
    return int(whole or 0) * 100 + int(fraction.ljust(2, "0"))


def test_cfc_table_is_the_engine_s_and_the_rules_page_s():
    assert [(a, b, v) for a, b, v in CFC_EXPECTED_BANDS] == CFC_PRINTED + [(735, None, 100)]
    rows = printed_rows("cfc.md", "c3")
    assert rows[-1] == ["735 and over", "1.00", ".00"]
    printed = [(*map(int, band.split("-")), hundredths(h)) for band, h, _ in rows[:-1]]
    assert printed == CFC_PRINTED
    for _, h, low in rows:
        assert hundredths(h) + hundredths(low) == 100


def test_fide_pd_band_edges_and_data():
    for low, high, value in FIDE_PD_BANDS:
        assert fide_pd_higher(low) == value
        if high is not None:
            assert fide_pd_higher(high) == value
    # Edges quoted by the methodology: D = 0 -> .50, 200 -> .76, 400 -> .92, > 735 -> 1.00.
    assert fide_pd_higher(0) == 50
    assert fide_pd_higher(200) == 76
    assert fide_pd_higher(400) == 92
    assert fide_pd_higher(735) == 99 and fide_pd_higher(736) == 100
    # Where FIDE differs from the CFC table: 735 reads .99 for FIDE, 1.00 for CFC.
    assert cfc_expected_higher(735) == 100


def test_fide_pd_signed():
    assert fide_pd(200) == 76 and fide_pd(-200) == 24
    assert fide_pd(-3) == 50 and fide_pd(-4) == 49


def test_fide_tables_are_the_engine_s():
    assert list(FIDE_PD_BANDS) == FIDE_PRINTED_8_1_2
    assert list(FIDE_DP) == [dp for _, dp in reversed(FIDE_PRINTED_8_1_1)]
    # The transcription itself: contiguous bands from 0, and p from 100 down to 0 in steps of 1.
    assert [low for low, _, _ in FIDE_PRINTED_8_1_2[1:]] == [
        high + 1 for _, high, _ in FIDE_PRINTED_8_1_2[:-1]
    ]
    assert [p for p, _ in FIDE_PRINTED_8_1_1] == list(range(100, -1, -1))


def test_fide_tables_on_the_rules_page_are_the_transcription():
    rows = printed_rows("fide.md", "fide-8-1-2")
    assert rows[-1] == ["> 735", "1.00", "0.00"]
    printed = [(*map(int, band.split("-")), hundredths(h)) for band, h, _ in rows[:-1]]
    assert printed + [(736, None, 100)] == FIDE_PRINTED_8_1_2
    assert all(hundredths(h) + hundredths(low) == 100 for _, h, low in rows)
    rows = printed_rows("fide.md", "fide-8-1-1")
    assert [(hundredths(p), int(dp)) for p, dp in rows] == FIDE_PRINTED_8_1_1


@pytest.mark.parametrize(
    "p,dp",
    [(0, -800), (1, -677), (35, -110), (49, -7), (50, 0), (51, 7), (60, 72), (99, 677), (100, 800)],
)
def test_fide_dp_edges(p, dp):
    assert fide_dp(p) == dp


def test_fide_dp_is_antisymmetric_and_bounded():
    for p in range(101):
        assert fide_dp(p) == -fide_dp(100 - p)
    with pytest.raises(ValueError):
        fide_dp(101)
    with pytest.raises(ValueError):
        fide_dp(-1)


def test_negative_difference_is_refused():
    with pytest.raises(ValueError):
        cfc_expected_higher(-1)


def test_expand_one_value_per_difference():
    from service.engine.tables import _expand

    # Band 0-1: 1 - 0 + 1 = 2 values; 2-4: 3 values; the open last band 5-: its one value
    # at index 5 (a lookup past it reads the last index).
    assert _expand(((0, 1, 50), (2, 4, 51), (5, None, 52))) == (50, 50, 51, 51, 51, 52)
    # CFC 0..735 (735 the open band): 736 values; FIDE 0..736: 737 values.
    assert len(_expand(CFC_EXPECTED_BANDS)) == 736
    assert len(_expand(FIDE_PD_BANDS)) == 737


def test_expand_refuses_a_gap_between_bands():
    from service.engine.tables import _expand

    # 0-1 fills indices 0 and 1; a band from 3 leaves 2 without a value.
    with pytest.raises(ValueError, match=r"^bands are not contiguous at 3$"):
        _expand(((0, 1, 50), (3, None, 51)))


def test_fide_dp_refusal_names_p():
    with pytest.raises(ValueError, match=r"^p must be 0\.\.100 hundredths, got 101$"):
        fide_dp(101)
