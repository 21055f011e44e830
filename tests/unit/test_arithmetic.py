"""Rounding and exact-number helpers (CFC C11, FIDE 8.3.4 / F4)."""

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.engine.arithmetic import (
    decimal_number,
    from_exact,
    half_away_from_zero,
    half_up,
    hundredths,
    ratio_number,
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


# The output messages' numbers (schemas/ratings.py "Numbers"): 2 decimals, half away from zero.
@pytest.mark.parametrize(
    "value, number, text",
    [
        (1598.3333333333333, 1598.33, "1598.33"),  # a CFC performance 4795/3 as a float
        (Fraction(4795, 3), 1598.33, "1598.33"),  # 1598.333... exactly
        (Fraction(19, 25), 0.76, "0.76"),  # FIDE PD 0.76: whole hundredths stay exact
        (Fraction(-13, 50), -0.26, "-0.26"),  # FIDE W - We
        (Fraction(7033, 4), 1758.25, "1758.25"),
        (Fraction(46394, 25), 1855.76, "1855.76"),
        (Fraction(2800, 3), 933.33, "933.33"),
        (Fraction(2900, 3), 966.67, "966.67"),  # .666... rounds up
        (Fraction(1, 200), 0.01, "0.01"),  # 0.005: half away from zero
        (Fraction(-1, 200), -0.01, "-0.01"),  # -0.005 -> -0.01 (half up would give -0.0)
        (Fraction(4453, 2), 2226.5, "2226.5"),
        (0.125, 0.13, "0.13"),  # an exact binary tie: away from zero (round() gives 0.12)
        (-0.125, -0.13, "-0.13"),
        (0.375, 0.38, "0.38"),  # round() would also give 0.38: the tie rule, not luck
        (2.675, 2.67, "2.67"),  # the float 2.675 is 2.67499999...: no tie, nearest is 2.67
        (2.121293963632749, 2.12, "2.12"),  # a NASPA expected-wins float
        (1632.14824145469, 1632.15, "1632.15"),
        (1405.0, 1405.0, "1405.0"),
        (1620, 1620, "1620"),  # an int stays an int
        (None, None, "null"),
    ],
)
def test_decimal_number(value, number, text):
    import msgspec

    got = decimal_number(value)
    assert got == number and type(got) is type(number)
    assert msgspec.json.encode(got).decode() == text


def test_ratio_number():
    assert ratio_number(76, 100) == 0.76
    assert ratio_number(-49, 100) == -0.49
    assert ratio_number(-49 * 10, 100) == -4.9
    assert ratio_number(4795, 3) == 1598.33
    assert ratio_number(-5, 1000) == -0.01  # -0.005, away from zero


@given(st.fractions(min_value=-10_000, max_value=10_000))
def test_decimal_number_is_the_nearest_hundredth(x):
    got = decimal_number(x)
    exact = Fraction(repr(got))  # the decimal JSON writes
    assert exact.denominator in (1, 2, 4, 5, 10, 20, 25, 50, 100)
    assert abs(exact - x) <= Fraction(1, 200)
    if abs(exact - x) == Fraction(1, 200):
        assert abs(exact) > abs(x)  # a tie goes away from zero


@given(st.floats(min_value=-10_000, max_value=10_000, allow_nan=False))
def test_a_float_is_rounded_by_its_exact_value(x):
    # The fast path (round() off the ties) agrees with exact rounding of the float's value.
    assert decimal_number(x) == decimal_number(Fraction(x))


@given(st.integers(-10_000 * 8, 10_000 * 8))
def test_eighths_the_only_float_ties(k):
    x = k / 8
    assert decimal_number(x) == decimal_number(Fraction(k, 8))


@given(st.integers(-(10**7), 10**7))
def test_hundredths_number_is_ratio_number(n):
    from service.engine.arithmetic import hundredths_number

    assert hundredths_number(n) == ratio_number(n, 100)
    assert Fraction(repr(hundredths_number(n))) == Fraction(n, 100)  # exact as a decimal


def test_score_halves_refusal_names_the_score():
    # The message says which score was refused (0.25 is no game score: 0.5 halves).
    with pytest.raises(ValueError, match=r"^score 0\.25 is not 1, 0\.5 or 0$"):
        score_halves(0.25)


@pytest.mark.parametrize(
    "n, number",
    [
        (76, 0.76),  # FIDE PD 0.76: 76 hundredths
        (-49, -0.49),  # a W - We of -0.49
        (100, 1.0),  # 100 hundredths: 1
        (0, 0.0),
    ],
)
def test_hundredths_number(n, number):
    from service.engine.arithmetic import hundredths_number

    assert hundredths_number(n) == number
