"""The FIDE engine against the independent reference (tests/unit/fide_reference.py).

Random periods: 5-20 players (ratings 1000-2800 with clusters at 1400, 2300, 2400, 2650;
juniors; few career games; unrated), 1-4 events in a first period, 0-3 in the next, with
draws and forfeits, starts either side of 2025-10-01, pools standard and rapid. Both
periods are closed; list ratings, K and each event's per-player change are compared.
"""

from __future__ import annotations

import datetime as dt
from fractions import Fraction

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas.events import EventFinished, Game, PeriodClosed, PlayerRef
from schemas.records import PlayerRecord, PoolState, unrated_record
from schemas.validation import normalize
from service.engine.contract import EventInput
from service.engine.registry import default_registry
from tests.unit.fide_reference import HITS, RULES, Reference, next_period

ENGINE = default_registry().get("fide", "fide-2024")


# --- driving the engine ---------------------------------------------------------------
class Office:
    def __init__(self, records, pool):
        self.records = {r.id: r for r in records}
        self.pool = PoolState(system="fide", pool=pool)
        self.last_end = None

    def rate(self, event):
        records = {
            p.id: self.records.get(p.id) or unrated_record("fide", self.pool.pool, p.id)
            for p in event.players
        }
        outcome = ENGINE.rate_event(EventInput(event, records, self.pool))
        self.last_end = max(
            self.last_end or event.end_date, event.end_date
        )  # the ledger's timeline tail
        self.records.update({r.id: r for r in outcome.records})
        self.pool = outcome.pool
        return {r.id: r for r in outcome.results}

    def close(self, period):
        outcome = ENGINE.close_period(
            PeriodClosed(system="fide", pool=self.pool.pool, period=period),
            dict(self.records),
            self.pool,
            self.last_end,
        )
        self.records.update({r.id: r for r in outcome.records})
        self.pool = outcome.pool
        return {r.id: r for r in outcome.results}


def make_event(eid, games, start, end, period, pool):
    ids = []
    for a, b, *_ in games:
        for pid in (a, b):
            if pid not in ids:
                ids.append(pid)
    return normalize(
        EventFinished(
            event_id=eid,
            system="fide",
            name=eid,
            start_date=start,
            end_date=end,
            rounds=len(games),
            players=[PlayerRef(id=p) for p in ids],
            games=[
                Game(round=i + 1, a=a, b=b, score=s, forfeit=f)
                for i, (a, b, s, f) in enumerate(games)
            ],
            pool=pool,
            period=period,
        )
    )


def month_start(period):
    return dt.date(int(period[:4]), int(period[5:]), 1)


def prev_period(period):
    y, m = int(period[:4]), int(period[5:])
    return f"{y - (m == 1):04d}-{(m - 2) % 12 + 1:02d}"


# --- scenarios ---------------------------------------------------------------------------
RATING = st.one_of(
    st.integers(1000, 2800),
    st.sampled_from([1400, 2300, 2400, 2650]).flatmap(lambda c: st.integers(c - 20, c + 20)),
)


@st.composite
def player(draw, i):
    rating = draw(st.one_of(st.none(), RATING, RATING, RATING))
    games = 0 if rating is None else draw(st.sampled_from([0, 5, 12, 28, 29, 30, 31, 60, 400]))
    birth = draw(st.sampled_from([None, None, 1975, 2005, 2006, 2007, 2008, 2012]))
    e2400 = rating is not None and draw(st.booleans()) and draw(st.booleans())
    e2300 = e2400 or (rating is not None and draw(st.booleans()) and draw(st.booleans()))
    return dict(
        id=f"p{i:02d}",
        rating=rating,
        games=games,
        birth_year=birth,
        ever_2300=e2300,
        ever_2400=e2400,
    )


@st.composite
def games_of(draw, ids):
    who = draw(st.lists(st.sampled_from(ids), min_size=2, max_size=len(ids), unique=True))
    n = draw(st.integers(1, 60 if len(who) <= 4 else 40))
    out = []
    for _ in range(n):
        a, b = draw(st.lists(st.sampled_from(who), min_size=2, max_size=2, unique=True))
        score = draw(st.sampled_from([0, 0.5, 1, 1, 0]))
        forfeit = draw(st.integers(0, 9)) == 0
        out.append((a, b, score, forfeit))
    return out


