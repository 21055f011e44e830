"""Each validation rule of the contract, with a failing and a passing message."""

from __future__ import annotations

import pytest

from schemas import EventFinished, InvalidMessage, Limits, PeriodClosed, decode_input
from tests.messages import encode, event


def problems(message: dict | bytes, limits: Limits = Limits()) -> list[tuple[str, str]]:
    raw = message if isinstance(message, bytes) else encode(message)
    with pytest.raises(InvalidMessage) as info:
        decode_input(raw, limits)
    return [(p.path, p.reason) for p in info.value.problems]


def test_valid_event_decodes_and_gets_its_defaults():
    decoded = decode_input(encode(event()))
    assert isinstance(decoded, EventFinished)
    assert decoded.pool == "regular" and decoded.ruleset == "cfc-2009"
    assert decoded.games[1].score == 0.5


def test_fide_period_defaults_to_the_month_of_end_date():
    decoded = decode_input(
        encode(event(system="fide", end_date="2025-12-01", start_date="2025-11-29"))
    )
    assert (
        decoded.pool == "standard"
        and decoded.period == "2025-12"
        and decoded.ruleset == "fide-2024"
    )


def test_naspa_csw_defaults_to_its_ruleset():
    assert decode_input(encode(event(system="naspa", pool="csw"))).ruleset == "naspa-csw"
    assert decode_input(encode(event(system="naspa"))).ruleset == "nsa2008"


def test_period_closed():
    decoded = decode_input(b'{"schema":"period.closed/v1","system":"fide","period":"2025-11"}')
    assert isinstance(decoded, PeriodClosed) and decoded.pool == "standard"
    assert problems(b'{"schema":"period.closed/v1","system":"fide","period":"2025-13"}') == [
        ("$.period", "invalid")
    ]


def test_wrong_type():
    assert problems(event(rounds="3")) == [("$.rounds", "invalid")]
    assert problems(event(rounds=True)) == [("$.rounds", "invalid")]
    assert problems(event(games=[{"round": 1, "a": "p1", "b": "p2", "score": "1"}])) == [
        ("$.games[0].score", "invalid")
    ]


def test_unknown_system():
    assert problems(event(system="go")) == [("$.system", "unknown_system")]


def test_unknown_pool():
    assert problems(event(pool="blitz")) == [("$.pool", "invalid")]
    assert decode_input(encode(event(pool="active"))).pool == "active"


def test_score_outside_the_three_values():
    bad = event()
    bad["games"][0]["score"] = 0.25
    assert problems(bad) == [("$.games[0].score", "invalid")]
    bad["games"][0]["score"] = 2
    assert problems(bad) == [("$.games[0].score", "invalid")]
    for good in (0, 0.5, 1, 1.0):
        ok = event()
        ok["games"][0]["score"] = good
        decode_input(encode(ok))


def test_event_id_pattern():
    for bad in ("", "has space", "x" * 129, "slash/no", "é"):
        assert problems(event(event_id=bad)) == [("$.event_id", "invalid")]
    for good in ("a", "x" * 128, "cfc:2025.11_club-A"):
        decode_input(encode(event(event_id=good)))


def test_undeclared_player():
    bad = event()
    bad["games"][2]["b"] = "ghost"
    assert problems(bad) == [("$.games[2].b", "invalid")]
    byes = event(byes=[{"round": 1, "player": "ghost", "score": 1}])
    assert problems(byes) == [("$.byes[0].player", "invalid")]
    decode_input(encode(event(byes=[{"round": 1, "player": "p3", "score": 1}])))


def test_player_playing_itself():
    bad = event()
    bad["games"][0]["b"] = "p1"
    assert problems(bad) == [("$.games[0].b", "invalid")]


def test_player_declared_twice():
    bad = event()
    bad["players"].append({"id": "p2"})
    assert problems(bad) == [("$.players[3].id", "invalid")]


def test_round_below_one_and_after_the_last():
    bad = event()
    bad["games"][0]["round"] = 0
    assert problems(bad) == [("$.games[0].round", "invalid")]
    bad["games"][0]["round"] = 4
    assert problems(bad) == [("$.games[0].round", "invalid")]


def test_dates():
    assert problems(event(end_date="2025-10-31")) == [("$.end_date", "invalid")]
    assert problems(event(end_date="2025-02-30")) == [("$.end_date", "invalid")]


def test_too_many_players_and_games():
    limits = Limits(max_players=3, max_games=3)
    decode_input(encode(event()), limits)  # exactly at the limits
    more_players = event()
    more_players["players"].append({"id": "p4"})
    assert problems(more_players, limits) == [("$.players", "too_large")]
    more_games = event()
    more_games["games"].append({"round": 1, "a": "p3", "b": "p2", "score": 1})
    assert problems(more_games, limits) == [("$.games", "too_large")]


def test_default_limits_are_5000_players_and_100000_games():
    assert Limits().max_players == 5_000 and Limits().max_games == 100_000


def test_too_many_bytes():
    raw = encode(event())
    assert problems(raw, Limits(max_bytes=len(raw) - 1)) == [("$", "too_large")]
    decode_input(raw, Limits(max_bytes=len(raw)))


def test_unknown_field_is_refused():
    assert problems(event(one_third=True)) == [("$", "invalid")]
    bad = event()
    bad["games"][0]["colour"] = "white"
    assert problems(bad) == [("$.games[0]", "invalid")]


def test_malformed():
    assert problems(b"{not json") == [("$", "malformed")]
    assert problems(b"[1, 2]") == [("$", "malformed")]
    assert problems(b'"text"') == [("$", "malformed")]


def test_missing_or_unknown_schema():
    assert problems(b'{"event_id": "x"}') == [("$", "invalid")]
    assert problems(event(schema="event.finished/v2")) == [("$.schema", "invalid")]


def test_every_cross_field_problem_is_reported_with_its_path():
    bad = event(end_date="2025-10-01")
    bad["games"][0]["score"] = 0.3
    bad["games"][1]["a"] = "ghost"
    assert problems(bad) == [
        ("$.end_date", "invalid"),
        ("$.games[0].score", "invalid"),
        ("$.games[1].a", "invalid"),
    ]
