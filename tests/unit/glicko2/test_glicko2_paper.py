"""Glickman's worked example ("Example of the Glicko-2 system"): the player 1500 / RD 200 /
volatility 0.06, tau 0.5, beats 1400 / RD 30 and loses to 1550 / RD 100 and 1700 / RD 300
in one rating period (docs/rules/glicko2.md G2-1, G2-3).

The paper prints its intermediates rounded (g and E in its table, v = 1.7785,
Delta = -0.4834, mu' = -0.2069, phi' = 0.8722) and results 1464.06 / 151.52 / 0.05999 carried
from them; the engine never rounds (G2-3) and gives 1464.0507 / 151.5165 / 0.0599960.
"""

from __future__ import annotations

import datetime as dt
import math

import msgspec
import pytest
from glicko2_reference import glicko2_period

from schemas.events import EventFinished, PeriodClosed
from schemas.glicko2 import Glicko2Details
from schemas.records import PlayerRecord, PoolState
from service.engine.contract import EventInput
from service.engine.glicko2.algorithm import Opponent, g, rate_period, to_mu, to_phi
from service.engine.registry import default_registry

REGISTRY = default_registry()
PLAYERS = {"p": (1500, 200.0), "a": (1400, 30.0), "b": (1550, 100.0), "c": (1700, 300.0)}
GAMES = [("a", 1.0), ("b", 0.0), ("c", 0.0)]


def record(pid: str, rating: int, rd: float) -> PlayerRecord:
    return PlayerRecord(
        system="glicko2",
        pool="standard",
        id=pid,
        rating=rating,
        rd=rd,
        volatility=0.06,
        status="established",
    )


def paper_event(ruleset: str) -> EventFinished:
    return msgspec.convert(
        {
            "schema": "event.finished/v1",
            "event_id": "paper",
            "system": "glicko2",
            "name": "Glickman's example",
            "start_date": "2025-01-04",
            "end_date": "2025-01-05",
            "rounds": 3,
            "players": [{"id": pid} for pid in PLAYERS],
            "games": [
                {"round": i + 1, "a": "p", "b": o, "score": s} for i, (o, s) in enumerate(GAMES)
            ],
            "pool": "standard",
            "ruleset": ruleset,
            "period": "2025-01" if ruleset == "glicko2" else None,
        },
        EventFinished,
    )


RECORDS = {pid: record(pid, r, rd) for pid, (r, rd) in PLAYERS.items()}
POOL = PoolState(system="glicko2", pool="standard")


def figures():
    mu, phi = to_mu(1500), to_phi(200)
    opponents = [Opponent(to_mu(PLAYERS[o][0]), to_phi(PLAYERS[o][1]), s) for o, s in GAMES]
    return rate_period(mu, phi, 0.06, opponents, 0.5)


def test_the_intermediates_to_the_paper_s_printed_precision():
    f = figures()
    # The paper's table: g(phi_j) 0.9955, 0.9531, 0.7242; E 0.639, 0.432, 0.303.
    assert [round(t.g, 4) for t in f.games] == [0.9955, 0.9531, 0.7242]
    assert [round(t.expected, 3) for t in f.games] == [0.639, 0.432, 0.303]
    # v and Delta: the paper carries its table's rounded g and E:
    # v = 1 / (0.9955^2 0.639 0.361 + 0.9531^2 0.432 0.568 + 0.7242^2 0.303 0.697) = 1.7785
    # Delta = v (0.9955 (1 - 0.639) + 0.9531 (0 - 0.432) + 0.7242 (0 - 0.303)) = -0.4834
    table = [(0.9955, 0.639, 1), (0.9531, 0.432, 0), (0.7242, 0.303, 0)]
    v = 1 / sum(gj * gj * e * (1 - e) for gj, e, _ in table)
    delta = v * sum(gj * (s - e) for gj, e, s in table)
    assert (round(v, 4), round(delta, 4)) == (1.7785, -0.4834)
    # Unrounded, the same steps give v = 1.77898, Delta = -0.48393: the table's rounding.
    assert (round(f.v, 5), round(f.delta, 5)) == (1.77898, -0.48393)
    # Steps 5-7: sigma' = 0.05999(6), phi* = 1.1528, phi' = 0.8722, mu' = -0.2069.
    assert (round(f.mu, 4), round(f.phi, 4), round(f.phi_star, 4)) == (-0.2069, 0.8722, 1.1529)
    assert round(f.volatility, 5) == 0.06  # 0.0599960, printed 0.05999 by the paper
    assert g(to_phi(30)) == f.games[0].g


