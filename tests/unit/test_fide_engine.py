"""The FIDE engine end to end: events into periods, lists at period close (F1-F9).

Every expected figure is worked by hand from docs/rules/fide.md and Tables 8.1.1 / 8.1.2; the
arithmetic is in the comment beside it.
"""

import datetime as dt
import json

import pytest

from schemas.events import EventFinished, Game, PeriodClosed, PlayerRef
from schemas.fide import FideState, PeriodSums
from schemas.records import PlayerRecord, PoolState, unrated_record
from schemas.validation import normalize
from service.cli import main as cli
from service.engine.contract import EngineRejection, EventInput
from service.engine.fide import FideEngine
from service.engine.registry import default_registry
from service.rating import MemoryLedger, apply_message

ENGINE = FideEngine()


def rec(pid, rating=None, games=100, pool="standard", **kw):
    status = "established" if rating is not None else "unrated"
    return PlayerRecord(
        system="fide", pool=pool, id=pid, rating=rating, status=status, games=games, **kw
    )


def ev(eid, games, start="2025-11-03", end=None, period=None, pool="standard", births=None):
    """games: (a, b, a's score[, forfeit])."""
    ids = []
    for g in games:
        for pid in g[:2]:
            if pid not in ids:
                ids.append(pid)
    births = births or {}
    event = EventFinished(
        event_id=eid,
        system="fide",
        name=eid,
        start_date=dt.date.fromisoformat(start),
        end_date=dt.date.fromisoformat(end or start),
        rounds=len(games) or 1,
        players=[PlayerRef(id=p, birth_year=births.get(p)) for p in ids],
        games=[
            Game(round=i + 1, a=g[0], b=g[1], score=g[2], forfeit=len(g) > 3 and g[3])
            for i, g in enumerate(games)
        ],
        pool=pool,
        period=period,
    )
    return normalize(event)


class Office:
    """A pool's records and state, as the service keeps them."""

    def __init__(self, *records, pool="standard", closed_through=None):
        self.records = {r.id: r for r in records}
        self.pool = PoolState(system="fide", pool=pool, closed_through=closed_through)
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
        message = PeriodClosed(system="fide", pool=self.pool.pool, period=period)
        outcome = ENGINE.close_period(message, dict(self.records), self.pool, self.last_end)
        self.records.update({r.id: r for r in outcome.records})
        self.pool = outcome.pool
        assert [r.id for r in outcome.results] == sorted(r.id for r in outcome.results)
        return {r.id: r for r in outcome.results}


# --- ordinary changes (8.3) and the event output (F9) ------------------------------
def test_ordinary_period_change_and_event_output():
    # A 2000, K 20 (100 games, born 1980). PD by D: vs 2000 D 0 -> .50; vs 2100 D -100
    # -> 1 - .64 = .36; vs 1900 D 100 -> .64; vs 2200 D -200 -> 1 - .76 = .24; vs 1800
    # D 200 -> .76. Sum PD = 2.50; score 1 + .5 + 0 + 1 + 1 = 3.5; sum = +1.00;
    # change = 20 x 1.00 = +20 -> 2020
    office = Office(
        rec("A", 2000, birth_year=1980),
        rec("B", 2000),
        rec("C", 2100),
        rec("D", 1900),
        rec("E", 2200),
        rec("F", 1800),
    )
    out = office.rate(
        ev("e1", [("A", "B", 1), ("A", "C", 0.5), ("A", "D", 0), ("A", "E", 1), ("A", "F", 1)])
    )
    a = out["A"]
    assert (a.old_rating, a.new_rating, a.change) == (2000, 2000, None)
    d = a.details
    assert (d.k, d.event_sum_exact, d.event_change_exact, d.projected_rating, d.projection) == (
        20,
        "1",
        "20",
        2020,
        True,
    )
    assert (d.event_sum, d.event_change) == (1, 20)
    assert (a.event_games, a.score, a.expected) == (5, 3.5, 2.5)
    assert a.games == 105  # 100 rated games + the 5 of the open period
    listed = office.close("2025-11")
    assert (listed["A"].old_rating, listed["A"].new_rating, listed["A"].change) == (2000, 2020, 20)
    # The list's figures of the period: 5 games, score 3.5, expected (sum PD) 2.50; sum
    # 3.5 - 2.5 = 1 (100 hundredths: "1"), K 20 x 1 = "20".
    la = listed["A"]
    assert (la.event_games, la.score, la.expected) == (5, 3.5, 2.5)
    assert (la.details.period_sum_exact, la.details.period_change_exact) == ("1", "20")
    # B lost to A at D 0: 0 - .50 = -.50; K 20 -> -10 -> 1990
    assert listed["B"].new_rating == 1990
    assert office.records["A"].rating == 2020 and office.records["A"].games == 105
    assert office.pool.closed_through == "2025-11"


