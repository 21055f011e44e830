"""Exact arithmetic and the explicit rounding rules of the rating systems.

Never Python's `round` (half to even) and never a float for a value that is published:
CFC C11 and NASPA round half up, FIDE 8.3.4 rounds half away from zero.
"""

from __future__ import annotations

from fractions import Fraction
from math import gcd
from typing import Union

Number = Union[int, Fraction]


def half_up(x: Number) -> int:
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
