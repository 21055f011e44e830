"""What the fuzz tier (tests/fuzz/) found, each pinned with the input it found (D80): each is
refused in one line naming the place, never a traceback, never a hang."""

from __future__ import annotations

import io
import struct
import zipfile

import pytest

from schemas.validation import InvalidMessage, decode_input
from service.cli.main import main
from service.engine.registry import default_registry
from service.formats import trf
from service.formats.ratinglists import ListProblem, read_list
from service.rating import ListRules
from service.runtime.settings import SettingsError, load_settings, redact

RULES = ListRules(default_registry())
PLAYER = "001    2 m    Morin, Marie                      1500 CAN             1990/01/01  0.0    0"


def test_a_document_with_trailing_bytes_is_malformed_even_when_a_field_is_wrong(tmp_path, capsys):
    # A pretty-printed event's line, read as JSON Lines: msgspec stopped at the missing
    # `schema` before the trailing comma, `validate` then decoded it untyped: DecodeError.
    raw = b'{"id": "100001", "name": "Anne Tremblay"},'
    with pytest.raises(InvalidMessage) as found:
        decode_input(raw)
    assert found.value.reason == "malformed"  # the service said `invalid` (missing `schema`)
    path = tmp_path / "e.jsonl"
    path.write_bytes(raw + b"\n")
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr()
    assert (
        out.out
        == f"{path}:1: $: not valid JSON: JSON is malformed: trailing characters (byte 42) (malformed)\n"
    )
    assert out.err == ""


def test_a_csv_list_with_carriage_returns_for_line_ends_is_read(tmp_path):
    # Was: _csv.Error: new-line character seen in unquoted field (a traceback).
    path = tmp_path / "list.csv"
    path.write_bytes(b"system,pool,id,rating,status,games\rcfc,regular,p1,1500,established,30\r")
    (record,) = read_list(path, rules=RULES)
    assert (record.id, record.rating, record.games) == ("p1", 1500, 30)


def test_a_csv_cell_past_the_csv_modules_limit_is_refused_naming_the_line(tmp_path):
    # Was: _csv.Error: field larger than field limit (131072) (a traceback).
    path = tmp_path / "list.csv"
    path.write_text(f"system,pool,id,name\ncfc,regular,p1,{'x' * 200_000}\n", encoding="utf-8")
    with pytest.raises(ListProblem, match=r"list.csv:2: not CSV: field larger than field limit"):
        read_list(path, rules=RULES)


def test_a_number_with_a_huge_exponent_is_refused_at_once(tmp_path):
    # Was: `int(Decimal("1e10000000"))`, minutes of CPU for a 10-byte cell.
    path = tmp_path / "list.csv"
    path.write_text("system,pool,id,rating\ncfc,regular,p1,1e10000000\n", encoding="utf-8")
    with pytest.raises(ListProblem, match=r"list.csv:2: \$.rating: '1e10000000' is too large"):
        read_list(path, rules=RULES)


def test_a_trf_start_number_in_superscript_is_refused_naming_the_line():
    # `²` is Latin-1 byte 0xB2, and `"²".isdigit()` is true: int("²") raised ValueError.
    with pytest.raises(
        trf.TrfError, match=r"t.trf:1: columns 5-8: start number '²' is not a number"
    ):
        trf.parse(PLAYER[:7] + "²" + PLAYER[8:], "t.trf")


def test_a_trf_round_date_in_arabic_indic_digits_is_refused():
    # `\d` matched other scripts' digits, which int() reads: `٢٥/١١/٠١` passed as a date.
    assert trf.parse_date("٢٠٢٥/١١/٠١") is None


def test_an_id_map_with_carriage_returns_for_line_ends_is_read():
    # Was: _csv.Error: new-line character seen in unquoted field (a traceback).
    mapping = trf.read_ids("id,start\r100001,1\r100002,2\r", "ids.csv")
    assert mapping.by_start == {1: "100001", 2: "100002"}


def test_an_id_map_cell_past_the_csv_modules_limit_is_refused_naming_the_line():
    with pytest.raises(trf.TrfError, match=r"ids.csv:2: not CSV: field larger than field limit"):
        trf.read_ids(f"id,start,name\n100001,1,{'x' * 200_000}\n", "ids.csv")


@pytest.mark.parametrize(
    ("url", "says"),
    [
        # Each passed the check, then redis-py raised ValueError at the first command: a traceback.
        ("redis://localhost:abc/0", "Port could not be cast to integer value as 'abc'"),
        ("redis://localhost:99999/0", "Port out of range 0-65535"),
        ("redis://localhost:6379/0?socket_timeout=abc", "Invalid value for 'socket_timeout'"),
        # redis-py ignores a database it cannot read: the command used database 0.
        ("redis://localhost/x", "the database 'x' is not a number"),
    ],
)
def test_a_redis_url_redis_py_cannot_use_is_refused_by_the_check(url, says, capsys):
    assert main(["export", "--system", "cfc", "--redis-url", url]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"rating-service export: --redis-url {url!r}: ") and says in err
    assert len(err.splitlines()) == 1


def test_a_refused_redis_url_does_not_show_its_password():
    # Was: the URL verbatim, password and all, when urllib could not read it.
    with pytest.raises(SettingsError) as found:
        load_settings({"REDIS_URL": "redis://app:s3cr3t@[::1:6379/0"})
    assert "s3cr3t" not in str(found.value) and "app:***@" in str(found.value)
    assert redact("app:s3cr3t@10.0.0.5:6379") == "app:***@10.0.0.5:6379"  # the scheme forgotten


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("70000", "must be a port number, 0-65535"),  # was accepted: serve failed binding it
        ("\u0668\u0660\u0668\u0660", "must be a positive whole number"),  # int() read 8080
        ("8_080", "must be a positive whole number"),
    ],
)
def test_a_port_setting_is_a_port_in_ascii_digits(value, says):
    with pytest.raises(SettingsError, match=f"RATING_HTTP_PORT='{value}': {says}"):
        load_settings({"RATING_HTTP_PORT": value})


