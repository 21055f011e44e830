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

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Callable

from service.engine.arithmetic import half_up
from service.engine.cfc import formulas as f
from service.engine.cfc.standing import Prior, Tally
from service.engine.contract import EngineRejection
from service.engine.tables import cfc_expected

UNRATED_OPPONENT_OFFSET = 200  # 717: AR - 200
SUB_800 = 800  # 717: "first those with ratings below 800"


@dataclass(frozen=True, slots=True)
class OpponentEntry:
    """One game as it entered the player's calculation."""

    round: int
    opponent: str
    value: Fraction
    basis: str
    halves: int
    expected: int | None = None  # hundredths, 714b players only


@dataclass(frozen=True, slots=True)
class Rated:
    """A player's complete calculation for the event (players with a rated game only)."""

    step: str
    method: str  # "performance" (714a) or "established" (714b)
    became_established: bool
    performance: Fraction
    opponents: tuple[OpponentEntry, ...]
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


ValueOf = Callable[[str], tuple[Fraction, str]]


def _entries(tally: Tally, value_of: ValueOf) -> tuple[OpponentEntry, ...]:
    entries = []
    for game in tally.games:
        value, basis = value_of(game.opponent)
        entries.append(OpponentEntry(game.round, game.opponent, value, basis, game.halves))
    return tuple(entries)


def _values_sum(entries: tuple[OpponentEntry, ...]) -> Fraction:
    return sum((e.value for e in entries), Fraction(0))


def average_rating(priors: dict[str, Prior], tallies: dict[str, Tally]) -> Fraction:
    """717 AR: the mean of Ro - 400(W-L)/N over the rated players who played."""
    terms = [
        f.ar_term(priors[pid].rating, t.wins, t.losses, t.n)  # type: ignore[arg-type]
        for pid, t in tallies.items()
        if priors[pid].category != "unrated"
    ]
    if not terms:
        raise EngineRejection(
            "unratable",
            "no provisional or established player played a rated game (forfeits and byes are not "
            "rated): 717 cannot compute AR and the event cannot be rated",
            "$.games",
        )
    return sum(terms, Fraction(0)) / len(terms)