@st.composite
def scenario(draw):
    p1 = draw(st.sampled_from(["2025-09", "2025-10", "2025-10", "2025-11", "2025-12"]))
    p2 = next_period(p1)
    pool = draw(st.sampled_from(["standard", "standard", "rapid", "blitz"]))
    n = draw(st.integers(5, 20))
    players = [draw(player(i)) for i in range(n)]
    ids = [p["id"] for p in players]
    n1, n2 = draw(st.integers(1, 4)), draw(st.integers(0, 3))
    # start dates in order, so that a later period's events never start before an earlier
    # period's (the first event of an unrated player stays first)
    base1 = month_start(p1) - dt.timedelta(days=10)
    offs1 = sorted(draw(st.lists(st.integers(0, 38), min_size=n1, max_size=n1)))
    starts1 = [base1 + dt.timedelta(days=o) for o in offs1]
    last = max(starts1)
    end_p2 = month_start(next_period(p2)) - dt.timedelta(days=1)
    starts2 = sorted(
        last + dt.timedelta(days=o)
        for o in draw(st.lists(st.integers(0, (end_p2 - last).days), min_size=n2, max_size=n2))
    )
    events = []
    for k, start in enumerate(starts1 + starts2):
        period = p1 if k < n1 else p2
        end = max(start, month_start(period))
        events.append((f"e{k}", draw(games_of(ids)), start, end, period))
    order1 = draw(st.permutations(range(n1)))
    order2 = draw(st.permutations(range(n2)))
    # a next-period event that started in the first period may arrive before that closes
    early = [i for i in range(n2) if starts2[i] < month_start(p2) and draw(st.booleans())]
    return dict(
        p1=p1,
        p2=p2,
        pool=pool,
        players=players,
        events=events,
        order1=order1,
        order2=order2,
        early=early,
    )


def run(sc):
    """Rate a scenario through the engine and the reference; return the mismatches."""
    pool = sc["pool"]
    ref = Reference(pool)
    records = []
    for p in sc["players"]:
        ref.add(p["id"], p["rating"], p["games"], p["birth_year"], p["ever_2300"], p["ever_2400"])
        if p["rating"] is not None or p["birth_year"] is not None:
            records.append(
                PlayerRecord(
                    system="fide",
                    pool=pool,
                    id=p["id"],
                    rating=p["rating"],
                    status="established" if p["rating"] is not None else "unrated",
                    games=p["games"],
                    birth_year=p["birth_year"],
                    ever_2300=p["ever_2300"],
                    ever_2400=p["ever_2400"],
                )
            )
    office = Office(records, pool)
    bad = []
    events = sc["events"]
    n1 = len(sc["order1"])
    early = [n1 + i for i in sc["order2"] if i in sc.get("early", [])]
    late = [n1 + i for i in sc["order2"] if i not in sc.get("early", [])]
    for period, order in ((sc["p1"], list(sc["order1"]) + early), (sc["p2"], late)):
        for i in order:
            eid, games, start, end, eperiod = events[i]
            event = make_event(eid, games, start, end, eperiod, pool)
            got = office.rate(event)
            want = ref.rate_event(event)
            for pid, w in want.items():
                d = got[pid].details
                change = None if d.event_change is None else Fraction(d.event_change_exact)
                mine = (w.games_counted, w.k, w.event_change)
                rated = d.event_change is not None
                theirs = (
                    (d.games_counted, d.k, change)
                    if d.games_counted and rated
                    else (d.games_counted, None, None)
                )
                if mine != theirs:
                    bad.append(("event", eid, pid, "ref", mine, "engine", theirs))
                if w.games_counted and w.k is not None and w.projected != d.projected_rating:
                    bad.append(
                        ("projected", eid, pid, "ref", w.projected, "engine", d.projected_rating)
                    )
                if (w.performance, w.norms) != (d.performance, [n.title for n in d.norms]):
                    bad.append(
                        (
                            "perf",
                            eid,
                            pid,
                            "ref",
                            (w.performance, w.norms),
                            "engine",
                            (d.performance, [n.title for n in d.norms]),
                        )
                    )
        got = office.close(period)
        want = ref.close(period)
        for pid in sorted(set(got) | set(want)):
            w, g = want.get(pid), got.get(pid)
            mine = None if w is None else (w.old, w.new, w.k_applied, w.k_next)
            theirs = (
                None
                if g is None
                else (g.old_rating, g.new_rating, g.details.k_applied, g.details.k)
            )
            if mine != theirs:
                bad.append(("list", period, pid, "ref", mine, "engine", theirs))
        for pid, p in ref.players.items():
            r = office.records.get(pid)
            if (r.rating if r else None) != p.rating_in(next_period(period)):
                bad.append(
                    (
                        "record",
                        period,
                        pid,
                        "ref",
                        p.rating_in(next_period(period)),
                        "engine",
                        r and r.rating,
                    )
                )
    return bad


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(scenario())
def engine_agrees_with_the_reference(sc):
    # Events of the next period that started in this one may arrive before its close
    # (`early`): the list must not depend on it (audit B1, fixed).
    bad = run(sc)
    assert not bad, (bad[:6], sc)