def test_a_list_record_nested_thousands_deep_is_refused_naming_the_line(tmp_path):
    # Was: RecursionError (msgspec, reading a `schema` that is 100,000 nested arrays).
    deep = "[" * 100_000 + "]" * 100_000
    path = tmp_path / "r.jsonl"
    path.write_text(
        f'{{"schema":{deep},"system":"cfc","pool":"regular","id":"p1","rating":1500,'
        '"status":"established","games":30}\n',
        encoding="utf-8",
    )
    with pytest.raises(ListProblem, match=r"r.jsonl:1: JSON nested too deeply"):
        read_list(path, rules=RULES)


def test_a_trf_opponent_after_a_control_character_is_refused_or_read():
    # Found by atheris: `str.strip` takes \x1f for a space, `int` does not: ValueError.
    line = PLAYER + "      3 w 1"
    tournament = trf.parse(line[:91] + "  \x1f3 w 1", "t.trf")
    assert tournament.players[0].rounds[0].opponent == 3


def test_a_trf_problem_names_the_line_an_editor_shows():
    # str.splitlines ended a line at \x1c too: the problem named line 3 of a 2-line file.
    text = "012 Club\x1cnight\n001    0 m    Morin, Marie\n"
    with pytest.raises(trf.TrfError, match=r"^t.trf:2: columns 5-8: start number 0$"):
        trf.parse(text, "t.trf")


@pytest.mark.parametrize(
    ("declared", "says"),
    [("uft-8", "unknown encoding: uft-8"), ("utf-7", "multi-byte encodings are not supported")],
)
def test_a_fide_xml_list_in_an_encoding_expat_cannot_read_is_refused(tmp_path, declared, says):
    # Found by atheris: LookupError and ValueError out of expat (a traceback).
    path = tmp_path / "players_list_xml_foa.xml"
    path.write_text(
        f'<?xml version="1.0" encoding="{declared}"?>\n<playerslist><player><fideid>1</fideid>'
        "</player></playerslist>\n",
        encoding="ascii",
    )
    with pytest.raises(
        ListProblem, match=f"players_list_xml_foa.xml:1: the XML's encoding: {says}"
    ):
        read_list(path, "fide", "standard", rules=RULES)


def test_a_trf_date_with_a_day_beyond_a_machine_word_is_no_date():
    # Found by atheris: dt.date(2025, 11, 99999999999999999999) raises OverflowError.
    assert trf.parse_date("2025/11/99999999999999999999") is None


def test_a_problem_quoting_control_characters_is_printed_as_one_line(tmp_path, capsys):
    # `$.schema: Invalid value '\r\n'` was printed with the CR LF in it (two lines, and a
    # terminal acts on ESC and CR): each is written as its escape.
    path = tmp_path / "m.json"
    path.write_text('{"schema": "\\r\\n\\u001b[2J"}', encoding="utf-8")
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert len(out.splitlines()) == 1 and "Invalid value '\\r\\n\\x1b[2J'" in out
    records = tmp_path / "r.jsonl"
    records.write_text(
        '{"system":"cfc","pool":"regular","id":"p1","\\u001e":1}\n', encoding="utf-8"
    )
    assert main(["rate", str(path), "--ratings", str(records)]) == 2
    err = capsys.readouterr().err
    assert err == f"rating-service rate: {records}:1: $: Object contains unknown field `\\x1e`\n"
    with pytest.raises(SystemExit, match="2"):  # argparse's own exit
        main(["calc", "norm", "--rating", "\x1e"])
    assert capsys.readouterr().err.splitlines()[-1] == (
        "rating-service: error: unrecognized arguments: --rating \\x1e"
    )


def _zip_of_a_list(damage: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("players_list.csv", "ID Number;Name\n1;A\n")
    data = bytearray(buffer.getvalue())
    if damage == "offset":  # the central directory said to start one byte later
        end = data.rfind(b"PK\x05\x06")
        struct.pack_into("<I", data, end + 16, struct.unpack_from("<I", data, end + 16)[0] + 1)
    else:  # the member marked encrypted
        entry = data.find(b"PK\x01\x02")
        struct.pack_into("<H", data, entry + 8, struct.unpack_from("<H", data, entry + 8)[0] | 1)
    return bytes(data)


@pytest.mark.parametrize(
    ("damage", "says"),
    [("offset", "negative seek value -1"), ("encrypted", "is encrypted, password required")],
)
def test_a_damaged_zip_is_refused_naming_the_file(tmp_path, damage, says):
    # Was: ValueError / RuntimeError out of zipfile (a traceback).
    path = tmp_path / "players_list.zip"
    path.write_bytes(_zip_of_a_list(damage))
    with pytest.raises(ListProblem, match=f"players_list.zip: not a readable zip: .*{says}"):
        read_list(path, "fide", "standard", rules=RULES)


def test_a_value_with_a_line_break_stays_in_the_one_line_of_a_users_error(tmp_path, capsys):
    # `rate` of `{"schema": "\r\n"}`: the error's \n was printed as a line break.
    path = tmp_path / "m.json"
    path.write_text('{"schema": "\\r\\n"}', encoding="utf-8")
    assert main(["rate", str(path)]) == 2
    assert len(capsys.readouterr().err.splitlines()) == 1
