"""The CFC engine as the service uses it: forfeits and byes, unratable events, records,
pools, the registry, and the offline `rate` command end to end (ruleset cfc-2009)."""

from __future__ import annotations

import json

import pytest

from schemas.cfc import CfcDetails
from schemas.events import PeriodClosed
from schemas.records import PlayerRecord, PoolState
from schemas.validation import decode_input
from service.cli.main import main
from service.engine.cfc import CfcEngine
from service.engine.contract import EngineRejection, EventInput
from service.engine.registry import default_registry

from .builders import est, event_message, new, prov, rate


def test_forfeits_and_byes_are_not_rated_and_not_in_n():
    # a beats b (r1, rated): diff 0 -> .50: a 1516, b 1484.
    # r2: c wins against a by forfeit (not rated), b has a bye (not rated).
    # c played no rated game: record unchanged. a: N = 1, S = 1 (the forfeit is not in S).
    r = rate(
        {"a": est(1500), "b": est(1500), "c": est(1500)},
        [("a", "b", 1, 1)],
        forfeits=[("c", "a", 1, 2)],
        byes=[("b", 1, 2)],
    )
    assert (r.new("a"), r.new("b")) == (1516, 1484)
    assert (r.result["a"].event_games, r.result["a"].score) == (1, 1.0)
    c = r.result["c"]
    assert (c.new_rating, c.change, c.event_games, c.games, c.details.method) == (
        1500,
        0,
        0,
        100,
        "none",
    )
    assert r.record["c"] == PlayerRecord(
        system="cfc",
        pool="regular",
        id="c",
        rating=1500,
        status="established",
        games=100,
        highest=1500,
    )


def test_a_player_without_a_rated_game_publishes_no_figures():
    # As above: c's only game is a forfeit win (not rated, not in S). 717 rates c in no step:
    # no game, so W = L = D = 0 and a score of 0 in rated games; no performance, AR, K, Sx;
    # no 714c bonus (C4 counts rated games: none), so 0 and "0"; no result bonus; no floor.
    r = rate(
        {"a": est(1500), "b": est(1500), "c": est(1500)},
        [("a", "b", 1, 1)],
        forfeits=[("c", "a", 1, 2)],
    )
    c = r.result["c"]
    assert (c.event_games, c.score, type(c.score)) == (0, 0.0, float)
    assert c.details == CfcDetails(
        method="none",
        step="none",
        became_established=False,
        wins=0,
        losses=0,
        draws=0,
        performance=None,
        performance_exact=None,
        ar=None,
        ar_exact=None,
        pass_1=None,
        pass_1_exact=None,
        provisional_sum=None,
        provisional_sum_exact=None,
        k=None,
        expected_hundredths=None,
        rating_before_bonus=None,
        rating_before_bonus_exact=None,
        rule_2199=False,
        participation_bonus=0.0,
        participation_bonus_exact="0",
        result_percent=None,
        highest_before=None,
        result_bonus=0,
        rating_before_floor=None,
        floor=None,
        opponents=[],
    )


def test_new_player_without_a_rated_game_stays_unrated():
    r = rate(
        {"a": est(1500), "b": est(1500), "x": new()},
        [("a", "b", 0.5, 1)],
        forfeits=[("x", "a", 1, 2)],
    )
    x = r.result["x"]
    assert (x.old_rating, x.new_rating, x.change, x.status, x.games) == (
        None,
        None,
        None,
        "unrated",
        0,
    )


def test_results_are_in_the_order_of_the_event_players():
    r = rate({"z": est(1500), "a": est(1500), "m": new()}, [("a", "z", 1, 1)])
    assert [p.id for p in r.outcome.results] == ["z", "a", "m"]
    assert [p.id for p in r.outcome.records] == ["z", "a", "m"]


def test_event_with_only_unrated_players_is_unratable():
    with pytest.raises(EngineRejection) as exc:
        rate({"x": new(), "y": new()}, [("x", "y", 1)])
    assert exc.value.reason == "unratable" and "AR" in exc.value.message


def test_event_whose_rated_players_only_forfeited_is_unratable():
    # The established player's only game is a forfeit: no rated player played, so no AR.
    with pytest.raises(EngineRejection) as exc:
        rate(
            {"e": est(1500), "x": new(), "y": new()},
            [("x", "y", 1, 1)],
            forfeits=[("e", "x", 1, 2)],
        )
    assert exc.value.reason == "unratable"


def test_event_with_no_rated_game_is_unratable():
    with pytest.raises(EngineRejection) as exc:
        rate({"a": est(1500), "b": est(1500)}, [], forfeits=[("a", "b", 1, 1)])
    assert exc.value.reason == "unratable" and exc.value.path == "$.games"


