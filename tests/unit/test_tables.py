"""The official tables, checked at every band edge against the rule texts."""

from __future__ import annotations

import json
import re
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

SHARED = Path(__file__).resolve().parents[3] / "shared"
CFC_SEED = SHARED / "seeds" / "cfc-handbook-714-717.txt"
FIDE_TABLES = SHARED / "spec" / "fide-tables.json"

# The CFC table as printed in the handbook (714b), transcribed by hand: (from, to, higher).
CFC_PRINTED = [
    (0, 3, 50),
    (4, 10, 51),
    (11, 17, 52),
    (18, 25, 53),
    (26, 32, 54),
    (33, 39, 55),
    (40, 46, 56),
    (47, 53, 57),
    (54, 61, 58),
    (62, 68, 59),
    (69, 76, 60),
    (77, 83, 61),
    (84, 91, 62),
    (92, 98, 63),
    (99, 106, 64),
    (107, 113, 65),
    (114, 121, 66),
    (122, 129, 67),
    (130, 137, 68),
    (138, 145, 69),
    (146, 153, 70),
    (154, 162, 71),
    (163, 170, 72),
    (171, 179, 73),
    (180, 188, 74),
    (189, 197, 75),
    (198, 206, 76),
    (207, 215, 77),
    (216, 225, 78),
    (226, 235, 79),
    (236, 245, 80),
    (246, 256, 81),
    (257, 267, 82),
    (268, 278, 83),
    (279, 290, 84),
    (291, 302, 85),
    (303, 315, 86),
    (316, 328, 87),
    (329, 344, 88),
    (345, 357, 89),
    (358, 374, 90),
    (375, 391, 91),
    (392, 411, 92),
    (412, 432, 93),
    (433, 456, 94),
    (457, 484, 95),
    (485, 517, 96),
    (518, 559, 97),
    (560, 619, 98),
    (620, 734, 99),
]


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


def test_cfc_table_matches_the_seed_text():
    if not CFC_SEED.exists():
        pytest.skip("shared/seeds not beside the checkout")
    rows = re.findall(r"^(\d+)-(\d+)\t\.(\d\d)\t\.(\d\d)$", CFC_SEED.read_text(), re.M)
    seed = [(int(a), int(b), int(h)) for a, b, h, _ in rows]
    assert seed == CFC_PRINTED
    for _a, _b, h, low in rows:
        assert int(h) + int(low) == 100
    assert [(a, b, v) for a, b, v in CFC_EXPECTED_BANDS] == CFC_PRINTED + [(735, None, 100)]


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


def test_fide_tables_match_the_shared_json():
    if not FIDE_TABLES.exists():
        pytest.skip("shared/spec not beside the checkout")
    data = json.loads(FIDE_TABLES.read_text())
    assert [(a, b, round(v * 100)) for a, b, v in data["table_8_1_2"]] == list(FIDE_PD_BANDS)
    assert [dp for _, dp in data["table_8_1_1"]] == list(FIDE_DP)


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
