"""NASPA parts of the contract: the per-player details (rules-naspa.md, N1-N5)."""

from __future__ import annotations

import msgspec


class NaspaSegment(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One segment of a long event: its rounds and the player's figures in it."""

    first_round: int
    last_round: int
    old_rating: int | None
    new_rating: int | None
    earned_wins: float
    expected_wins: float | None


class NaspaDetails(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="system", tag="naspa"):
    """How a NASPA figure was obtained."""

    earned_wins: float
    expected_wins: float | None
    multipliers: list[int] = []
    acceleration: float = 0.0
    feedback: float = 0.0
    newcomer_iterations: int | None = None
    averaged: bool = False
    segments: list[NaspaSegment] = []
