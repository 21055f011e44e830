"""The equations of CFC 714 and the floors of 716 (ruleset `cfc-2009`), one function each.

Exact arithmetic only (Fractions, hundredths as integers); the single rounding of C11
happens in the caller, once, with `half_up`.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from math import gcd

from tests.previous.tables import cfc_expected

K_BELOW_2199 = 32  # 714b
K_FROM_2199 = 16  # 714b: "players of 2199 or over"
THRESHOLD_2199 = 2199  # 714b: the 2199 rule
PROVISIONAL_GAMES = 24  # 715: provisional for the first 24 games; the 25th makes established
BONUS_MIN_ROUNDS = 4  # 714c, C4: 4 or more rounds actually played

# 714c A: participation bonus per game played, in hundredths, by the pre-event rating band
# (upper bound inclusive; the last band is open).
PARTICIPATION_BANDS: tuple[tuple[int | None, int], ...] = (
    (1000, 200),  # 0000 - 1000: 2.00
    (1800, 150),  # 1001 - 1800: 1.50
    (2000, 100),  # 1801 - 2000: 1.00
    (2200, 75),  # 2001 - 2200: 0.75
    (None, 50),  # 2201 + : 0.50
)

# 714c B: result bonus by truncated whole percent (C5): (lowest percent, points).
RESULT_BANDS: tuple[tuple[int, int], ...] = ((90, 15), (71, 10), (60, 5))

FLOOR_800 = 800  # 716a, 716b
FLOOR_799 = 799  # 716a
FLOOR_200 = 200  # 716c


def performance(values_sum: Fraction | int, wins: int, losses: int, games: int) -> Fraction:
    """714a: Rp = Rc + 400(W-L)/N = (sum of opponent values + 400(W-L)) / N."""
    return Fraction(values_sum + 400 * (wins - losses), games)


def performance_sum(values_sum: Fraction | int, wins: int, losses: int) -> Fraction:
    """714a x N (C1): sum of the opponent values + 400(W-L), the cumulative quantity."""
    return Fraction(values_sum) + 400 * (wins - losses)


def average_rating(players: Iterable[tuple[int, int, int, int]]) -> Fraction:
    """717: AR, the mean over the rated players of Ro - 400(W-L)/N, from (Ro, W, L, N).

    Exact, summed as sum(Ro) - sum over each N of 400 x sum(W-L) / N, in integers over a
    common denominator (one Fraction at the end). Needs at least one player."""
    count, ratings = 0, 0
    margins: dict[int, int] = {}  # N -> sum of 400(W-L) over the players with N games
    for rating, wins, losses, games in players:
        count += 1
        ratings += rating
        margins[games] = margins.get(games, 0) + 400 * (wins - losses)
    numerator, denominator = ratings, 1  # sum(Ro) - sum(margin / N) = numerator / denominator
    for games, margin in margins.items():
        numerator, denominator = numerator * games - margin * denominator, denominator * games
        common = gcd(numerator, denominator)
        numerator, denominator = numerator // common, denominator // common
    return Fraction(numerator, denominator * count)


def k_factor(old: int) -> int:
    """714b: K = 32, or 16 for players of 2199 or over."""
    return K_FROM_2199 if old >= THRESHOLD_2199 else K_BELOW_2199


def expected_hundredths(old: int, values: list[int]) -> int:
    """714b, C3: Sx in hundredths, the table read literally per game."""
    return sum(cfc_expected(old, value) for value in values)


def established_rating(
    old: int, score_halves: int, sx_hundredths: int
) -> tuple[Fraction, int, bool]:
    """714b: Rn = Ro + K(S - Sx), and the 2199 rule (C2: none for going down).

    Returns (Rn unrounded, K, whether the 2199 rule cut the gain).
    """
    k = k_factor(old)
    rn_hundredths = old * 100 + k * (score_halves * 50 - sx_hundredths)
    if old < THRESHOLD_2199 and rn_hundredths > THRESHOLD_2199 * 100:
        # 2199 + (Rn - 2199) / 2 = (Rn + 2199) / 2, in hundredths over 200
        return Fraction(rn_hundredths + THRESHOLD_2199 * 100, 200), k, True
    return Fraction(rn_hundredths, 100), k, False


def participation_bonus(old: int, games: int) -> Fraction:
    """714c A: the per-game amount of the pre-event rating's band, times games played."""
    for upper, hundredths in PARTICIPATION_BANDS:
        if upper is None or old <= upper:
            return Fraction(hundredths * games, 100)
    raise AssertionError("unreachable: the last band is open")


def result_percent(score_halves: int, rounds: int) -> int:
    """C5: score / event rounds, as a whole percent by truncation."""
    return (score_halves * 50) // rounds


def result_bonus(percent: int) -> int:
    """714c B: 0-59 %: 0; 60-70 %: 5; 71-89 %: 10; 90 % and over: 15."""
    for lowest, points in RESULT_BANDS:
        if percent >= lowest:
            return points
    return 0


def apply_floors(post: int, pre: int | None, established_before: bool) -> tuple[int, str | None]:
    """716 on the rounded post-event rating (bonus included, C11).

    (a) and (b) only for a player established before the event (and not one who becomes
    established in it); (c) for everyone. Returns (published rating, article that changed it).
    """
    rating, floor = post, None
    if established_before and pre is not None and post < FLOOR_800:
        if pre > FLOOR_799:
            rating, floor = FLOOR_799, "716a"
        elif pre > post:
            rating, floor = pre, "716b"
    if rating < FLOOR_200:
        rating, floor = FLOOR_200, "716c"
    return rating, floor
