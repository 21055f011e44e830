"""Rounding and exact-number helpers (CFC C11, FIDE 8.3.4 / F4)."""

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.engine.arithmetic import (
    from_exact,
    half_away_from_zero,
    half_up,
    hundredths,
    score_halves,
    to_exact,
)


@pytest.mark.parametrize(
    "x,up,away",
    [
        (Fraction(5, 2), 3, 3),  # +2.5: both round up
        (Fraction(-5, 2), -2, -3),  # -2.5: half up -> -2, away from zero -> -3 (FIDE)
        (Fraction(7, 2), 4, 4),  # Python's round(3.5) is 4, round(2.5) is 2: not used
        (Fraction(-1, 2), 0, -1),
        (Fraction(1, 2), 1, 1),
        (Fraction(249, 100), 2, 2),
        (Fraction(-251, 100), -3, -3),
        (Fraction(-249, 100), -2, -2),
        (0, 0, 0),
        (7, 7, 7),
    ],
)
def test_rounding(x, up, away):
    assert half_up(x) == up
    assert half_away_from_zero(x) == away


@given(st.fractions())
def test_half_away_is_symmetric(x):
    assert half_away_from_zero(-x) == -half_away_from_zero(x)
    assert abs(half_up(x) - x) <= Fraction(1, 2)


@given(st.fractions())
def test_exact_round_trip(x):
    assert from_exact(to_exact(x)) == x


def test_exact_text():
    assert to_exact(Fraction(12345, 7)) == "12345/7"
    assert to_exact(Fraction(-10, 5)) == "-2"


def test_hundredths_and_halves():
    assert hundredths(0.76) == 76
    assert hundredths("0.07") == 7
    with pytest.raises(ValueError):
        hundredths(0.765)
    assert [score_halves(s) for s in (0, 0.5, 1)] == [0, 1, 2]
    with pytest.raises(ValueError):
        score_halves(0.25)
