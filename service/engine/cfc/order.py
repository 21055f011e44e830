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

from schemas.cfc import CfcOpponentValue, OpponentBasis
from service.engine.arithmetic import decimal_number, ratio_half_up, ratio_number, to_exact
from service.engine.cfc import formulas as f
from service.engine.cfc.formulas import Ratio
from service.engine.cfc.standing import Prior, Tally
from service.engine.contract import EngineRejection
from service.engine.tables import cfc_expected

UNRATED_OPPONENT_OFFSET = 200  # 717: AR - 200
SUB_800 = 800  # 717: "first those with ratings below 800"

# An opponent's value: a whole rating stays an int (exact, and cheap to add); only
# 717's AR - 200 and pass-1 values are Fractions.
Value = int | Fraction
# An opponent's value in a step: (value, basis, value as exact text, value as the output's
# rounded number), built once per opponent and step, looked up per game.
Valued = tuple[Value, OpponentBasis, str, int | float]
SCORES = (0.0, 0.5, 1.0)  # a game score by half points
# A game's expected score (C3 table, hundredths 0..100) as the output's number, looked up per game.
EXPECTED_NUMBERS = tuple(ratio_number(h, 100) for h in range(101))
NO_BONUS: Ratio = (0, 1)  # 714c: no participation bonus


def _value(value: Value, basis: OpponentBasis) -> Valued:
    if type(value) is int:
        return value, basis, str(value), value  # decimal_number and to_exact of an int
    return value, basis, to_exact(value), decimal_number(value)


def _fraction(ratio: Ratio) -> Fraction:
    return Fraction(*ratio)


class Rated(msgspec.Struct, frozen=True, gc=False):
    """A player's complete calculation for the event (players with a rated game only).
    Every unrounded value is exact, a Ratio (formulas.Ratio): the engine publishes each
    as a number and an exact text."""

    step: str
    method: str  # "performance" (714a) or "established" (714b)
    became_established: bool
    performance: Ratio
    opponents: list[CfcOpponentValue]  # each game as it entered the calculation
    rating_before_bonus: Ratio
    rounded_before_bonus: int  # the post-event rating seen by later steps (C9, C10)
    ar: Ratio | None = None
    pass_1: Ratio | None = None
    provisional_sum: Ratio | None = None
    total_games: int = 0
    k: int | None = None
    expected: int | None = None
    rule_2199: bool = False
    participation: Ratio = NO_BONUS
    result_percent: int | None = None
    result_bonus: int = 0
    rating_before_floor: int = 0
    new_rating: int = 0
    floor: str | None = None


