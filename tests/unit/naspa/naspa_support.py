"""Test support for the NASPA engine: event builders and an independent oracle.

The oracle `seed_newcomers` re-implements the seed's pseudo-code
(docs/rules/naspa.md#naspa-newcomers) with the points that page pins down
(N2 last mid, N3 floor then cap, N4 cap without a rated opponent, exact early stop,
50 + 50 averaging). It is written straight from the text, player by player, with no
code shared with the engine; the sums use math.fsum (the exactly rounded sum, so that
the order of the games cannot matter) as the engine does, and a mathematical tie
(|IPR| <= 1e-9 at a probe, which floats show as +-1e-16) counts as not negative, the
project's "N2 tie" resolution.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping

from schemas.events import Bye, EventFinished, Game, PlayerRef
from schemas.ratings import PlayerResult
from schemas.records import PlayerRecord, PoolState
from service.engine.contract import EventInput, Outcome
from service.engine.naspa import naspa_engines

DAY = dt.date(2024, 5, 4)


def engine(ruleset: str = "nsa2008"):
    return next(e for e in naspa_engines() if e.ruleset == ruleset)


def event_input(
    players: Mapping[str, tuple[int | None, int]],
    games: Iterable[tuple],
    *,
    rounds: int | None = None,
    ruleset: str = "nsa2008",
    pool: str | None = None,
    one_third: bool = False,
    byes: Iterable[tuple[int, str, float]] = (),
    seeds: Mapping[str, int] = {},
) -> EventInput:
    """`players`: id -> (rating or None, career games); `games`: (round, a, b, a's score)
    or (round, a, b, score, "forfeit"); `seeds`: id -> rating in the seed pool (NWL)."""
    pool = pool or ("csw" if ruleset == "naspa-csw" else "nwl")
    game_list = [Game(round=g[0], a=g[1], b=g[2], score=g[3], forfeit=len(g) > 4) for g in games]
    bye_list = [Bye(round=r, player=p, score=s) for r, p, s in byes]
    last = max([g.round for g in game_list] + [b.round for b in bye_list] + [1])
    event = EventFinished(
        event_id="t1",
        system="naspa",
        name="Test",
        start_date=DAY,
        end_date=DAY,
        rounds=rounds or last,
        players=[PlayerRef(id=p) for p in players],
        games=game_list,
        byes=bye_list,
        pool=pool,
        ruleset=ruleset,
        one_third_rated=one_third,
    )
    records = {
        p: PlayerRecord(
            system="naspa",
            pool=pool,
            id=p,
            rating=r,
            status="unrated" if r is None else "established",
            games=g,
        )
        for p, (r, g) in players.items()
    }
    seed_records = {
        p: PlayerRecord(system="naspa", pool="nwl", id=p, rating=r, status="established", games=300)
        for p, r in seeds.items()
    }
    return EventInput(event, records, PoolState(system="naspa", pool=pool), seed_records)


def rate(players, games, **kw) -> dict[str, PlayerResult]:
    """Rate an event; the results by player id."""
    return {r.id: r for r in outcome(players, games, **kw).results}


def outcome(players, games, **kw) -> Outcome:
    ruleset = kw.get("ruleset", "nsa2008")
    return engine(ruleset).rate_event(event_input(players, games, **kw))


# --- the oracle: the seed's pseudo-code, line by line -------------------------------


def E(r: float, o: float) -> float:
    """N1."""
    return 1 / (1 + math.exp(-0.0031879 * (r - o)))


def seed_newcomers(pre: Mapping[str, int | None], games: Iterable[tuple[str, str, float]]):  # noqa: C901
    """Newcomer id -> (unrounded rating, passes, averaged), following the seed text.

    `pre`: every player's pre-event rating (None: newcomer); `games`: counted games only.
    """
    played: dict[str, list[tuple[str, float]]] = {}
    for a, b, s in games:
        played.setdefault(a, []).append((b, s))
        played.setdefault(b, []).append((a, 1 - s))
    # For each rated player rp: iterative rating = pre-event rating.
    iterative: dict[str, float] = {p: pre[p] for p in played if pre[p] is not None}
    newcomers = [p for p in played if pre[p] is None]
    earned, rated_games, rated_opponents = {}, {}, {}
    for nc in newcomers:
        rated_opponents[nc] = [pre[o] for o, _ in played[nc] if pre[o] is not None]
        # Iterative rating: the mean of the rated opponents' ratings, if any, else 1500.
        ro = rated_opponents[nc]
        iterative[nc] = sum(ro) / len(ro) if ro else 1500
        earned[nc] = sum(s for _, s in played[nc])
        rated_games[nc] = len(played[nc])

    def ipr(nc: str, r: int) -> float:
        earned_wins = earned[nc]
        if earned_wins == 0:
            earned_wins = 0.05 * rated_games[nc]
        elif earned_wins == rated_games[nc]:
            earned_wins = 0.95 * rated_games[nc]
        return math.fsum(E(r, iterative[o]) for o, _ in played[nc]) - earned_wins

    def one_pass(converging: bool) -> dict[str, float]:
        following = {}
        for nc in newcomers:
            low, high = 0, 3000
            while high - low > 1:  # stop when the range is <= 1
                middle = (low + high) // 2
                if ipr(nc, middle) < -1e-9:  # N2 tie: a zero within float noise is not negative
                    low = middle
                else:
                    high = middle
            r = middle  # N2: the last probed middle
            if r < 500:
                r = 500
            if rated_opponents[nc]:
                maximum = max(rated_opponents[nc]) + 400 * earned[nc] / rated_games[nc]
                if r > maximum:
                    r = maximum
            elif converging:  # N4
                maximum = (
                    max(iterative[o] for o, _ in played[nc]) + 400 * earned[nc] / rated_games[nc]
                )
                if r > maximum:
                    r = maximum
            following[nc] = r
        return following

    for iteration in range(1, 51):
        following = one_pass(True)
        unchanged = all(iterative[nc] == following[nc] for nc in newcomers)
        iterative.update(following)
        if unchanged:
            return {nc: (iterative[nc], iteration, False) for nc in newcomers}
    last_fifty: dict[str, list[float]] = {nc: [] for nc in newcomers}
    for _ in range(50):
        iterative.update(one_pass(False))
        for nc in newcomers:
            last_fifty[nc].append(iterative[nc])
    return {nc: (math.fsum(v) / 50, 100, True) for nc, v in last_fifty.items()}


def half_up(x: float) -> int:
    """floor(x + 0.5), as the rules say (x a float with few decimals in these tests)."""
    return math.floor(x + 0.5)
