"""End to end through `rating-service rate`: an NWL event, then a CSW event whose
seeded player starts from the NWL rating just earned (docs/rules/naspa.md#naspa-variants)."""

from __future__ import annotations

import json

from service.cli.main import main


def _event(event_id: str, games: list[dict], pool: str | None = None, **extra) -> dict:
    players = sorted({g["a"] for g in games} | {g["b"] for g in games})
    event = {
        "schema": "event.finished/v1",
        "event_id": event_id,
        "system": "naspa",
        "name": "Club night",
        "start_date": "2024-03-02",
        "end_date": "2024-03-02",
        "rounds": max(g["round"] for g in games),
        "players": [{"id": p} for p in players],
        "games": games,
        **extra,
    }
    if pool:
        event["pool"] = pool
    return event


def test_rate_nwl_then_csw_end_to_end(tmp_path, capsys):
    events = tmp_path / "events.jsonl"
    ratings = tmp_path / "ratings.jsonl"
    out_ratings = tmp_path / "after.jsonl"
    nwl = _event(
        "nwl-1",
        [
            {"round": 1, "a": "ann", "b": "bob", "score": 1},
            {"round": 2, "a": "ann", "b": "bob", "score": 1},
        ],
    )
    csw = _event("csw-1", [{"round": 1, "a": "ann", "b": "cy", "score": 0}], pool="csw")
    events.write_text(json.dumps(nwl) + "\n" + json.dumps(csw) + "\n")
    ratings.write_text(
        json.dumps(
            {
                "system": "naspa",
                "pool": "nwl",
                "id": "ann",
                "rating": 1500,
                "status": "established",
                "games": 0,
            }
        )
        + "\n"
        + json.dumps(
            {
                "system": "naspa",
                "pool": "nwl",
                "id": "bob",
                "rating": 1500,
                "status": "established",
                "games": 100,
            }
        )
        + "\n"
        + json.dumps(
            {
                "system": "naspa",
                "pool": "csw",
                "id": "cy",
                "rating": 1550,
                "status": "established",
                "games": 100,
            }
        )
        + "\n"
    )
    code = main(["rate", str(events), "--ratings", str(ratings), "--out-ratings", str(out_ratings)])
    assert code == 0
    first, second = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    # NWL (nsa2008, the default): ann (g=0, m=30) beats bob (g=100, m=20) twice, E = 0.5:
    # ann 1500 + 30 x 1 = 1530, Acc = 30 - 10 = 20 -> 1550; bob 1480 + 2 x 20/20 = 1482.
    assert (first["ruleset"], first["pool"]) == ("nsa2008", "nwl")
    by_id = {p["id"]: p for p in first["players"]}
    assert (by_id["ann"]["new_rating"], by_id["bob"]["new_rating"]) == (1550, 1482)
    assert (
        by_id["ann"]["details"]["system"] == "naspa"
        and by_id["ann"]["details"]["acceleration"] == 20
    )
    # CSW (naspa-csw by default for pool csw): ann starts from her NWL 1550, g = 0 (m 30),
    # and loses to cy (CSW 1550, g=100): E = 0.5: ann 1550 - 15 = 1535 (Acc < 0);
    # cy 1550 + 20 x 0.5 = 1560, Acc = 10 - 5 = 5 -> 1565; ann gets 5/20 = 0.25 -> 1535.25 -> 1535.
    assert (second["ruleset"], second["pool"]) == ("naspa-csw", "csw")
    by_id = {p["id"]: p for p in second["players"]}
    assert (by_id["ann"]["old_rating"], by_id["ann"]["new_rating"], by_id["cy"]["new_rating"]) == (
        1550,
        1535,
        1565,
    )
    assert by_id["ann"]["details"]["seeded_from"] == "nwl" and by_id["ann"]["games"] == 1
    stored = {
        (r["pool"], r["id"]): r for r in map(json.loads, out_ratings.read_text().splitlines())
    }
    assert stored[("nwl", "ann")]["rating"] == 1550 and stored[("nwl", "ann")]["games"] == 2
    assert stored[("csw", "ann")]["rating"] == 1535 and stored[("csw", "ann")]["games"] == 1


def test_rate_rejects_an_event_of_forfeits_only(tmp_path, capsys):
    events = tmp_path / "events.jsonl"
    events.write_text(
        json.dumps(
            _event("f-1", [{"round": 1, "a": "ann", "b": "bob", "score": 1, "forfeit": True}])
        )
        + "\n"
    )
    assert main(["rate", str(events)]) == 2
    assert "$.games" in capsys.readouterr().err


def test_rate_rejects_csw_under_nsa2008(tmp_path, capsys):
    # nsa2008 rates pool nwl only (docs/rules/naspa.md#naspa-variants); CSW goes to naspa-csw.
    events = tmp_path / "events.jsonl"
    game = [{"round": 1, "a": "ann", "b": "bob", "score": 1}]
    events.write_text(json.dumps(_event("c-1", game, pool="csw", ruleset="nsa2008")) + "\n")
    assert main(["rate", str(events)]) == 2
    assert "does not rate pool 'csw'" in capsys.readouterr().err