def calculate(priors: dict[str, Prior], tallies: dict[str, Tally], rounds: int) -> dict[str, Rated]:
    """Rate every player with at least one rated game, in the order of 717."""
    if not tallies:
        raise EngineRejection("unratable", "the event has no rated game (forfeits and byes are not rated)", "$.games")
    ar = average_rating(priors, tallies)
    order = list(tallies)  # first appearance in the games; each step's result is order-free
    cat = {pid: priors[pid].category for pid in order}
    pre = {pid: priors[pid].rating for pid in order}
    unrated = [pid for pid in order if cat[pid] == "unrated"]
    provisional = [pid for pid in order if cat[pid] == "provisional"]
    established = [pid for pid in order if cat[pid] == "established"]
    below_800 = {pid for pid in established if pre[pid] < SUB_800}  # type: ignore[operator]

    # Steps 2 and 3: the two passes for the unrated players.
    def pass_1_value(opp: str) -> tuple[Fraction, str]:
        if cat[opp] == "unrated":
            return ar - UNRATED_OPPONENT_OFFSET, "ar_minus_200"
        return Fraction(pre[opp]), "pre_event"  # type: ignore[arg-type]

    pass_1 = {}
    for pid in unrated:
        t = tallies[pid]
        pass_1[pid] = f.performance(_values_sum(_entries(t, pass_1_value)), t.wins, t.losses, t.n)

    def pass_2_value(opp: str) -> tuple[Fraction, str]:
        if cat[opp] == "unrated":
            return pass_1[opp], "pass_1"
        return Fraction(pre[opp]), "pre_event"  # type: ignore[arg-type]

    post: dict[str, int] = {}  # rounded, before bonus and floors (C9)
    rated: dict[str, Rated] = {}
    for pid in unrated:
        t = tallies[pid]
        entries = _entries(t, pass_2_value)
        total = f.performance_sum(_values_sum(entries), t.wins, t.losses)
        rating = total / t.n
        post[pid] = half_up(rating)
        rated[pid] = Rated(
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
    def provisional_value(opp: str) -> tuple[Fraction, str]:
        if cat[opp] == "unrated":
            return Fraction(post[opp]), "post_event"
        return Fraction(pre[opp]), "pre_event"  # type: ignore[arg-type]

    for pid in provisional:
        prior, t = priors[pid], tallies[pid]
        entries = _entries(t, provisional_value)
        if prior.games + t.n > f.PROVISIONAL_GAMES:  # 715, C7: the 25th game is in this event
            rated[pid] = _established(pid, "provisional", prior, t, entries, becomes=True)
        else:
            total = prior.provisional_sum + f.performance_sum(_values_sum(entries), t.wins, t.losses)  # type: ignore[operator]
            games = prior.games + t.n
            rating = total / games
            rated[pid] = Rated(
                step="provisional",
                method="performance",
                became_established=False,
                performance=f.performance(_values_sum(entries), t.wins, t.losses, t.n),
                opponents=entries,
                rating_before_bonus=rating,
                rounded_before_bonus=half_up(rating),
                provisional_sum=total,
                total_games=games,
            )
        post[pid] = rated[pid].rounded_before_bonus

    # Step 5: established players, below 800 first (C10).
    def established_value(for_800_plus: bool) -> ValueOf:
        def value(opp: str) -> tuple[Fraction, str]:
            if cat[opp] != "established":
                return Fraction(post[opp]), "post_event"
            if for_800_plus and opp in below_800:
                return Fraction(max(pre[opp], post[opp])), "higher_of_pre_post"  # type: ignore[type-var]
            return Fraction(pre[opp]), "pre_event"  # type: ignore[arg-type]

        return value

    for group, step, for_800_plus in (
        ([p for p in established if p in below_800], "established_below_800", False),
        ([p for p in established if p not in below_800], "established", True),
    ):
        value_of = established_value(for_800_plus)
        for pid in group:
            rated[pid] = _established(pid, step, priors[pid], tallies[pid], _entries(tallies[pid], value_of), False)
            post[pid] = rated[pid].rounded_before_bonus

    # Step 6: bonuses (714c), one rounding (C11), floors (716).
    return {pid: _finish(r, priors[pid], tallies[pid], rounds) for pid, r in rated.items()}


def _established(pid: str, step: str, prior: Prior, t: Tally, entries: tuple, becomes: bool) -> Rated:
    """714b for one player: Sx from the table per game (C3), K, the 2199 rule."""
    old: int = prior.rating  # type: ignore[assignment]
    # Every value a 714b player sees is a whole rating (pre-event, or post-event rounded, C9).
    assert all(e.value.denominator == 1 for e in entries)
    with_expected = tuple(
        OpponentEntry(e.round, e.opponent, e.value, e.basis, e.halves, cfc_expected(old, int(e.value))) for e in entries
    )
    sx = sum(e.expected for e in with_expected)  # type: ignore[misc]
    rn, k, cut = f.established_rating(old, t.halves, sx)
    return Rated(
        step=step,
        method="established",
        became_established=becomes,
        performance=f.performance(_values_sum(entries), t.wins, t.losses, t.n),
        opponents=with_expected,
        rating_before_bonus=rn,
        rounded_before_bonus=half_up(rn),
        total_games=prior.games + t.n,
        k=k,
        expected=sx,
        rule_2199=cut,
    )


def _finish(r: Rated, prior: Prior, t: Tally, rounds: int) -> Rated:
    """714c bonus for 714b players (C4, C5), rounding once half up (C11), then 716."""
    participation, percent, bonus = Fraction(0), None, 0
    if r.method == "established" and rounds >= f.BONUS_MIN_ROUNDS:
        participation = f.participation_bonus(prior.rating, t.n)  # type: ignore[arg-type]
        percent = f.result_percent(t.halves, rounds)
        if r.performance > prior.highest:  # type: ignore[operator]
            bonus = f.result_bonus(percent)
    before_floor = half_up(r.rating_before_bonus + participation + bonus)
    # 716 (a), (b) only for a player established before the event.
    rating, floor = f.apply_floors(before_floor, prior.rating, prior.category == "established")
    return replace(
        r,
        participation=participation,
        result_percent=percent,
        result_bonus=bonus,
        rating_before_floor=before_floor,
        new_rating=rating,
        floor=floor,
    )