def test_engine_agrees_with_the_reference():
    # The property runs here, as a call, so that its examples' coverage is asserted in the
    # same test, whatever the order or selection of tests: the random periods must reach
    # every rule branch they are there for (fide_reference.RULES, named by rule id), or
    # their agreement proves nothing about it. Under `ci` 200 examples reach them all (the
    # rarest, F2's "rated since the start", in 15 of 200); 300 are run because a random
    # `dev` run reaches the rarest in about 5% of its examples (A1, 11 of 200 in one run):
    # 300 miss one with a chance of about 0.95^300 = 2e-7.
    HITS.clear()
    engine_agrees_with_the_reference()
    missed = [rule for rule in RULES if not HITS[rule]]
    assert not missed, f"no random period reached {missed}"


# --- B1: a list that depends on the order the events arrive in ------------------------------
def _b1(early: bool):
    """L 1409 (K 20) loses to l 1409 in October: -.50 x 20 = -10 -> 1399 -> unrated on the
    November list (7.2.1). Event B starts 2025-10-28 (October list: L 1409, rated) and ends
    2025-11-02 (period November); L scores 2.5/5 against five players rated 2000.
    `early`: B arrives before October closes, else after."""
    pool = "standard"
    records = [
        PlayerRecord(
            system="fide",
            pool=pool,
            id=p,
            rating=r,
            status="established",
            games=100,
            birth_year=1980,
        )
        for p, r in [("L", 1409), ("l", 1409)] + [(f"r{i}", 2000) for i in range(5)]
    ]
    office = Office(records, pool)
    a = make_event(
        "A", [("L", "l", 0, False)], dt.date(2025, 10, 5), dt.date(2025, 10, 5), "2025-10", pool
    )
    b = make_event(
        "B",
        [("L", f"r{i}", s, False) for i, s in enumerate([1, 1, 0.5, 0, 0])],
        dt.date(2025, 10, 28),
        dt.date(2025, 11, 2),
        "2025-11",
        pool,
    )
    office.rate(a)
    if early:
        office.rate(b)
    assert office.close("2025-10")["L"].new_rating is None
    if not early:
        office.rate(b)
    listed = office.close("2025-11")
    return listed["L"].new_rating if "L" in listed else None, office.records["L"].rating


def test_b1_late_arrival_pools_the_games():
    # B after October closes: L was rated at B's start but is off the list now; the engine
    # pools the 5 games (audit ambiguity A1, docs/rules/fide.md#a1). 8.2: Ra = (5 x 2000 +
    # 2 x 1800) / 7 = 13600/7 = 1942.857; p = (2.5 + 1) / 7 = .50 -> dp 0; Ru = 1943 >= 1400
    assert _b1(early=False) == (1943, 1943)


def test_b1_the_list_does_not_depend_on_arrival_order():
    # The same two events must give the same November list whatever their arrival order
    # (F1: the ratings are those of the list at the event's start; a list is a function of
    # its period's events). Late arrival: 1943 (worked above). Early arrival: B's 5 games
    # go into L's November sum (own 1409); October's close makes L unrated, and the games
    # kept with that sum join L's initial-rating pool: the same 1943. (This was engine bug
    # B1 of the audit: the close used to discard the November sum, leaving L unrated.)
    assert _b1(early=True) == _b1(early=False) == (1943, 1943)
