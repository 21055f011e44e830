"""`rating-service rate --table` (service/formats/reports.py) and the output's numbers.

Golden outputs: one small event per system, its report written out here in full. Each is
cross-checked against the JSON of `rate` for the same input, in the same test: every figure
the report shows is found in the message (old and new ratings, changes, performance, FIDE's
per-game D, PD, W - We, K x (W - We) and sums), so the report can only show what was rated.
"""

from __future__ import annotations

import json
import re

from schemas.ratings import RatingsUpdated
from service.cli.main import main
from service.formats import reports

CFC_EVENT = {
    "schema": "event.finished/v1",
    "event_id": "ottawa-fall-open-2025",
    "system": "cfc",
    "pool": "regular",
    "name": "Ottawa Fall Open",
    "start_date": "2025-11-01",
    "end_date": "2025-11-02",
    "rounds": 4,
    "players": [
        {"id": "100001", "name": "Anne Tremblay"},
        {"id": "100002", "name": "Bruno Roy"},
        {"id": "100003", "name": "Chloe Wong"},
        {"id": "100004", "name": "David Singh"},
        {"id": "100005", "name": "Elif Kaya"},
    ],
    "games": [
        {"round": 1, "a": "100001", "b": "100002", "score": 1},
        {"round": 1, "a": "100003", "b": "100004", "score": 0.5},
        {"round": 2, "a": "100002", "b": "100003", "score": 0},
        {"round": 2, "a": "100004", "b": "100005", "score": 1},
        {"round": 3, "a": "100001", "b": "100003", "score": 0.5},
        {"round": 3, "a": "100005", "b": "100002", "score": 0},
        {"round": 4, "a": "100004", "b": "100001", "score": 0},
        {"round": 4, "a": "100005", "b": "100003", "score": 0, "forfeit": True},
    ],
    "byes": [
        {"round": 1, "player": "100005", "score": 1},
        {"round": 2, "player": "100001", "score": 0.5},
        {"round": 3, "player": "100004", "score": 1},
        {"round": 4, "player": "100002", "score": 0},
    ],
}
CFC_RATINGS = [
    {
        "system": "cfc",
        "pool": "regular",
        "id": "100001",
        "rating": 1850,
        "status": "established",
        "games": 120,
        "highest": 1902,
    },
    {
        "system": "cfc",
        "pool": "regular",
        "id": "100002",
        "rating": 1620,
        "status": "established",
        "games": 64,
        "highest": 1655,
    },
    {
        "system": "cfc",
        "pool": "regular",
        "id": "100003",
        "rating": 1710,
        "status": "provisional",
        "games": 12,
        "cfc": {"provisional_sum": "20520"},
    },
    {
        "system": "cfc",
        "pool": "regular",
        "id": "100004",
        "rating": 1540,
        "status": "established",
        "games": 200,
        "highest": 1600,
    },
]

CFC_TABLE = """\
ottawa-fall-open-2025  cfc/regular  cfc-2009  entry {events}:1
  Ottawa Fall Open  2025-11-01 to 2025-11-02
  No.  Name           ID        Old  R1  R2  R3  R4  Score     Perf    New  Chg
    1  Anne Tremblay  100001   1850  W4  H   D2  W3      3  1896.33   1859   +9
    2  Chloe Wong     100003  1710P  D3  W4  D1  X5      3  1803.33  1729P  +19
    3  David Singh    100004   1540  D2  W5  B   L1    2.5  1586.33   1551  +11
    4  Bruno Roy      100002   1620  L1  L2  W5  U       1     1453   1609  -11
    5  Elif Kaya      100005   unr.  B   L3  L4  F2      1     1180  1180P    -
  W/L/D win/loss/draw against number, X/F forfeit won/lost, B/H/U bye of 1/0.5/0, - no game
  P provisional (714a); Perf the event's performance (714a form); Score with byes and forfeits
  714c bonus (participation + result): 100001 +3+0, 100004 +4.5+0, 100002 +4.5+0
"""


def write_lines(path, documents):
    path.write_text("".join(json.dumps(d) + "\n" for d in documents))
    return str(path)


def rate(capsys, events, ratings, table):
    assert main(["rate", events, "--ratings", ratings, *(["--table"] if table else [])]) == 0
    return capsys.readouterr().out


def messages(text: str) -> list[RatingsUpdated]:
    import msgspec

    return [msgspec.json.decode(line, type=RatingsUpdated) for line in text.splitlines()]


