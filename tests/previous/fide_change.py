"""The change of a rated player (FIDE 8.3): D with the 400-point rule, PD, K, the
period change rounded once.

Everything is exact: PD and (score - PD) in integer hundredths, the change a Fraction
rounded once per period, half away from zero (8.3.4, F4).
"""

from __future__ import annotations

import datetime as dt
from fractions import Fraction

from tests.previous.arithmetic import ratio_half_away_from_zero
from tests.previous.tables import fide_pd

# FIDE 8.3.1 as amended: from this date, a player rated 2650 or more uses the true D (F3).
EXEMPTION_FROM = dt.date(2025, 10, 1)
EXEMPTION_RATING = 2650
CAP = 400
# F3: the rapid and blitz regulations keep the plain cap.
POOLS_WITH_EXEMPTION = ("standard",)
# FIDE 8.3.3: K x n over 700 is reduced to floor(700 / n).
K_GAMES_LIMIT = 700


def rating_difference(own: int, opponent: int, start_date: dt.date, pool: str) -> int:
    """FIDE 8.3.1 (F3): D = own - opponent; |D| > 400 counts as 400, except for events
    starting on or after 2025-10-01 in the standard pool when the player being rated
    (`own`) is 2650 or above: then the true D is used."""
    difference = own - opponent
    if abs(difference) <= CAP:
        return difference
    exempt = (
        pool in POOLS_WITH_EXEMPTION and start_date >= EXEMPTION_FROM and own >= EXEMPTION_RATING
    )
    if exempt:
        return difference
    return CAP if difference > 0 else -CAP


# One game of a rated player as FIDE's calculator lists it: (D after the 400-point rule
# (8.3.1), PD from Table 8.1.2, W - We (8.3.2)), PD and W - We in exact hundredths. A plain
# tuple: the engine makes one per game and side.
GameFigures = tuple[int, int, int]


def game_figures(
    own: int, opponent: int, score_halves: int, start_date: dt.date, pool: str
) -> GameFigures:
    """FIDE 8.3.1-8.3.2: (D, PD, score - PD) of `own` against `opponent`: D after the
    400-point rule, PD for D from Table 8.1.2 (the higher-rated player's column, the lower
    one 1 - it), PD and score - PD in hundredths. The one place a game's figures are
    computed: the engine sums these terms and lists these figures."""
    difference = rating_difference(own, opponent, start_date, pool)
    pd = fide_pd(difference)
    return difference, pd, score_halves * 50 - pd


def game_term(
    own: int, opponent: int, score_halves: int, start_date: dt.date, pool: str
) -> tuple[int, int]:
    """FIDE 8.3.2: (score - PD, PD) of one game, in hundredths (`game_figures`)."""
    _, pd, term = game_figures(own, opponent, score_halves, start_date, pool)
    return term, pd


def base_k(
    rating: int | None,
    games: int,
    birth_year: int | None,
    ever_2300: bool,
    ever_2400: bool,
    list_year: int,
) -> int:
    """FIDE 8.3.3 in the order of F6, from the state on the list opening the period (F5):
    ever published 2400+: 10; junior (list year - birth year <= 18) under 2300 and never
    2300+: 40; fewer than 30 rated games in total (F7: with the initial-rating games): 40;
    otherwise 20. A rating on the list counts as published (2300+ / 2400+ reached)."""
    reached_2400 = ever_2400 or (rating is not None and rating >= 2400)
    reached_2300 = ever_2300 or reached_2400 or (rating is not None and rating >= 2300)
    if reached_2400:
        return 10
    if birth_year is not None and list_year - birth_year <= 18 and not reached_2300:
        return 40
    if games < 30:
        return 40
    return 20


def capped_k(k: int, games: int) -> int:
    """FIDE 8.3.3: if K x n > 700 (n: the player's rated games in the period), K becomes
    floor(700 / n); K x n = 700 exactly is kept."""
    if games > 0 and k * games > K_GAMES_LIMIT:
        return K_GAMES_LIMIT // games
    return k


def exact_change(k: int, sum_hundredths: int) -> Fraction:
    """FIDE 8.3.2: K x sum(score - PD), unrounded."""
    return Fraction(k * sum_hundredths, 100)


def period_change(k: int, sum_hundredths: int) -> int:
    """FIDE 8.3.4 (F4): the period's change, rounded once, 0.5 away from zero."""
    return ratio_half_away_from_zero(k * sum_hundredths, 100)
