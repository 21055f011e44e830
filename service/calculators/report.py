"""What each calculator prints: a plain-text table for people, a JSON object for
programs (exact quantities also as exact strings, e.g. "5243/3")."""

from __future__ import annotations

from fractions import Fraction

from service.calculators.change import RatingChange
from service.calculators.curves import curve_name
from service.calculators.expected import TABLE_NAMES, ExpectedScore
from service.calculators.norm import NormReport
from service.calculators.performance import Performance
from service.calculators.text import decimal, hundredths, signed, table
from service.engine.arithmetic import to_exact

SCORE_TEXT = {2: "1", 1: "0.5", 0: "0"}


def _number(value: object, places: int = 2) -> str:
    if isinstance(value, Fraction):
        return decimal(value, places)
    if isinstance(value, float):
        return f"{value:.{places}f}"
    return str(value)


def _json_number(value: object) -> object:
    if isinstance(value, Fraction):
        return int(value) if value.denominator == 1 else float(value)
    return value


# ---------------------------------------------------------------- expected
def expected_text(result: ExpectedScore) -> str:
    table_name = TABLE_NAMES[result.system]
    headers = ["player", "rating", "D"]
    if table_name:
        headers.append(f"table ({table_name})")
    headers.append(f"curve ({curve_name(result.system)})")
    if table_name:
        headers.append("curve - table")
    rows = []
    for who, own, other, value, e in (
        ("you", result.rating, result.opponent, result.table, result.curve),
        (
            "opponent",
            result.opponent,
            result.rating,
            None if result.table is None else 100 - result.table,
            1 - result.curve,
        ),
    ):
        row: list[object] = [who, own, signed(own - other)]
        if value is not None:
            row.append(hundredths(value))
        row.append(f"{e:.4f}")
        if value is not None:
            row.append(f"{e - value / 100:+.4f}")
        rows.append(row)
    lines = [f"{result.system} expected score", table(headers, rows)]
    if result.rated_difference is not None and result.rated_difference != result.difference:
        lines.append(
            f"as rated (FIDE 8.3.1, 400-point rule): D {signed(result.difference)} counts as "
            f"{signed(result.rated_difference)}, PD {hundredths(result.rated_table or 0)}"
        )
    elif result.system == "naspa":
        lines.append("NASPA has no table: N1's curve is the rule")
    return "\n".join(lines)


def expected_json(result: ExpectedScore) -> dict:
    out: dict = {
        "system": result.system,
        "rating": result.rating,
        "opponent": result.opponent,
        "difference": result.difference,
        "table": None if result.table is None else result.table / 100,
        "curve": result.curve,
        "curve_minus_table": result.gap,
        "table_name": TABLE_NAMES[result.system],
        "curve_name": curve_name(result.system),
    }
    if result.rated_difference is not None:
        out["rated_difference"] = result.rated_difference
        out["rated_table"] = (result.rated_table or 0) / 100
    return out


# ---------------------------------------------------------------- change
def change_text(result: RatingChange) -> str:
    e_head = {"fide": "PD", "cfc": "Sx", "naspa": "E (N1)"}[result.system]
    k_head = "m(S-E)" if result.system == "naspa" else "K(S-E)"
    rows = []
    for i, (g, step) in enumerate(zip(result.games, result.sequential), start=1):
        places = 3 if result.system == "naspa" else 2
        rows.append(
            [
                i,
                g.opponent,
                SCORE_TEXT[g.halves],
                signed(g.difference),
                _number(g.expected, places),
                _signed_number(g.excess, places),
                _signed_number(g.change, 2),
                step.before,
                signed(step.change),
                step.after,
            ]
        )
    headers = [
        "game",
        "opponent",
        "score",
        "D",
        e_head,
        "S-E",
        k_head,
        "seq. from",
        "seq. change",
        "seq. to",
    ]
    total_rule = {
        "fide": "K x sum(S-PD), rounded once (FIDE 8.3.4)",
        "cfc": "Ro + K(S-Sx) (CFC 714b), rounded half up (C11)",
        "naspa": "band walk + acceleration (N5), rounded half up",
    }[result.system]
    seq_total = result.sequential[-1].after - result.rating if result.sequential else 0
    lines = [
        f"{result.system} rating change from {result.rating}: {result.k_note}",
        table(headers, rows),
        f"score {result.score:g}, expected {_number(result.expected_total, 2)}",
        f"official-style: {total_rule}: {_signed_number(result.exact, 2)} -> {signed(result.change)}, "
        f"new rating {result.new_rating}",
        f"sequential projection (each game alone from the running rating, rounded per game): "
        f"{signed(seq_total)}, rating {result.rating + seq_total}",
    ]
    lines.extend(f"note: {n}" for n in result.notes)
    return "\n".join(lines)


