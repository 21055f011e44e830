"""CFC 717, the order of calculation, for one event (ruleset `cfc-2009`).

1. AR: mean over the rated players who played of Ro - 400(W-L)/N.
2. Unrated players, pass 1: rated opponents at their pre-event rating, unrated ones at
   AR - 200 (C8: the +400(W-L) is 714a's own term).
3. Unrated players, pass 2: unrated opponents at their unrounded pass-1 value.
4. Provisional players (C7: also those reaching their 25th game, by 714b): unrated
   opponents at their post-event rating, others at their pre-event rating.
5. Established players, those below 800 first: unrated / provisional opponents at their
   post-event rating, rounded, before bonus and floors (C9); established opponents at
   their pre-event rating, except (C10) that a player of 800 or more counts an
   established opponent below 800 at the higher of its pre- and post-event rating.
6. 714c bonuses (714b players, 4+ rounds, C4, C5), one rounding half up (C11), 716 floors.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

import msgspec

from schemas.cfc import CfcOpponentValue
from tests.previous import cfc_formulas as f
from tests.previous.arithmetic import decimal_number, half_up, ratio_half_up, ratio_number, to_exact
from tests.previous.cfc_standing import Prior, Tally
from tests.previous.contract import EngineRejection
from tests.previous.tables import cfc_expected

UNRATED_OPPONENT_OFFSET = 200  # 717: AR - 200
SUB_800 = 800  # 717: "first those with ratings below 800"

# An opponent's value: a whole rating stays an int (exact, and cheap to add); only
# 717's AR - 200 and pass-1 values are Fractions.
Value = int | Fraction
# One step's opponent values: player id -> (value, basis, value as exact text, value as
# the output's rounded number): built once per opponent and step, looked up per game.
Values = Mapping[str, tuple[Value, str, str, float]]
SCORES = (0.0, 0.5, 1.0)  # a game score by half points
# A game's expected score (C3 table, hundredths 0..100) as the output's number, looked up per game.
EXPECTED_NUMBERS = tuple(ratio_number(h, 100) for h in range(101))


def _value(value: Value, basis: str) -> tuple[Value, str, str, float]:
    return value, basis, to_exact(value), decimal_number(value)  # type: ignore[return-value]


class Rated(msgspec.Struct, frozen=True, gc=False):
    """A player's complete calculation for the event (players with a rated game only)."""

    step: str
    method: str  # "performance" (714a) or "established" (714b)
    became_established: bool
    performance: Fraction
    opponents: list[CfcOpponentValue]  # each game as it entered the calculation
    rating_before_bonus: Fraction
    rounded_before_bonus: int  # the post-event rating seen by later steps (C9, C10)
    ar: Fraction | None = None
    pass_1: Fraction | None = None
    provisional_sum: Fraction | None = None
    total_games: int = 0
    k: int | None = None
    expected: int | None = None
    rule_2199: bool = False
    participation: Fraction = Fraction(0)
    result_percent: int | None = None
    result_bonus: int = 0
    rating_before_floor: int = 0
    new_rating: int = 0
    floor: str | None = None


def _entries(
    tally: Tally, values: Values, own: int | None = None
) -> tuple[list[CfcOpponentValue], Value, int]:
    """The player's games with each opponent's value in this step (as published), the
    values' sum and, with `own` (a 714b player's rating), Sx: each game's expected score
    from the table (C3) in hundredths, summed (else 0)."""
    entries = []
    total: Value = 0
    sx = 0
    for game in tally.games:
        value, basis, text, number = values[game.opponent]
        total += value
        if own is None:
            expected = None
        else:
            hundredths = cfc_expected(own, value)  # type: ignore[arg-type]
            sx += hundredths
            expected = EXPECTED_NUMBERS[hundredths]
        # round, opponent, value, value_exact, basis, score, expected (positional: one per game and side)
        entries.append(
            CfcOpponentValue(
                game.round, game.opponent, number, text, basis, SCORES[game.halves], expected
            )
        )  # type: ignore[arg-type]
    return entries, total, sx