def row_of(text: str, player_id: str) -> list[str]:
    """The cells of the table row (two-space separated) that holds `player_id` as a cell."""
    rows = [re.split(r" {2,}", line.strip()) for line in text.splitlines()]
    (row,) = [r for r in rows if player_id in r]
    return row


def test_cfc_crosstable(tmp_path, capsys):
    events = write_lines(tmp_path / "events.jsonl", [CFC_EVENT])
    ratings = write_lines(tmp_path / "ratings.jsonl", CFC_RATINGS)
    text = rate(capsys, events, ratings, table=True)
    assert text == CFC_TABLE.format(events=events) + "\n"
    assert (
        max(len(line) for line in text.splitlines() if " entry " not in line) <= reports.WIDTH
    )  # (headings name the file)
    (message,) = messages(rate(capsys, events, ratings, table=False))
    for p in message.players:
        cells = row_of(text, p.id)
        old, new = cells[3].rstrip("P"), cells[-2].rstrip("P")
        assert old == ("unr." if p.old_rating is None else str(p.old_rating))
        assert new == str(p.new_rating) and cells[-2].endswith("P") == (p.status == "provisional")
        assert cells[-3] == reports.number(p.performance)
        assert cells[-1] == ("-" if p.change is None else f"{p.change:+d}")
    # By hand (714a form, (sum of opponent values + 400(W - L)) / N; Chloe counts at her
    # post-event 1729 for the 714b players, C9):
    # Anne: (1620 + 1729 + 1540 + 400 x 2) / 3 = 5689/3 = 1896.333... -> 1896.33
    # Chloe (provisional, 12 games, sum 20520): (1540 + 1620 + 1850 + 400 x 1) / 3 = 5410/3
    #   -> 1803.33; new (20520 + 5410) / 15 = 1728.67 -> 1729 (+19)
    # David: (1729 + 1180 + 1850 + 0) / 3 = 4759/3 -> 1586.33; Bruno: (1850 + 1729 + 1180 - 400) / 3 = 1453
    # Elif (unrated, 2 rated games lost): (1540 + 1620 - 800) / 2 = 1180
    # Round 4: Chloe's forfeit win over number 5 (X5) is Elif's loss (F2); neither is rated.
    # Scores count byes: Anne W + H + D + W = 3; Bruno L + L + W + U = 1.
    perf = {p.id: (p.performance, p.details.performance_exact) for p in message.players}
    assert perf == {
        "100001": (1896.33, "5689/3"),
        "100003": (1803.33, "5410/3"),
        "100004": (1586.33, "4759/3"),
        "100002": (1453, "1453"),
        "100005": (1180, "1180"),
    }
    assert {p.id: p.event_games for p in message.players} == {
        "100001": 3,
        "100002": 3,
        "100003": 3,
        "100004": 3,
        "100005": 2,
    }


FIDE_MESSAGES = [
    {
        "schema": "event.finished/v1",
        "event_id": "montreal-evening",
        "system": "fide",
        "pool": "standard",
        "name": "Montreal Evening",
        "start_date": "2025-11-14",
        "end_date": "2025-11-16",
        "rounds": 3,
        "players": [
            {"id": "2010001", "name": "Ana Ferreira"},
            {"id": "2010003", "name": "Chen Mei"},
            {"id": "2010004", "name": "Dmitri Volkov"},
            {"id": "2010005", "name": "Esther Okafor"},
        ],
        "games": [
            {"round": 1, "a": "2010001", "b": "2010004", "score": 1},
            {"round": 1, "a": "2010003", "b": "2010005", "score": 1},
            {"round": 2, "a": "2010004", "b": "2010003", "score": 0.5},
            {"round": 2, "a": "2010005", "b": "2010001", "score": 0},
            {"round": 3, "a": "2010001", "b": "2010003", "score": 0.5},
            {"round": 3, "a": "2010004", "b": "2010005", "score": 1},
        ],
    },
    {"schema": "period.closed/v1", "system": "fide", "pool": "standard", "period": "2025-11"},
]
FIDE_RATINGS = [
    {
        "system": "fide",
        "pool": "standard",
        "id": "2010001",
        "rating": 2412,
        "status": "established",
        "games": 410,
        "birth_year": 1990,
        "ever_2300": True,
        "ever_2400": True,
    },
    {
        "system": "fide",
        "pool": "standard",
        "id": "2010003",
        "rating": 2105,
        "status": "established",
        "games": 95,
        "birth_year": 2009,
    },
    {
        "system": "fide",
        "pool": "standard",
        "id": "2010004",
        "rating": 1890,
        "status": "established",
        "games": 22,
        "birth_year": 1979,
    },
]

