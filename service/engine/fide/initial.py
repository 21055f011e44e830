"""The initial rating of an unrated player (FIDE 7.1.4, 8.2, F8).

Ra = (sum of opponents' ratings + 2 x 1800) / (n + 2), unrounded; p = (points + 1) /
(n + 2) rounded to hundredths half up; Ru = Ra + dp(p) rounded half up, at most 2200;
published only with n >= 5 and Ru >= 1400.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction

from schemas.fide import FirstEvent, InitialGame, InitialRating
from schemas.periods import add_months
from service.engine.arithmetic import decimal_number, half_up, to_exact
from service.engine.fide.periods import POOL_MONTHS
from service.engine.tables import fide_dp

MIN_GAMES = 5
HYPOTHETICAL_OPPONENT = 1800  # two draws against 1800 (8.2)
MAX_INITIAL = 2200
MIN_PUBLISHED = 1400  # 7.2.1: no rating under 1400 is published


def games_in_window(games: Iterable[InitialGame], period: str) -> list[InitialGame]:
    """7.1.4: the pooled games of the 26 months ending with `period` (P-25 .. P)."""
    earliest = add_months(period, -(POOL_MONTHS - 1))
    return [g for g in games if earliest <= g.period <= period]


def initial_rating(games: list[InitialGame], first_event: FirstEvent | None) -> InitialRating:
    """FIDE 8.2 over the pooled `games`; the player's first event is disregarded if it
    scores zero (7.1.4). `rating` is set when n >= 5; `published` when also >= 1400."""
    disregarded = None
    if first_event is not None:
        first = [g for g in games if g.event_id == first_event.event_id]
        if first and sum(g.score_halves for g in first) == 0:
            disregarded = first_event.event_id
            games = [g for g in games if g.event_id != disregarded]
    n = len(games)
    halves = sum(g.score_halves for g in games)
    opponents_sum = sum(g.opponent_rating for g in games)
    points = halves / 2
    if n < MIN_GAMES:
        return InitialRating(
            games=n,
            points=points,
            opponents_sum=opponents_sum,
            disregarded_event=disregarded,
            reason=f"{n} games against rated opponents, fewer than {MIN_GAMES}",
        )
    ra = Fraction(opponents_sum + 2 * HYPOTHETICAL_OPPONENT, n + 2)
    # F8: p = (points + 1) / (n + 2), to hundredths, half up.
    p = half_up(Fraction(100 * (halves + 2), 2 * (n + 2)))
    dp = fide_dp(p)
    rating = half_up(ra + dp)
    capped = rating > MAX_INITIAL
    rating = min(rating, MAX_INITIAL)
    published = rating >= MIN_PUBLISHED
    return InitialRating(
        games=n,
        points=points,
        opponents_sum=opponents_sum,
        ra=decimal_number(ra),
        ra_exact=to_exact(ra),
        p_hundredths=p,
        dp=dp,
        rating=rating,
        capped=capped,
        disregarded_event=disregarded,
        published=published,
        reason=None if published else f"{rating} is below {MIN_PUBLISHED}",
    )