def average_rating(priors: Mapping[str, Prior], tallies: Mapping[str, Tally]) -> Fraction:
    """717 AR over the rated (provisional or established) players who played."""
    rated = [
        (priors[pid].rating, t.wins, t.losses, t.n)
        for pid, t in tallies.items()
        if priors[pid].category != "unrated"
    ]
    if not rated:
        raise EngineRejection(
            "unratable",
            "no provisional or established player played a rated game (forfeits and byes are not "
            "rated): 717 cannot compute AR and the event cannot be rated",
            "$.games",
        )
    return f.average_rating(rated)  # type: ignore[arg-type]


def calculate(
    priors: Mapping[str, Prior], tallies: Mapping[str, Tally], rounds: int
) -> dict[str, Rated]:
    """Rate every player with at least one rated game, in the order of 717."""
    if not tallies:
        raise EngineRejection(
            "unratable", "the event has no rated game (forfeits and byes are not rated)", "$.games"
        )
    ar = average_rating(priors, tallies)
    order = list(tallies)  # first appearance in the games; each step's result is order-free
    cat = {pid: priors[pid].category for pid in order}
    pre = {pid: priors[pid].rating for pid in order}
    unrated = [pid for pid in order if cat[pid] == "unrated"]
    provisional = [pid for pid in order if cat[pid] == "provisional"]
    established = [pid for pid in order if cat[pid] == "established"]
    below_800 = {pid for pid in established if pre[pid] < SUB_800}  # type: ignore[operator]
    # Every step counts a rated opponent at its pre-event rating unless it says otherwise.
    at_pre = {pid: _value(pre[pid], "pre_event") for pid in order if cat[pid] != "unrated"}

    # Steps 2 and 3: the two passes for the unrated players.
    pass_1_values = {
        **at_pre,
        **{pid: _value(ar - UNRATED_OPPONENT_OFFSET, "ar_minus_200") for pid in unrated},
    }
    pass_1 = {}
    for pid in unrated:
        t = tallies[pid]
        pass_1[pid] = f.performance(_entries(t, pass_1_values)[1], t.wins, t.losses, t.n)

    pass_2_values = {**at_pre, **{pid: _value(pass_1[pid], "pass_1") for pid in unrated}}
    post: dict[str, int] = {}  # rounded, before bonus and floors (C9)
    rated: dict[str, Rated] = {}
    for pid in unrated:
        t = tallies[pid]
        entries, values_sum, _ = _entries(t, pass_2_values)
        total = f.performance_sum(values_sum, t.wins, t.losses)
        rating = total / t.n
        post[pid] = half_up(rating)
        rated[pid] = _performance_rated(
            priors[pid],
            step="unrated",
            method="performance",
            became_established=t.n > f.PROVISIONAL_GAMES,
            performance=rating,
            opponents=entries,
            rating_before_bonus=rating,
            rounded_before_bonus=post[pid],
            ar=ar,
            pass_1=pass_1[pid],
            provisional_sum=total,
            total_games=t.n,
        )

    # Step 4: provisional players, with unrated opponents at their post-event rating.
    provisional_values = {**at_pre, **{pid: _value(post[pid], "post_event") for pid in unrated}}
    for pid in provisional:
        prior, t = priors[pid], tallies[pid]
        if prior.games + t.n > f.PROVISIONAL_GAMES:  # 715, C7: the 25th game is in this event
            rated[pid] = _established(
                "provisional",
                prior,
                t,
                *_entries(t, provisional_values, prior.rating),
                rounds,
                True,
            )
        else:
            entries, values_sum, _ = _entries(t, provisional_values)
            total = prior.provisional_sum + f.performance_sum(values_sum, t.wins, t.losses)  # type: ignore[operator]
            games = prior.games + t.n
            rating = total / games
            rated[pid] = _performance_rated(
                prior,
                step="provisional",
                method="performance",
                became_established=False,
                performance=f.performance(values_sum, t.wins, t.losses, t.n),
                opponents=entries,
                rating_before_bonus=rating,
                rounded_before_bonus=half_up(rating),
                provisional_sum=total,
                total_games=games,
            )
        post[pid] = rated[pid].rounded_before_bonus

    # Step 5: established players, below 800 first (C10). Previously unrated and
    # provisional opponents count at their post-event rating (C9).
    at_post = {pid: _value(post[pid], "post_event") for pid in order if cat[pid] != "established"}
    below_800_values = {**at_pre, **at_post}
    for pid in established:
        if pid in below_800:
            rated[pid] = _established(
                "established_below_800",
                priors[pid],
                tallies[pid],
                *_entries(tallies[pid], below_800_values, pre[pid]),
                rounds,
                False,
            )
            post[pid] = rated[pid].rounded_before_bonus
    # C10: a player of 800 or more counts an established opponent below 800 at the
    # higher of its pre- and post-event rating.
    higher = {pid: _value(max(pre[pid], post[pid]), "higher_of_pre_post") for pid in below_800}  # type: ignore[type-var]
    values_800_plus = {**below_800_values, **higher}
    for pid in established:
        if pid not in below_800:
            rated[pid] = _established(
                "established",
                priors[pid],
                tallies[pid],
                *_entries(tallies[pid], values_800_plus, pre[pid]),
                rounds,
                False,
            )
            post[pid] = rated[pid].rounded_before_bonus
    return rated


