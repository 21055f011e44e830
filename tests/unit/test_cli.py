"""The command line's paths: exit codes and one-line messages, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys

from service.cli.main import main
from tests.messages import event


def write_lines(path, messages):
    path.write_text("".join(json.dumps(m) + "\n" for m in messages))
    return str(path)


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, lines
    assert "Traceback" not in text
    return lines[0]


def test_help_lists_every_command(capsys):
    try:
        main(["--help"])
    except SystemExit as exc:
        assert exc.code == 0
    out = capsys.readouterr().out
    for command in ("validate", "rate", "schemas"):
        assert command in out


def test_validate_ok_and_problems(tmp_path, capsys):
    good = write_lines(tmp_path / "good.jsonl", [event(), event(event_id="e2")])
    assert main(["validate", good]) == 0
    assert "ok (2 messages)" in capsys.readouterr().out
    bad_event = event()
    bad_event["games"][0]["score"] = 3
    bad = write_lines(tmp_path / "bad.jsonl", [event(), bad_event])
    assert main(["validate", bad]) == 1
    line = one_line(capsys.readouterr().out)
    assert line.startswith(f"{bad}:2: $.games[0].score:")


def test_validate_a_pretty_printed_file(tmp_path, capsys):
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event(), indent=2))
    assert main(["validate", str(path)]) == 0
    assert "ok (1 message)" in capsys.readouterr().out


def test_validate_records_and_outputs(tmp_path, capsys):
    record = {
        "schema": "player.record/v1",
        "system": "cfc",
        "pool": "regular",
        "id": "p1",
        "rating": 1500,
        "status": "established",
        "games": 40,
    }
    bad_record = dict(record, rating="high")
    path = write_lines(tmp_path / "records.jsonl", [record, bad_record])
    assert main(["validate", path]) == 1
    assert (
        one_line(capsys.readouterr().out) == f"{path}:2: $.rating: Expected `int | null`, got `str`"
    )


def test_validate_malformed_json(tmp_path, capsys):
    path = tmp_path / "broken.jsonl"
    path.write_text('{"schema": "event.finished/v1"\n')
    assert main(["validate", str(path)]) == 1
    assert "(malformed)" in one_line(capsys.readouterr().out)


def test_missing_file_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "nope.jsonl")]) == 2
    assert "cannot read" in one_line(capsys.readouterr().err)
    assert main(["rate", str(tmp_path / "nope.jsonl")]) == 2
    assert "cannot read" in one_line(capsys.readouterr().err)


def test_rate_refuses_bad_input_with_file_line_and_field(tmp_path, capsys):
    bad = event()
    bad["games"][1]["a"] = "ghost"
    path = write_lines(tmp_path / "events.jsonl", [bad])
    assert main(["rate", path]) == 2
    line = one_line(capsys.readouterr().err)
    assert (
        line
        == f"rating-service rate: {path}:1: $.games[1].a: player 'ghost' is not declared in players (invalid)"
    )


def test_rate_refuses_an_unknown_ruleset(tmp_path, capsys):
    path = write_lines(tmp_path / "events.jsonl", [event(ruleset="cfc-2035")])
    assert main(["rate", path]) == 2
    line = one_line(capsys.readouterr().err)
    assert f"{path}:1:" in line and "cfc-2035" in line


def test_rate_refuses_a_bad_ratings_list(tmp_path, capsys):
    events = write_lines(tmp_path / "events.jsonl", [event()])
    ratings = write_lines(
        tmp_path / "ratings.jsonl",
        [{"system": "cfc", "pool": "regular", "id": "p1", "rating": 10_001}],
    )
    assert main(["rate", events, "--ratings", ratings]) == 2
    assert one_line(capsys.readouterr().err).startswith(
        f"rating-service rate: {ratings}:1: $.rating:"
    )
    ratings = write_lines(
        tmp_path / "twice.jsonl", [{"system": "cfc", "pool": "regular", "id": "p1"}] * 2
    )
    assert main(["rate", events, "--ratings", ratings]) == 2
    assert "appears twice" in one_line(capsys.readouterr().err)


def test_unknown_command_and_missing_argument_exit_2():
    for argv in (["frobnicate"], ["rate"], []):
        done = subprocess.run(
            [sys.executable, "-m", "service", *argv], capture_output=True, text=True
        )
        assert done.returncode == 2
        assert "Traceback" not in done.stderr


def test_python_dash_m_runs_the_cli():
    done = subprocess.run(
        [sys.executable, "-m", "service", "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0 and "rate" in done.stdout


def test_rate_reads_a_csv_ratings_list(tmp_path, capsys):
    events = write_lines(
        tmp_path / "events.jsonl", [event(players=[{"id": "p1"}, {"id": "p2"}, {"id": "p3"}])]
    )
    ratings = tmp_path / "list.csv"
    ratings.write_text(
        "system,pool,id,rating,status,games,highest\n"
        "cfc,regular,p1,1500,established,40,1500\n"
        "cfc,regular,p2,1500,established,40,1500\n"
        "cfc,regular,p3,1500,established,40,1500\n"
    )
    assert main(["rate", events, "--ratings", str(ratings)]) == 0
    players = json.loads(capsys.readouterr().out)["players"]
    # CFC 714b, three established 1500s, 3 rounds (no 714c): p1 beat p2 and p3 (Sx 1.00,
    # S 2): 1500 + 32 x 1.00 = 1532; p2 lost, drew: 1500 + 32 x (0.5 - 1) = 1484; p3 drew,
    # lost: 1484.
    assert [(p["id"], p["new_rating"]) for p in players] == [
        ("p1", 1532),
        ("p2", 1484),
        ("p3", 1484),
    ]


def test_publish_refuses_trf_options_for_json(tmp_path, capsys):
    path = write_lines(tmp_path / "events.jsonl", [event()])
    assert (
        main(["publish", path, "--event-id", "other", "--redis-url", "redis://127.0.0.1:1/0"]) == 2
    )
    assert one_line(capsys.readouterr().err).endswith(
        "--event-id apply to a TRF file only: a JSON message names its own"
    )
