"""Lists people actually have (service.formats.ratinglists with the engines' rules,
service.rating.ListRules): the federations' own columns, `;` CSV, headers in any case,
`1500.0`, `Established`; a missing status derived by the system's rules; every record
checked as the engines read it; a bad list refused whole, every bad row listed."""

from __future__ import annotations

import datetime as dt

import pytest

from schemas.events import EventFinished, Game, PlayerRef
from schemas.records import PlayerRecord, PoolState
from service.engine.contract import EngineRejection, EventInput
from service.engine.registry import default_registry
from service.formats.ratinglists import MAX_LISTED, ListProblem, read_list, read_list_report
from service.rating import ListRules

REGISTRY = default_registry()
RULES = ListRules(REGISTRY)

# An excerpt in the layout of FIDE's combined list (players_list), as CSV.
FIDE_COMBINED = (
    "ID Number,Name,Fed,Sex,Tit,WTit,OTit,FOA,SRtng,SGm,SK,RRtng,RGm,Rk,BRtng,BGm,BK,B-day,Flag\n"
    '1503014,"Carlsen, Magnus",NOR,M,GM,,,,2837,0,10,2802,0,10,2885,9,10,1990,\n'
    '25021044,"Novice, Nora",CAN,F,,,,,,,,1650,5,40,,,,2011,w\n'
    '4100018,"Inactive, Ivan",RUS,M,FM,,,,2255,0,20,,,,,,,0000,i\n'
)