# By hand (FIDE 8.3.1-8.3.4, table 8.1.2; K: Ana 10 (2400 reached), Chen 40 (under 18,
# below 2300), Dmitri 40 (under 30 games)). Games against Esther, unrated when the event
# started, count for nobody rated (F2).
# Ana vs Dmitri: D = 522 -> 400 (400-point rule), PD .92, W 1: +.08, x 10 = .80
# Ana vs Chen: D = 307 -> .86, W .5: -.36, x 10 = -3.60; sum -.28, x 10 = -2.80 -> -3: 2409
# Chen vs Dmitri: D = 215 -> .77, W .5: -.27, x 40 = -10.80; vs Ana: D = -307 -> 1 - .86 = .14,
#   +.36, x 40 = 14.40; sum .09, x 40 = 3.60 -> +4: 2109
# Dmitri vs Ana: D = -400, PD .08, W 0: -.08 (-3.20); vs Chen: .23, +.27 (10.80); sum .19,
#   x 40 = 7.60 -> +8: 1898
# Esther: 3 games against rated players, 0 points: her first event scored zero and is
#   disregarded (7.1.4), leaving 0 of the 5 games 8.2 needs.
FIDE_TABLE = """\
montreal-evening  fide/standard  fide-2024  entry {events}:1
  Montreal Evening  2025-11-14 to 2025-11-16
  2010001  Ana Ferreira  rating 2412  K 10  period 2025-11
    Rd  Opponent  Rating    D    PD    W   W-We  K x (W-We)
     1  2010004     1890  400  0.92    1   0.08        0.80
     3  2010003     2105  307  0.86  0.5  -0.36       -3.60
        sum                    1.78  1.5  -0.28       -2.80
    K x sum = 10 x -0.28 = -2.80
    period 2025-11 so far: 2 games, sum -0.28; projected rating 2409 (-3)

  2010003  Chen Mei  rating 2105  K 40  period 2025-11
    Rd  Opponent  Rating     D    PD    W   W-We  K x (W-We)
     2  2010004     1890   215  0.77  0.5  -0.27      -10.80
     3  2010001     2412  -307  0.14  0.5   0.36       14.40
        sum                     0.91    1   0.09        3.60
    K x sum = 40 x 0.09 = 3.60
    period 2025-11 so far: 2 games, sum 0.09; projected rating 2109 (+4)

  2010004  Dmitri Volkov  rating 1890  K 40  period 2025-11
    Rd  Opponent  Rating     D    PD    W   W-We  K x (W-We)
     1  2010001     2412  -400  0.08    0  -0.08       -3.20
     2  2010003     2105  -215  0.23  0.5   0.27       10.80
        sum                     0.31  0.5   0.19        7.60
    K x sum = 40 x 0.19 = 7.60
    period 2025-11 so far: 2 games, sum 0.19; projected rating 1898 (+8)

  2010005  Esther Okafor  unrated  period 2025-11
    Rd  Opponent  Rating  W
     1  2010003     2105  0
     2  2010001     2412  0
     3  2010004     1890  0
    initial rating (8.2): 0 games, 0 points so far: 0 games against rated opponents, fewer than 5
    first event montreal-evening disregarded: it scored 0 (7.1.4)

list 2025-11 (1/1)  fide/standard  fide-2024  entry {events}:2
  ID       Name            Old   New  Chg  Status       Games  Score      Sum   K  K x sum  Next K
  2010001  Ana Ferreira   2412  2409   -3  established      2    1.5    -0.28  10    -2.80      10
  2010003  Chen Mei       2105  2109   +4  established      2      1     0.09  40     3.60      40
  2010004  Dmitri Volkov  1890  1898   +8  established      2    0.5     0.19  40     7.60      40
  2010005  Esther Okafor  unr.  unr.    -  unrated          3      0  initial   -        -       -
"""


