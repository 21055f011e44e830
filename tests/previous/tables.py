"""The official expected-score tables, laid out as the handbooks print them.

Each table is data (upper bound of a band -> value, in hundredths) expanded once into a
lookup by integer rating difference. Read literally: no interpolation, no formula.
"""

from __future__ import annotations

from collections.abc import Sequence

# CFC 714b (the seed's table, C3): rating difference band -> expected score of the higher-
# rated player in hundredths; the lower-rated player gets 100 minus it. 735 and over: 100.
CFC_EXPECTED_BANDS: tuple[tuple[int, int | None, int], ...] = (
    # (from, to, higher player's hundredths)
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
    (735, None, 100),
)

# FIDE Table 8.1.2: |D| band -> PD of the higher-rated player in hundredths (the H column);
# the lower-rated player's PD (L column) is 100 minus it. D over 735: 100.
FIDE_PD_BANDS: tuple[tuple[int, int | None, int], ...] = (
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
    (620, 735, 99),
    (736, None, 100),
)

# FIDE Table 8.1.1 (= Title Regulations 1.4.9): score fraction p in hundredths -> dp.
# dp(1.00) and dp(0.00) are the table's notional +800 / -800.
FIDE_DP: tuple[int, ...] = (
    -800,
    -677,
    -589,
    -538,
    -501,
    -470,
    -444,
    -422,
    -401,
    -383,  # p = 0.00..
    -366,
    -351,
    -336,
    -322,
    -309,
    -296,
    -284,
    -273,
    -262,
    -251,  # p = 0.10..
    -240,
    -230,
    -220,
    -211,
    -202,
    -193,
    -184,
    -175,
    -166,
    -158,  # p = 0.20..
    -149,
    -141,
    -133,
    -125,
    -117,
    -110,
    -102,
    -95,
    -87,
    -80,  # p = 0.30..
    -72,
    -65,
    -57,
    -50,
    -43,
    -36,
    -29,
    -21,
    -14,
    -7,  # p = 0.40..
    0,
    7,
    14,
    21,
    29,
    36,
    43,
    50,
    57,
    65,  # p = 0.50..
    72,
    80,
    87,
    95,
    102,
    110,
    117,
    125,
    133,
    141,  # p = 0.60..
    149,
    158,
    166,
    175,
    184,
    193,
    202,
    211,
    220,
    230,  # p = 0.70..
    240,
    251,
    262,
    273,
    284,
    296,
    309,
    322,
    336,
    351,  # p = 0.80..
    366,
    383,
    401,
    422,
    444,
    470,
    501,
    538,
    589,
    677,  # p = 0.90..
    800,  # p = 1.00..
)


def _expand(bands: Sequence[tuple[int, int | None, int]]) -> tuple[int, ...]:
    """One value per integer difference 0..last band start; the open last band beyond."""
    values: list[int] = []
    for low, high, value in bands:
        if low != len(values):
            raise ValueError(f"bands are not contiguous at {low}")
        values.extend([value] * ((high if high is not None else low) - low + 1))
    return tuple(values)


_CFC = _expand(CFC_EXPECTED_BANDS)
_FIDE = _expand(FIDE_PD_BANDS)
_CFC_LAST, _FIDE_LAST = len(_CFC) - 1, len(_FIDE) - 1
assert len(FIDE_DP) == 101


def _lookup(table: tuple[int, ...], difference: int) -> int:
    if difference < 0:
        raise ValueError(f"a rating difference for the table is never negative: {difference}")
    return table[min(difference, len(table) - 1)]


def cfc_expected_higher(difference: int) -> int:
    """CFC 714b table (C3): expected score, in hundredths, of the higher-rated player
    for an absolute integer rating difference."""
    return _lookup(_CFC, difference)


def cfc_expected(own: int, opponent: int) -> int:
    """CFC 714b (C3): expected score of `own` against `opponent`, in hundredths; the
    higher-rated player reads the table, the lower one gets 100 minus it."""
    difference = own - opponent  # the table lookup inlined: once per game and side
    if difference >= 0:
        return _CFC[difference if difference < _CFC_LAST else _CFC_LAST]
    return 100 - _CFC[-difference if -difference < _CFC_LAST else _CFC_LAST]


def fide_pd_higher(difference: int) -> int:
    """FIDE Table 8.1.2: PD of the higher-rated player, in hundredths, for |D|."""
    return _lookup(_FIDE, difference)


def fide_pd(difference: int) -> int:
    """FIDE 8.1.2: PD, in hundredths, of a player whose D = own - opponent (after any
    400-point rule); D >= 0 reads the H column, D < 0 the L column."""
    if difference >= 0:  # the table lookup inlined: once per game and side
        return _FIDE[difference if difference < _FIDE_LAST else _FIDE_LAST]
    return 100 - _FIDE[-difference if -difference < _FIDE_LAST else _FIDE_LAST]


def fide_dp(p_hundredths: int) -> int:
    """FIDE Table 8.1.1: rating difference dp for a score fraction p given in hundredths."""
    if not 0 <= p_hundredths <= 100:
        raise ValueError(f"p must be 0..100 hundredths, got {p_hundredths}")
    return FIDE_DP[p_hundredths]
