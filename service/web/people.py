"""Numbers for people: the one place the pages turn a figure into text (D36).

Rounding is half away from zero, as the engines round (docs/rules: CFC 714, FIDE 8.3,
NASPA): 1234.5 -> "1235", -2.5 -> "-3", on the decimal the figure prints as (the float's
shortest repr, so 0.125 rounds as 0.125 and 2.675 as 2.675, not as the binary below it).
A negative figure carries a minus sign (U+2212), a signed one a plus. Nothing is
truncated: 1630.33 to 0 places is "1630", never "163".

Every figure a page shows goes through `figure` (the `fig` of the templates), which wraps
the text in `<data value="..." data-f="PATH">`: PATH names the figure's field in the read
API's answer for the page (the nearest `data-api` attribute above it), so that a test can
compare each number shown with the API's value for the same field (tests/figures.py).
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

from markupsafe import Markup, escape

MINUS = "\u2212"


def decimal_of(value: float | int | str | Fraction) -> Decimal:
    """The figure as a Decimal: a float by its shortest repr, an exact `n/d` as a Fraction."""
    if isinstance(value, Fraction):
        return Decimal(value.numerator) / Decimal(value.denominator)
    if isinstance(value, str) and "/" in value:
        return decimal_of(Fraction(value))
    return Decimal(str(value))


def rounded(value: float | int | str | Fraction, places: int = 0) -> Decimal:
    """`value` to `places` decimals, half away from zero (Decimal's ROUND_HALF_UP)."""
    return decimal_of(value).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


def plain(
    value: float | int | str | Fraction | None, places: int = 0, *, trim: bool = False
) -> str:
    """The figure with `places` decimals (`trim`: without trailing zeros, 3.50 -> "3.5",
    3.00 -> "3"), a minus sign for a negative one; "" for no value."""
    if value is None:
        return ""
    text = f"{rounded(value, places):f}"
    if trim and "." in text:
        text = text.rstrip("0").rstrip(".")
    if text.lstrip("-").strip("0.") == "":
        text = text.lstrip("-")  # -0.2 to 0 places is "0", not "-0"
    return text.replace("-", MINUS)


def signed(value: float | int | str | Fraction | None, places: int = 0) -> str:
    """+9, −11, 0 (no sign on zero); "" for no value."""
    text = plain(value, places)
    if text == "" or text.startswith(MINUS) or text.strip("0.") == "":
        return text
    return "+" + text


def score(value: float | int | None) -> str:
    """A score in points: 3, 3.5, 0.5 (halves as decimals, no trailing zeros)."""
    return plain(value, 1, trim=True)


def figure(
    value: float | int | str | None,
    path: str,
    places: int = 0,
    *,
    sign: bool = False,
    trim: bool = False,
    empty: str = "",
) -> Markup:
    """One figure of a page: `<data value="exact" data-f="path">text</data>` (`empty`: the
    text for no value, e.g. "unrated")."""
    if value is None:
        text = empty
        exact = ""
    else:
        text = signed(value, places) if sign else plain(value, places, trim=trim)
        exact = str(value)
    return Markup('<data value="{}" data-f="{}">{}</data>').format(
        escape(exact), escape(path), escape(text)
    )
