"""`validate` lists every problem of a message (schemas.validation.every_problem): each wrong
field on its own, then the cross-field rules on the rest, at the document's paths."""

from __future__ import annotations

import msgspec

from schemas.validation import InvalidMessage, decode_input, every_problem


def message(**changes: object) -> bytes:
    document = {
        "schema": "event.finished/v1",
        "event_id": "e1",
        "system": "fide",
        "name": "Open",
        "start_date": "2025-12-01",
        "end_date": "2025-12-01",
        "rounds": 2,
        "players": [{"id": "1"}, {"id": "2"}, {"id": "3"}],
        "games": [
            {"round": 1, "a": "1", "b": "2", "score": 1},
            {"round": 2, "a": "2", "b": "3", "score": 0.5},
        ],
    }
    document.update(changes)
    return msgspec.json.encode(document)


def paths(raw: bytes) -> list[tuple[str, str]]:
    return [(p.path, p.reason) for p in every_problem(raw)]


def test_a_valid_message_has_none():
    assert every_problem(message()) == []


def test_every_wrong_field_is_listed_where_msgspec_stops_at_the_first():
    raw = message(name="", rounds="two", colour="red")
    try:
        decode_input(raw)
    except InvalidMessage as exc:
        assert len(exc.problems) == 1
    assert sorted(paths(raw)) == [("$", "invalid"), ("$.name", "invalid"), ("$.rounds", "invalid")]


def test_the_first_problem_is_the_services_dead_letter_reason():
    raw = message(system="chess", name="")
    try:
        decode_input(raw)
    except InvalidMessage as exc:
        first = exc.problems[0]
    assert every_problem(raw)[0] == first


def test_the_cross_field_rules_read_the_rest_at_the_documents_positions():
    games = [
        {"round": 1, "a": "1", "b": "2", "score": "win"},
        {"round": 9, "a": "2", "b": "3", "score": 1},
        {"round": 2, "a": "3", "b": "4", "score": 0},
    ]
    assert paths(message(games=games)) == [
        ("$.games[0].score", "invalid"),
        ("$.games[1].round", "invalid"),
        ("$.games[2].b", "invalid"),
    ]


def test_a_required_field_wrong_leaves_the_cross_field_rules_out():
    raw = message(start_date="2025-13-01", games=[{"round": 1, "a": "1", "b": "9", "score": 1}])
    assert paths(raw) == [("$.start_date", "invalid")]


def test_sizes_and_malformed_json_are_one_problem():
    assert paths(b"{not json") == [("$", "malformed")]
    assert paths(b"[]") == [("$", "malformed")]