@pytest.mark.parametrize(
    "record",
    [
        {"status": "established", "games": 50},  # no rating
        {"status": "unrated", "rating": 1500},
        {"status": "provisional", "rating": 1500, "games": 0},
    ],
)
def test_inconsistent_record_is_unratable(record):
    event = decode_input(event_message(["a", "b"], [("a", "b", 1)]))
    records = {
        "a": PlayerRecord(system="cfc", pool="regular", id="a", **record),
        "b": PlayerRecord(
            system="cfc", pool="regular", id="b", rating=1500, status="established", games=50
        ),
    }
    with pytest.raises(EngineRejection) as exc:
        CfcEngine().rate_event(EventInput(event, records, PoolState(system="cfc", pool="regular")))
    assert (
        exc.value.reason == "unratable"
        and exc.value.path == "$.players[0]"
        and "'a'" in exc.value.message
    )


def test_cfc_has_no_periods_to_close():
    with pytest.raises(EngineRejection) as exc:
        CfcEngine().close_period(
            PeriodClosed(system="cfc", period="2009-05"),
            {},
            PoolState(system="cfc", pool="regular"),
        )
    assert exc.value.reason == "unratable" and exc.value.path == "$.system"


def test_highest_rating_is_kept_and_raised():
    # a 1600 (highest 1700) beats b 1600 (highest 1600): a 1616 (highest stays 1700), b 1584 (stays 1600).
    r = rate({"a": est(1600, highest=1700), "b": est(1600)}, [("a", "b", 1)])
    assert (r.record["a"].highest, r.record["b"].highest) == (1700, 1600)
    # a 1690 (highest 1700) beats b 1690 -> 1706 > 1700: highest 1706.
    r = rate({"a": est(1690, highest=1700), "b": est(1690)}, [("a", "b", 1)])
    assert r.record["a"].highest == 1706


def test_highest_counts_the_floored_rating():
    # 716c: new player x enters at 200 after a -150 performance (see the 716c test): highest 200.
    r = rate({"x": new(), "e": est(250)}, [("e", "x", 1)])
    assert r.record["x"].highest == 200


def test_active_pool_is_rated_by_the_same_rules_and_kept_apart():
    # Same figures as test_714b_k32_win_against_lower_player: 1612 / 1488.
    r = rate({"a": est(1600), "b": est(1500)}, [("a", "b", 1)], pool="active")
    assert (r.new("a"), r.new("b")) == (1612, 1488)
    assert {rec.pool for rec in r.outcome.records} == {"active"}


def test_registry_has_the_cfc_2009_engine_for_both_pools():
    engine = default_registry().get("cfc", "cfc-2009")
    assert isinstance(engine, CfcEngine)
    assert engine.pools == ("regular", "active") and dict(engine.seed_pools) == {}


def test_letter_of_717_lets_a_win_lower_a_rating_through_ar():
    # Documents a consequence of 717 read literally (see the report): a (provisional 1500,
    # 10 games, sum 15000) is the only rated player. a plays b (r1) and draws c (r2);
    # b draws d (r2); c draws e1..e9 (one each, rounds 1, 3-10); all of b, c, d, e are new.
    # If a BEATS b: AR = 1500 - 400(1)/2 = 1300, AR - 200 = 1100.
    #   pass 1: b (lost to a, drew d) (1500 + 1100 - 400)/2 = 1100; d 1100; e_i 1100;
    #           c (drew a and 9 e) (1500 + 9 x 1100)/10 = 1140.
    #   pass 2: b (1500 + 1100 - 400)/2 = 1100; c (1500 + 9 x 1100)/10 = 1140.
    #   a: 15000 + 1100 + 1140 + 400 = 17640 / 12 = 1470.
    # If a LOSES to b: AR = 1500 + 200 = 1700, AR - 200 = 1500.
    #   pass 1: b (1500 + 1500 + 400)/2 = 1700; d, e_i 1500; c (1500 + 9 x 1500)/10 = 1500.
    #   pass 2: b (1500 + 1500 + 400)/2 = 1700; c 1500.
    #   a: 15000 + 1700 + 1500 - 400 = 17800 / 12 = 1483.33 -> 1483.
    def event(a_score):
        players = {"a": prov(1500, 10), "b": new(), "c": new(), "d": new()}
        games = [("a", "b", a_score, 1), ("a", "c", 0.5, 2), ("b", "d", 0.5, 2)]
        for n, rnd in zip(range(1, 10), (1, 3, 4, 5, 6, 7, 8, 9, 10)):
            players[f"e{n}"] = new()
            games.append(("c", f"e{n}", 0.5, rnd))
        return rate(players, games)

    assert event(1).new("a") == 1470
    assert event(0).new("a") == 1483