def test_rounding_half_away_from_zero_through_a_list():
    # 2500 v 2535 draw (both published 2400+: K 10). 2500: D -35 -> 1 - .55 = .45;
    # .5 - .45 = +.05; 10 x .05 = +0.5 -> +1 -> 2501. 2535: D 35 -> .55; -.05 -> -0.5 -> -1
    office = Office(rec("P", 2500), rec("Q", 2535))
    office.rate(ev("e1", [("P", "Q", 0.5)]))
    listed = office.close("2025-11")
    assert (listed["P"].new_rating, listed["Q"].new_rating) == (2501, 2534)


def test_period_change_is_rounded_once_not_per_event():
    # two events, the same draw each: sums .05 + .05 = .10; 10 x .10 = 1.0 -> +1 -> 2501
    # (rounding per event would give +1 +1 = 2502); Q: -.10 -> -1 -> 2534
    office = Office(rec("P", 2500), rec("Q", 2535))
    first = office.rate(ev("e1", [("P", "Q", 0.5)]))
    second = office.rate(ev("e2", [("P", "Q", 0.5)], start="2025-11-10"))
    assert (
        first["P"].details.event_change_exact == "1/2"
        and second["P"].details.event_change_exact == "1/2"
    )
    assert first["P"].details.event_change == 0.5
    # projection after the second event: 2500 + round(10 x .10) = 2501
    assert second["P"].details.projected_rating == 2501
    listed = office.close("2025-11")
    assert (listed["P"].new_rating, listed["Q"].new_rating) == (2501, 2534)


# --- 400-point rule as dated (F3) ----------------------------------------------------
def test_2650_exemption_from_2025_10_01():
    # start 2025-10-05: X 2700 (K 10) beats Y 1900 (K 20). X: true D 800 > 735 -> 1.00;
    # 1 - 1.00 = 0 -> 2700. Y: D -800 counts -400 -> 1 - .92 = .08; 0 - .08 = -.08;
    # 20 x -.08 = -1.6 -> -2 -> 1898
    office = Office(rec("X", 2700), rec("Y", 1900, birth_year=1980))
    office.rate(ev("e1", [("X", "Y", 1)], start="2025-10-05"))
    listed = office.close("2025-10")
    assert (listed["X"].new_rating, listed["Y"].new_rating) == (2700, 1898)


def test_plain_cap_before_2025_10_01():
    # start 2025-09-28, period 2025-10: D 800 -> 400 -> .92; X: +.08 x 10 = 0.8 -> +1 -> 2701
    office = Office(rec("X", 2700), rec("Y", 1900))
    office.rate(ev("e1", [("X", "Y", 1)], start="2025-09-28", end="2025-10-02"))
    assert office.close("2025-10")["X"].new_rating == 2701


def test_rapid_has_no_exemption():
    # rapid, start 2025-10-05: D 800 -> 400 -> .92; +.08 x 10 = 0.8 -> +1 -> 2701
    office = Office(rec("X", 2700, pool="rapid"), rec("Y", 1900, pool="rapid"), pool="rapid")
    office.rate(ev("e1", [("X", "Y", 1)], start="2025-10-05", pool="rapid"))
    assert office.close("2025-10")["X"].new_rating == 2701


def test_2649_capped_and_2650_exempt_through_a_list():
    # 2649 beats 2149 (D 500 -> 400 -> .92): +.08 x 10 = 0.8 -> +1 -> 2650.
    # 2650 beats 2150 (true D 500 -> band 485-517 -> .96): +.04 x 10 = 0.4 -> 0 -> 2650
    office = Office(rec("M", 2649), rec("m", 2149), rec("N", 2650), rec("n", 2150))
    office.rate(ev("e1", [("M", "m", 1), ("N", "n", 1)], start="2025-10-05"))
    listed = office.close("2025-10")
    assert (listed["M"].new_rating, listed["N"].new_rating) == (2650, 2650)


# --- K (F5, F6, F7) and the 700/n cap -----------------------------------------------
def test_junior_k_from_the_events_birth_year():
    # J 2000, 100 games, birth year 2008 given in the event: 2025 - 2008 = 17 <= 18 -> K 40.
    # beats 2000 (D 0): +.50 x 40 = +20 -> 2020
    office = Office(rec("J", 2000), rec("B", 2000))
    out = office.rate(ev("e1", [("J", "B", 1)], births={"J": 2008}))
    assert out["J"].details.k == 40
    assert office.records["J"].birth_year == 2008
    assert office.close("2025-11")["J"].new_rating == 2020


