"""Performance rating and title-norm benchmarks (FIDE Title Regulations 1.4, as in
docs/rules/fide.md#fide-title-1-4). Reported, never awarded; no 400-point rule here.
"""

from __future__ import annotations

from collections.abc import Sequence

from schemas.fide import NormCheck
from tests.previous.arithmetic import ratio_half_up
from tests.previous.tables import fide_dp

# Title Regulations 1.4: (title, performance, opponents' average, rating floor).
NORMS: tuple[tuple[str, int, int, int], ...] = (
    ("GM", 2600, 2380, 2200),
    ("IM", 2450, 2230, 2050),
    ("WGM", 2400, 2180, 2000),
    ("WIM", 2250, 2030, 1850),
)
NORM_MIN_GAMES = 9
NORM_MIN_PERCENT = 35  # of the points possible, exactly (not the rounded p)
UNRATED_AS = 1400  # 1.4.6: unrated opponents (other than the one raised) count as 1400


def percent(points_halves: int, games: int) -> int:
    """The score as a whole percentage, half up (p for Table 8.1.1)."""
    return ratio_half_up(100 * points_halves, 2 * games)


def performance_figures(
    opponents: Sequence[int], points_halves: int
) -> tuple[int, int, int] | None:
    """The figures of Rp = Ra + dp: (Ra, p, dp) with Ra the opponents' mean rounded half
    up, p the score percentage rounded half up, dp from Table 8.1.1 (100% gives +800,
    0% -800). None without games."""
    if not opponents:
        return None
    p = percent(points_halves, len(opponents))
    return ratio_half_up(sum(opponents), len(opponents)), p, fide_dp(p)


def performance(opponents: Sequence[int], points_halves: int) -> int | None:
    """Rp = Ra + dp (`performance_figures`). None without games."""
    figures = performance_figures(opponents, points_halves)
    if figures is None:
        return None
    ra, _, dp = figures
    return ra + dp


def norm_benchmarks(
    opponents: Sequence[int | None], points_halves: int
) -> list[tuple[NormCheck, list[str]]]:
    """Every title's benchmark with its figures, met or not, and why it fails (empty: met):
    at least 9 games, at least 35%, Ra (with the lowest opponent below the floor raised
    to it, other unrated ones as 1400) at least the title's average, and Ra + dp at least
    the title's performance. Needs at least one game."""
    n = len(opponents)
    if n == 0:
        raise ValueError("a norm benchmark needs at least one game")
    gates = []
    if n < NORM_MIN_GAMES:
        gates.append(f"{n} games, fewer than {NORM_MIN_GAMES}")
    if 100 * points_halves < NORM_MIN_PERCENT * 2 * n:
        gates.append(f"{points_halves / 2:g} of {n} points is under {NORM_MIN_PERCENT}%")
    p = percent(points_halves, n)
    dp = fide_dp(p)
    unrated = sum(1 for r in opponents if r is None)
    values = [UNRATED_AS if r is None else r for r in opponents]
    lowest, total = min(values), sum(values)
    checks = []
    for norm in NORMS:
        title, required_performance, required_average, floor = norm
        average, rp, raised_from = _title_figures(norm, lowest, total, n, dp)
        reasons = list(gates)
        if average < required_average:
            reasons.append(f"opponents' average {average} is under {required_average}")
        if rp < required_performance:
            reasons.append(f"performance {rp} is under {required_performance}")
        check = NormCheck(
            title=title,  # type: ignore[arg-type]
            performance=rp,
            required_performance=required_performance,
            average_opponent=average,
            required_average=required_average,
            games=n,
            points=points_halves / 2,
            p_percent=p,
            dp=dp,
            floor=floor,
            raised_from=raised_from,
            unrated_opponents=unrated,
        )
        checks.append((check, reasons))
    return checks


def _title_figures(
    norm: tuple[str, int, int, int], lowest: int, total: int, n: int, dp: int
) -> tuple[int, int, int | None]:
    """One title's (Ra, Ra + dp, raised from): the lowest opponent below the title's floor
    counts at the floor (1.4.6); `lowest` and `total` are the opponents' lowest value and
    sum with unrated ones at 1400."""
    floor = norm[3]
    raised_from = lowest if lowest < floor else None
    average = ratio_half_up(total if raised_from is None else total - lowest + floor, n)
    return average, average + dp, raised_from


def norms_met(opponents: Sequence[int | None], points_halves: int) -> list[NormCheck]:
    """The title benchmarks the event meets (`norm_benchmarks` with no reason to fail)."""
    n = len(opponents)
    if n < NORM_MIN_GAMES or 100 * points_halves < NORM_MIN_PERCENT * 2 * n:
        return []  # the gates fail every title: skip the figures (the engine's hot path)
    # The engine's hot path again: the full checks only when some title's figures pass.
    values = [UNRATED_AS if r is None else r for r in opponents]
    lowest, total, dp = min(values), sum(values), fide_dp(percent(points_halves, n))
    if not any(
        average >= norm[2] and rp >= norm[1]
        for norm in NORMS
        for average, rp, _ in (_title_figures(norm, lowest, total, n, dp),)
    ):
        return []
    return [check for check, reasons in norm_benchmarks(opponents, points_halves) if not reasons]
