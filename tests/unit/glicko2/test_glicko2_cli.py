"""The paper's example through `rating-service rate` (offline), in a pool a platform named
(`bullet`, D70), by both rulesets: glicko2-event rates it on arrival, glicko2 at the close."""

from __future__ import annotations

import json

from service.cli.main import main

PLAYERS = {"p": (1500, 200), "a": (1400, 30), "b": (1550, 100), "c": (1700, 300)}


def event(ruleset: str) -> dict:
    return {
        "schema": "event.finished/v1",
        "event_id": "paper",
        "system": "glicko2",
        "pool": "bullet",
        "ruleset": ruleset,
        "name": "Glickman's example",
        "start_date": "2025-01-04",
        "end_date": "2025-01-05",
        "rounds": 3,
        "players": [{"id": pid} for pid in PLAYERS],
        "games": [
            {"round": 1, "a": "p", "b": "a", "score": 1},
            {"round": 2, "a": "p", "b": "b", "score": 0},
            {"round": 3, "a": "p", "b": "c", "score": 0},
        ],
    }


def write(tmp_path, messages: list[dict]):
    events, ratings = tmp_path / "events.jsonl", tmp_path / "list.jsonl"
    events.write_text("".join(json.dumps(m) + "\n" for m in messages))
    ratings.write_text(
        "".join(
            json.dumps(
                {
                    "schema": "player.record/v1",
                    "system": "glicko2",
                    "pool": "bullet",
                    "id": pid,
                    "rating": r,
                    "rd": rd,
                    "volatility": 0.06,
                    "status": "established",
                }
            )
            + "\n"
            for pid, (r, rd) in PLAYERS.items()
        )
    )
    return events, ratings


def player_p(out: str) -> dict:
    *_, last = [json.loads(line) for line in out.splitlines() if line.strip()]
    return next(p for p in last["players"] if p["id"] == "p")


def test_rate_prints_the_paper_s_result_for_glicko2_event(tmp_path, capsys):
    events, ratings = write(tmp_path, [event("glicko2-event")])
    assert main(["rate", str(events), "--ratings", str(ratings)]) == 0
    p = player_p(capsys.readouterr().out)
    d = p["details"]
    assert (p["old_rating"], p["new_rating"], p["change"]) == (1500, 1464, -36)
    assert (d["new_rating"], d["new_rd"], d["new_volatility"]) == (1464.05, 151.52, 0.06)
    assert round(d["new_rating_unrounded"], 4) == 1464.0507
    assert round(d["new_volatility_unrounded"], 7) == 0.059996


def test_rate_with_a_close_publishes_the_same_in_the_list(tmp_path, capsys):
    close = {
        "schema": "period.closed/v1",
        "system": "glicko2",
        "pool": "bullet",
        "period": "2025-01",
    }
    events, ratings = write(tmp_path, [event("glicko2"), close])
    assert main(["rate", str(events), "--ratings", str(ratings)]) == 0
    p = player_p(capsys.readouterr().out)
    assert (p["new_rating"], p["details"]["new_rd"], p["details"]["period"]) == (
        1464,
        151.52,
        "2025-01",
    )
