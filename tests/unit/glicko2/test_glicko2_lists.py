"""Glicko-2 rating lists (docs/rules/glicko2.md G2-11): CSV columns `rd`, `volatility` and
`last_rated` (the record's `glicko2.last_rated`) read as decimals and a date, a platform's own
column names with `--system glicko2`, each bad cell one line naming file, line and field,
and `export --format csv` written so that a list goes out and back in unchanged."""

from __future__ import annotations

import datetime as dt

import pytest

from schemas.glicko2 import Glicko2Game, Glicko2State
from schemas.records import PlayerRecord
from service.engine.registry import default_registry
from service.formats.ratinglists import ListProblem, read_list, render_csv
from service.rating import ListRules

RULES = ListRules(default_registry())


def test_a_platform_s_list_with_rd_volatility_and_the_last_rated_event(tmp_path):
    path = tmp_path / "bullet.csv"
    path.write_text(
        "id,name,rating,rd,volatility,last_rated,status\n"
        "p,Paper Player,1464,151.5165,0.059996,2025-01-10,provisional\n"
        "a,,1400,30,0.06,,established\n"
        "n,Newcomer,,,,,unrated\n"
    )
    p, a, n = read_list(path, "glicko2", "bullet", RULES)
    assert (p.system, p.pool, p.rating, p.rd, p.volatility) == (
        "glicko2",
        "bullet",
        1464,
        151.5165,
        0.059996,
    )
    assert p.glicko2 == Glicko2State(last_rated=dt.date(2025, 1, 10))
    # `30` is a decimal column's whole number: the float 30.0; no date, no state.
    assert (a.rd, a.volatility, a.glicko2) == (30.0, 0.06, None)
    assert (n.rating, n.rd, n.status) == (None, None, "unrated")


def test_a_platform_s_own_column_names(tmp_path):
    path = tmp_path / "export.csv"
    path.write_text(
        "id;Name;Rating;Rating Deviation;Sigma;Last Played\nx1;Ann;1712;64.2;0.0591;2025-03-02\n"
    )
    (x1,) = read_list(path, "glicko2", "blitz", RULES)
    assert (x1.pool, x1.rating, x1.rd, x1.volatility) == ("blitz", 1712, 64.2, 0.0591)
    assert x1.glicko2 is not None and x1.glicko2.last_rated == dt.date(2025, 3, 2)


BAD = [
    ("id,rating,rd\np,1500,wide\n", "list.csv:2: $.rd: 'wide' is not a number"),
    ("id,rating,rd\np,1500,nan\n", "list.csv:2: $.rd: 'nan' is not a finite number"),
    ("id,rating,rd\np,1500,-5\n", "list.csv:2: $.rd: Expected `float` > 0.0"),
    (
        "id,rating,rd,volatility\np,1500,80,12\n",
        "list.csv:2: $.volatility: Expected `float` < 10.0",
    ),
    (
        "id,rating,rd,last_rated\np,1500,80,2025-13-01\n",
        "list.csv:2: $.last_rated: '2025-13-01' is not a date (YYYY-MM-DD)",
    ),
    # G2-11: a rating goes with its RD (the engines' own check of the record).
    ("id,rating,status\np,1500,established\n", "list.csv:2: $.rd: rating 1500 needs its RD (rd)"),
    (
        'id,rating,rd,last_rated,glicko2\np,1500,80,2025-02-01,"{""last_rated"":""2025-01-01""}"\n',
        "list.csv:2: $.last_rated: '2025-02-01', but the glicko2 cell has last_rated '2025-01-01'",
    ),
]


@pytest.mark.parametrize("content,message", BAD)
def test_a_bad_cell_is_one_line_naming_file_line_and_field(tmp_path, content, message):
    path = tmp_path / "list.csv"
    path.write_text(content)
    with pytest.raises(ListProblem) as caught:
        read_list(path, "glicko2", "bullet", RULES)
    assert str(caught.value).startswith(f"{tmp_path}/{message}"), str(caught.value)


RECORDS = [
    PlayerRecord(
        system="glicko2",
        pool="bullet",
        id="p",
        rating=1464,
        rd=151.51654853677084,
        volatility=0.05999598612152615,
        status="provisional",
        games=13,
        glicko2=Glicko2State(
            rating=1464.0506705393013,
            last_rated=dt.date(2025, 1, 10),
            games=[Glicko2Game("2025-02", "feb", 1, "a", 0.5, 1400.0, 30.0, 0.06)],
            closed_through="2025-01",
        ),
    ),
    PlayerRecord(
        system="glicko2",
        pool="bullet",
        id="q",
        rating=1500,
        rd=350.0,
        volatility=0.06,
        status="provisional",
        glicko2=Glicko2State(last_rated=dt.date(2024, 12, 31)),
    ),
]


def test_export_writes_each_value_once_and_reads_back_unchanged(tmp_path):
    text = render_csv(RECORDS)
    header, p, q = text.splitlines()
    assert header.endswith(",k,cfc,fide,rd,volatility,last_rated,glicko2")
    # The exact floats as Python writes them (repr: read back to the same float); the date
    # in its column, not again in the state's JSON (q's state is only the date: no JSON).
    assert p.endswith(
        ',151.51654853677084,0.05999598612152615,2025-01-10,"{""rating"":1464.0506705393013,'
        '""games"":[[""2025-02"",""feb"",1,""a"",0.5,1400.0,30.0,0.06]],""closed_through"":""2025-01""}"'
    )
    assert q.endswith(",350.0,0.06,2024-12-31,")
    path = tmp_path / "out.csv"
    path.write_text(text)
    assert read_list(path, rules=RULES) == RECORDS
