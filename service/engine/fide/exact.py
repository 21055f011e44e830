"""Integer forms of the exact rounding of a ratio num/den (den > 0), for the hot paths:
the same results as `arithmetic.half_up` / `half_away_from_zero` / `to_exact` on
Fraction(num, den), without building Fractions."""

from __future__ import annotations

from service.engine.arithmetic import ratio_half_away_from_zero, ratio_half_up, ratio_text

__all__ = ["ratio_half_away_from_zero", "ratio_half_up", "ratio_text"]
