"""`calc expected`: the table beside the curve, with the seed's own figures
(docs/rules/fide.md#tables: D = 0 0.50, D = 200 0.76, D = 400 0.92 against 0.909
on the curve, D > 735 1.00), and the --plot SVG."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from service.calculators import plot
from service.cli.main import main

SVG = "{http://www.w3.org/2000/svg}"


def _expected(capsys, *argv: str) -> dict:
    assert main(["calc", "expected", "--json", *argv]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    ("rating", "opponent", "table", "curve"),
    [
        # Seed: D = 0 gives 0.50; the curve 1/(1+10^0) = 0.5.
        (2000, 2000, 0.50, 0.500),
        # Seed: D = 200 gives 0.76 (band 198-206); curve 1/(1+10^-0.5) = 1/1.31623 = 0.760.
        (2200, 2000, 0.76, 0.760),
        # Seed: D = 400 gives 0.92 (band 392-411); curve 1/(1+10^-1) = 1/1.1 = 0.909.
        (2400, 2000, 0.92, 0.909),
        # Seed: above 735, 1.00 (736+); 735 is still 0.99 (band 620-735).
        (2736, 2000, 1.00, 0.986),
        (2735, 2000, 0.99, 0.986),
        # The lower-rated player reads 1 - H: D = -200 gives 0.24; curve 1 - 0.760.
        (2000, 2200, 0.24, 0.240),
    ],
)
def test_fide_seed_figures(capsys, rating, opponent, table, curve):
    out = _expected(
        capsys,
        "--system",
        "fide",
        "--rating",
        str(rating),
        "--opponent",
        str(opponent),
        "--date",
        "2025-11-01",
    )
    assert out["table"] == table
    assert round(out["curve"], 3) == curve
    assert out["curve_minus_table"] == pytest.approx(out["curve"] - table)


def test_fide_as_rated_applies_the_400_point_rule(capsys):
    # D = 2500 - 1700 = 800: the table says 1.00; as a rated game (8.3.1) D counts as 400,
    # PD 0.92. A 2700 player is exempt from 2025-10-01 (F3): PD 1.00; before it, 0.92.
    out = _expected(
        capsys, "--system", "fide", "--rating", "2500", "--opponent", "1700", "--date", "2025-11-01"
    )
    assert (out["table"], out["rated_difference"], out["rated_table"]) == (1.0, 400, 0.92)
    out = _expected(
        capsys, "--system", "fide", "--rating", "2700", "--opponent", "1900", "--date", "2025-11-01"
    )
    assert (out["rated_difference"], out["rated_table"]) == (800, 1.0)
    out = _expected(
        capsys, "--system", "fide", "--rating", "2700", "--opponent", "1900", "--date", "2025-09-30"
    )
    assert (out["rated_difference"], out["rated_table"]) == (400, 0.92)
    # Rapid keeps the plain cap (F3).
    out = _expected(
        capsys,
        "--system",
        "fide",
        "--rating",
        "2700",
        "--opponent",
        "1900",
        "--date",
        "2025-11-01",
        "--pool",
        "rapid",
    )
    assert out["rated_difference"] == 400


def test_cfc_table_and_naspa_curve(capsys):
    # CFC 714b: 735 and over is 1.00 (one point earlier than FIDE); 189-197 gives 0.75.
    assert (
        _expected(capsys, "--system", "cfc", "--rating", "2735", "--opponent", "2000")["table"]
        == 1.0
    )
    assert (
        _expected(capsys, "--system", "cfc", "--rating", "1810", "--opponent", "2000")["table"]
        == 0.25
    )
    # NASPA N1: no table; 1/(1+exp(-0.0031879 x 200)) = 1/(1+e^-0.63758) = 1/1.52857 = 0.65421.
    out = _expected(capsys, "--system", "naspa", "--rating", "1700", "--opponent", "1500")
    assert out["table"] is None and out["curve_minus_table"] is None
    assert out["curve"] == pytest.approx(0.65421, abs=1e-5)


def test_human_table_side_by_side(capsys):
    assert (
        main(["calc", "expected", "--system", "fide", "--rating", "2400", "--opponent", "2000"])
        == 0
    )
    text = capsys.readouterr().out
    you = next(line for line in text.splitlines() if line.startswith("you"))
    # 2400, D +400, table 0.92, curve 0.9091, curve - table = 0.9091 - 0.92 = -0.0109
    assert you.split() == ["you", "2400", "+400", "0.92", "0.9091", "-0.0109"]
    opponent = next(line for line in text.splitlines() if line.startswith("opponent"))
    assert opponent.split() == ["opponent", "2000", "-400", "0.08", "0.0909", "+0.0109"]


def test_the_seed_overstates_the_agreement():
    # The seed says table and curve "never differ by more than rounding" (0.005); its own
    # D = 400 figures differ by 0.011, and the widest gap over 0..800 is at D = 560:
    # table 0.98 (560-619), curve 1/(1+10^-1.4) = 0.96171, gap -0.0183.
    from service.calculators.curves import elo_logistic
    from service.calculators.expected import table_higher

    gaps = {d: elo_logistic(d) - table_higher("fide", d) / 100 for d in range(801)}  # type: ignore[operator]
    widest = max(gaps, key=lambda d: abs(gaps[d]))
    assert widest == 560 and gaps[560] == pytest.approx(-0.01829, abs=1e-5)


def _svg(tmp_path, capsys, system: str, rating: str = "2400") -> ET.Element:
    target = tmp_path / f"{system}.svg"
    assert (
        main(
            [
                "calc",
                "expected",
                "--system",
                system,
                "--rating",
                rating,
                "--opponent",
                "2000",
                "--plot",
                str(target),
            ]
        )
        == 0
    )
    assert f"plot: {target}" in capsys.readouterr().out
    return ET.parse(target).getroot()  # raises unless well-formed


def _y_of(e: float) -> float:
    return plot._y(e)


def test_plot_is_well_formed_with_both_curves_axes_and_legend(tmp_path, capsys):
    root = _svg(tmp_path, capsys, "fide")
    assert root.tag == f"{SVG}svg"
    steps = root.find(f".//{SVG}path[@id='table']")
    curve = root.find(f".//{SVG}polyline[@id='curve']")
    assert steps is not None and curve is not None
    # The step curve: one V (rise) per band change in 0..800. FIDE 8.1.2 has 51 bands,
    # the last (736+) starting inside the range: 50 rises, ending at 1.00.
    d = steps.get("d") or ""
    assert d.count("V") == 50
    assert d.startswith(f"M{plot._x(0):.2f},{_y_of(0.5):.2f}")
    assert d.endswith(f"V{_y_of(1.0):.2f}H{plot._x(800):.2f}")
    # The curve: D = 0, 2, .., 800 (401 points); at D = 400 it passes 0.909.
    points = [tuple(map(float, p.split(","))) for p in (curve.get("points") or "").split()]
    assert len(points) == 401
    x400, y400 = points[200]
    assert x400 == pytest.approx(plot._x(400), abs=0.01)
    assert y400 == pytest.approx(_y_of(1 / 1.1), abs=0.001)
    texts = [t.text or "" for t in root.iter(f"{SVG}text")]
    assert {"0", "400", "800", "0.50", "0.75", "1.00"} <= set(texts)  # axis ticks
    assert any("rating difference D" in t for t in texts) and "expected score" in texts
    legend = root.find(f".//{SVG}g[@id='legend']")
    assert legend is not None
    labels = [t.text for t in legend.iter(f"{SVG}text")]
    assert labels == ["table (FIDE 8.1.2), step curve", "curve: logistic 1/(1+10^(-D/400))"]
    assert root.find(f".//{SVG}line[@id='mark']") is not None  # |D| = 400


def test_cfc_plot_steps_and_naspa_plot_has_only_its_curve(tmp_path, capsys):
    cfc = _svg(tmp_path, capsys, "cfc")
    d = cfc.find(f".//{SVG}path[@id='table']").get("d")  # type: ignore[union-attr]
    # CFC's last band starts at 735: the final rise is at x(735), not x(736) as FIDE's.
    assert f"H{plot._x(735):.2f}V{_y_of(1.0):.2f}" in d
    naspa = _svg(tmp_path, capsys, "naspa")
    assert naspa.find(f".//{SVG}path[@id='table']") is None
    assert naspa.find(f".//{SVG}polyline[@id='curve']") is not None
