"""The expected-score plot: the table as a step curve over the continuous curve, for
differences 0..800, as a hand-written SVG (no plotting dependency)."""

from __future__ import annotations

from xml.sax.saxutils import escape

from service.calculators.curves import curve, curve_name
from service.calculators.expected import TABLE_NAMES, table_higher

MAX_D = 800
WIDTH, HEIGHT = 760, 470
LEFT, RIGHT, TOP, BOTTOM = 72, 24, 48, 72  # margins
Y_LOW, Y_HIGH = 0.5, 1.0  # the higher-rated player's expected score
TABLE_COLOUR, CURVE_COLOUR = "#1f5fa8", "#c8372d"
# The legend sits bottom right, where both curves are far above it (E > 0.88 beyond D 350).
LEGEND_WIDTH, LEGEND_HEIGHT = 330, 52


def _x(d: float) -> float:
    return LEFT + (WIDTH - LEFT - RIGHT) * d / MAX_D


def _y(e: float) -> float:
    return TOP + (HEIGHT - TOP - BOTTOM) * (Y_HIGH - e) / (Y_HIGH - Y_LOW)


LEGEND_LEFT = _x(MAX_D) - 12 - LEGEND_WIDTH
LEGEND_TOP = _y(Y_LOW) - 12 - LEGEND_HEIGHT


def _step_path(system: str) -> str:
    """M.. H.. V..: flat over each band, rising where the table's value changes."""
    value = table_higher(system, 0)
    assert value is not None
    parts = [f"M{_x(0):.2f},{_y(value / 100):.2f}"]
    for d in range(1, MAX_D + 1):
        following = table_higher(system, d)
        assert following is not None
        if following != value:
            parts.append(f"H{_x(d):.2f}V{_y(following / 100):.2f}")
            value = following
    parts.append(f"H{_x(MAX_D):.2f}")
    return "".join(parts)


def _curve_points(system: str) -> str:
    return " ".join(f"{_x(d):.2f},{_y(curve(system, d)):.4f}" for d in range(0, MAX_D + 1, 2))


def render(system: str, mark: int | None = None) -> str:
    """The SVG document; `mark` draws a dashed line at that |D| (if within 0..800)."""
    table_name = TABLE_NAMES[system]
    title = f"{system.upper()}: expected score of the higher-rated player, D = 0..{MAX_D}"
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">',
        f"<title>{escape(title)}</title>",
        f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{WIDTH / 2:.0f}" y="26" text-anchor="middle" font-size="15">{escape(title)}</text>',
        '<g id="grid" stroke="#e3e3e3" stroke-width="1">',
    ]
    for d in range(0, MAX_D + 1, 100):
        out.append(
            f'<line x1="{_x(d):.2f}" y1="{_y(Y_HIGH):.2f}" x2="{_x(d):.2f}" y2="{_y(Y_LOW):.2f}"/>'
        )
    for i in range(11):
        e = Y_LOW + i * 0.05
        out.append(
            f'<line x1="{_x(0):.2f}" y1="{_y(e):.2f}" x2="{_x(MAX_D):.2f}" y2="{_y(e):.2f}"/>'
        )
    out.append("</g>")
    out.append('<g id="axes" stroke="black" stroke-width="1.2">')
    out.append(
        f'<line x1="{_x(0):.2f}" y1="{_y(Y_LOW):.2f}" x2="{_x(MAX_D):.2f}" y2="{_y(Y_LOW):.2f}"/>'
    )
    out.append(
        f'<line x1="{_x(0):.2f}" y1="{_y(Y_LOW):.2f}" x2="{_x(0):.2f}" y2="{_y(Y_HIGH):.2f}"/>'
    )
    out.append("</g>")
    out.append('<g id="ticks">')
    for d in range(0, MAX_D + 1, 100):
        out.append(
            f'<text x="{_x(d):.2f}" y="{_y(Y_LOW) + 18:.2f}" text-anchor="middle">{d}</text>'
        )
    for i in range(11):
        e = Y_LOW + i * 0.05
        out.append(
            f'<text x="{_x(0) - 8:.2f}" y="{_y(e) + 4:.2f}" text-anchor="end">{e:.2f}</text>'
        )
    out.append("</g>")
    out.append(
        f'<text x="{_x(MAX_D / 2):.2f}" y="{HEIGHT - 24}" text-anchor="middle">'
        "rating difference D (higher minus lower)</text>"
    )
    out.append(
        f'<text transform="translate(18 {_y(0.75):.2f}) rotate(-90)" text-anchor="middle">expected score</text>'
    )
    if table_name is not None:
        out.append(
            f'<path id="table" d="{_step_path(system)}" fill="none" stroke="{TABLE_COLOUR}" stroke-width="2"/>'
        )
    out.append(
        f'<polyline id="curve" points="{_curve_points(system)}" fill="none" stroke="{CURVE_COLOUR}" '
        'stroke-width="1.6" stroke-dasharray="6 3"/>'
    )
    if mark is not None and 0 <= mark <= MAX_D:
        out.append(
            f'<line id="mark" x1="{_x(mark):.2f}" y1="{_y(Y_HIGH):.2f}" x2="{_x(mark):.2f}" y2="{_y(Y_LOW):.2f}" '
            'stroke="#555" stroke-dasharray="2 3"/>'
        )
        label_y = _y(Y_LOW) - 6 if _x(mark) < LEGEND_LEFT else LEGEND_TOP - 8  # clear of the legend
        out.append(
            f'<text x="{_x(mark) + 4:.2f}" y="{label_y:.2f}" fill="#555">|D| = {mark}</text>'
        )
    out.extend(_legend(system, table_name))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _legend(system: str, table_name: str | None) -> list[str]:
    x, y = LEGEND_LEFT, LEGEND_TOP
    entries = []
    if table_name is not None:
        entries.append((f"table ({table_name}), step curve", TABLE_COLOUR, ""))
    else:
        entries.append(("no table: NASPA rates with the curve itself (N1)", "none", ""))
    entries.append((f"curve: {curve_name(system)}", CURVE_COLOUR, ' stroke-dasharray="6 3"'))
    out = [
        f'<g id="legend"><rect x="{x:.2f}" y="{y:.2f}" width="{LEGEND_WIDTH}" height="{LEGEND_HEIGHT}" '
        'fill="white" stroke="#999"/>'
    ]
    for i, (label, colour, dash) in enumerate(entries):
        ly = y + 18 + 20 * i
        out.append(
            f'<line x1="{x + 10:.2f}" y1="{ly - 4:.2f}" x2="{x + 40:.2f}" y2="{ly - 4:.2f}" '
            f'stroke="{colour}" stroke-width="2"{dash}/>'
        )
        out.append(f'<text x="{x + 48:.2f}" y="{ly:.2f}">{escape(label)}</text>')
    out.append("</g>")
    return out
