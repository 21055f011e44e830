"""Plain-text tables and exact numbers for the calculators' human-readable output."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from service.engine.arithmetic import half_away_from_zero


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Columns padded to their widest cell; text left-aligned, numbers right-aligned."""
    cells = [[str(h) for h in headers]] + [
        ["" if c is None else str(c) for c in row] for row in rows
    ]
    numeric = [
        all(_numeric(row[i]) for row in cells[1:] if row[i]) and any(row[i] for row in cells[1:])
        for i in range(len(headers))
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = []
    for row in cells:
        parts = [
            row[i].rjust(widths[i]) if numeric[i] else row[i].ljust(widths[i])
            for i in range(len(headers))
        ]
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def _numeric(text: str) -> bool:
    return text.lstrip("+-").replace(".", "", 1).replace("/", "", 1).isdigit()


def decimal(value: Fraction | int, places: int = 2, signed: bool = False) -> str:
    """An exact number to `places` decimals (rounded half away from zero for display)."""
    scaled = half_away_from_zero(Fraction(value) * 10**places)
    sign = "-" if scaled < 0 else ("+" if signed and scaled > 0 else "")
    whole, part = divmod(abs(scaled), 10**places)
    return f"{sign}{whole}.{part:0{places}d}" if places else f"{sign}{whole}"


def hundredths(value: int, signed: bool = False) -> str:
    """A table value in hundredths: 76 -> 0.76."""
    return decimal(Fraction(value, 100), 2, signed)


def signed(value: int) -> str:
    return f"{value:+d}"