def test_fewer_than_30_games_k40_then_20():
    # G 1800, 29 games, born 1980: K 40; beats 1800: +.5 x 40 = +20 -> 1820; now 30
    # games -> K for the next period 20 (list output k)
    office = Office(rec("G", 1800, games=29, birth_year=1980), rec("B", 1800))
    office.rate(ev("e1", [("G", "B", 1)]))
    g = office.close("2025-11")["G"]
    assert (g.new_rating, g.games, g.details.k_applied, g.details.k) == (1820, 30, 40, 20)


def test_ever_2400_k10():
    # S 2350, ever_2400: K 10; beats 2350: +.5 x 10 = 5 -> 2355
    office = Office(rec("S", 2350, ever_2400=True), rec("B", 2350))
    office.rate(ev("e1", [("S", "B", 1)]))
    assert office.close("2025-11")["S"].new_rating == 2355


def test_import_k_override_then_derived():
    # imported K 15 on the current list: beats 2000: +.5 x 15 = 7.5 -> +8 (half away) ->
    # 2008; the override belonged to the old list: next K derived (100 games, born 1980) = 20
    office = Office(rec("K", 2000, k=15, birth_year=1980), rec("B", 2000))
    office.rate(ev("e1", [("K", "B", 1)]))
    k = office.close("2025-11")["K"]
    assert (k.new_rating, k.details.k_applied, k.details.k, office.records["K"].k) == (
        2008,
        15,
        20,
        None,
    )


def test_import_k_override_of_an_idle_player_ends_with_its_list():
    # I (2000, imported K 15, born 1980, 100 games) plays nothing in November; the November
    # close publishes a new list, whose K is derived again: 100 games, adult, never 2300 -> 20.
    # December: I beats 2000 (PD .50): +.5 x 20 = 10 -> 2010 (with the stale 15: 7.5 -> 2008).
    office = Office(rec("I", 2000, k=15, birth_year=1980), rec("B", 2000), rec("C", 2000))
    office.rate(ev("e1", [("B", "C", 0.5)]))
    assert "I" not in office.close("2025-11")  # not on the list of the period's active players
    assert office.records["I"].k is None
    office.rate(ev("e2", [("I", "B", 1)], start="2025-12-02"))
    i = office.close("2025-12")["I"]
    assert (i.details.k_applied, i.new_rating) == (20, 2010)


