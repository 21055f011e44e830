"""The tournament office's TRF (issue 18): the tournament's stable identity as its event id,
CFC / NASPA player ids (XXI lines, an --ids mapping, the refusal, --local-ids), --period,
and `rate` / `validate` reading a TRF offline (--ratings-from-trf, with figures by hand)."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from schemas.validation import decode_input
from service.cli.main import main
from service.formats import trf

DATA = Path(__file__).resolve().parents[1] / "data"
OPEN = DATA / "autumn-open-2025.trf"
CFC = (
    DATA / "club-night-cfc.trf"
)  # XXI ids 100001-100004; FIDE ids in the 001 records of players 1 and 3
IDS = DATA / "club-night-ids.csv"  # the same ids by start number, name and FIDE id
IDENTITY = "autumn-open-2025.2025-11-01.55fb111f"


def line(
    start: int,
    rounds: str,
    rating: str = "2000",
    fide_id: str = "",
    name: str | None = None,
    birth: str = "1990/01/01",
) -> str:
    """A 001 record in TRF16 columns; `rounds` is the text from column 92 on."""
    name = name or f"Player {start}"
    return f"001 {start:>4} m    {name:<33} {rating:>4} CAN {fide_id:>11} {birth:<10}  0.0    0  {rounds}".rstrip()


def identity_of(text: str) -> str:
    return trf.identity(trf.parse(text, "t.trf"))


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, lines
    assert "Traceback" not in text
    return lines[0]


def rate_lines(out: str) -> list[dict]:
    return [json.loads(x) for x in out.splitlines()]


# ---------------------------------------------------------------------- identity
def test_the_identity_is_a_readable_slug_start_date_and_hash():
    assert identity_of(OPEN.read_text()) == IDENTITY
    assert trf.identity_prefix(trf.parse(OPEN.read_text())) == "autumn-open-2025.2025-11-01."


def test_a_reexport_with_other_whitespace_case_accents_and_date_format_is_the_same_tournament():
    text = OPEN.read_text()
    again = (
        text.replace("012 Autumn Open 2025", "012   AUTUMN  open,   2025  ")
        .replace("022 Montreal", "022 Montréal")
        .replace("032 CAN", "032 can")
        .replace("042 2025/11/01", "042 01.11.2025")
        .replace("052 2025/11/09", "052 2025/11/10")  # the end date is not part of it
        .replace("102 Jane Arbiter", "102 Jane Q. Arbiter")
    )
    assert again != text and identity_of(again) == IDENTITY


def test_the_start_date_from_the_round_dates_when_042_is_missing():
    without = OPEN.read_text().replace("042 2025/11/01\n", "")
    assert identity_of(without) == IDENTITY  # 132's first round date is 25/11/01


@pytest.mark.parametrize(
    "change",
    [
        ("042 2025/11/01", "042 2025/11/02"),  # another start date
        ("012 Autumn Open 2025", "012 Autumn Open 2026"),
        ("022 Montreal", "022 Quebec"),
        ("032 CAN", "032 FRA"),
    ],
)
def test_another_name_place_federation_or_start_date_is_another_tournament(change):
    other = identity_of(OPEN.read_text().replace(*change))
    assert other != IDENTITY


def test_long_and_non_latin_names_fit_the_event_and_player_id_patterns():
    long_name = (
        "012 "
        + "The Very Long Annual International Open Championship of the Club"
        + "\n042 2025/11/01\n"
    )
    ident = identity_of(long_name + line(1, "   2 w 1") + "\n" + line(2, "   1 b 0") + "\n")
    assert ident.startswith("the-very-long-annual.2025-11-01.") and len(ident) <= 128
    assert len(f"sn9999@{ident}") <= 64
    greek = identity_of("012 Κύπελλο Αθηνών\n042 2025/11/01\n" + line(1, "") + "\n")
    assert greek.startswith("tournament.2025-11-01.")
    assert greek != identity_of("012 Κύπελλο Πάτρας\n042 2025/11/01\n" + line(1, "") + "\n")


def test_without_a_name_or_a_start_date_there_is_no_identity(tmp_path, capsys):
    with pytest.raises(trf.TrfError, match=r"no tournament name \(012\) to identify .*--event-id"):
        identity_of("042 2025/11/01\n" + line(1, "") + "\n")
    with pytest.raises(trf.TrfError, match=r"no tournament name \(012\) and start date \(042\)"):
        identity_of("022 Ottawa\n" + line(1, "") + "\n")
    nameless = tmp_path / "nameless.trf"
    nameless.write_text(OPEN.read_text().replace("012 Autumn Open 2025\n", ""))
    assert main(["convert", str(nameless)]) == 2
    assert one_line(capsys.readouterr().err).endswith(
        "to identify the tournament by: give --event-id"
    )
    assert (
        main(["convert", str(nameless), "--event-id", "ao-2025"]) == 0
    )  # --event-id still overrides
    assert json.loads(capsys.readouterr().out)["event_id"] == "ao-2025"


def test_a_renamed_copy_converts_to_the_same_event(tmp_path, capsys):
    renamed = tmp_path / "club-autumn-final.txt"  # another name, and .txt: read as TRF by content
    renamed.write_text(OPEN.read_text())
    assert main(["convert", str(OPEN)]) == 0
    first = capsys.readouterr().out
    assert main(["convert", str(renamed)]) == 0
    assert capsys.readouterr().out == first and json.loads(first)["event_id"] == IDENTITY


# ---------------------------------------------------------------------- CFC / NASPA ids
def test_cfc_ids_from_the_xxi_lines_never_the_fide_column():
    tournament = trf.parse(CFC.read_text(), "c.trf")
    assert trf.xx_ids(tournament) == {1: "100001", 2: "100002", 3: "100003", 4: "100004"}
    event = trf.to_event(tournament, "e", "cfc", ids=trf.player_ids(tournament, "e", "cfc"))
    assert [p.id for p in event.players] == ["100001", "100002", "100003", "100004"]
    assert [p.fide_id for p in tournament.players] == ["4000001", None, "4000003", None]


def test_cfc_ids_from_a_mapping_by_start_number_name_and_fide_id():
    text = "\n".join(x for x in CFC.read_text().splitlines() if not x.startswith("XXI")) + "\n"
    tournament = trf.parse(text, "c.trf")
    mapping = trf.read_ids(IDS.read_text(), "ids.csv")
    # start 1 -> 100001; "MORIN,  Marie" finds "Morin, Marie"; FIDE id 4000003; start 4
    assert trf.player_ids(tournament, "e", "cfc", mapping) == {
        1: "100001",
        2: "100002",
        3: "100003",
        4: "100004",
    }


def test_without_ids_cfc_and_naspa_are_refused_naming_the_players(tmp_path, capsys):
    text = "\n".join(
        x for x in CFC.read_text().splitlines() if x != "XXI    2 100002" and x != "XXI    4 100004"
    )
    bare = tmp_path / "bare.trf"
    bare.write_text(text + "\n")
    for system in ("cfc", "naspa"):
        assert main(["convert", str(bare), "--system", system]) == 2
        assert one_line(capsys.readouterr().err) == (
            f"rating-service convert: {bare}: no {system} player id for 2 players: 2 Morin, Marie (line 8), "
            "4 Ouellet, Olivier (line 10); give `XXI <start number> <id>` lines, --ids FILE.csv, or --local-ids"
        )
    assert main(["convert", str(bare), "--system", "cfc", "--local-ids"]) == 0
    event = json.loads(capsys.readouterr().out)
    ident = event["event_id"]
    assert [p["id"] for p in event["players"]] == [
        "100001",
        f"sn2@{ident}",
        "100003",
        f"sn4@{ident}",
    ]
    assert (
        main(["convert", str(bare), "--system", "cfc", "--ids", str(IDS)]) == 0
    )  # the mapping fills them
    assert [p["id"] for p in json.loads(capsys.readouterr().out)["players"]] == [
        "100001",
        "100002",
        "100003",
        "100004",
    ]


def test_xxi_and_mapping_must_agree_and_bad_lines_are_named(tmp_path, capsys):
    clash = tmp_path / "ids.csv"
    clash.write_text("start,id\n1,999999\n")
    assert main(["convert", str(CFC), "--system", "cfc", "--ids", str(clash)]) == 2
    assert one_line(capsys.readouterr().err).endswith(
        f"{CFC}:7: player 1 Lapointe, Luc: XXI says 100001, {clash} says 999999"
    )
    bad = tmp_path / "bad.csv"
    bad.write_text("start,id\n1,100001\n1,100009\nx,100002\n3,has space\n")
    with pytest.raises(trf.TrfError) as caught:
        trf.read_ids(bad.read_text(), "bad.csv")
    assert caught.value.problems == [
        "bad.csv:3: start '1' already has id 100001 on line 2",
        "bad.csv:4: start 'x' is not a start number",
        "bad.csv:5: id 'has space' is not 1-64 of [A-Za-z0-9._:@/-]",
    ]
    with pytest.raises(
        trf.TrfError, match=r"the header needs a column `id` and one of start, fide_id, name"
    ):
        trf.read_ids("cfc,rating\n1,1500\n", "h.csv")
    for xx, message in (
        ("XXI 9 100009", "start number 9 has no 001 record"),
        ("XXI 1", "is `XXI <start number> <player id>`"),
        ("XXI 2 100001", "player id 100001 is also player 1's"),
    ):
        with pytest.raises(trf.TrfError, match=message):
            t = trf.parse(CFC.read_text().replace("XXI    2 100002", xx), "x.trf")
            trf.to_event(t, "e", "cfc")
    assert main(["convert", str(OPEN), "--ids", str(IDS)]) == 2  # FIDE: the FIDE ids
    assert "--ids and --local-ids apply to cfc and naspa" in one_line(capsys.readouterr().err)


# ---------------------------------------------------------------------- --period, trf-ratings
def test_period_for_fide_only(capsys):
    assert main(["convert", str(OPEN), "--period", "2025-12"]) == 0
    assert json.loads(capsys.readouterr().out)["period"] == "2025-12"
    assert main(["convert", str(OPEN)]) == 0
    assert (
        json.loads(capsys.readouterr().out)["period"] is None
    )  # the service: the month of the end date
    for bad, message in (
        (["--period", "2025-13"], "--period '2025-13' is not a month YYYY-MM"),
        (["--period", "2025-10"], "--period 2025-10 is before the tournament started (2025-11-01)"),
        (["--system", "cfc", "--local-ids", "--period", "2025-12"], "--period applies to FIDE"),
    ):
        assert main(["convert", str(OPEN), *bad]) == 2
        assert message in one_line(capsys.readouterr().err)


def test_trf_ratings_defaults_the_pool(capsys):
    # No Redis answers on port 1: the parser accepted the command without --pool.
    assert main(["trf-ratings", str(OPEN), "--redis-url", "redis://127.0.0.1:1/0"]) == 2
    assert one_line(capsys.readouterr().err).startswith(
        "rating-service trf-ratings: Redis at redis://127.0.0.1:1/0"
    )


# ---------------------------------------------------------------------- validate
def test_validate_a_trf(tmp_path, capsys):
    assert main(["validate", str(OPEN)]) == 0
    assert capsys.readouterr().out == (
        f"{OPEN}: ok (TRF: event {IDENTITY}, fide/standard, 5 players, 9 rounds, "
        "17 games, 9 byes)\n"
    )


def test_validate_lists_every_problem_with_its_line(tmp_path, capsys):
    bad = tmp_path / "bad.txt"  # .txt: a TRF by its content
    bad.write_text(
        OPEN.read_text()
        .replace("     4 b 1     5 b W", "     4 b 1     5 b Q")
        .replace(
            "001    4 m CM Delta, Dmitri                     2000",
            "001    4 m CM Delta, Dmitri                     20x0",
        )
        .replace("XXR 9", "XXR nine")
    )
    assert main(["validate", str(bad)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{bad}:14: round 5 (column 132): result 'Q' is not a TRF result code (1 = 0 W D L + - H F U Z)",
        f"{bad}:17: columns 49-52: rating '20x0' is not a number",
        f"{bad}:20: number of rounds 'nine' is not a number",
    ]
    pairing = tmp_path / "pairing.trf"  # it reads, but the pairings do not agree
    pairing.write_text(
        OPEN.read_text()
        .replace("     4 b 1     5 b W", "     4 b 1     9 b W")
        .replace("   3 w 0     1 b 1     2 w 0     5 b =", "   3 w 0     1 b 1     2 w 0     5 b 1")
    )
    assert main(["validate", str(pairing)]) == 1
    assert (
        capsys.readouterr().out.splitlines()
        == [
            f"{pairing}:14: round 5: opponent 9 has no 001 record",
            f"{pairing}:17: round 9: results '1' and '=' of the two players do not match",
            f"{pairing}:18: round 5: player 5 plays 1, but line 14 says 9",  # both sides of the bad pairing
        ]
    )


# ---------------------------------------------------------------------- rate
def test_rate_a_trf_from_its_own_ratings_is_the_hand_worked_open(capsys):
    """The open's 001 ratings 2300 / 2200 / 2100 / 2000 (Echo blank: unrated) as the starting
    list: the same figures as test_trf's hand-worked FIDE rating (which starts from records
    with 60 games): with --ratings-from-trf every rated player has 30 games (K 20, not 40),
    Chloe (born 2010) is a junior under 2300 (K 40), nobody is 2400+."""
    assert main(["rate", str(OPEN), "--ratings-from-trf"]) == 0
    [out] = rate_lines(capsys.readouterr().out)
    assert out["event_id"] == IDENTITY
    got = {
        p["id"]: (
            p["old_rating"],
            p["details"]["k"],
            p["details"]["event_change_exact"],
            p["details"]["projected_rating"],
        )
        for p in out["players"]
        if p["old_rating"] is not None
    }
    assert got == {
        "1001": (2300, 20, "-24/5", 2295),
        "1002": (2200, 20, "-62/5", 2188),
        "1003": (2100, 40, "124/5", 2125),
        "1004": (2000, 20, "24/5", 2005),
    }
    echo = next(p for p in out["players"] if p["id"] == f"sn5@{IDENTITY}")
    assert (echo["old_rating"], echo["old_status"]) == (None, "unrated")


def test_rate_from_the_trf_k_inputs_by_hand(tmp_path, capsys):
    """K from the TRF's rating and birth date (FIDE 8.3.3, table 8.1.2):
    A 2450 born 1980: ever 2400 -> K 10. Beats B: D +400, PD 0.92: 10 x 0.08 = +0.8 -> +1: 2451.
      A's round-2 win against D (unrated, blank rating) is not rated (F2).
    B 2050 born 1990, 30 games assumed -> K 20. Loses to A: 0 - 0.08; draws C: D +250, PD 0.81:
      0.5 - 0.81 = -0.31. Sum -0.39 x 20 = -7.8 -> -8: 2042.
    C 1800 born 2012: a junior (2025 - 2012 = 13) under 2300 -> K 40. Draws B: 0.5 - 0.19 =
      +0.31 x 40 = +12.4 -> +12: 1812."""
    text = (
        "012 K check\n042 2025/11/01\n052 2025/11/02\n"
        + line(1, "   2 w 1     4 w 1", rating="2450", fide_id="2001", birth="1980/01/01")
        + "\n"
        + line(2, "   1 b 0     3 w =", rating="2050", fide_id="2002", birth="1990/01/01")
        + "\n"
        + line(3, "             2 b =", rating="1800", fide_id="2003", birth="2012/05/05")
        + "\n"
        + line(4, "             1 b 0", rating="", birth="2000/01/01")
        + "\n"
    )
    path = tmp_path / "k.trf"
    path.write_text(text)
    records = tmp_path / "after.jsonl"
    assert main(["rate", str(path), "--ratings-from-trf", "--out-ratings", str(records)]) == 0
    [out] = rate_lines(capsys.readouterr().out)
    got = {p["id"]: (p["details"]["k"], p["details"]["projected_rating"]) for p in out["players"]}
    assert {k: v for k, v in got.items() if k != f"sn4@{out['event_id']}"} == {
        "2001": (10, 2451),
        "2002": (20, 2042),
        "2003": (40, 1812),
    }
    after = {r["id"]: r for r in map(json.loads, records.read_text().splitlines())}
    assert (after["2002"]["status"], after["2002"]["games"], after["2003"]["birth_year"]) == (
        "established",
        30,
        2012,
    )  # FIDE counts games at the close


def test_rate_from_the_trf_equals_rate_of_the_equivalent_json_and_list(tmp_path, capsys):
    """CFC: --ratings-from-trf is the list `id,rating,status,games,highest` with 25 games and
    highest = rating (the TRF has neither); the TRF rated is its converted JSON rated."""
    assert main(["rate", str(CFC), "--system", "cfc", "--ratings-from-trf"]) == 0
    from_trf = capsys.readouterr().out
    assert main(["convert", str(CFC), "--system", "cfc"]) == 0
    event = tmp_path / "event.json"
    event.write_text(capsys.readouterr().out)
    listing = tmp_path / "list.csv"
    listing.write_text(
        "id,system,pool,rating,status,games,highest,name\n"
        '100001,cfc,regular,1600,established,25,1600,"Lapointe, Luc"\n'
        '100002,cfc,regular,1500,established,25,1500,"Morin, Marie"\n'
        '100003,cfc,regular,1450,established,25,1450,"Nguyen, Nam"\n'
    )
    assert main(["rate", str(event), "--ratings", str(listing)]) == 0
    from_json = capsys.readouterr().out.replace(f"{event}:1", str(CFC))  # source_id: the file
    assert from_trf == from_json
    [out] = rate_lines(from_trf)
    assert {p["id"]: p["old_rating"] for p in out["players"]} == {
        "100001": 1600,
        "100002": 1500,
        "100003": 1450,
        "100004": None,
    }


def test_rate_a_trf_without_a_list_and_the_option_mistakes(tmp_path, capsys):
    assert main(["rate", str(OPEN)]) == 0  # everyone unrated: nobody has a FIDE change
    [out] = rate_lines(capsys.readouterr().out)
    assert all(p["old_rating"] is None for p in out["players"])
    assert main(["rate", str(OPEN), "--ratings-from-trf", "--ratings", str(IDS)]) == 2
    assert "--ratings and --ratings-from-trf: give one starting list" in one_line(
        capsys.readouterr().err
    )
    json_event = tmp_path / "e.json"
    assert main(["convert", str(OPEN)]) == 0
    json_event.write_text(capsys.readouterr().out)
    assert main(["rate", str(json_event), "--ratings-from-trf"]) == 2
    assert one_line(capsys.readouterr().err).endswith(
        "--ratings-from-trf apply to a TRF file only: a JSON message names its own"
    )


def test_the_converted_event_is_valid_on_the_wire():
    for path, system in ((OPEN, "fide"), (CFC, "cfc")):
        t = trf.parse(path.read_text(), str(path))
        ident = trf.identity(t)
        decode_input(
            msgspec.json.encode(
                trf.to_event(t, ident, system, ids=trf.player_ids(t, ident, system))
            )
        )
