"""NASPA parts of the contract: the per-player details (rules-naspa.md, N1-N5).

NASPA keeps no accumulator in the record beyond `rating`, `status` and `games` (career
games, which choose the multiplier, N5). Figures are floats: the rules use exp() (N1);
ratings are rounded half up only at the very end of each segment.
"""

from __future__ import annotations

import msgspec


class NaspaSegment(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """One segment of a long event (rounds numbered from 1): the player's figures in it.

    `old_rating` is the rating the segment starts from (the previous segment's rounded
    result); `unrounded_rating` the value before rounding (after feedback).
    """

    first_round: int
    last_round: int
    old_rating: int | None
    new_rating: int | None
    games: int
    earned_wins: float
    expected_wins: float | None
    newcomer: bool = False
    # Rated players (N5): career games choosing the multiplier, the multipliers of the
    # band walk in order, the walked rating, acceleration and feedback received.
    career_games: int | None = None
    multipliers: list[int] = []
    walked_rating: float | None = None
    acceleration: float = 0.0
    feedback: float = 0.0
    # One-third-rated events: the rounded change was clipped to +/-50.
    clipped: bool = False
    # Newcomers (N2-N4): passes run (at most 50; 100 when averaged) and the averaging branch.
    newcomer_iterations: int | None = None
    averaged: bool = False
    unrounded_rating: float | None = None


class NaspaDetails(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="system", tag="naspa"):
    """How a NASPA figure was obtained, summed over the event's segments.

    `expected_wins`: for a rated player against the pre-event ratings of rated opponents
    and the unrounded new ratings of newcomers (N5); for a newcomer, the same at their
    own unrounded new rating. `seeded_from` names the pool whose rating a player's first CSW event started from.
    `segments` lists per-segment figures of an event of 17 or more rounds (else empty).
    """

    earned_wins: float
    expected_wins: float | None
    multipliers: list[int] = []
    acceleration: float = 0.0
    feedback: float = 0.0
    newcomer_iterations: int | None = None
    averaged: bool = False
    clipped: bool = False
    seeded_from: str | None = None
    unrounded_rating: float | None = None
    segments: list[NaspaSegment] = []