def _established(
    step: str,
    prior: Prior,
    t: Tally,
    entries: list[CfcOpponentValue],
    values_sum: Value,
    sx: int,
    rounds: int,
    becomes: bool,
) -> Rated:
    """714b for one player: Sx from the table per game (C3, summed by `_entries` with the
    player's rating), K, the 2199 rule."""
    old: int = prior.rating  # type: ignore[assignment]
    # Every value a 714b player sees is a whole rating (pre-event, or post-event rounded, C9).
    assert type(values_sum) is int
    rn, k, cut = f.established_rating(old, t.halves, sx)
    performance = f.performance(values_sum, t.wins, t.losses, t.n)
    participation, percent, bonus, before_floor, rating, floor = _step_6(
        prior, t, rounds, performance, rn
    )
    return Rated(
        step=step,
        method="established",
        became_established=becomes,
        performance=performance,
        opponents=entries,
        rating_before_bonus=rn,
        rounded_before_bonus=half_up(rn),
        total_games=prior.games + t.n,
        k=k,
        expected=sx,
        rule_2199=cut,
        participation=participation,
        result_percent=percent,
        result_bonus=bonus,
        rating_before_floor=before_floor,
        new_rating=rating,
        floor=floor,
    )


def _step_6(
    prior: Prior, t: Tally, rounds: int, performance: Fraction, rn: Fraction
) -> tuple[Fraction, int | None, int, int, int, str | None]:
    """Step 6 for a 714b player: the 714c bonuses (4+ rounds, C4; result bonus by the
    truncated percent, C5, when the performance beats the highest rating ever held),
    rounding Rn + bonuses once half up (C11), then 716. Returns (participation, result
    percent, result bonus, rating before floor, published rating, floor article)."""
    participation, percent, bonus = Fraction(0), None, 0
    if rounds >= f.BONUS_MIN_ROUNDS:
        participation = f.participation_bonus(prior.rating, t.n)  # type: ignore[arg-type]
        percent = f.result_percent(t.halves, rounds)
        # performance > highest, in integers (the denominator is positive)
        if performance.numerator > prior.highest * performance.denominator:  # type: ignore[operator]
            bonus = f.result_bonus(percent)
    # half_up(Rn + participation + bonus) over a common denominator, without Fraction sums
    den = rn.denominator * participation.denominator
    num = (
        rn.numerator * participation.denominator
        + participation.numerator * rn.denominator
        + bonus * den
    )
    before_floor = ratio_half_up(num, den)
    rating, floor = _floors(before_floor, prior)
    return participation, percent, bonus, before_floor, rating, floor


def _floors(before_floor: int, prior: Prior) -> tuple[int, str | None]:
    """716 (a), (b) only for a player established before the event; (c) for everyone."""
    return f.apply_floors(before_floor, prior.rating, prior.category == "established")


def _performance_rated(prior: Prior, **calculation) -> Rated:
    """Step 6 for a 714a player: no bonus (714c is for 714b players), the rating rounded
    once half up (C11), then 716."""
    before_floor = half_up(calculation["rating_before_bonus"])
    rating, floor = _floors(before_floor, prior)
    return Rated(**calculation, rating_before_floor=before_floor, new_rating=rating, floor=floor)
