"""Builders of valid messages for the tests (plain dicts, as a producer would send)."""

from __future__ import annotations

import copy
import json
from typing import Any


def event(**overrides: Any) -> dict:
    """A small valid CFC event: three players, a round robin."""
    message = {
        "schema": "event.finished/v1",
        "event_id": "club-2025-11-a",
        "system": "cfc",
        "name": "Club championship",
        "start_date": "2025-11-01",
        "end_date": "2025-11-02",
        "rounds": 3,
        "players": [{"id": "p1", "name": "Ann"}, {"id": "p2"}, {"id": "p3", "birth_year": 2010}],
        "games": [
            {"round": 1, "a": "p1", "b": "p2", "score": 1},
            {"round": 2, "a": "p2", "b": "p3", "score": 0.5},
            {"round": 3, "a": "p3", "b": "p1", "score": 0},
        ],
    }
    message.update(copy.deepcopy(overrides))
    return message


def encode(message: dict) -> bytes:
    return json.dumps(message).encode()
