"""Integer forms of the exact rounding of a ratio num/den (den > 0), for the hot paths:
the same results as `arithmetic.half_up` / `half_away_from_zero` / `to_exact` on
Fraction(num, den), without building Fractions."""

from __future__ import annotations

from math import gcd


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
