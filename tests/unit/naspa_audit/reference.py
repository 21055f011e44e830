"""An independent, deliberately simple reference of the NASPA rating system, written from
docs/rules/naspa.md only (the newcomer seed quoted there and N1-N6),
without reading service/engine/naspa. Test-only code: plain floats, math.exp, loops.

Input: the event's players with (rating or None, career games), the games
(round, a, b, score, forfeit), the number of rounds, the ruleset, the one-third flag.
Output per player: new rating (int or None), unrounded value of the last segment that
rated them, career games after the event, rated games in the event.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

# --- Basics (N1) -----------------------------------------------------------------


def expected(r: float, o: float) -> float:
    """N1: E(r, o) = 1 / (1 + exp(-0.0031879 (r - o))), no clamp."""
    return 1.0 / (1.0 + math.exp(-0.0031879 * (r - o)))


def round_half_up(x: float) -> int:
    return math.floor(x + 0.5)


@dataclass(frozen=True)
class RGame:
    round: int  # 1-based
    a: str
    b: str
    score: float  # a's score
    forfeit: bool = False


@dataclass
class RResult:
    rating: int | None
    unrounded: float | None
    games: int  # career games after the event
    event_games: int  # rated games in the event
    segments: list = field(default_factory=list)  # per segment: the unrounded value (or None)


# --- Segments ----------------------------------------------------------------------


def segments(rounds: int) -> list[tuple[int, int]]:
    """0-based inclusive round ranges of the event's segments (n0 = R - 1)."""
    n0 = rounds - 1
    if n0 < 16:
        return [(0, n0)]
    if n0 < 35:
        return [(0, n0 // 2), (n0 // 2 + 1, n0)]
    a = n0 // 3
    b = (2 * n0 + 1) // 3
    return [(0, a), (a + 1, b), (b + 1, n0)]


# --- Multipliers and the band walk (N5) -------------------------------------------


def multiplier(g: int, r: float) -> int:
    if r < 1800:
        return 30 if g < 50 else 20
    if r < 2000:
        return 24 if g < 50 else 16
    return 15 if g < 50 else 10


def band_walk(r_old: float, g: int, excess: float) -> tuple[float, list[int]]:
    cur = r_old
    used = []
    while excess != 0:
        m = multiplier(g, cur)
        used.append(m)
        r = cur + m * excess
        if multiplier(g, r) == m:
            return r, used
        if cur < 1800:
            boundary = 1800
        elif cur < 2000:
            boundary = 2000 if excess > 0 else 1799
        else:
            boundary = 1999
        excess -= (boundary - cur) / m
        cur = boundary
    return cur, used


# Float evaluation (not settled by the rules): IPR is summed left to right in game order
# ("plain arithmetic"). An exact tie (IPR mathematically 0 at a probed mid, e.g. r halfway
# between two opponents with half the games won, where float E(d) + E(-d) need not be
# exactly 1) is decided as exact arithmetic decides it: not negative (the project's "N2 tie"
# resolution, service.engine.naspa.newcomers.IPR_TIE).
TIE = 1e-9


# --- Newcomers (seed, N2-N4) --------------------------------------------------------


def _adjusted_wins(w: float, n: int) -> float:
    if w == 0:
        return 0.05 * n
    if w == n:
        return 0.95 * n
    return w


def _binary_search(ipr) -> int:
    """N2: low = 0, high = 3000; the result is the last mid probed."""
    low, high = 0, 3000
    mid = None
    while high - low > 1:
        mid = (low + high) // 2
        if ipr(mid) < -TIE:
            low = mid
        else:
            high = mid
    return mid


def rate_newcomers(  # noqa: C901
    pre: dict[str, float | None], games: list[RGame], trace: list | None = None
) -> tuple[dict[str, float], dict]:
    """pre: pre-segment rating of every player (None = newcomer). games: the segment's
    rated games. Returns the unrounded new ratings of newcomers with a rated game, and info."""
    opps: dict[str, list[str]] = {}
    wins: dict[str, float] = {}
    for g in games:
        opps.setdefault(g.a, []).append(g.b)
        opps.setdefault(g.b, []).append(g.a)
        wins[g.a] = wins.get(g.a, 0.0) + g.score
        wins[g.b] = wins.get(g.b, 0.0) + (1 - g.score)
    ncs = [p for p in opps if pre[p] is None]
    if not ncs:
        return {}, {}
    it: dict[str, float] = {}
    for nc in ncs:
        rated = [pre[o] for o in opps[nc] if pre[o] is not None]
        it[nc] = sum(rated) / len(rated) if rated else 1500.0

    def one_pass(cur: dict[str, float], averaging: bool) -> dict[str, float]:
        nxt = {}
        for nc in ncs:
            n = len(opps[nc])
            w = wins[nc]
            ew = _adjusted_wins(w, n)
            ratings = [pre[o] if pre[o] is not None else cur[o] for o in opps[nc]]

            def ipr(r, ratings=ratings, ew=ew):
                terms = [expected(r, o) for o in ratings]
                return sum(terms) - ew

            r: float = _binary_search(ipr)
            if r < 500:
                r = 500
            rated = [pre[o] for o in opps[nc] if pre[o] is not None]
            if rated:
                cap = max(rated) + 400 * w / n
                if r > cap:
                    r = cap
            elif not averaging:
                cap = max(cur[o] for o in opps[nc]) + 400 * w / n
                if r > cap:
                    r = cap
            nxt[nc] = r
        return nxt

    passes = 0
    converged = False
    for _ in range(50):
        nxt = one_pass(it, False)
        passes += 1
        if trace is not None:
            trace.append(dict(nxt))
        same = all(nxt[nc] == it[nc] for nc in ncs)
        it = nxt
        if same:
            converged = True
            break
    if converged:
        return dict(it), {"iterations": passes, "averaged": False}
    total = {nc: 0.0 for nc in ncs}
    for _ in range(50):
        it = one_pass(it, True)
        passes += 1
        if trace is not None:
            trace.append(dict(it))
        for nc in ncs:
            total[nc] += it[nc]
    return {nc: total[nc] / 50 for nc in ncs}, {"iterations": passes, "averaged": True}


# --- One segment ----------------------------------------------------------------------


def rate_segment(  # noqa: C901
    pre: dict[str, int | None],
    career: dict[str, int],
    games: list[RGame],
    ruleset: str,
    one_third: bool,
) -> tuple[dict[str, int | None], dict[str, float | None], dict]:
    """Rate one segment. Returns rounded ratings, unrounded values (None if unchanged
    unrated) and per-player info."""
    nc_new, nc_info = rate_newcomers(pre, games)
    # ratings to use for opponents when rating rated players
    opp_rating = {p: (pre[p] if pre[p] is not None else nc_new.get(p)) for p in pre}
    count: dict[str, int] = {p: 0 for p in pre}
    wins: dict[str, float] = {p: 0.0 for p in pre}
    exp_sum: dict[str, float] = {p: 0.0 for p in pre}
    vs: dict[tuple[str, str], int] = {}
    for g in games:
        for me, op, s in ((g.a, g.b, g.score), (g.b, g.a, 1 - g.score)):
            count[me] += 1
            wins[me] += s
            if pre[me] is not None:
                exp_sum[me] += expected(pre[me], opp_rating[op])
            vs[(me, op)] = vs.get((me, op), 0) + 1
    unrounded: dict[str, float | None] = {}
    info: dict[str, dict] = {}
    walked: dict[str, float] = {}
    accel: dict[str, float] = {}
    for p in pre:
        if pre[p] is None:
            continue
        excess = wins[p] - exp_sum[p]
        new, used = band_walk(pre[p], career[p], excess)
        walked[p] = new
        info[p] = {"multipliers": used, "walked": new, "excess": excess}
        if one_third:
            # One-third-rated: walked change / 3, no acceleration or feedback. The
            # nsa2008 floor of 1 is a rule for rated players that the one-third rule
            # does not lift, so it applies here too (before rounding and the clip).
            unrounded[p] = pre[p] + (new - pre[p]) / 3
            if ruleset == "nsa2008" and unrounded[p] < 1:
                unrounded[p] = 1
            continue
        a = new - pre[p] - 5 * count[p]
        if a > 0:
            new += a
            accel[p] = a
        if ruleset == "nsa2008" and new < 1:
            new = 1
        unrounded[p] = new
    feedback = {p: 0.0 for p in pre}
    if not one_third:
        for p, a in accel.items():
            for (me, op), k in vs.items():
                if me == p and pre[op] is not None:
                    feedback[op] += a / 20 * k
        for p in unrounded:
            unrounded[p] += feedback[p]
            info[p]["feedback"] = feedback[p]
            info[p]["acceleration"] = accel.get(p, 0.0)
    out: dict[str, int | None] = {}
    for p in pre:
        if pre[p] is not None:
            new_r = round_half_up(unrounded[p])
            if one_third:
                ch = new_r - pre[p]
                if ch > 50:
                    ch = 50
                elif ch < -50:
                    ch = -50
                new_r = pre[p] + ch
            out[p] = new_r
        elif p in nc_new:
            unrounded[p] = nc_new[p]
            out[p] = round_half_up(nc_new[p])
            info[p] = {"newcomer": True, **nc_info}
        else:
            unrounded[p] = None
            out[p] = None
    return out, unrounded, {"players": info, "counts": count}


# --- Whole event ------------------------------------------------------------------------


def rate_event(
    players: dict[str, tuple[int | None, int]],
    games: list[RGame],
    rounds: int,
    ruleset: str,
    one_third: bool = False,
) -> dict[str, RResult]:
    """players: id -> (pre-event rating or None, career games before the event), already
    seeded (a CSW first event: the NWL rating and 0 games)."""
    rated_games = [g for g in games if not g.forfeit]
    cur: dict[str, int | None] = {p: r for p, (r, _) in players.items()}
    career = {p: g for p, (_, g) in players.items()}
    total = {p: 0 for p in players}
    last_unrounded: dict[str, float | None] = {p: None for p in players}
    seg_info = []
    out_seg: dict[str, list] = {p: [] for p in players}
    for lo, hi in segments(rounds):
        seg_games = [g for g in rated_games if lo <= g.round - 1 <= hi]
        new, unr, info = rate_segment(cur, career, seg_games, ruleset, one_third)
        seg_info.append(info)
        for p in players:
            out_seg[p].append(unr.get(p))
            if unr.get(p) is not None:
                last_unrounded[p] = unr[p]
            total[p] += info["counts"][p]
            if ruleset == "naspa2024":
                career[p] += info["counts"][p]
        cur = new
    out = {}
    for p, (_r, g) in players.items():
        out[p] = RResult(cur[p], last_unrounded[p], g + total[p], total[p], out_seg[p])
    return out
