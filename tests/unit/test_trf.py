"""FIDE TRF (service.formats.trf): reading, writing, the mapping onto event.finished/v1, and a
9-round open rated by the FIDE engine with every figure worked by hand."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.events import Bye, Game, PeriodClosed
from schemas.records import PlayerRecord
from schemas.validation import decode_input, normalize
from service.cli.main import main
from service.engine.registry import default_registry
from service.formats import trf
from service.rating import MemoryLedger, apply_message

DATA = Path(__file__).resolve().parents[1] / "data"
OPEN = DATA / "autumn-open-2025.trf"
EVENT_ID = "autumn-open-2025"
E = f"sn5@{EVENT_ID}"  # Echo has no FIDE id: start number 5 at this event
IDENTITY = "autumn-open-2025.2025-11-01.55fb111f"  # the open's own event id (trf.identity)


def open_text() -> str:
    return OPEN.read_text()


def line(
    start: int, rounds: str, rating: str = "2000", fide_id: str = "", name: str | None = None
) -> str:
    """A 001 record in TRF16 columns; `rounds` is the text from column 92 on."""
    name = name or f"Player {start}"
    return f"001 {start:>4} m    {name:<33} {rating:>4} CAN {fide_id:>11} 1990/01/01  0.0    0  {rounds}".rstrip()


def small(*players: str, headers: str = "012 Club night\n042 2025/11/01\n052 2025/11/01\n") -> str:
    return headers + "\n".join(players) + "\n"


# ---------------------------------------------------------------------- round trips
def test_the_open_round_trips_character_for_character():
    text = open_text()
    tournament = trf.parse(text, "open.trf")
    assert trf.render(tournament) == text
    codes = [r.code if isinstance(r, trf.Header) else "001" for r in tournament.records]
    assert set(codes) == {
        "012",
        "022",
        "032",
        "042",
        "052",
        "062",
        "072",
        "082",
        "092",
        "102",
        "112",
        "122",
        "132",
        "001",
        "013",
        "XXR",
        "XXC",
        "XXS",
    }


def test_the_player_record_columns():
    tournament = trf.parse(open_text(), "open.trf")
    anna, _, chloe, _, emil = tournament.players
    assert (
        anna.start,
        anna.sex,
        anna.title,
        anna.name,
        anna.rating,
        anna.federation,
        anna.fide_id,
    ) == (1, "w", "IM", "Alpha, Anna", 2300, "CAN", "1001")
    assert (anna.birth, anna.birth_year, anna.points, anna.rank, anna.line) == (
        "1980/05/01",
        1980,
        7,
        1,
        14,
    )
    assert anna.rounds[:3] == (
        trf.RoundEntry(2, "w", "1"),
        trf.RoundEntry(0, "-", "H"),
        trf.RoundEntry(3, "-", "+"),
    )
    assert chloe.rounds[4] == trf.RoundEntry(None)  # round 5 blank: not in the round
    assert (emil.rating, emil.fide_id, emil.points) == (None, None, Fraction(7, 2))
    assert (
        tournament.header("XXS") == "WW=1 BW=1 PAB=1"
        and tournament.header("092") == "Individual: Swiss-System"
    )


def test_every_result_code_maps_onto_the_contract():
    event = trf.to_event(trf.parse(open_text(), "open.trf"), EVENT_ID)
    assert (event.name, str(event.start_date), str(event.end_date), event.rounds) == (
        "Autumn Open 2025",
        "2025-11-01",
        "2025-11-09",
        9,
    )
    assert [(p.id, p.birth_year) for p in event.players] == [
        ("1001", 1980),
        ("1002", 1985),
        ("1003", 2010),
        ("1004", 1990),
        (E, 2000),
    ]
    g = Game
    assert event.games == [
        g(round=1, a="1001", b="1002", score=1),  # 1 / 0
        g(round=1, a="1003", b="1004", score=0.5),  # = / =
        g(round=2, a="1002", b="1003", score=0),
        g(round=2, a="1004", b=E, score=1),
        g(round=3, a="1001", b="1003", score=1, forfeit=True),  # + / -, colours "-"
        g(round=3, a="1002", b=E, score=0.5),
        g(round=4, a="1003", b=E, score=0),
        g(round=4, a="1004", b="1001", score=0),  # white first
        g(round=5, a=E, b="1001", score=0, forfeit=True),  # L / W: played, not rated
        g(round=6, a="1002", b="1001", score=0.5),
        g(round=6, a="1004", b="1003", score=0),
        g(round=7, a="1001", b="1004", score=0),
        g(round=7, a="1003", b="1002", score=0.5, forfeit=True),  # D / D: played, not rated
        g(round=8, a="1004", b="1002", score=0),
        g(round=8, a=E, b="1003", score=0),
        g(round=9, a="1003", b="1001", score=0),
        g(round=9, a=E, b="1004", score=0.5),
    ]
    assert event.byes == [
        Bye(round=1, player=E, score=1),  # U, XXS PAB=1
        Bye(round=2, player="1001", score=0.5),  # H
        Bye(round=3, player="1004", score=1),  # F
        Bye(round=4, player="1002", score=0),  # Z
        Bye(round=5, player="1002", score=0),  # double forfeit: a zero bye each
        Bye(round=5, player="1004", score=0),
        Bye(round=6, player=E, score=0.5),
        Bye(round=7, player=E, score=0),
        Bye(round=8, player="1001", score=1),
    ]  # rounds 5 (Chloe) and 9 (Boris) are blank: nothing
    decode_input(msgspec.json.encode(event))  # valid on the wire


def test_the_nine_round_open_rated_by_fide_by_hand():
    """Ratings 2300 / 2200 / 2100 / 2000 (established, 60 games) and an unrated newcomer.
    Table 8.1.2: |D| 100 -> PD 0.64 / 0.36, 200 -> 0.76 / 0.24, 300 -> 0.85 / 0.15.
    Not rated: the forfeit A-C (r3), the unrated games A-E (W/L r5) and B-C (D/D r7), the
    double forfeit B-D (r5), every bye; a rated player's games against the unrated E (F2).

    A 2300: r1 B W 1-.64=+.36; r4 D W 1-.85=+.15; r6 B = .5-.64=-.14; r7 D L -.85;
            r9 C W 1-.76=+.24. Sum -0.24; K 20 -> -4.8 -> -5 (8.3.4 away from zero): 2295
    B 2200: r1 A L -.36; r2 C L -.64; r6 A = .5-.36=+.14; r8 D W 1-.76=+.24.
            Sum -0.62; K 20 -> -12.4 -> -12: 2188
    C 2100, born 2010 (from the TRF): junior, K 40 (2025 - 2010 = 15 <= 18, under 2300):
            r1 D = .5-.64=-.14; r2 B W 1-.36=+.64; r6 D W 1-.64=+.36; r9 A L -.24.
            Sum +0.62; K 40 (40 x 4 <= 700) -> 24.8 -> 25: 2125
    D 2000: r1 C = .5-.36=+.14; r4 A L -.15; r6 C L -.36; r7 A W 1-.15=+.85; r8 B L -.24.
            Sum +0.24; K 20 -> 4.8 -> 5: 2005
    E unrated (8.2): against D 2000 L, B 2200 =, C 2100 W, C 2100 L, D 2000 = (the W/L
            game against A does not count): n 5, 2 points. Ra = (10400 + 2 x 1800) / 7 =
            2000; p = 3 / 7 = 0.4286 -> 0.43; dp(0.43) = -50 (8.1.1); Ru = 1950.
    """
    event = decode_input(
        msgspec.json.encode(trf.to_event(trf.parse(open_text(), "open.trf"), EVENT_ID))
    )
    records = [
        PlayerRecord(
            system="fide", pool="standard", id=pid, rating=rating, status="established", games=60
        )
        for pid, rating in (("1001", 2300), ("1002", 2200), ("1003", 2100), ("1004", 2000))
    ]
    ledger = MemoryLedger(records)
    registry = default_registry()
    [out] = apply_message(ledger, event, registry, "1-0").outputs
    got = {
        p.id: (p.details.event_sum_exact, p.details.event_change_exact, p.details.k, p.event_games)
        for p in out.players
    }
    assert got == {
        "1001": ("-6/25", "-24/5", 20, 5),
        "1002": ("-31/50", "-62/5", 20, 4),
        "1003": ("31/50", "124/5", 40, 4),
        "1004": ("6/25", "24/5", 20, 5),
        E: (None, None, None, 5),
    }
    closing = normalize(PeriodClosed(system="fide", pool="standard", period="2025-11"))
    [new_list] = apply_message(ledger, closing, registry, "2-0").outputs
    assert {p.id: (p.old_rating, p.new_rating) for p in new_list.players} == {
        "1001": (2300, 2295),
        "1002": (2200, 2188),
        "1003": (2100, 2125),
        "1004": (2000, 2005),
        E: (None, 1950),
    }


# ---------------------------------------------------------------------- other cases
def test_byes_without_an_opponent_and_pab_score():
    text = small(
        line(1, "0000 - +     2 w 1  0000 - U"),
        line(2, "0000 - -     1 b 0       - Z"),  # blank opponent field, Z
        headers="012 Club\n042 2025/11/01\n052 2025/11/03\nXXS WW=1 PAB=0.5\n",
    )
    event = trf.to_event(trf.parse(text, "c.trf"), "club")
    assert event.byes == [
        Bye(round=1, player="sn1@club", score=1),  # + without opponent
        Bye(round=1, player="sn2@club", score=0),  # - without opponent
        Bye(round=3, player="sn1@club", score=0.5),  # U: PAB 0.5 of WW 1
        Bye(round=3, player="sn2@club", score=0),
    ]
    assert event.games == [Game(round=2, a="sn1@club", b="sn2@club", score=1)] and event.rounds == 3


@pytest.mark.parametrize(
    "start,end",
    [("2005/07/28", "2005/07/31"), ("28. 07. 2005", "31. 07. 2005"), ("28.07.2005", "2005-07-31")],
)
def test_date_formats(start, end):
    text = small(
        line(1, "   2 w 1"), line(2, "   1 b 0"), headers=f"012 X\n042 {start}\n052 {end}\n"
    )
    event = trf.to_event(trf.parse(text, "d.trf"), "d")
    assert (str(event.start_date), str(event.end_date)) == ("2005-07-28", "2005-07-31")


def test_dates_from_the_round_dates_when_042_and_052_are_missing():
    dates = " " * 87 + "25/11/07  25/11/14"
    text = small(
        line(1, "   2 w 1     2 b ="),
        line(2, "   1 b 0     1 w ="),
        headers=f"012 X\n132 {dates}\n",
    )
    event = trf.to_event(trf.parse(text, "d.trf"), "d")
    assert (str(event.start_date), str(event.end_date), event.rounds) == (
        "2025-11-07",
        "2025-11-14",
        2,
    )


BAD = [
    ("foo bar", 4, "unknown record type 'foo'"),
    ("0011   3", 4, "3-character code and a space"),
    (line(3, "   1 w X"), 4, "round 1 (column 92): result 'X' is not a TRF result code"),
    (line(3, "   1 g 1"), 4, "colour 'g' is not w, b or -"),
    (line(3, "  ab w 1"), 4, "opponent 'ab' is not a start number"),
    (line(3, "", rating="20x0"), 4, "columns 49-52: rating '20x0' is not a number"),
    (line(2, ""), 4, "start number 2 already used on line 3"),
    (line(3, "", name=" "), 4, "the player's name is missing"),
    ("042 2025/13/45", 4, "start date '2025/13/45' is not a date"),
    ("XXR nine", 4, "'nine' is not a number"),
    ("XXS WW=one", 4, "XXS 'WW=one' is not KEY=points"),
]


@pytest.mark.parametrize("bad,number,message", BAD)
def test_malformed_lines_name_the_file_and_line(bad, number, message):
    text = "012 X\n042 2025/11/01\n" + line(2, "") + "\n" + bad + "\n"
    with pytest.raises(trf.TrfError) as caught:
        trf.parse(text, "bad.trf")
    assert str(caught.value).startswith(f"bad.trf:{number}: ") and message in str(caught.value)


PAIRING_ERRORS = [
    (("   9 w 1", "   1 b 0"), "opponent 9 has no 001 record"),
    (("   2 w 1", "   3 b 0"), "player 1 plays 2, but line 5 says 3"),
    (("   2 w 1", "   1 b 1"), "results '1' and '1' of the two players do not match"),
    (("   2 w +", "   1 b 0"), "results '+' and '0' of the two players do not match"),
    (("   2 w 1", "   1 w 0"), "both players have colour 'w'"),
    (("   2 w H", "   1 b H"), "bye 'H' with an opponent (2)"),
    (("0000 - 1", ""), "result '1' needs an opponent"),
    (("   2 w  ", "   1 b  "), "opponent 2 without a result"),
]


@pytest.mark.parametrize("rounds,message", PAIRING_ERRORS)
def test_inconsistent_pairings_name_the_line(rounds, message):
    text = small(line(1, rounds[0]), line(2, rounds[1]), line(3, ""))
    with pytest.raises(trf.TrfError) as caught:
        trf.to_event(trf.parse(text, "p.trf"), "p")
    assert str(caught.value).startswith("p.trf:4: round 1") and message in str(caught.value)


def test_no_result_and_no_players_are_refused():
    with pytest.raises(trf.TrfError, match="no round has a result"):
        trf.to_event(trf.parse(small(line(1, "")), "n.trf"), "n")
    with pytest.raises(trf.TrfError, match="no player records"):
        trf.parse("012 X\n", "n.trf")


def test_rewriting_ratings_changes_columns_49_to_52_only():
    text = open_text()
    new = trf.rewrite_text(text, {1: 2295, 3: None, 5: 1950}, "open.trf")
    old_lines, new_lines = text.splitlines(), new.splitlines()
    changed = [i for i, (a, b) in enumerate(zip(old_lines, new_lines)) if a != b]
    assert changed == [13, 15, 17] and len(new) == len(text)
    for i in changed:
        assert old_lines[i][:48] == new_lines[i][:48] and old_lines[i][52:] == new_lines[i][52:]
    assert [p.rating for p in trf.parse(new).players] == [2295, 2200, None, 2000, 1950]
    model = trf.rewrite_ratings(trf.parse(text), {1: 2295, 3: None, 5: 1950})
    assert trf.render(model) == new


@st.composite
def tournaments(draw):
    n = draw(st.integers(1, 12))
    rounds = draw(st.integers(0, 11))
    players = []
    for start in range(1, n + 1):
        entries = []
        for _ in range(draw(st.integers(0, rounds))):
            opponent = draw(st.sampled_from([None, 0, draw(st.integers(1, 9999))]))
            entries.append(
                trf.RoundEntry(
                    opponent,
                    draw(st.sampled_from("wb- ")),
                    draw(st.sampled_from(sorted(trf.RESULTS))),
                )
            )
        while entries and entries[-1] == trf.RoundEntry(None):
            entries.pop()
        players.append(
            trf.PlayerLine(
                start=start,
                name=draw(
                    st.text("abcdefghij ,.-ABC", min_size=1, max_size=33)
                    .map(str.strip)
                    .filter(bool)
                ),
                rating=draw(st.none() | st.integers(1000, 2900)),
                sex=draw(st.sampled_from(["", "m", "w"])),
                title=draw(st.sampled_from(["", "GM", "IM", "WGM", "FM", "CM"])),
                federation=draw(st.sampled_from(["", "CAN", "FRA"])),
                fide_id=draw(st.none() | st.integers(1, 99999999).map(str)),
                birth=draw(st.sampled_from(["", "1990/01/01", "2010.12.31", "1975"])),
                points=draw(st.none() | st.integers(0, 40).map(lambda h: Fraction(h, 2))),
                rank=draw(st.none() | st.integers(1, 999)),
                rounds=tuple(entries),
                line=0,
            )
        )
    headers = [
        trf.Header("012", draw(st.text("abc XYZ-", min_size=1, max_size=40).map(str.rstrip)))
    ]
    return trf.Tournament(tuple(headers + players))


@settings(max_examples=60, deadline=None)
@given(tournaments())
def test_render_then_parse_is_the_identity(tournament):
    text = trf.render(tournament)
    again = trf.parse(text)
    strip = lambda t: [trf.replace(r, line=0) for r in t.records]  # noqa: E731
    assert strip(again) == strip(tournament) and trf.render(again) == text


# ---------------------------------------------------------------------- command line
def test_convert_prints_the_event(capsys):
    assert main(["convert", str(OPEN)]) == 0
    event = json.loads(capsys.readouterr().out)
    assert (event["schema"], event["event_id"], event["system"], event["pool"]) == (
        "event.finished/v1",
        IDENTITY,
        "fide",
        "standard",
    )
    assert event["players"][4]["id"] == f"sn5@{IDENTITY}"
    assert len(event["games"]) == 17 and len(event["byes"]) == 9


def test_convert_a_malformed_file_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.trf"
    bad.write_text(open_text().replace("     4 b 1     5 b W", "     4 b 1     5 b Q"))
    assert main(["convert", str(bad), "--event-id", "x"]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith(f"rating-service convert: {bad}:14: round 5 (column 132): result 'Q'")
        and err.count("\n") == 1
    )


def test_convert_options_and_a_bad_event_id(capsys):
    assert main(["convert", str(OPEN), "--pool", "rapid", "--event-id", "ao-25"]) == 0
    event = json.loads(capsys.readouterr().out)
    assert (event["pool"], event["event_id"], event["players"][4]["id"]) == (
        "rapid",
        "ao-25",
        "sn5@ao-25",
    )
    assert main(["convert", str(OPEN), "--event-id", "has space"]) == 2
    assert "event id 'has space'" in capsys.readouterr().err
    assert main(["convert", str(OPEN), "--pool", "bullet"]) == 2
    assert "--pool 'bullet' is not a fide pool" in capsys.readouterr().err