def test_letter_of_717_c9_win_against_a_new_player_met_twice_can_rate_lower():
    # Established a 1500 meets new player x twice (2 rounds): the game of round 1 decides.
    # a wins r1, draws r2: x = (1500 + 1500 + 400(0-1))/2 = 1300 (post-event value, C9);
    #   a: diff 200 -> band 198-206: .76 per game, Sx 1.52, S 1.5: 1500 + 32(-.02) = 1499.36 -> 1499.
    # a loses r1, draws r2: x = (3000 + 400)/2 = 1700; a: .24 per game, Sx .48, S .5:
    #   1500 + 32(.02) = 1500.64 -> 1501.
    def event(a_score):
        return rate({"a": est(1500), "x": new()}, [("a", "x", a_score, 1), ("a", "x", 0.5, 2)])

    assert (event(1).new("a"), event(0).new("a")) == (1499, 1501)


def _write_lines(path, documents):
    path.write_text("".join(json.dumps(d) + "\n" for d in documents), encoding="utf-8")


def test_cli_rate_end_to_end(tmp_path, capsys):
    # Event 1: a 1600 beats new x. AR = 1600 - 400 = 1200 (unused). x: 1600 - 400 = 1200.
    #   a: x at 1200, diff 400 -> .92: 1600 + 32(1 - .92) = 1602.56 -> 1603.
    # Event 2: x (provisional 1200, 1 game, sum 1200) draws b 1500:
    #   x: (1200 + 1500 + 0)/2 = 1350, sum 2700.
    #   b: x at 1350, diff 150 -> .70: 1500 + 32(.5 - .70) = 1493.6 -> 1494.
    base = {
        "schema": "event.finished/v1",
        "system": "cfc",
        "name": "Club",
        "start_date": "2009-05-01",
        "end_date": "2009-05-01",
        "rounds": 1,
    }
    events = tmp_path / "events.jsonl"
    _write_lines(
        events,
        [
            {
                **base,
                "event_id": "e1",
                "players": [{"id": "a"}, {"id": "x"}],
                "games": [{"round": 1, "a": "a", "b": "x", "score": 1}],
            },
            {
                **base,
                "event_id": "e2",
                "players": [{"id": "x"}, {"id": "b"}],
                "games": [{"round": 1, "a": "x", "b": "b", "score": 0.5}],
            },
        ],
    )
    ratings = tmp_path / "ratings.jsonl"
    _write_lines(
        ratings,
        [
            {
                "system": "cfc",
                "pool": "regular",
                "id": "a",
                "rating": 1600,
                "status": "established",
                "games": 40,
            },
            {
                "system": "cfc",
                "pool": "regular",
                "id": "b",
                "rating": 1500,
                "status": "established",
                "games": 40,
                "highest": 1550,
            },
        ],
    )
    out_ratings = tmp_path / "out.jsonl"
    assert (
        main(["rate", str(events), "--ratings", str(ratings), "--out-ratings", str(out_ratings)])
        == 0
    )
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [m["schema"] for m in lines] == ["ratings.updated/v1"] * 2
    assert lines[0]["ruleset"] == "cfc-2009" and lines[0]["pool"] == "regular"
    first = {p["id"]: p for p in lines[0]["players"]}
    assert (first["a"]["new_rating"], first["x"]["new_rating"], first["x"]["status"]) == (
        1603,
        1200,
        "provisional",
    )
    assert first["a"]["details"]["system"] == "cfc" and first["a"]["details"]["k"] == 32
    second = {p["id"]: p for p in lines[1]["players"]}
    assert (second["x"]["old_rating"], second["x"]["new_rating"], second["b"]["new_rating"]) == (
        1200,
        1350,
        1494,
    )
    assert second["b"]["details"]["opponents"][0] == {
        "round": 1,
        "opponent": "x",
        "value": 1350,
        "value_exact": "1350",
        "basis": "post_event",
        "score": 0.5,
        "expected": 0.7,
    }
    records = {r["id"]: r for r in map(json.loads, out_ratings.read_text().splitlines())}
    assert records["x"]["cfc"] == {"provisional_sum": "2700"} and records["x"]["highest"] == 1350


def test_cli_reports_an_unratable_event(tmp_path, capsys):
    events = tmp_path / "events.jsonl"
    _write_lines(
        events,
        [
            {
                "schema": "event.finished/v1",
                "event_id": "e1",
                "system": "cfc",
                "name": "New",
                "start_date": "2009-05-01",
                "end_date": "2009-05-01",
                "rounds": 1,
                "players": [{"id": "x"}, {"id": "y"}],
                "games": [{"round": 1, "a": "x", "b": "y", "score": 1}],
            }
        ],
    )
    assert main(["rate", str(events)]) == 2
    assert "(unratable)" in capsys.readouterr().err
