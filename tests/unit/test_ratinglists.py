"""Rating list files (service.formats.ratinglists): JSON Lines and CSV, both ways."""

from __future__ import annotations

import pytest

from schemas.cfc import CfcState
from schemas.fide import FideState, PeriodSums, PublishedRating
from schemas.records import PlayerRecord
from service.formats.ratinglists import ListProblem, conflicts, read_list, render_csv, render_jsonl

RECORDS = [
    PlayerRecord(
        system="cfc",
        pool="regular",
        id="100001",
        rating=1850,
        status="established",
        games=120,
        highest=1901,
    ),
    PlayerRecord(
        system="cfc",
        pool="regular",
        id="100002",
        rating=1402,
        status="provisional",
        games=7,
        cfc=CfcState(provisional_sum="9814"),
    ),
    PlayerRecord(
        system="fide",
        pool="standard",
        id="1001",
        rating=2295,
        status="established",
        games=65,
        birth_year=1980,
        ever_2300=True,
        k=20,
        fide=FideState(
            published=[PublishedRating(period="2025-12", rating=2295, k=20)],
            periods=[PeriodSums(period="2025-12", sum_hundredths=-24, games=5, points_halves=7)],
        ),
    ),
    PlayerRecord(system="fide", pool="standard", id="sn5@open", rating=None),
]


@pytest.mark.parametrize(
    "suffix,render", [(".csv", lambda r: render_csv(r).encode()), (".jsonl", render_jsonl)]
)
def test_round_trip(tmp_path, suffix, render):
    path = tmp_path / f"list{suffix}"
    path.write_bytes(render(RECORDS))
    assert read_list(path) == RECORDS


def test_csv_header_and_cells():
    lines = render_csv(RECORDS).splitlines()
    assert (
        lines[0]
        == "system,pool,id,name,titles,federation,sex,rating,status,games,highest,birth_year,"
        "ever_2300,ever_2400,k,cfc,fide,rd,volatility,last_rated,glicko2"
    )
    assert lines[1] == "cfc,regular,100001,,,,,1850,established,120,1901,,false,false,,,,,,,"
    assert lines[4] == "fide,standard,sn5@open,,,,,,unrated,0,,,false,false,,,,,,,"


def test_labels_go_out_and_back_in(tmp_path):
    # D35: titles (space-separated in a cell), federation and sex survive export and import.
    path = tmp_path / "labels.csv"
    path.write_text(
        "id,name,titles,federation,sex,rating,status,games\n"
        '9,"Søndergaard, Ann","IM, WGM",DEN,f,2390,established,300\n',
        encoding="utf-8",
    )
    (record,) = read_list(path, "fide", "standard")
    assert (record.titles, record.federation, record.sex) == (["IM", "WGM"], "DEN", "F")
    again = tmp_path / "again.csv"
    again.write_text(render_csv([record]), encoding="utf-8")
    assert "DEN,F,2390" in again.read_text() and ",IM WGM," in again.read_text()
    assert read_list(again) == [record]


def test_a_name_column_is_read_and_written(tmp_path):
    path = tmp_path / "club.csv"
    path.write_text(
        'id,name,rating,status,games\n7,"Štoček, Jiří",1500,established,40\n', encoding="utf-8"
    )
    (record,) = read_list(path, "cfc", "regular")
    assert record.name == "Štoček, Jiří"
    assert render_csv([record]).splitlines()[1].startswith('cfc,regular,7,"Štoček, Jiří",,,,1500,')


def test_a_federation_csv_with_few_columns_and_the_pool_from_the_command_line(tmp_path):
    path = tmp_path / "fed.txt"  # CSV by content: not JSON
    path.write_text(
        "id,rating,games,birth_year,status\n1001,2300,60,1980,established\n\n1002,,0,,unrated\n"
    )
    records = read_list(path, "fide", "standard")
    assert records == [
        PlayerRecord(
            system="fide",
            pool="standard",
            id="1001",
            rating=2300,
            status="established",
            games=60,
            birth_year=1980,
        ),
        PlayerRecord(system="fide", pool="standard", id="1002"),
    ]


BAD_CSV = [
    ("id,elo\n1,2000\n", "list.csv:1: unknown column 'elo'"),
    ("rating\n2000\n", "list.csv:1: the header has no `id` column"),
    ("id,rating\n1,2000\n", "list.csv:1: no `system` column: give --system"),
    (
        "system,pool,id,rating\nfide,standard,1,twenty\n",
        "list.csv:2: $.rating: 'twenty' is not a whole number",
    ),
    (
        "system,pool,id,ever_2300\nfide,standard,1,maybe\n",
        "list.csv:2: $.ever_2300: 'maybe' is not true or false",
    ),
    ("system,pool,id,status\nfide,standard,1,master\n", "list.csv:2: $.status:"),
    (
        "system,pool,id\nfide,standard,1\nfide,standard,1\n",
        "list.csv:3: $.id: player '1' appears twice",
    ),
    ("system,pool,id\nfide,standard\n", "list.csv:2: 2 cells, the header has 3"),
    ("system,pool,id,fide\nfide,standard,1,{oops\n", "list.csv:2: $.fide: not valid JSON"),
]


@pytest.mark.parametrize("content,message", BAD_CSV)
def test_bad_csv_is_one_line_naming_file_line_and_field(tmp_path, content, message):
    path = tmp_path / "list.csv"
    path.write_text(content)
    with pytest.raises(ListProblem) as caught:
        read_list(path)
    assert str(caught.value).startswith(
        str(tmp_path / message.split(":", 1)[0]) + ":" + message.split(":", 1)[1]
    )


def test_the_command_line_pool_must_match_the_records(tmp_path):
    path = tmp_path / "list.jsonl"
    path.write_bytes(render_jsonl(RECORDS[:1]))
    with pytest.raises(
        ListProblem, match=r"list.jsonl:1: \$.pool: 'regular', but --pool is 'active'"
    ):
        read_list(path, "cfc", "active")


def test_conflicts_are_records_that_differ_from_the_list():
    same, other = RECORDS[0], RECORDS[1]
    changed = PlayerRecord(
        system="cfc", pool="regular", id="100002", rating=1450, status="provisional", games=11
    )
    existing = {"100001": same, "100002": changed, "100003": None}
    assert conflicts(existing, [same, other]) == [other]
    assert conflicts({"100001": same}, [same]) == []
