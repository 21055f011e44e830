"""Exact arithmetic and the explicit rounding rules of the rating systems.

Never Python's `round` (half to even) and never a float for a value that is published:
CFC C11 and NASPA round half up, FIDE 8.3.4 rounds half away from zero.

The output messages' decimals (schemas/ratings.py, "Numbers"): `decimal_number` and
`ratio_number` round a value for a person to read, at the edge only - an engine computes
with the exact value and calls them when it writes its result, never in its arithmetic.
"""

from __future__ import annotations

from fractions import Fraction
from math import gcd
from typing import overload

Number = int | Fraction

# The output messages' precision for decimals (schemas/ratings.py, "Numbers"): hundredths,
# the unit of the CFC and FIDE tables, so that their values print exactly (PD 0.76).
DECIMALS = 2
_SCALE = 10**DECIMALS


def half_up(x: Number | float) -> int:
    """Round half up (toward +infinity): 2.5 -> 3, -2.5 -> -2 (CFC C11, NASPA, FIDE 8.2 Ru).

    floor(n/d + 1/2) = floor((2n + d) / 2d) for d > 0: integers only, no Fraction built."""
    if type(x) is int:
        return x
    q = x if type(x) is Fraction else Fraction(x)  # a float converts exactly
    return (2 * q.numerator + q.denominator) // (2 * q.denominator)


def half_away_from_zero(x: Number) -> int:
    """Round half away from zero: 2.5 -> 3, -2.5 -> -3 (FIDE 8.3.4, F4)."""
    if type(x) is int:
        return x
    q = x if type(x) is Fraction else Fraction(x)
    n = (2 * abs(q.numerator) + q.denominator) // (2 * q.denominator)
    return n if q.numerator >= 0 else -n


def to_exact(x: Number) -> str:
    """Encode an exact number for the wire: "1234" or "12345/7" (schemas.common.Exact)."""
    if type(x) is int:
        return str(x)
    q = x if type(x) is Fraction else Fraction(x)
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


def from_exact(text: str) -> Fraction:
    """Decode an exact number written by `to_exact`."""
    return Fraction(text)


def hundredths(x: float | str) -> int:
    """A table value printed with two decimals (0.76) as an exact integer (76)."""
    q = Fraction(str(x))
    scaled = q * 100
    if scaled.denominator != 1:
        raise ValueError(f"{x!r} is not a whole number of hundredths")
    return int(scaled)


def score_halves(score: float) -> int:
    """A game score (1, 0.5, 0) as an exact count of half points (2, 1, 0)."""
    halves = score * 2
    if halves not in (0, 1, 2):
        raise ValueError(f"score {score!r} is not 1, 0.5 or 0")
    return int(halves)


# Integer forms of the exact rounding of a ratio num/den (den > 0), for the hot paths:
# the same results as half_up / half_away_from_zero / to_exact on Fraction(num, den).


def ratio_half_up(num: int, den: int) -> int:
    """floor(num/den + 1/2): half up (FIDE 8.2 Ru, performance Ra and p)."""
    return (2 * num + den) // (2 * den)


def ratio_half_away_from_zero(num: int, den: int) -> int:
    """num/den rounded to the nearest integer, 0.5 away from zero (FIDE 8.3.4, F4)."""
    magnitude = (2 * abs(num) + den) // (2 * den)
    return magnitude if num >= 0 else -magnitude


def ratio_text(num: int, den: int) -> str:
    """num/den as the wire's exact number: "12" or "-3/100" (schemas.common.Exact)."""
    divisor = gcd(num, den)
    num, den = num // divisor, den // divisor
    return str(num) if den == 1 else f"{num}/{den}"


def ratio_number(num: int, den: int) -> float:
    """num/den (den > 0) as the output messages write a decimal: rounded half away from
    zero to DECIMALS places (the same rule as FIDE 8.3.4, one rule for every system), as the
    float nearest that decimal, which JSON writes as the decimal itself: 4794/3 -> 1598.33,
    19/25 -> 0.76, -1/200 -> -0.01. Integers only: no Fraction built."""
    num *= _SCALE
    magnitude = (2 * abs(num) + den) // (2 * den)  # ratio_half_away_from_zero, inlined (hot path)
    return (magnitude if num >= 0 else -magnitude) / _SCALE


def hundredths_number(n: int) -> float:
    """n hundredths as the output's number: `ratio_number(n, 100)`, which for a whole number
    of hundredths is plain n / 100 (an int division is correctly rounded, so it gives the
    float nearest the decimal): 76 -> 0.76. The FIDE figures' hot path."""
    return n / 100


@overload
def decimal_number(x: Number | float) -> int | float: ...
@overload
def decimal_number(x: None) -> None: ...
@overload
def decimal_number(x: Number | float | None) -> int | float | None: ...


def decimal_number(x: Number | float | None) -> int | float | None:
    """An engine's value for the output messages (schemas/ratings.py, "Numbers"): an int
    stays an int; a Fraction or a float is rounded by `ratio_number` (a float by its exact
    binary value, so 0.125 -> 0.13, never half to even); None stays None.
    1598.3333333333333 -> 1598.33; Fraction(19, 25) -> 0.76."""
    if x is None or type(x) is int:
        return x
    if type(x) is Fraction:
        return ratio_number(x.numerator, x.denominator)
    x = float(x)
    if x.is_integer():
        return x  # a whole rating as a float (NASPA's 1405.0): nothing to round
    if not (x * 8).is_integer():
        # Not a multiple of 1/8, so not exactly halfway between two hundredths (a float
        # halfway is (2m + 1) / 200, a binary fraction only as a multiple of 1/8): the
        # nearest hundredth is the answer whatever the tie rule, and `round` finds it
        # correctly rounded from the float's exact value (the engines' hot path: NASPA).
        return round(x, DECIMALS)
    num, den = x.as_integer_ratio()  # exact, ties included: 0.125 -> 0.13
    return ratio_number(num, den)