def test_fide_calculator_and_list(tmp_path, capsys):
    events = write_lines(tmp_path / "events.jsonl", FIDE_MESSAGES)
    ratings = write_lines(tmp_path / "ratings.jsonl", FIDE_RATINGS)
    text = rate(capsys, events, ratings, table=True)
    assert text == FIDE_TABLE.format(events=events) + "\n"
    assert max(len(line) for line in text.splitlines() if " entry " not in line) <= reports.WIDTH
    event, listed = messages(rate(capsys, events, ratings, table=False))
    blocks = text.strip().split("\n\n")  # the players of the event, then the list
    for p in event.players:
        d = p.details
        (block,) = [
            b for b in blocks[:-1] if any(line.startswith(f"  {p.id}  ") for line in b.splitlines())
        ]
        for g in d.games:  # each game's line holds the message's figures, as printed
            cells = row_of(block, g.opponent)
            expected = [str(g.round), g.opponent, str(g.opponent_rating)]
            if d.k is not None:
                expected += [
                    str(g.difference),
                    f"{g.expected:.2f}",
                    reports.number(g.score),
                    f"{g.change:.2f}",
                    f"{g.rating_change:.2f}",
                ]
            else:
                expected += [reports.number(g.score)]
            assert cells == expected
        if d.k is not None:
            assert row_of(block, "sum") == [
                "sum",
                f"{p.expected:.2f}",
                reports.number(p.score),
                f"{d.event_sum:.2f}",
                f"{d.event_change:.2f}",
            ]
            assert f"projected rating {d.projected_rating} " in block
    assert {
        p.id: (p.details.event_sum_exact, p.details.event_change_exact)
        for p in event.players
        if p.details.k
    } == {
        "2010001": ("-7/25", "-14/5"),
        "2010003": ("9/100", "18/5"),
        "2010004": ("19/100", "38/5"),
    }
    for p in listed.players:
        cells = row_of(blocks[-1], p.id)
        assert cells[2:5] == [
            reports.number(p.old_rating) if p.old_rating else "unr.",
            reports.number(p.new_rating) if p.new_rating else "unr.",
            reports.signed(p.change),
        ]
        if p.details.k_applied is not None:
            assert cells[-4:] == [
                f"{p.details.period_sum:.2f}",
                str(p.details.k_applied),
                f"{p.details.period_change:.2f}",
                str(p.details.k),
            ]
    assert {p.id: p.new_rating for p in listed.players} == {
        "2010001": 2409,
        "2010003": 2109,
        "2010004": 1898,
        "2010005": None,
    }


NASPA_EVENT = {
    "schema": "event.finished/v1",
    "event_id": "toronto-club-2025-11-20",
    "system": "naspa",
    "pool": "nwl",
    "name": "Toronto Scrabble Club",
    "start_date": "2025-11-20",
    "end_date": "2025-11-20",
    "rounds": 3,
    "players": [
        {"id": "NA-1001", "name": "Gail Morrison"},
        {"id": "NA-1002", "name": "Hiro Tanaka"},
        {"id": "NA-1003", "name": "Ines Duarte"},
        {"id": "NA-1004", "name": "Jonah Weiss"},
    ],
    "games": [
        {"round": 1, "a": "NA-1001", "b": "NA-1002", "score": 1},
        {"round": 1, "a": "NA-1003", "b": "NA-1004", "score": 0},
        {"round": 2, "a": "NA-1001", "b": "NA-1003", "score": 1},
        {"round": 2, "a": "NA-1002", "b": "NA-1004", "score": 0.5},
        {"round": 3, "a": "NA-1004", "b": "NA-1001", "score": 0},
        {"round": 3, "a": "NA-1002", "b": "NA-1003", "score": 1},
    ],
}
NASPA_RATINGS = [
    {
        "system": "naspa",
        "pool": "nwl",
        "id": "NA-1001",
        "rating": 1612,
        "status": "established",
        "games": 340,
    },
    {
        "system": "naspa",
        "pool": "nwl",
        "id": "NA-1002",
        "rating": 1405,
        "status": "established",
        "games": 41,
    },
    {
        "system": "naspa",
        "pool": "nwl",
        "id": "NA-1003",
        "rating": 1180,
        "status": "established",
        "games": 96,
    },
]