def _entries(
    tally: Tally, values: Mapping[str, Valued], own: int | None = None
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
            hundredths = cfc_expected(own, value)  # type: ignore[arg-type]  # a 714b player sees whole ratings only (C9)
            sx += hundredths
            expected = EXPECTED_NUMBERS[hundredths]
        # round, opponent, value, value_exact, basis, score, expected (positional: one per game and side)
        entries.append(
            CfcOpponentValue(
                game.round, game.opponent, number, text, basis, SCORES[game.halves], expected
            )
        )
    return entries, total, sx


def average_rating(priors: Mapping[str, Prior], tallies: Mapping[str, Tally]) -> Fraction:
    """717 AR over the rated (provisional or established) players who played."""
    rated = [
        (priors[pid].rating, t.wins, t.losses, t.n)
        for pid, t in tallies.items()
        if priors[pid].category != "unrated"
    ]
    if not rated:
        raise _no_rated_player()
    return f.average_rating(rated)  # type: ignore[arg-type]  # rated players have a rating


def _no_rated_player() -> EngineRejection:
    return EngineRejection(
        "unratable",
        "no provisional or established player played a rated game (forfeits and byes are not "
        "rated): 717 cannot compute AR and the event cannot be rated",
        "$.games",
    )


def calculate(
    priors: Mapping[str, Prior], tallies: Mapping[str, Tally], rounds: int
) -> dict[str, Rated]:
    """Rate every player with at least one rated game, in the order of 717.

    `values` holds each player's value as an opponent, as the steps change it: every step
    counts a rated opponent at its pre-event rating unless it says otherwise, and an
    unrated one at AR - 200 (pass 1), then its pass-1 value (pass 2), then its post-event
    rating; provisional opponents count at their post-event rating from step 5 on."""
    if not tallies:
        raise EngineRejection(
            "unratable", "the event has no rated game (forfeits and byes are not rated)", "$.games"
        )
    unrated, provisional, established, values = _by_category(priors, tallies)
    post: dict[str, int] = {}  # rounded, before bonus and floors (C9)
    rated: dict[str, Rated] = {}
    if unrated:
        _rate_unrated(priors, tallies, unrated, values, post, rated)
    _rate_provisional(priors, tallies, provisional, values, rounds, post, rated)
    _rate_established(priors, tallies, provisional, established, values, rounds, post, rated)
    return rated


def _by_category(
    priors: Mapping[str, Prior], tallies: Mapping[str, Tally]
) -> tuple[list[str], list[str], list[str], dict[str, Valued]]:
    """The players who played, by category, each in first appearance in the games
    (unrated, provisional, established: 717's order), and the rated ones' values as
    opponents at their pre-event rating. Refused when no rated player played (717 AR
    needs one)."""
    unrated: list[str] = []
    provisional: list[str] = []
    established: list[str] = []
    values: dict[str, Valued] = {}
    for pid in tallies:
        prior = priors[pid]
        category = prior.category
        if category == "unrated":
            unrated.append(pid)
            continue
        (established if category == "established" else provisional).append(pid)
        values[pid] = _value(prior.rating, "pre_event")  # type: ignore[arg-type]  # a provisional or established player has a rating
    if not values:
        raise _no_rated_player()  # 717 AR needs one
    return unrated, provisional, established, values


def _rate_unrated(
    priors: Mapping[str, Prior],
    tallies: Mapping[str, Tally],
    unrated: list[str],
    values: dict[str, Valued],
    post: dict[str, int],
    rated: dict[str, Rated],
) -> None:
    """717 steps 1 to 3: AR, pass 1 with unrated opponents at AR - 200 (C8), pass 2 with
    them at their unrounded pass-1 value, 714a cumulative (C1; established after 25+ games
    in a first event, C13). Leaves the unrated players' values at their post-event rating."""
    ar = average_rating(priors, tallies)
    ar_value = _value(ar - UNRATED_OPPONENT_OFFSET, "ar_minus_200")
    values.update((pid, ar_value) for pid in unrated)
    pass_1 = {}
    for pid in unrated:
        t = tallies[pid]
        pass_1[pid] = f.performance(_entries(t, values)[1], t.wins, t.losses, t.n)
    values.update((pid, _value(pass_1[pid], "pass_1")) for pid in unrated)
    for pid in unrated:
        t = tallies[pid]
        entries, values_sum, _ = _entries(t, values)
        total = f.performance_ratio(values_sum, t.wins, t.losses, 1)  # 714a x N (C1)
        rating = (total[0], total[1] * t.n)
        post[pid] = ratio_half_up(*rating)
        rated[pid] = _performance_rated(
            priors[pid],
            "unrated",
            t.n > f.PROVISIONAL_GAMES,  # C13: 25+ games in a first event, 714a, no 714c
            rating,
            entries,
            rating,
            post[pid],
            (ar.numerator, ar.denominator),
            (pass_1[pid].numerator, pass_1[pid].denominator),
            total,
            t.n,
        )
    values.update((pid, _value(post[pid], "post_event")) for pid in unrated)


def _rate_provisional(
    priors: Mapping[str, Prior],
    tallies: Mapping[str, Tally],
    provisional: list[str],
    values: Mapping[str, Valued],
    rounds: int,
    post: dict[str, int],
    rated: dict[str, Rated],
) -> None:
    """717 step 4: provisional players, with unrated opponents at their post-event rating
    (the rounded pass-2 value, C12): 714a cumulative (C1), or 714b for the event of the
    25th game (715, C7)."""
    for pid in provisional:
        prior, t = priors[pid], tallies[pid]
        if prior.games + t.n > f.PROVISIONAL_GAMES:  # 715, C7: the 25th game is in this event
            rated[pid] = _established(
                "provisional", prior, t, *_entries(t, values, prior.rating), rounds, True
            )
        else:
            entries, values_sum, _ = _entries(t, values)
            before_num, before_den = prior.provisional_sum  # type: ignore[misc]  # a provisional player has a provisional sum
            margin = values_sum + 400 * (t.wins - t.losses)  # 714a x N (C1); whole ratings only
            total: Ratio = (before_num + margin * before_den, before_den)  # type: ignore[assignment]  # a provisional player sees whole ratings only (C9): an int
            games = prior.games + t.n
            rating = (total[0], total[1] * games)
            rated[pid] = _performance_rated(
                prior,
                "provisional",
                False,
                f.performance_ratio(values_sum, t.wins, t.losses, t.n),
                entries,
                rating,
                ratio_half_up(*rating),
                None,
                None,
                total,
                games,
            )
        post[pid] = rated[pid].rounded_before_bonus


def _rate_established(
    priors: Mapping[str, Prior],
    tallies: Mapping[str, Tally],
    provisional: list[str],
    established: list[str],
    values: dict[str, Valued],
    rounds: int,
    post: dict[str, int],
    rated: dict[str, Rated],
) -> None:
    """717 step 5: established players (714b), those below 800 first. Previously unrated
    and provisional opponents count at their post-event rating (C9); a player of 800 or
    more counts an established opponent below 800 at the higher of its pre- and post-event
    rating (C10)."""
    for pid in provisional:
        values[pid] = _value(post[pid], "post_event")
    below_800 = [pid for pid in established if priors[pid].rating < SUB_800]  # type: ignore[operator]  # an established player has a rating
    for pid in below_800:
        prior = priors[pid]
        rated[pid] = _established(
            "established_below_800",
            prior,
            tallies[pid],
            *_entries(tallies[pid], values, prior.rating),
            rounds,
            False,
        )
        post[pid] = rated[pid].rounded_before_bonus
    # C10: a player of 800 or more counts an established opponent below 800 at the
    # higher of its pre- and post-event rating.
    for pid in below_800:
        values[pid] = _value(max(priors[pid].rating, post[pid]), "higher_of_pre_post")  # type: ignore[type-var,arg-type]  # an established player has a rating
    for pid in established:
        prior = priors[pid]
        if prior.rating >= SUB_800:  # type: ignore[operator]  # an established player has a rating
            rated[pid] = _established(
                "established",
                prior,
                tallies[pid],
                *_entries(tallies[pid], values, prior.rating),
                rounds,
                False,
            )


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
    old: int = prior.rating  # type: ignore[assignment]  # a 714b player has a rating
    # Every value a 714b player sees is a whole rating (pre-event, or post-event rounded, C9).
    assert type(values_sum) is int
    rn, k, cut = f.established_ratio(old, t.halves, sx)
    performance = (values_sum + 400 * (t.wins - t.losses), t.n)  # 714a's form (f.performance_ratio)
    participation, percent, bonus, before_floor, rating, floor = _step_6(
        prior, t, rounds, performance, rn
    )
    # step, method, became_established, performance, opponents, rating_before_bonus,
    # rounded_before_bonus, ar, pass_1, provisional_sum, total_games, k, expected, rule_2199,
    # participation, result_percent, result_bonus, rating_before_floor, new_rating, floor
    return Rated(
        step,
        "established",
        becomes,
        performance,
        entries,
        rn,
        ratio_half_up(*rn),
        None,
        None,
        None,
        prior.games + t.n,
        k,
        sx,
        cut,
        participation,
        percent,
        bonus,
        before_floor,
        rating,
        floor,
    )


def _step_6(
    prior: Prior, t: Tally, rounds: int, performance: Ratio, rn: Ratio
) -> tuple[Ratio, int | None, int, int, int, str | None]:
    """Step 6 for a 714b player: the 714c bonuses (4+ rounds, C4; result bonus by the
    truncated percent, C5, when the performance beats the highest rating ever held),
    rounding Rn + bonuses once half up (C11), then 716. Returns (participation, result
    percent, result bonus, rating before floor, published rating, floor article)."""
    participation, percent, bonus = NO_BONUS, None, 0
    if rounds >= f.BONUS_MIN_ROUNDS:
        participation = (f.participation_hundredths(prior.rating, t.n), 100)  # type: ignore[arg-type]  # a 714b player has a rating
        percent = f.result_percent(t.halves, rounds)
        # performance > highest, in integers (the denominator is positive)
        if performance[0] > prior.highest * performance[1]:  # type: ignore[operator]  # a 714b player has a highest rating
            bonus = f.result_bonus(percent)
    # half_up(Rn + participation + bonus) over a common denominator
    rn_num, rn_den = rn
    den = rn_den * participation[1]
    num = rn_num * participation[1] + participation[0] * rn_den + bonus * den
    before_floor = ratio_half_up(num, den)
    # 716 (a), (b) only for a player established before the event; (c) for everyone.
    rating, floor = f.apply_floors(before_floor, prior.rating, prior.category == "established")
    return participation, percent, bonus, before_floor, rating, floor


def _performance_rated(
    prior: Prior,
    step: str,
    became_established: bool,
    performance: Ratio,
    opponents: list[CfcOpponentValue],
    rating_before_bonus: Ratio,
    rounded_before_bonus: int,
    ar: Ratio | None,
    pass_1: Ratio | None,
    provisional_sum: Ratio,
    total_games: int,
) -> Rated:
    """Step 6 for a 714a player: no bonus (714c is for 714b players), the rating rounded
    once half up (C11), then 716."""
    before_floor = ratio_half_up(*rating_before_bonus)
    # 716 (a), (b) only for a player established before the event; (c) for everyone.
    rating, floor = f.apply_floors(before_floor, prior.rating, prior.category == "established")
    return Rated(
        step,
        "performance",
        became_established,
        performance,
        opponents,
        rating_before_bonus,
        rounded_before_bonus,
        ar,
        pass_1,
        provisional_sum,
        total_games,
        None,
        None,
        False,
        NO_BONUS,
        None,
        0,
        before_floor,
        rating,
        floor,
    )