def write(tmp_path, text, name="list.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def fide(pid, rating, **fields):
    status = "established" if rating is not None else "unrated"
    return PlayerRecord(
        system="fide",
        pool=fields.pop("pool", "standard"),
        id=pid,
        rating=rating,
        status=status,
        **fields,
    )


# --- FIDE's list columns -----------------------------------------------------------------
def test_fide_combined_list_standard_pool(tmp_path):
    records = read_list(write(tmp_path, FIDE_COMBINED), "fide", "standard", RULES)
    assert records == [
        fide(
            "1503014", 2837, name="Carlsen, Magnus", k=10, birth_year=1990,
            titles=["GM"], federation="NOR", sex="M",
        ),
        fide("25021044", None, name="Novice, Nora", birth_year=2011, federation="CAN", sex="F"),
        fide(  # B-day 0000: unknown
            "4100018", 2255, name="Inactive, Ivan", k=20, titles=["FM"], federation="RUS", sex="M"
        ),
    ]  # fmt: skip


def test_fide_combined_list_rapid_pool_reads_the_rapid_columns(tmp_path):
    records = read_list(write(tmp_path, FIDE_COMBINED), "fide", "rapid", RULES)
    assert [(r.id, r.rating, r.k, r.status) for r in records] == [
        ("1503014", 2802, 10, "established"),
        ("25021044", 1650, 40, "established"),
        ("4100018", None, None, "unrated"),
    ]


def test_a_combined_list_needs_the_pool_and_fide_columns_need_the_system(tmp_path):
    path = write(tmp_path, FIDE_COMBINED)
    with pytest.raises(ListProblem) as caught:
        read_list(path, "fide", None, RULES)
    assert (
        str(caught.value)
        == f"{path}:1: column 'SRtng' is the fide standard list's rating: give --pool"
    )
    with pytest.raises(ListProblem) as caught:
        read_list(path, None, None, RULES)
    assert str(caught.value).startswith(
        f"{path}:1: unknown column 'ID Number' (columns: system, pool, id,"
    )
    assert str(caught.value).endswith("(a federation's own list columns are read with --system)")


def test_a_one_pool_fide_list_names_its_rating_column_after_the_month(tmp_path):
    # FIDE's standard_rating_list: the rating column is the list's month; Gms is that period's games.
    path = write(
        tmp_path,
        "ID Number;Name;Fed;Sex;Tit;WTit;OTit;FOA;SEP25;Gms;K;B-day;Flag\n"
        "2010001;Petrov, Anna;BUL;F;IM;WGM;FT;;2150;4;20;1995;w\n",
    )
    report = read_list_report(path, "fide", "standard", RULES)
    assert report.records == [
        fide(
            "2010001", 2150, name="Petrov, Anna", k=20, birth_year=1995,
            titles=["IM", "WGM", "FT"], federation="BUL", sex="F",
        )
    ]  # fmt: skip
    assert report.records[0].games == 0  # Gms is not the career count
    assert (report.derived, report.fide_without_games) == (1, 1)


def test_two_columns_for_one_field_are_refused(tmp_path):
    path = write(tmp_path, "id,ID Number,rating\n1,2,2000\n")
    with pytest.raises(
        ListProblem, match=r"list.csv:1: columns 'id' and 'ID Number' both give the record's `id`"
    ):
        read_list(path, "fide", "standard", RULES)


# --- CFC's and NASPA's columns -----------------------------------------------------------
CFC_LIST = (
    "CFC#;Name;Regular Rating;Quick Rating;Games;Highest;Expiry;Prov\n"
    "100001;Ann Smith;1850;1790;120;1902;2026-08-31;ON\n"
    "100002;Bob Jones;1402;;7;;2026-01-31;QC\n"
    "100003;Cy New;;;0;;2026-05-31;BC\n"
)


def test_cfc_list_columns(tmp_path):
    records = read_list(write(tmp_path, CFC_LIST), "cfc", "regular", RULES)
    assert [(r.id, r.name, r.rating, r.games, r.highest, r.status) for r in records] == [
        ("100001", "Ann Smith", 1850, 120, 1902, "established"),
        ("100002", "Bob Jones", 1402, 7, None, "provisional"),
        ("100003", "Cy New", None, 0, None, "unrated"),
    ]
    # The active list from the same columns: its rating is the quick one.
    active = write(
        tmp_path, "CFC ID,Name,Regular Rating,Quick Rating,Games\n100001,Ann Smith,1850,1790,30\n"
    )
    assert [(r.rating, r.status) for r in read_list(active, "cfc", "active", RULES)] == [
        (1790, "established")
    ]


def test_naspa_list_columns(tmp_path):
    path = write(
        tmp_path,
        "NASPA ID,Name,Rating,Games,State,Last Played\nNA-1,Kim Lee,1612,340,ON,2025-10-04\n"
        "NA-2,New Comer,,0,NY,\n",
    )
    records = read_list(path, "naspa", "nwl", RULES)
    assert [(r.id, r.rating, r.games, r.status) for r in records] == [
        ("NA-1", 1612, 340, "established"),
        ("NA-2", None, 0, "unrated"),
    ]


# --- cells and headers -------------------------------------------------------------------
def test_semicolon_csv_header_in_any_case_whole_decimals_and_enum_case(tmp_path):
    path = write(
        tmp_path,
        "ID; Rating ;STATUS;Games;Birth Year;Ever-2300\n"
        "1001;2300.0;Established;60.00;1980;TRUE\n"
        "1002;;UNRATED;0;;\n",
    )
    assert read_list(path, "fide", "standard", RULES) == [
        fide("1001", 2300, games=60, birth_year=1980, ever_2300=True),
        fide("1002", None),
    ]


def test_a_decimal_that_is_not_whole_is_refused(tmp_path):
    path = write(tmp_path, "id,rating,games\n1001,1500.5,60\n")
    with pytest.raises(ListProblem) as caught:
        read_list(path, "fide", "standard", RULES)
    assert str(caught.value) == f"{path}:2: $.rating: '1500.5' is not a whole number"


# --- status derivation -------------------------------------------------------------------
@pytest.mark.parametrize(
    "system,pool,rating,games,status",
    [
        # CFC 715: provisional for the first 24 games, established from the 25th.
        ("cfc", "regular", 1500, 25, "established"),
        ("cfc", "regular", 1500, 24, "provisional"),
        ("cfc", "regular", 1500, 1, "provisional"),
        ("cfc", "active", None, 0, "unrated"),
        # FIDE: on the list (a rating) or not; no provisional status.
        ("fide", "standard", 1500, 3, "established"),
        ("fide", "blitz", None, 0, "unrated"),
        # NASPA: rated, or a newcomer.
        ("naspa", "nwl", 1500, 3, "established"),
        ("naspa", "csw", None, 0, "unrated"),
    ],
)
def test_a_missing_status_is_derived_by_the_systems_rules(
    tmp_path, system, pool, rating, games, status
):
    path = write(tmp_path, f"id,rating,games\n1,{'' if rating is None else rating},{games}\n")
    report = read_list_report(path, system, pool, RULES)
    assert [(r.rating, r.games, r.status) for r in report.records] == [(rating, games, status)]
    assert report.derived == 1


def test_a_status_that_cannot_be_derived_is_refused_with_the_row_and_reason(tmp_path):
    path = write(tmp_path, "id,rating,games\n1,1500,0\n")
    with pytest.raises(ListProblem) as caught:
        read_list(path, "cfc", "regular", RULES)
    assert str(caught.value) == (
        f"{path}:2: $.games: a provisional rating needs at least one game (no status given: 'provisional' derived"
        " from rating 1500 and 0 games)"
    )


def test_json_lines_without_a_status_get_it_derived(tmp_path):
    path = write(
        tmp_path,
        '{"system":"cfc","pool":"regular","id":"7","rating":1700,"games":40}\n',
        "list.jsonl",
    )
    assert read_list(path, rules=RULES)[0].status == "established"


# --- all or nothing, every bad row -------------------------------------------------------
def test_the_complaint_a_rated_player_imported_as_unrated_is_refused(tmp_path):
    path = write(tmp_path, "id,rating,status,games\n100001,1850,unrated,0\n")
    with pytest.raises(ListProblem) as caught:
        read_list(path, "cfc", "regular", RULES)
    assert str(caught.value) == f"{path}:2: $.status: status 'unrated' with rating 1850"


def test_a_bad_list_is_refused_whole_and_every_bad_row_is_listed(tmp_path):
    path = write(
        tmp_path,
        "id;rating;status;games\n"
        "1;1850;established;120\n"  # good
        "2;1500.5;established;30\n"  # not a whole number
        "3;1600;provisional;0\n"  # provisional without games
        "4;;established;30\n"  # established without a rating
        "5;1700;master;30\n"  # not a status
        "1;1850;established;120\n"  # twice
        "6;1200;unrated;3\n",
    )  # unrated with a rating and games
    with pytest.raises(ListProblem) as caught:
        read_list(path, "cfc", "regular", RULES)
    assert str(caught.value).splitlines() == [
        f"{path}: 6 bad rows, the whole list is refused (nothing read):",
        f"{path}:3: $.rating: '1500.5' is not a whole number",
        f"{path}:4: $.games: a provisional rating needs at least one game",
        f"{path}:5: $.rating: status 'established' needs a rating",
        f"{path}:6: $.status: Invalid enum value 'master'",
        f"{path}:7: $.id: player '1' appears twice in cfc/regular",
        f"{path}:8: $.status: status 'unrated' with rating 1200",
        f"{path}:8: $.games: status 'unrated' with 3 games",
    ]


def test_the_listing_is_capped_with_a_count_of_the_rest(tmp_path):
    rows = "".join(f"{i},1500,provisional,0\n" for i in range(MAX_LISTED + 12))
    with pytest.raises(ListProblem) as caught:
        read_list(write(tmp_path, "id,rating,status,games\n" + rows), "cfc", "regular", RULES)
    lines = str(caught.value).splitlines()
    assert lines[0].endswith(
        f"{MAX_LISTED + 12} bad rows, the whole list is refused (nothing read):"
    )
    assert len(lines) == 1 + MAX_LISTED + 1 and lines[-1] == "... and 12 more problem(s) not listed"


def test_a_pool_no_engine_rates_is_refused(tmp_path):
    path = write(tmp_path, '{"system":"fide","pool":"bullet","id":"7"}\n', "list.jsonl")
    with pytest.raises(
        ListProblem, match=r"list.jsonl:1: \$.pool: no fide ruleset rates pool 'bullet'"
    ):
        read_list(path, rules=RULES)


# --- the import's check is the engines' check ---------------------------------------------
def rate_all(records, system, pool):
    """Rate one round robin of the records' players with every engine of the pool."""
    ids = [r.id for r in records]
    games = [Game(round=1, a=a, b=b, score=1) for i, a in enumerate(ids) for b in ids[i + 1 :]]
    event = EventFinished(
        event_id="check",
        system=system,
        name="check",
        start_date=dt.date(2025, 11, 1),
        end_date=dt.date(2025, 11, 2),
        rounds=1,
        players=[PlayerRef(id=i) for i in ids],
        games=games,
        pool=pool,
        period="2025-11" if system == "fide" else None,
    )
    for engine in REGISTRY:
        if engine.system == system and pool in engine.pools:
            engine.rate_event(
                EventInput(event, {r.id: r for r in records}, PoolState(system=system, pool=pool))
            )


@pytest.mark.parametrize(
    "system,pool,text",
    [
        ("cfc", "regular", CFC_LIST),
        ("fide", "standard", FIDE_COMBINED),
        ("fide", "rapid", FIDE_COMBINED),
        ("naspa", "nwl", "id,rating,games\n1,1612,340\n2,,0\n3,1405.0,41\n"),
        ("naspa", "csw", "id,rating,games,status\n1,1612,340,ESTABLISHED\n2,,0,unrated\n"),
    ],
)
def test_what_the_import_accepts_every_engine_rates(tmp_path, system, pool, text):
    rate_all(read_list(write(tmp_path, text), system, pool, RULES), system, pool)


@pytest.mark.parametrize(
    "record",
    [
        PlayerRecord(system="cfc", pool="regular", id="x", rating=1500, status="unrated"),
        PlayerRecord(
            system="cfc", pool="regular", id="x", rating=1500, status="provisional", games=0
        ),
        PlayerRecord(
            system="fide", pool="standard", id="x", rating=2000, status="unrated", games=60
        ),
        PlayerRecord(
            system="fide", pool="standard", id="x", rating=2000, status="provisional", games=10
        ),
        PlayerRecord(
            system="naspa", pool="nwl", id="x", rating=None, status="established", games=10
        ),
    ],
)
def test_what_the_import_refuses_the_engines_refuse_with_the_same_reason(record):
    [(field, reason)] = RULES.problems(record)[:1]
    other = PlayerRecord(
        system=record.system, pool=record.pool, id="y", rating=1500, status="established", games=60
    )
    with pytest.raises(EngineRejection) as info:
        rate_all([record, other], record.system, record.pool)
    assert info.value.message == f"record of player 'x': {reason}"