# By hand (N1: E(r, o) = 1 / (1 + exp(-0.0031879 (r - o))); N5): Gail 1612 against 1405,
# 1180 and Jonah's unrounded new 1399: exp(-0.65990) = 0.51687 -> 0.65925; exp(-1.37717) =
# 0.25228 -> 0.79855; exp(-0.67902) = 0.50712 -> 0.66352; expected wins 2.1213 -> 2.12.
# 1612 + 20 x (3 - 2.1213) = 1629.574; acceleration 17.574 - 5 x 3 = 2.574: 1632.148 -> 1632.
NASPA_TABLE = """\
toronto-club-2025-11-20  naspa/nwl  nsa2008  entry {events}:1
  Toronto Scrabble Club  2025-11-20
  No.  Name           ID       Games      W-L  Expected   Old   New  Chg  Opponents by round
    1  Gail Morrison  NA-1001      3      3-0      2.12  1612  1632  +20  +2 +4 +3
    2  Hiro Tanaka    NA-1002      3  1.5-1.5      1.52  1405  1405   +0  -1 =3 +4
    3  Jonah Weiss    NA-1004      3  1.5-1.5      1.50  unr.  1399    -  +4 =2 -1
    4  Ines Duarte    NA-1003      3      0-3      0.86  1180  1163  -17  -3 -1 -2
  Opponents: +n won, -n lost, =n drawn against number n (f: forfeit, not rated)
  newcomers rated by the iterative performance rating (N2-N4): NA-1004
"""


def test_naspa_report(tmp_path, capsys):
    events = write_lines(tmp_path / "events.jsonl", [NASPA_EVENT])
    ratings = write_lines(tmp_path / "ratings.jsonl", NASPA_RATINGS)
    text = rate(capsys, events, ratings, table=True)
    assert text == NASPA_TABLE.format(events=events) + "\n"
    (message,) = messages(rate(capsys, events, ratings, table=False))
    for p in message.players:
        cells = row_of(text, p.id)
        assert cells[3:9] == [
            str(p.event_games),
            cells[4],
            f"{p.expected:.2f}",
            reports._rating(p.old_rating),
            str(p.new_rating),
            reports.signed(p.change),
        ]
    gail = next(p for p in message.players if p.id == "NA-1001")
    assert (gail.expected, gail.details.acceleration, gail.details.unrounded_rating) == (
        2.12,
        2.57,
        1632.15,
    )
    assert [o.expected for o in gail.details.opponents] == [0.66, 0.8, 0.66]


def test_no_long_float_in_any_output(tmp_path, capsys):
    # Every decimal of the JSON is written with at most 2 decimals (schemas/ratings.py "Numbers").
    for documents, records in (
        (CFC_EVENT, CFC_RATINGS),
        (FIDE_MESSAGES, FIDE_RATINGS),
        (NASPA_EVENT, NASPA_RATINGS),
    ):
        events = write_lines(
            tmp_path / "events.jsonl", documents if isinstance(documents, list) else [documents]
        )
        ratings = write_lines(tmp_path / "ratings.jsonl", records)
        out = rate(capsys, events, ratings, table=False)
        numbers = re.findall(r"(?<=[:\[,])-?\d+\.\d+(?=[,}\]])", out)
        assert numbers and all(len(n.split(".")[1]) <= 2 for n in numbers), [
            n for n in numbers if len(n.split(".")[1]) > 2
        ]


def test_render_without_the_event_lists_the_changes():
    # A message whose event is not at hand (e.g. a revision of an event read elsewhere) is
    # shown as its players' changes.
    import msgspec

    raw = {
        "schema": "ratings.updated/v1",
        "kind": "revision",
        "system": "cfc",
        "pool": "regular",
        "ruleset": "cfc-2009",
        "source_id": "1-0",
        "event_id": "e1",
        "revision": 2,
        "cause": {"type": "inserted", "event_id": "e0"},
        "players": [
            {
                "id": "p1",
                "old_rating": 1500,
                "new_rating": 1532,
                "change": 32,
                "old_status": "established",
                "status": "established",
                "games": 43,
                "event_games": 3,
                "score": 2.5,
                "name": "Pat",
            }
        ],
    }
    message = msgspec.json.decode(json.dumps(raw), type=RatingsUpdated)
    assert reports.render(message).splitlines() == [
        "e1  REVISION 2  cfc/regular  cfc-2009  entry 1-0",
        "  re-rated after the late arrival of e0",
        "  ID  Name   Old   New  Chg  Status       Games  Score",
        "  p1  Pat   1500  1532  +32  established      3    2.5",
    ]


def test_rate_table_help():
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "service", "rate", "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0 and "--table" in done.stdout and "crosstable" in done.stdout