def _signed_number(value: object, places: int) -> str:
    text = _number(value, places)
    return text if text.startswith("-") else "+" + text


def change_json(result: RatingChange) -> dict:
    return {
        "system": result.system,
        "rating": result.rating,
        "k": result.k,
        "k_note": result.k_note,
        "games": [
            {
                "opponent": g.opponent,
                "score": g.halves / 2,
                "difference": g.difference,
                "expected": _json_number(g.expected),
                "score_minus_expected": _json_number(g.excess),
                "change": _json_number(g.change),
            }
            for g in result.games
        ],
        "score": result.score,
        "expected": _json_number(result.expected_total),
        "official": {
            "change_exact": to_exact(result.exact)
            if isinstance(result.exact, Fraction)
            else result.exact,
            "change": result.change,
            "new_rating": result.new_rating,
        },
        "sequential": [
            {"before": s.before, "change": s.change, "after": s.after} for s in result.sequential
        ],
        "notes": result.notes,
    }


# ---------------------------------------------------------------- performance
PERFORMANCE_RULES = {
    "fide": "Rp = Ra + dp (FIDE Title Regulations; Table 8.1.1)",
    "cfc": "Rp = Rc + 400(W-L)/N (CFC 714a), rounded half up (C11)",
    "naspa": "newcomer's iterative rating (NASPA seed, N2-N4), rounded half up",
}


def _games(n: int) -> str:
    return f"{n} game" if n == 1 else f"{n} games"


def performance_text(result: Performance) -> str:
    rows = [
        [name, _number(value) if isinstance(value, (Fraction, float)) else value]
        for name, value in result.figures.items()
        if value is not None
    ]
    rows.append(["performance", result.rating])
    for name, value in result.references.items():
        rows.append([f"reference: {name}", value])
    lines = [
        f"{result.system} performance over {_games(result.games)}, score {result.score:g}: {PERFORMANCE_RULES[result.system]}",
        table(["figure", "value"], rows),
    ]
    if result.exact != result.rating:
        lines.append(f"unrounded: {_number(result.exact)}")
    lines.extend(f"note: {n}" for n in result.notes)
    return "\n".join(lines)


def performance_json(result: Performance) -> dict:
    return {
        "system": result.system,
        "games": result.games,
        "score": result.score,
        "performance": result.rating,
        "exact": to_exact(result.exact) if isinstance(result.exact, Fraction) else result.exact,
        "figures": {k: _json_number(v) for k, v in result.figures.items()},
        "references": result.references,
        "notes": result.notes,
    }


# ---------------------------------------------------------------- norm
def norm_text(report: NormReport) -> str:
    rows = []
    for check, reasons in report.checks:
        raised = f"{check.raised_from} -> {check.floor}" if check.raised_from is not None else ""
        rows.append(
            [
                check.title,
                check.average_opponent,
                check.required_average,
                raised,
                check.performance,
                check.required_performance,
                "met" if not reasons else "no: " + "; ".join(reasons),
            ]
        )
    first = report.checks[0][0]
    lines = [
        f"FIDE norm benchmarks: {first.games} games, {first.points:g} points, p {first.p_percent}%, dp {signed(first.dp)}"
        + (
            f", {first.unrated_opponents} unrated opponent(s) (1400 unless raised)"
            if first.unrated_opponents
            else ""
        ),
        table(["title", "Ra", "needs", "floor raise", "Rp", "needs", "benchmark"], rows),
        "met: " + (", ".join(report.met) or "none"),
        "opponents' titles: "
        + ", ".join(f"{t} {n}" for t, n in report.titles.items())
        + " (the titled-opponent and federation mix is not checked: outside docs/rules/fide.md)",
        "benchmarks only: FIDE awards norms",
    ]
    return "\n".join(lines)


def norm_json(report: NormReport) -> dict:
    import msgspec

    return {
        "met": report.met,
        "checks": [
            {**msgspec.to_builtins(check), "met": not reasons, "reasons": reasons}
            for check, reasons in report.checks
        ],
        "opponent_titles": report.titles,
        "titles_checked": False,
    }
