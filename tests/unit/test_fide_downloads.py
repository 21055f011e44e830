"""FIDE's rating list downloads (D59): the fixed-width text list and its XML twin, zipped as
downloaded or not, import to the same records, labels included (D35). The samples in
tests/data/fide/ are made in the layout FIDE's download page documents (no FIDE file was at
hand): `players_list_foa.txt` in Windows-1252 with CRLF, `players_list_xml_foa.xml` UTF-8."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from service.engine.registry import default_registry
from service.formats.ratinglists import ListProblem, read_list
from service.rating import ListRules

DATA = Path(__file__).resolve().parents[1] / "data" / "fide"
TXT, XML = DATA / "players_list_foa.txt", DATA / "players_list_xml_foa.xml"
RULES = ListRules(default_registry())


def zipped(tmp_path, source: Path) -> Path:
    path = tmp_path / (source.stem + ".zip")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.write(source, source.name)
    return path


@pytest.mark.parametrize("pool", ["standard", "rapid", "blitz"])
def test_the_text_list_and_its_xml_twin_import_to_the_same_records(tmp_path, pool):
    text = read_list(TXT, "fide", pool, RULES)
    assert read_list(XML, "fide", pool, RULES) == text
    assert read_list(zipped(tmp_path, TXT), "fide", pool, RULES) == text
    assert read_list(zipped(tmp_path, XML), "fide", pool, RULES) == text
    assert len(text) == 4


def test_the_fields_read_from_the_text_list():
    by_id = {r.id: r for r in read_list(TXT, "fide", "standard", RULES)}
    carlsen, nora, ivan, ann = (by_id[i] for i in ("1503014", "25021044", "4100018", "1700001"))
    assert (carlsen.name, carlsen.rating, carlsen.k, carlsen.birth_year) == (
        "Carlsen, Magnus", 2837, 10, 1990,
    )  # fmt: skip
    assert (carlsen.titles, carlsen.federation, carlsen.sex) == (["GM"], "NOR", "M")
    assert (nora.rating, nora.status, nora.birth_year, nora.titles) == (None, "unrated", 2011, [])
    assert (ivan.birth_year, ivan.titles) == (None, ["FM", "FA", "IA"])  # B-day 0000: unknown
    # Windows-1252 text (ø is 0xf8 there); Tit, WTit, then OTit.
    assert (ann.name, ann.titles, ann.federation) == (
        "Søndergaard, Ann",
        ["IM", "WGM", "FT"],
        "DEN",
    )
    rapid = {r.id: r for r in read_list(TXT, "fide", "rapid", RULES)}
    assert (rapid["25021044"].rating, rapid["25021044"].k) == (1650, 40)


def test_a_one_list_xml_reads_rating_games_and_k(tmp_path):
    path = tmp_path / "standard_rating_list.xml"
    path.write_text(
        "<playerslist>\n<player><fideid>2010001</fideid><name>Petrov, Anna</name>"
        "<country>BUL</country><sex>F</sex><title>WIM</title><w_title>WIM</w_title>"
        "<o_title></o_title><foa_title></foa_title><rating>2150</rating><games>4</games>"
        "<k>20</k><birthday>1995</birthday><flag>w</flag></player>\n</playerslist>\n",
        encoding="utf-8",
    )
    (record,) = read_list(path, "fide", "standard", RULES)
    assert (record.rating, record.k, record.games, record.titles) == (2150, 20, 0, ["WIM"])


def test_bad_downloads_are_refused_in_one_line(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text("<playerslist>\n<player><fideid>1</fideid>\n</playerslist>\n")
    with pytest.raises(ListProblem, match=r"bad.xml:3: not well-formed XML"):
        read_list(bad, "fide", "standard", RULES)
    odd = tmp_path / "odd.xml"
    odd.write_text(
        "<playerslist>\n<player><fideid>1</fideid><rating>2000</rating></player>\n"
        "<player><fideid>2</fideid><colour>w</colour></player>\n</playerslist>\n"
    )
    with pytest.raises(ListProblem, match=r"odd.xml:3: element <colour> is not in the first"):
        read_list(odd, "fide", "standard", RULES)
    two = tmp_path / "two.zip"
    with zipfile.ZipFile(two, "w") as archive:
        archive.writestr("a.txt", "x")
        archive.writestr("b.txt", "y")
    with pytest.raises(
        ListProblem, match=r"two.zip: a zip of one list file is read; this one holds a.txt, b.txt"
    ):
        read_list(two, "fide", "standard", RULES)
    rating = tmp_path / "rating.txt"
    rating.write_text(TXT.read_text(encoding="cp1252").replace("2837", "28x7"), encoding="utf-8")
    with pytest.raises(ListProblem, match=r"rating.txt:2: \$.rating: '28x7' is not a whole number"):
        read_list(rating, "fide", "standard", RULES)
