"""An independent, deliberately simple reference implementation of CFC 714-717
(ruleset cfc-2009), written from the rule texts only (articles 714-717 as
quoted in `docs/rules/cfc.md`, and the resolutions C1-C11 there), without looking at `service/engine/cfc/`.

Test-only code. Everything is a `fractions.Fraction`; the published rating is rounded
once, half up (C11). The expected-score table is read off its own
transcription as printed (tests/unit/printed_tables.py, checked against the rules page
by tests/unit/test_tables.py), not the engine's.

Readings this reference takes where the texts leave a choice (flagged "READING"):
  R1  A provisional player's "pre-event rating" (as an opponent value, for AR, and as
      the 714b Ro of a player reaching game 25) is the published integer rating.
  R2  An unrated opponent of a provisional player (717 step 4) counts at its pass-2
      post-event rating rounded, before the 716c floor (as C9 says for step 5).
  R3  The 714c result-bonus percentage uses S, the score in rated games only (forfeits
      and byes are not rated), over the event's `rounds` (C5).
  R4  A player with no rated game in the event is not rated: record unchanged.
  R5  "highest ever" after the event = max(highest before, new published rating); a
      record's highest is never below its current rating (missing or lagging import).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from math import floor

from tests.unit.printed_tables import CFC_PRINTED

F = Fraction


def cfc_expected_higher(difference: int) -> int:
    """C3: the higher player's expected score, in hundredths, read off the table as printed
    (tests/unit/printed_tables.py): the band holding `difference`; 735 and over: 1.00."""
    for low, high, value in CFC_PRINTED:
        if low <= difference <= high:
            return value
    assert difference >= 735, difference
    return 100


def half_up(x: Fraction) -> int:
    """C11: round half up, once."""
    return floor(x + F(1, 2))


def expected(own: int, opp: int) -> Fraction:
    """C3: the seed's table by |own - opp|; the higher player reads the left column."""
    d = own - opp
    if d >= 0:
        return F(cfc_expected_higher(d), 100)
    return 1 - F(cfc_expected_higher(-d), 100)


@dataclass
class Prior:
    status: str  # "unrated" | "provisional" | "established"
    rating: int | None = None
    games: int = 0
    highest: int | None = None
    prov_sum: Fraction | None = None  # C1; None for an imported provisional: rating x games


@dataclass
class RefGame:
    a: str
    b: str
    score: Fraction  # a's score
    forfeit: bool = False


@dataclass
class Result:
    status: str
    rating: int | None
    games: int
    highest: int | None
    prov_sum: Fraction | None
    # intermediate figures
    n: int = 0
    w: int = 0
    l: int = 0
    s: Fraction = F(0)
    method: str = "none"
    pass_1: Fraction | None = None
    pass_2: Fraction | None = None
    opp_values: list = field(default_factory=list)
    sx: Fraction | None = None
    k: int | None = None
    rn_714b: Fraction | None = None  # 714b result (after the 2199 rule), before bonus
    rule_2199: bool = False
    performance: Fraction | None = None
    participation: Fraction = F(0)
    result_percent: int | None = None
    result_bonus: int = 0
    highest_before: int | None = None
    before_floor: int | None = None
    floor: str | None = None


class Unratable(Exception):
    pass


def participation_per_game(ro: int) -> Fraction:
    """714c A, by the pre-event rating."""
    if ro <= 1000:
        return F(2)
    if ro <= 1800:
        return F(3, 2)
    if ro <= 2000:
        return F(1)
    if ro <= 2200:
        return F(3, 4)
    return F(1, 2)


def result_bonus(percent: int) -> int:
    """714c B by the truncated whole percent (C5)."""
    if percent >= 90:
        return 15
    if percent >= 71:
        return 10
    if percent >= 60:
        return 5
    return 0


