"""The two cases a mutation probe of the command line's file inputs found (issue 33): each is
refused in one line naming the place, never a traceback, and never let into the store."""

from __future__ import annotations

import pytest

from service.cli.main import main
from service.engine.registry import default_registry
from service.formats.ratinglists import ListProblem, read_list
from service.rating import ListRules

RULES = ListRules(default_registry())


def test_validate_a_message_whose_schema_is_an_object(tmp_path, capsys):
    # Was: TypeError: unhashable type: 'dict' (cli/offline.py, then schemas/validation.py).
    path = tmp_path / "e.jsonl"
    path.write_text('{"schema": {"x": 1}, "event_id": "e1"}\n', encoding="utf-8")
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr()
    assert "Traceback" not in out.err + out.out
    assert f"{path}:1: $.schema: Expected `str`" in out.out + out.err


def test_an_import_with_a_career_beyond_any_is_refused(tmp_path):
    # Was accepted; then every event of the player failed (OverflowError in pack_state) and
    # was dead-lettered as poison. Games are at most 10^9 (schemas.common.Games).
    path = tmp_path / "r.jsonl"
    path.write_text(
        '{"system":"cfc","pool":"regular","id":"p1","rating":1500,"status":"established",'
        '"games":100000000000000000000}\n',
        encoding="utf-8",
    )
    with pytest.raises(ListProblem, match=r"r.jsonl:1: \$.games: Expected `int` <= 1000000000"):
        read_list(path, rules=RULES)


def test_an_import_with_an_accumulator_beyond_64_bits_is_refused(tmp_path):
    # Any other number the store cannot pack (MessagePack: 64 bits) is refused at the import,
    # by packing the record as the store will (ListRules.problems).
    path = tmp_path / "r.jsonl"
    path.write_text(
        '{"system":"fide","pool":"standard","id":"p1","rating":1500,"status":"established",'
        '"games":40,"fide":{"periods":[{"period":"2025-01",'
        '"sum_hundredths":100000000000000000000,"games":1}]}}\n',
        encoding="utf-8",
    )
    with pytest.raises(ListProblem, match=r"r.jsonl:1: \$.fide: a number too large to store"):
        read_list(path, rules=RULES)