def test_the_results_exactly_and_as_published():
    outcome = REGISTRY.get("glicko2", "glicko2-event").rate_event(
        EventInput(event=paper_event("glicko2-event"), records=RECORDS, pool=POOL)
    )
    p = outcome.results[0]
    d = p.details
    assert isinstance(d, Glicko2Details)
    assert (round(d.new_rating_unrounded, 4), round(d.new_rd_unrounded, 4)) == (1464.0507, 151.5165)
    assert round(d.new_volatility_unrounded, 7) == 0.0599960
    # Published for people: 2, 2 and 5 decimals of the exact values (the paper's 1464.06
    # comes from its rounded intermediates); the whole rating 1464, change -36.
    assert (d.new_rating, d.new_rd, d.new_volatility) == (1464.05, 151.52, 0.06)
    assert (p.old_rating, p.new_rating, p.change, p.status) == (1500, 1464, -36, "provisional")
    assert [o.opponent for o in d.opponents] == ["a", "b", "c"]
    # Expected score: 0.6395 + 0.4318 + 0.3028 = 1.3741 -> 1.37.
    assert p.expected == 1.37
    stored = outcome.records[0]
    assert stored.glicko2 is not None and stored.glicko2.rating == d.new_rating_unrounded
    assert (stored.rd, stored.volatility) == (d.new_rd_unrounded, d.new_volatility_unrounded)


def test_the_period_close_gives_the_same_as_the_event_period():
    engine = REGISTRY.get("glicko2", "glicko2")
    counted = engine.rate_event(
        EventInput(event=paper_event("glicko2"), records=RECORDS, pool=POOL)
    )
    # Counted, not rated: the ratings stay until the close.
    assert all(r.change == 0 for r in counted.results)
    records = {r.id: r for r in counted.records}
    close = PeriodClosed(system="glicko2", period="2025-01", pool="standard")
    listed = engine.close_period(close, records, POOL, dt.date(2025, 1, 5))
    assert listed.pool.closed_through == "2025-01"
    by_id = {r.id: r for r in listed.results}
    assert by_id["p"].details.new_rating_unrounded == pytest.approx(1464.0506705, abs=1e-6)
    # Every player against the reference implementation of the paper.
    for pid, (rating, rd) in PLAYERS.items():
        games = (
            [(PLAYERS["p"][0], PLAYERS["p"][1], 1 - s) for o, s in GAMES if o == pid]
            if pid != "p"
            else [(PLAYERS[o][0], PLAYERS[o][1], s) for o, s in GAMES]
        )
        want = glicko2_period(rating, rd, 0.06, games)
        d = by_id[pid].details
        got = (d.new_rating_unrounded, d.new_rd_unrounded, d.new_volatility_unrounded)
        assert got == pytest.approx(want, rel=1e-12)
    assert not any(r.glicko2.games for r in listed.records)


def test_an_idle_player_gets_only_step_6_at_the_close():
    engine = REGISTRY.get("glicko2", "glicko2")
    idle = record("idle", 1600, 200.0)
    counted = engine.rate_event(
        EventInput(event=paper_event("glicko2"), records=RECORDS, pool=POOL)
    )
    records = {r.id: r for r in counted.records} | {"idle": idle}
    close = PeriodClosed(system="glicko2", period="2025-01", pool="standard")
    listed = engine.close_period(close, records, POOL, dt.date(2025, 1, 5))
    result = next(r for r in listed.results if r.id == "idle")
    # phi = 200 / 173.7178 = 1.151292; phi* = sqrt(1.151292^2 + 0.06^2) = 1.152855;
    # RD' = 173.7178 x 1.152855 = 200.2714; rating and volatility stay.
    assert result.details.new_rd == 200.27
    assert result.details.new_rd_unrounded == pytest.approx(
        173.7178 * math.sqrt((200 / 173.7178) ** 2 + 0.0036)
    )
    assert (result.old_rating, result.new_rating, result.event_games) == (1600, 1600, 0)