def rate_event(  # noqa: C901
    priors: dict[str, Prior], games: list[RefGame], rounds: int
) -> tuple[dict[str, Result], Fraction | None]:
    """Rate one event. Returns per player a Result, and AR."""
    rated_games = [g for g in games if not g.forfeit]
    # per player: list of (opponent, own score)
    played: dict[str, list[tuple[str, Fraction]]] = {p: [] for p in priors}
    for g in rated_games:
        played[g.a].append((g.b, g.score))
        played[g.b].append((g.a, 1 - g.score))

    def wl(p):
        w = sum(1 for _, s in played[p] if s == 1)
        l = sum(1 for _, s in played[p] if s == 0)
        return w, l, len(played[p]), sum((s for _, s in played[p]), F(0))

    status = {p: pr.status for p, pr in priors.items()}
    pre = {p: pr.rating for p, pr in priors.items()}  # R1: published integer

    # 717 step 1: AR over rated players who played.
    terms = []
    for p in priors:
        w, l, n, _ = wl(p)
        if status[p] != "unrated" and n > 0:
            terms.append(F(pre[p]) - F(400 * (w - l), n))
    ar = sum(terms, F(0)) / len(terms) if terms else None

    unrated = [p for p in priors if status[p] == "unrated" and played[p]]
    if unrated and ar is None:
        raise Unratable("no rated player played: AR undefined")
    if not any(status[p] != "unrated" for p in priors):
        raise Unratable("no rated player")
    if not rated_games:
        # Nothing to rate (engine policy, accepted: it rejects such an event).
        raise Unratable("no rated game")

    res: dict[str, Result] = {}
    # 717 step 2: unrated pass 1.
    pass1: dict[str, Fraction] = {}
    for p in unrated:
        w, l, n, _ = wl(p)
        vals = [F(pre[o]) if status[o] != "unrated" else ar - 200 for o, _ in played[p]]
        pass1[p] = (sum(vals, F(0)) + 400 * (w - l)) / n
    # step 3: pass 2.
    post_unrounded: dict[str, Fraction] = {}
    post_rounded: dict[str, int] = {}  # rounded, before bonus and floors (C9)
    for p in unrated:
        w, l, n, s = wl(p)
        vals = [F(pre[o]) if status[o] != "unrated" else pass1[o] for o, _ in played[p]]
        total = sum(vals, F(0)) + 400 * (w - l)
        rp = total / n
        post_unrounded[p] = rp
        post_rounded[p] = half_up(rp)
        r = Result(
            status="established" if n >= 25 else "provisional",  # 715 / C7 last sentence
            rating=None,
            games=n,
            highest=None,
            prov_sum=None if n >= 25 else total,
            n=n,
            w=w,
            l=l,
            s=s,
            method="performance",
            pass_1=pass1[p],
            pass_2=rp,
            opp_values=vals,
            performance=rp,
        )
        res[p] = r

    # step 4: provisional players (including those reaching game 25, C7).
    def value_for_prov(o):
        if status[o] == "unrated":
            return F(post_rounded[o])  # READING R2
        return F(pre[o])

    def est_714b(p, vals, r: Result, ro: int):
        """714b with integer opponent values; fills r; returns Rn (after 2199), unrounded."""
        w, l, n, s = r.w, r.l, r.n, r.s
        sx = sum((expected(ro, int(v)) for v in vals), F(0))
        k = 16 if ro >= 2199 else 32
        rn = F(ro) + k * (s - sx)
        if ro < 2199 and rn > 2199:
            rn = 2199 + (rn - 2199) / 2
            r.rule_2199 = True
        r.sx, r.k, r.rn_714b = sx, k, rn
        r.performance = (sum(vals, F(0)) + 400 * (w - l)) / n
        return rn

    became_est: set[str] = set()
    for p in priors:
        if status[p] != "provisional" or not played[p]:
            continue
        w, l, n, s = wl(p)
        pr = priors[p]
        vals = [value_for_prov(o) for o, _ in played[p]]
        r = Result(
            status="",
            rating=None,
            games=pr.games + n,
            highest=None,
            prov_sum=None,
            n=n,
            w=w,
            l=l,
            s=s,
            opp_values=vals,
        )
        if pr.games + n >= 25:
            became_est.add(p)
            r.method = "established"
            r.status = "established"
            rn = est_714b(p, vals, r, pre[p])
            post_unrounded[p] = rn
            post_rounded[p] = half_up(rn)
        else:
            r.method = "performance"
            r.status = "provisional"
            old_sum = pr.prov_sum if pr.prov_sum is not None else F(pr.rating) * pr.games  # C1
            total = old_sum + sum(vals, F(0)) + 400 * (w - l)
            r.prov_sum = total
            r.performance = (sum(vals, F(0)) + 400 * (w - l)) / n
            post_unrounded[p] = total / r.games
            post_rounded[p] = half_up(total / r.games)
        res[p] = r

    # step 5: established players, those below 800 first.
    est_players = [p for p in priors if status[p] == "established" and played[p]]
    below = [p for p in est_players if pre[p] < 800]
    above = [p for p in est_players if pre[p] >= 800]
    for group in (below, above):
        for p in group:
            w, l, n, s = wl(p)
            vals = []
            for o, _ in played[p]:
                if status[o] in ("unrated", "provisional"):
                    vals.append(F(post_rounded[o]))  # C9
                elif pre[p] >= 800 and pre[o] < 800:
                    vals.append(F(max(pre[o], post_rounded[o])))  # C10
                else:
                    vals.append(F(pre[o]))
            r = Result(
                status="established",
                rating=None,
                games=priors[p].games + n,
                highest=None,
                prov_sum=None,
                n=n,
                w=w,
                l=l,
                s=s,
                method="established",
                opp_values=vals,
            )
            rn = est_714b(p, vals, r, pre[p])
            post_unrounded[p] = rn
            post_rounded[p] = half_up(rn)
            res[p] = r

    # step 6: bonus, one rounding, 716.
    for p, r in res.items():
        pr = priors[p]
        if r.method == "established":
            ro = pre[p]
            if rounds >= 4:  # C4
                r.participation = participation_per_game(ro) * r.n
                # the highest rating ever held includes the current one (an import may lag)
                highest = max(pr.highest, pr.rating) if pr.highest is not None else pr.rating
                r.highest_before = highest
                r.result_percent = floor(100 * r.s / rounds)  # READING R3, C5
                if r.performance > highest:
                    r.result_bonus = result_bonus(r.result_percent)
            total = r.rn_714b + r.participation + r.result_bonus
        else:
            total = post_unrounded[p]
        post = half_up(total)
        r.before_floor = post
        if pr.status == "established" and post < 800:
            if pr.rating > 799:
                post, r.floor = 799, "716a"
            elif max(pr.rating, post) != post:
                post, r.floor = pr.rating, "716b"
        if post < 200:
            post, r.floor = 200, "716c"
        r.rating = post
        before = max(x for x in (pr.highest, pr.rating, post) if x is not None)
        r.highest = before  # READING R5

    # R4: players with no rated game keep their record.
    for p, pr in priors.items():
        if p not in res:
            res[p] = Result(
                status=pr.status,
                rating=pr.rating,
                games=pr.games,
                highest=pr.highest,
                prov_sum=pr.prov_sum if pr.status == "provisional" else None,
            )
    return res, ar