def _many_games(office, player, n, points_halves):
    games = []
    for i in range(n):
        office.records[f"o{i}"] = rec(f"o{i}", 2000)
        halves = (
            2
            if i < points_halves // 2
            else (1 if i == points_halves // 2 and points_halves % 2 else 0)
        )
        games.append((player, f"o{i}", halves / 2))
    return games


def test_700_cap_at_35_games():
    # 35 games vs 2000 (D 0, PD .50 each), 18.5 points: sum = 18.5 - 17.5 = 1.00;
    # K 20 x 35 = 700, not over -> 20 -> +20 -> 2020
    office = Office(rec("Z", 2000, birth_year=1980))
    office.rate(ev("e1", _many_games(office, "Z", 35, 37)))
    z = office.close("2025-11")["Z"]
    assert (z.details.k_applied, z.new_rating) == (20, 2020)


def test_700_cap_at_36_games():
    # 36 games, 19 points: sum = 19 - 18 = 1.00; 20 x 36 = 720 > 700 -> K = floor(700/36)
    # = 19 -> +19 -> 2019
    office = Office(rec("Z", 2000, birth_year=1980))
    office.rate(ev("e1", _many_games(office, "Z", 36, 38)))
    z = office.close("2025-11")["Z"]
    assert (z.details.k_applied, z.new_rating) == (19, 2019)


# --- 1400: a return to unrated (7.2.1) ------------------------------------------------
def test_1400_published_1399_unrated():
    # 1410 loses to 1410: -.50 x 20 = -10 -> 1400 (published). 1409 loses to 1409: -10 ->
    # 1399 < 1400 -> unrated on the new list
    office = Office(rec("H", 1410), rec("h", 1410), rec("L", 1409), rec("l", 1409))
    office.rate(ev("e1", [("H", "h", 0), ("L", "l", 0)]))
    listed = office.close("2025-11")
    assert listed["H"].new_rating == 1400
    low = listed["L"]
    assert (low.old_rating, low.new_rating, low.change, low.status) == (1409, None, None, "unrated")
    assert office.records["L"].rating is None and office.records["L"].status == "unrated"


# --- F2, forfeits ---------------------------------------------------------------------
def test_games_against_unrated_never_rated_for_the_rated_player():
    # R 2000 beats unrated U: nothing for R (F2); U pools one game vs 2000 (0 points)
    office = Office(rec("R", 2000))
    out = office.rate(ev("e1", [("R", "U", 1)]))
    assert (out["R"].event_games, out["R"].details.games_counted) == (0, 0)
    assert out["U"].event_games == 1
    listed = office.close("2025-11")
    assert "R" not in listed and office.records["R"].rating == 2000
    # U is listed as active, still unrated; this zero-score event is U's first: disregarded
    u = listed["U"].details.initial
    assert (listed["U"].new_rating, u.games, u.disregarded_event) == (None, 0, "e1")


def test_forfeits_and_unrated_pairs_are_not_rated():
    office = Office(rec("R", 2000), rec("S", 2000))
    out = office.rate(ev("e1", [("R", "S", 1, True), ("U", "V", 1)]))
    assert [out[p].event_games for p in "RSUV"] == [0, 0, 0, 0]
    assert office.close("2025-11") == {}


# --- initial ratings (8.2) through the lists -------------------------------------------
def test_initial_rating_real_case_through_the_cli_path():
    # 3/5 vs 1900 x4 + 1907 (sum 9507): 1922 (see test_fide_rules); K next 40 (5 games)
    office = Office(
        *[rec(p, r) for p, r in [("a", 1900), ("b", 1900), ("c", 1900), ("d", 1900), ("e", 1907)]]
    )
    out = office.rate(
        ev("e1", [("u", "a", 1), ("u", "b", 1), ("u", "c", 1), ("u", "d", 0), ("u", "e", 0)])
    )
    assert (out["u"].details.projected_rating, out["u"].details.projection) == (1922, True)
    u = office.close("2025-11")["u"]
    assert (u.old_rating, u.new_rating, u.status, u.games, u.details.k) == (
        None,
        1922,
        "established",
        5,
        40,
    )
    assert office.records["u"].rating == 1922


def test_initial_rating_pooled_across_two_periods():
    # October: 2/4 vs 2000 -> 4 games < 5, not published. November: draw vs 2000 ->
    # 5 games, 2.5 points: Ra = (10000 + 3600)/7 = 1942.86; p = 3.5/7 = .50 -> dp 0;
    # Ru = 1942.86 -> 1943
    office = Office(*[rec(f"r{i}", 2000) for i in range(5)])
    office.rate(
        ev(
            "oct",
            [("u", "r0", 1), ("u", "r1", 1), ("u", "r2", 0), ("u", "r3", 0)],
            start="2025-10-04",
        )
    )
    assert office.close("2025-10")["u"].new_rating is None
    nov = office.rate(ev("nov", [("u", "r4", 0.5)], start="2025-11-04"))["u"]
    # The event output counts November's pooled games only: 1 game, 0.5 points.
    assert (nov.event_games, nov.score, nov.details.period_games) == (1, 0.5, 1)
    assert nov.details.games[0].score == 0.5
    u = office.close("2025-11")["u"]
    assert u.new_rating == 1943
    # The list's figures of the period: November's game only (the 5 pooled are in `initial`).
    assert (u.event_games, u.score, u.details.games_counted, u.details.period_games) == (
        1,
        0.5,
        1,
        1,
    )
    # Published for the list in force from 2025-12, after the (unrated) 2025-11 one.
    assert [(x.period, x.rating) for x in office.records["u"].fide.published] == [
        ("2025-11", None),
        ("2025-12", 1943),
    ]


def test_zero_first_event_disregarded_whatever_the_arrival_order():
    # first event (starts 2025-11-01): 0/2 vs 2000 -> disregarded; second (2025-11-10):
    # 3/5 vs 9507 -> 1922. The second arrives first: the first is still the earliest start.
    office = Office(
        *[
            rec(p, r)
            for p, r in [
                ("a", 1900),
                ("b", 1900),
                ("c", 1900),
                ("d", 1900),
                ("e", 1907),
                ("z", 2000),
            ]
        ]
    )
    office.rate(
        ev(
            "second",
            [("u", "a", 1), ("u", "b", 1), ("u", "c", 1), ("u", "d", 0), ("u", "e", 0)],
            start="2025-11-10",
        )
    )
    office.rate(ev("first", [("u", "z", 0), ("u", "a", 0)], start="2025-11-01"))
    u = office.close("2025-11")["u"]
    assert (u.new_rating, u.details.initial.disregarded_event, u.games) == (1922, "first", 5)


def test_initial_below_1400_keeps_pooling():
    # 0.5/5 vs 1400: 1284 < 1400 (see test_fide_rules): not published, the games stay pooled
    office = Office(*[rec(f"r{i}", 1400) for i in range(5)])
    office.rate(ev("e1", [("u", f"r{i}", 0.5 if i == 0 else 0) for i in range(5)]))
    u = office.close("2025-11")["u"]
    assert (u.new_rating, u.details.initial.rating, u.details.initial.published) == (
        None,
        1284,
        False,
    )
    assert len(office.records["u"].fide.initial_games) == 5


def test_games_of_a_later_period_rated_with_the_new_initial_rating():
    # u: 3/5 vs 9507 in October -> 1922 when October closes. Event Y started 2025-10-29,
    # ends 2025-11-02 (period November), rated before October closed: u beat r 2000.
    # Y is rated for u with the new rating: D = 1922 - 2000 = -78 -> 1 - .61 = .39;
    # 1 - .39 = +.61; K 40 (5 games), 40 x 1 = 40 <= 700; 40 x .61 = 24.4 -> +24 -> 1946.
    # r counted u as unrated (F2): unchanged.
    office = Office(
        *[
            rec(p, r)
            for p, r in [
                ("a", 1900),
                ("b", 1900),
                ("c", 1900),
                ("d", 1900),
                ("e", 1907),
                ("r", 2000),
            ]
        ]
    )
    office.rate(
        ev(
            "X",
            [("u", "a", 1), ("u", "b", 1), ("u", "c", 1), ("u", "d", 0), ("u", "e", 0)],
            start="2025-10-05",
        )
    )
    office.rate(ev("Y", [("u", "r", 1)], start="2025-10-29", end="2025-11-02"))
    assert office.close("2025-10")["u"].new_rating == 1922
    # Y's game now counts for u in November: one game, +.61, 1 point (2 halves).
    (sums,) = office.records["u"].fide.periods
    assert (sums.period, sums.games, sums.sum_hundredths, sums.points_halves) == (
        "2025-11",
        1,
        61,
        2,
    )
    listed = office.close("2025-11")
    assert (listed["u"].old_rating, listed["u"].new_rating, listed["u"].details.k_applied) == (
        1922,
        1946,
        40,
    )
    assert "r" not in listed


# --- F1: two periods, the list in force at the event's start -------------------------
def test_player_across_two_periods_uses_the_list_at_each_events_start():
    # October: A 2000 beats B 2000: A +.5 x 20 = +10 -> 2010, B -10 -> 1990.
    # November, event 1 started 2025-10-30 (October list: 2000 v 2000, PD .50): draw -> 0.
    # Event 2 started 2025-11-03 (November list: 2010 v 1990, D 20 -> .53): draw ->
    # A .5 - .53 = -.03, B +.03. A: 20 x -.03 = -0.6 -> -1 -> 2009; B: +0.6 -> +1 -> 1991
    office = Office(rec("A", 2000, birth_year=1980), rec("B", 2000, birth_year=1980))
    office.rate(ev("oct", [("A", "B", 1)], start="2025-10-10"))
    assert office.close("2025-10")["A"].new_rating == 2010
    first = office.rate(ev("n1", [("A", "B", 0.5)], start="2025-10-30", end="2025-11-01"))
    second = office.rate(ev("n2", [("A", "B", 0.5)], start="2025-11-03"))
    assert (first["A"].details.rating_used, second["A"].details.rating_used) == (2000, 2010)
    assert (
        first["A"].old_rating,
        first["A"].details.event_sum_exact,
        second["A"].details.event_sum_exact,
    ) == (2010, "0", "-3/100")
    listed = office.close("2025-11")
    assert (listed["A"].old_rating, listed["A"].new_rating, listed["B"].new_rating) == (
        2010,
        2009,
        1991,
    )
    assert [(p.period, p.rating) for p in office.records["A"].fide.published] == [
        ("2025-10", 2000),
        ("2025-11", 2010),
        ("2025-12", 2009),
    ]


# --- refusals -----------------------------------------------------------------------------
def test_event_for_a_closed_period_is_refused():
    office = Office(rec("A", 2000), rec("B", 2000), closed_through="2025-11")
    for start in ("2025-11-20", "2025-10-20"):
        with pytest.raises(EngineRejection) as info:
            office.rate(ev("late", [("A", "B", 1)], start=start))
        assert (info.value.reason, info.value.path) == ("period_closed", "$.period")


def test_closing_a_closed_period_is_refused():
    office = Office(rec("A", 2000), closed_through="2025-11")
    with pytest.raises(EngineRejection) as info:
        office.close("2025-11")
    assert (info.value.reason, info.value.path) == ("period_closed", "$.period")


def test_event_whose_start_list_is_not_published_is_refused():
    # closed through 2025-10: the list in force in December comes when November closes
    office = Office(rec("A", 2000), rec("B", 2000), closed_through="2025-10")
    with pytest.raises(EngineRejection) as info:
        office.rate(ev("dec", [("A", "B", 1)], start="2025-12-01"))
    assert (info.value.reason, info.value.path) == ("unratable", "$.start_date")
    # The list in force from 2025-12 is the one published when 2025-11 (the month before) closes.
    assert "published when period 2025-11 closes" in info.value.message


def test_closing_past_an_open_period_with_games_is_refused():
    office = Office(rec("A", 2000), rec("B", 2000))
    office.rate(ev("oct", [("A", "B", 1)], start="2025-10-10"))
    with pytest.raises(EngineRejection) as info:
        office.close("2025-11")
    assert info.value.reason == "period_not_due" and "2025-10" in info.value.message


# --- performance and norms in the event output --------------------------------------------
def test_event_output_performance_and_gm_norm():
    # T 2500 scores 6.5/9 vs nine 2450: Rp = 2450 + dp(.72) 166 = 2616; norms GM, IM, WGM, WIM
    office = Office(rec("T", 2500), *[rec(f"g{i}", 2450) for i in range(9)])
    out = office.rate(ev("e1", [("T", f"g{i}", 1 if i < 4 else 0.5) for i in range(9)]))
    t = out["T"]
    assert (t.performance, t.details.performance) == (2616.0, 2616)
    assert [n.title for n in t.details.norms] == ["GM", "IM", "WGM", "WIM"]
    # an opponent with 0.5/1 vs 2500: Rp = 2500 + dp(.50) 0 = 2500; 1 game: no norm
    assert (out["g5"].performance, out["g5"].details.norms) == (2500.0, [])


# --- chunks of 100 (LIST_CHUNK) and the CLI ------------------------------------------------
def test_a_list_of_2500_players_comes_in_25_chunks():
    ledger = MemoryLedger([rec(f"p{i:04d}", 2000) for i in range(2500)])
    registry = default_registry()
    games = [(f"p{i:04d}", f"p{i + 1:04d}", 0.5) for i in range(0, 2500, 2)]
    apply_message(ledger, ev("big", games), registry, "s1")
    applied = apply_message(
        ledger,
        PeriodClosed(system="fide", pool="standard", period="2025-11", ruleset="fide-2024"),
        registry,
        "s2",
    )
    assert [(o.chunk, o.chunks, len(o.players)) for o in applied.outputs] == [
        (n, 25, 100) for n in range(1, 26)
    ]
    assert (
        applied.outputs[0].players[0].id == "p0000"
        and applied.outputs[24].players[-1].id == "p2499"
    )


def test_cli_rates_events_and_closes_the_period(tmp_path, capsys):
    # A 2000 (K 20) beats B 2000: event output keeps 2000, projects 2010; the list: A 2010,
    # B 1990; u (3/5 vs 9507) gets 1922
    events = tmp_path / "events.jsonl"
    ratings = tmp_path / "ratings.jsonl"
    players = [
        ("A", 2000),
        ("B", 2000),
        ("a", 1900),
        ("b", 1900),
        ("c", 1900),
        ("d", 1900),
        ("e", 1907),
    ]
    ratings.write_text(
        "".join(
            json.dumps(
                {
                    "system": "fide",
                    "pool": "standard",
                    "id": p,
                    "rating": r,
                    "status": "established",
                    "games": 100,
                    "birth_year": 1980,
                }
            )
            + "\n"
            for p, r in players
        )
    )
    first = {
        "schema": "event.finished/v1",
        "event_id": "nov-1",
        "system": "fide",
        "name": "Club",
        "start_date": "2025-11-01",
        "end_date": "2025-11-02",
        "rounds": 1,
        "players": [{"id": "A"}, {"id": "B"}],
        "games": [{"round": 1, "a": "A", "b": "B", "score": 1}],
    }
    second = {
        "schema": "event.finished/v1",
        "event_id": "nov-2",
        "system": "fide",
        "name": "Open",
        "start_date": "2025-11-08",
        "end_date": "2025-11-09",
        "rounds": 5,
        "players": [{"id": p} for p in "uabcde"],
        "games": [
            {"round": i + 1, "a": "u", "b": p, "score": s}
            for i, (p, s) in enumerate(zip("abcde", [1, 1, 1, 0, 0]))
        ],
    }
    closed = {
        "schema": "period.closed/v1",
        "system": "fide",
        "pool": "standard",
        "period": "2025-11",
    }
    events.write_text("".join(json.dumps(m) + "\n" for m in (first, second, closed)))
    assert cli.main(["rate", str(events), "--ratings", str(ratings)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(m["kind"], m.get("event_id"), m["period"]) for m in lines] == [
        ("event", "nov-1", "2025-11"),
        ("event", "nov-2", "2025-11"),
        ("list", None, "2025-11"),
    ]
    a = lines[0]["players"][0]
    assert (a["old_rating"], a["new_rating"], a["change"]) == (2000, 2000, None)
    assert (
        a["details"]["system"],
        a["details"]["event_change"],
        a["details"]["projected_rating"],
    ) == (
        "fide",
        10,
        2010,
    )
    listed = {
        p["id"]: (p["old_rating"], p["new_rating"], p["change"], p["status"])
        for p in lines[2]["players"]
    }
    assert listed == {
        "A": (2000, 2010, 10, "established"),
        "B": (2000, 1990, -10, "established"),
        "u": (None, 1922, None, "established"),
    }
    assert lines[2]["ruleset"] == "fide-2024" and (lines[2]["chunk"], lines[2]["chunks"]) == (1, 1)


def test_event_started_before_the_initial_list_but_rated_after_it():
    # As the conversion case, but event Y (started 2025-10-29, period November) arrives
    # after October closed: u is rated in it with the new 1922 (D -78 -> .39; +.61);
    # r counts u as unrated on the list in force at the start (F1, F2).
    # Close November: 40 x .61 = 24.4 -> +24 -> 1946
    office = Office(
        *[
            rec(p, r)
            for p, r in [
                ("a", 1900),
                ("b", 1900),
                ("c", 1900),
                ("d", 1900),
                ("e", 1907),
                ("r", 2000),
            ]
        ]
    )
    office.rate(
        ev(
            "X",
            [("u", "a", 1), ("u", "b", 1), ("u", "c", 1), ("u", "d", 0), ("u", "e", 0)],
            start="2025-10-05",
        )
    )
    assert office.close("2025-10")["u"].new_rating == 1922
    out = office.rate(ev("Y", [("u", "r", 1)], start="2025-10-29", end="2025-11-02"))
    assert (
        out["u"].details.rating_used,
        out["u"].details.event_sum_exact,
        out["u"].event_games,
    ) == (1922, "61/100", 1)
    assert out["u"].details.event_sum == 0.61
    assert out["r"].event_games == 0
    assert office.close("2025-11")["u"].new_rating == 1946


# --- the figures of a list and of an event output at their edges ---------------------------
def test_a_close_keeps_the_sums_of_the_later_open_period():
    # A 2000 beats B 2000 in November and again in December (both K 20: born 1980, 100
    # games), December rated before November closes. Each: D 0, PD .50, +.50 x 20 = +10.
    office = Office(rec("A", 2000, birth_year=1980), rec("B", 2000, birth_year=1980))
    office.rate(ev("nov", [("A", "B", 1)], start="2025-11-03"))
    office.rate(ev("dec", [("A", "B", 1)], start="2025-12-03"))
    assert office.close("2025-11")["A"].new_rating == 2010
    assert [s.period for s in office.records["A"].fide.periods] == ["2025-12"]
    listed = office.close("2025-12")
    assert (listed["A"].old_rating, listed["A"].new_rating) == (2010, 2020)
    assert (listed["B"].old_rating, listed["B"].new_rating) == (1990, 1980)


def test_a_player_off_the_list_with_counted_games_changes_nothing():
    # An import took X off the list after one game of November was counted (sum +.50):
    # no rating to change; the list's output counts nothing and the sums are dropped.
    state = FideState(periods=[PeriodSums(period="2025-11", sum_hundredths=50, games=1)])
    office = Office(rec("X", None, fide=state))
    x = office.close("2025-11")["X"]
    assert (x.old_rating, x.new_rating, x.event_games, x.score) == (None, None, 0, 0.0)
    assert (x.details.games_counted, x.details.period_games) == (0, 0)
    assert office.records["X"].fide.periods == []


def test_ever_2300_and_ever_2400_from_exactly_2300_and_2400():
    # K 20 each (born 1980, 100 games, under 2400). P 2290 beats Q 2290: +.50 x 20 = +10
    # -> 2300; R 2390 beats S 2390: -> 2400 (F6: K 10 from 2400 reached once).
    office = Office(*[rec(p, r, birth_year=1980) for p, r in (("P", 2290), ("Q", 2290))])
    office.records.update({p: rec(p, 2390, birth_year=1980) for p in "RS"})
    office.rate(ev("e1", [("P", "Q", 1), ("R", "S", 1)]))
    listed = office.close("2025-11")
    assert (listed["P"].new_rating, listed["R"].new_rating) == (2300, 2400)
    p, r = office.records["P"], office.records["R"]
    assert (p.ever_2300, p.ever_2400) == (True, False)
    assert (r.ever_2300, r.ever_2400) == (True, True)
    assert listed["R"].details.k == 10  # the K of December: ever 2400


def test_next_k_is_the_k_of_the_next_month():
    # J born 2007, 200 games, 2000, draws with X 2000: no change. The list closing 2025-11
    # opens 2025-12: 2025 - 2007 = 18, a junior under 2300: K 40 (January 2026 would be
    # 19: K 20).
    office = Office(rec("J", 2000, games=200, birth_year=2007), rec("X", 2000, birth_year=1980))
    office.rate(ev("e1", [("J", "X", 0.5)]))
    assert office.close("2025-11")["J"].details.k == 40


def test_projected_rating_of_exactly_1400_is_shown():
    # 1410 loses to 1410 (K 20): -.50 x 20 = -10: the projection is 1400, published (7.2.1).
    office = Office(rec("H", 1410), rec("h", 1410))
    out = office.rate(ev("e1", [("H", "h", 0)]))
    assert out["H"].details.projected_rating == 1400


def test_rated_player_with_no_rated_game_has_a_zero_period():
    # R 2000 beats unrated U: no rated game for R (F2), no sums: the period's sum is 0
    # ("0"), 0 games, and the projection is R's rating.
    office = Office(rec("R", 2000))
    d = office.rate(ev("e1", [("R", "U", 1)]))["R"].details
    assert (d.period_sum, d.period_sum_exact, d.period_games) == (0, "0", 0)
    assert d.projected_rating == 2000


def test_k_cap_counts_the_games_of_the_same_period_only():
    # Z (K 20) plays 30 games in November, then 6 more in November and 6 in December.
    # November's second event: 30 + 6 = 36 games, 20 x 36 = 720 > 700: K floor(700 / 36)
    # = 19. December's: 6 games, 120: K 20 (November's 30 are another period).
    office = Office(rec("Z", 2000, birth_year=1980))
    games = _many_games(office, "Z", 42, 42)
    office.rate(ev("n1", games[:30], start="2025-11-03"))
    assert office.rate(ev("n2", games[30:36], start="2025-11-20"))["Z"].details.k == 19
    assert office.rate(ev("d1", games[36:], start="2025-12-03"))["Z"].details.k == 20


def test_k_of_a_first_event_of_35_games_is_not_capped():
    # 35 games: 20 x 35 = 700, not over 700: K 20 in the event output, for a record with
    # no FIDE state and for one with lists but no sums in the period.
    office = Office(rec("Z", 2000, birth_year=1980))
    assert office.rate(ev("e1", _many_games(office, "Z", 35, 35)))["Z"].details.k == 20
    office.close("2025-11")
    games = _many_games(office, "Z", 35, 35)
    assert office.rate(ev("e2", games, start="2025-12-03"))["Z"].details.k == 20


def test_norms_of_an_unrated_player_count_each_unrated_opponent_once():
    # U (unrated) beats eight 2700s and unrated V: 9 games, 9 points (100 %, dp +800);
    # 1.4.6: V counts as 1400, raised to the title's floor (GM 2200): Ra = (21600 + 2200) / 9
    # = 2644.4 -> 2644, Rp 3444. U's norm checks: 9 games, 1 unrated opponent.
    office = Office(*[rec(f"t{i}", 2700) for i in range(8)])
    out = office.rate(ev("e1", [("U", f"t{i}", 1) for i in range(8)] + [("U", "V", 1)]))
    gm = out["U"].details.norms[0]
    assert (gm.title, gm.games, gm.unrated_opponents, gm.average_opponent) == ("GM", 9, 1, 2644)
    # The same for a rated player T 2500 in U's place.
    office = Office(rec("T", 2500), *[rec(f"t{i}", 2700) for i in range(8)])
    out = office.rate(ev("e1", [("T", f"t{i}", 1) for i in range(8)] + [("T", "V", 1)]))
    gm = out["T"].details.norms[0]
    assert (gm.title, gm.games, gm.unrated_opponents, gm.average_opponent) == ("GM", 9, 1, 2644)
