"""Independent, deliberately simple reference for the FIDE rules (test-only code).

Written from docs/rules/fide.md (F1-F9, the quoted methodology and
tables 8.1.1 and 8.1.2) alone, without reading service/engine/fide/. Exact arithmetic only:
PD in integer hundredths, sums as integers, K x sum as a Fraction, one rounding.

The reference simulates one pool: imported records, events rated in arrival order and
`close(period)` publishing the new list. It is slow on purpose and keeps everything.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction

from tests.unit.printed_tables import FIDE_PRINTED_8_1_1, FIDE_PRINTED_8_1_2

# Which rules the random cases reached, by rule id (docs/rules/fide.md): the property test
# (tests/unit/test_fide_reference.py) clears it, runs its examples and asserts that every
# branch in RULES was reached at least once.
HITS: Counter = Counter()
RULES = (
    "8.3.1 400 cap",
    "F3 2650 exemption",
    "8.3.3 700/n cap",
    "F4 +.5 away from zero",
    "F4 -.5 away from zero",
    "F6.1 K 10 (2400 published)",
    "F6.2 K 40 (junior)",
    "F6.3 K 40 (under 30 games)",
    "F6.4 K 20",
    "F2 rated since the start",
    "A1 off the list since the start",
    "7.2.1 dropped under 1400",
    "7.1.4 first event disregarded",
    "8.2 initial published",
    "8.2 initial capped 2200",
    "1.4 GM norm",
    "1.4 IM norm",
    "1.4 WGM norm",
    "1.4 WIM norm",
)
EXEMPTION_FROM = dt.date(2025, 10, 1)  # 8.3.1 as amended (F3)
NORMS = (  # title, required performance, required Ra, floor for the lowest opponent
    ("GM", 2600, 2380, 2200),
    ("IM", 2450, 2230, 2050),
    ("WGM", 2400, 2180, 2000),
    ("WIM", 2250, 2030, 1850),
)


# --- tables 8.1.1 and 8.1.2, as printed (tests/unit/printed_tables.py) -----------------
def fide_pd(d: int) -> int:
    """8.1.2: PD in hundredths for D = own - opponent: the H column of the band holding |D|
    for D >= 0, the L column (100 - H) for D < 0; the last band is "> 735"."""
    for low, high, h in FIDE_PRINTED_8_1_2:
        if low <= abs(d) and (high is None or abs(d) <= high):
            return h if d >= 0 else 100 - h
    raise AssertionError(d)


def fide_dp(p: int) -> int:
    """8.1.1: dp for the score fraction p, in hundredths (0..100)."""
    return dict(FIDE_PRINTED_8_1_1)[p]


# --- rounding ------------------------------------------------------------------------
def round_half_away(x: Fraction) -> int:
    """8.3.4 (F4): nearest integer, 0.5 away from zero."""
    x = Fraction(x)
    a = abs(x)
    n = int(a)  # floor for a >= 0
    if a - n >= Fraction(1, 2):
        n += 1
    return n if x >= 0 else -n


def round_half_up(x: Fraction) -> int:
    """Half up (towards +infinity) as 7.1.4 / F8 / the Title Regulations say."""
    x = Fraction(x)
    return (x + Fraction(1, 2)).__floor__()


# --- per game ------------------------------------------------------------------------
def game_pd(own: int, opponent: int, start: dt.date, pool: str) -> int:
    """PD in hundredths for the player rated `own` (8.3.1 dated by event start, F3)."""
    d = own - opponent
    exempt = pool == "standard" and start >= EXEMPTION_FROM and own >= 2650
    if abs(d) > 400:
        HITS["F3 2650 exemption" if exempt else "8.3.1 400 cap"] += 1
    if abs(d) > 400 and not exempt:
        d = 400 if d > 0 else -400
    return fide_pd(d)


def period_of(date: dt.date) -> str:
    return f"{date.year:04d}-{date.month:02d}"


def next_period(period: str) -> str:
    y, m = int(period[:4]), int(period[5:])
    return f"{y + (m == 12):04d}-{m % 12 + 1:02d}"


# --- K (8.3.3, F5/F6/F7) ---------------------------------------------------------------
def base_k(
    rating: int,
    games: int,
    birth_year: int | None,
    ever_2300: bool,
    ever_2400: bool,
    list_year: int,
) -> int:
    """K from the state on the list opening the period, in F6's order. A rating on the
    list is a published rating, so a current 2400+ (2300+) counts as 'ever published'."""
    if ever_2400 or rating >= 2400:
        HITS["F6.1 K 10 (2400 published)"] += 1
        return 10
    if birth_year is not None and list_year - birth_year <= 18 and rating < 2300 and not ever_2300:
        HITS["F6.2 K 40 (junior)"] += 1
        return 40
    if games < 30:
        HITS["F6.3 K 40 (under 30 games)"] += 1
        return 40
    HITS["F6.4 K 20"] += 1
    return 20


def capped_k(k: int, n: int) -> int:
    """700/n cap: only when K x n > 700."""
    if n > 0 and k * n > 700:
        HITS["8.3.3 700/n cap"] += 1
        return 700 // n
    return k


# --- initial rating (7.1.4, 8.2, F8) ---------------------------------------------------
@dataclass
class Initial:
    games: int
    points_halves: int
    opponents_sum: int
    ra: Fraction | None = None
    p_hundredths: int | None = None
    dp: int | None = None
    rating: int | None = None
    published: bool = False


def initial_rating(opponents: list[int], points_halves: int) -> Initial:
    n = len(opponents)
    out = Initial(n, points_halves, sum(opponents))
    if n < 5:
        return out
    ra = Fraction(sum(opponents) + 2 * 1800, n + 2)
    # p = (points + 1) / (n + 2), in hundredths, half up (F8)
    p = round_half_up(Fraction(100 * (points_halves + 2), 2 * (n + 2)))
    dp = fide_dp(p)
    ru = min(round_half_up(ra + dp), 2200)
    out.ra, out.p_hundredths, out.dp, out.rating = ra, p, dp, ru
    out.published = ru >= 1400
    return out


# --- performance and norms (Title Regulations) -------------------------------------------
def performance(opponents: list[int], points_halves: int) -> int | None:
    """Rp = Ra + dp; Ra mean opponent rating half up; p whole percent half up."""
    n = len(opponents)
    if n == 0:
        return None
    ra = round_half_up(Fraction(sum(opponents), n))
    pct = round_half_up(Fraction(100 * points_halves, 2 * n))
    return ra + fide_dp(pct)


def norms(opponents: list[int | None], points_halves: int) -> list[str]:
    """Benchmarks met: >= 9 games, >= 35%, Ra (adjusted) and Rp at least the title's.
    Unrated opponents count 1400; the lowest opponent, if below the floor, is raised."""
    n = len(opponents)
    if n < 9 or Fraction(points_halves, 2 * n) < Fraction(35, 100):
        return []
    met = []
    for title, need_rp, need_ra, floor in NORMS:
        ratings = sorted(1400 if r is None else r for r in opponents)
        if ratings[0] < floor:
            ratings[0] = floor
        ra = round_half_up(Fraction(sum(ratings), n))
        pct = round_half_up(Fraction(100 * points_halves, 2 * n))
        rp = ra + fide_dp(pct)
        if ra >= need_ra and rp >= need_rp:
            met.append(title)
            HITS[f"1.4 {title} norm"] += 1
    return met


# --- the simulation ------------------------------------------------------------------------
@dataclass
class RefPlayer:
    id: str
    imported: int | None
    games: int
    birth_year: int | None
    ever_2300: bool
    ever_2400: bool
    lists: dict[str, int | None] = field(default_factory=dict)  # period -> rating in force
    pooled: list[tuple] = field(default_factory=list)  # start, event, opp, halves, period
    sums: dict[str, list[int]] = field(default_factory=dict)  # period -> [sum_hundredths, games]
    ever_rated: bool = False

    def rating_in(self, period: str) -> int | None:
        """F1: the list in force in `period` (imports are in force before any list)."""
        known = [p for p in self.lists if p <= period]
        return self.lists[max(known)] if known else self.imported


@dataclass
class EventRef:
    k: int | None
    event_change: Fraction | None
    games_counted: int  # games changing a rating (8.3) or pooled for an initial one (8.2)
    performance: int | None
    norms: list[str]
    projected: int | None = None


@dataclass
class ListRef:
    old: int | None
    new: int | None
    k_applied: int | None
    k_next: int | None
    initial: Initial | None = None


class Reference:
    def __init__(self, pool: str):
        self.pool = pool
        self.players: dict[str, RefPlayer] = {}
        self.events: dict[str, list] = {}  # period -> events rated into it, still open

    def add(self, pid, rating, games, birth_year=None, ever_2300=False, ever_2400=False):
        self.players[pid] = RefPlayer(
            pid, rating, games, birth_year, ever_2300, ever_2400, ever_rated=rating is not None
        )

    def player(self, pid) -> RefPlayer:
        if pid not in self.players:
            self.add(pid, None, 0)
        return self.players[pid]

    def k_for(self, p: RefPlayer, period: str) -> int | None:
        rating = p.rating_in(period)
        if rating is None:
            return None
        return base_k(rating, p.games, p.birth_year, p.ever_2300, p.ever_2400, int(period[:4]))

    def tally(self, event, count: bool) -> dict[str, dict]:
        """Each player's games in `event`, with the lists known now (F1, F2, 7.1.4).
        `count` (at the period's close) keeps the pooled games."""
        start, period, pool = event.start_date, event.period, self.pool
        at_start = period_of(start)
        per: dict[str, dict] = {}
        for ref in event.players:
            self.player(ref.id)
            per[ref.id] = {
                "sum": 0,
                "n": 0,
                "perf_opp": [],
                "perf_pts": 0,
                "norm_opp": [],
                "norm_pts": 0,
                "pooled": 0,
            }
        for g in event.games:
            if g.forfeit:  # forfeits are never rated
                continue
            for x, y, s in ((g.a, g.b, g.score), (g.b, g.a, 1 - g.score)):
                px, py = self.players[x], self.players[y]
                halves = int(s * 2)
                rx_start, ry_start = px.rating_in(at_start), py.rating_in(at_start)
                rx_now = px.rating_in(period)
                acc = per[x]
                acc["norm_opp"].append(ry_start)
                acc["norm_pts"] += halves
                if ry_start is None:
                    continue  # F2: a game against an unrated opponent is never rated
                acc["perf_opp"].append(ry_start)
                acc["perf_pts"] += halves
                if rx_start is not None and rx_now is not None:
                    own = rx_start
                elif rx_start is None and rx_now is not None:
                    # unrated at the start, published before the event is rated: rated with
                    # the current list (test_fide_engine's worked case; docs/rules/fide.md#f2)
                    own = rx_now
                    HITS["F2 rated since the start"] += count
                else:
                    # unrated now: pooled for an initial rating (7.1.4). A player rated at the
                    # start but off the list since is pooled too: the regulations do not say
                    # (audit ambiguity A1, docs/rules/fide.md#a1; the engine pools, and so does this reference).
                    if count:
                        HITS["A1 off the list since the start"] += rx_start is not None
                        px.pooled.append((start, event.event_id, ry_start, halves, period))
                    acc["pooled"] += 1
                    continue
                pd = game_pd(own, ry_start, start, pool)
                acc["sum"] += 50 * halves - pd  # (score - PD) in hundredths
                acc["n"] += 1
        return per

    def rate_event(self, event) -> dict[str, EventRef]:
        """The event's output (a projection: F9). The period itself is counted at its
        close, from the stored events and the lists then known, whatever the order."""
        period = event.period
        self.events.setdefault(period, []).append(event)
        games_so_far: dict[str, int] = {}  # the period's rated games as known now
        sum_so_far: dict[str, int] = {}
        for known in self.events[period]:
            for pid, acc in self.tally(known, count=False).items():
                games_so_far[pid] = games_so_far.get(pid, 0) + acc["n"]
                sum_so_far[pid] = sum_so_far.get(pid, 0) + acc["sum"]
        out = {}
        for pid, acc in self.tally(event, count=False).items():
            p = self.players[pid]
            k = ch = projected = None
            if acc["n"]:
                k = capped_k(
                    self.k_for(p, period), games_so_far[pid]
                )  # the period's K as known so far
                ch = Fraction(k * acc["sum"], 100)
                # F9: published + the period's change so far, rounded (None under 1400)
                projected = p.rating_in(period) + round_half_away(
                    Fraction(k * sum_so_far[pid], 100)
                )
                projected = projected if projected >= 1400 else None
            out[pid] = EventRef(
                k,
                ch,
                acc["n"] + acc["pooled"],
                performance(acc["perf_opp"], acc["perf_pts"]),
                norms(acc["norm_opp"], acc["norm_pts"]),
                projected,
            )
        return out

    def close(self, period: str) -> dict[str, ListRef]:
        nxt = next_period(period)
        for event in self.events.pop(period, []):
            for pid, acc in self.tally(event, count=True).items():
                if acc["n"]:
                    s = self.players[pid].sums.setdefault(period, [0, 0])
                    s[0] += acc["sum"]
                    s[1] += acc["n"]
        out: dict[str, ListRef] = {}
        for pid in sorted(self.players):
            p = self.players[pid]
            old = p.rating_in(period)
            if old is not None:
                if period not in p.sums:
                    continue
                total, n = p.sums[period]
                k = capped_k(self.k_for(p, period), n)
                new = old + round_half_away(Fraction(k * total, 100))
                if (k * total) % 100 == 50:
                    HITS["F4 +.5 away from zero" if total > 0 else "F4 -.5 away from zero"] += 1
                p.games += n
                if new < 1400:  # 7.2.1: back to unrated
                    HITS["7.2.1 dropped under 1400"] += 1
                    new = None
                else:
                    p.ever_2300 |= new >= 2300
                    p.ever_2400 |= new >= 2400
                p.lists[nxt] = new
                out[pid] = ListRef(old, new, k, self.k_for(p, nxt))
            elif any(g[4] == period for g in p.pooled):  # active: pooled games this period
                games = sorted(p.pooled)
                if not p.ever_rated:
                    first = min((g[0], g[1]) for g in games)
                    if sum(g[3] for g in games if (g[0], g[1]) == first) == 0:
                        games = [g for g in games if (g[0], g[1]) != first]
                        HITS["7.1.4 first event disregarded"] += 1
                init = initial_rating([g[2] for g in games], sum(g[3] for g in games))
                new = None
                if init.published:
                    new = init.rating
                    HITS["8.2 initial published"] += 1
                    HITS["8.2 initial capped 2200"] += new == 2200
                    p.games += init.games  # F7: career games, initial ones included
                    p.lists[nxt] = new
                    p.ever_rated = True
                    p.pooled = []
                    p.ever_2300 |= new >= 2300
                out[pid] = ListRef(None, new, None, self.k_for(p, nxt), init)
        return out
