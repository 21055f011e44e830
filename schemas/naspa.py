"""NASPA parts of the contract: the per-player details (docs/rules/naspa.md, N1-N6).

NASPA keeps no accumulator in the record beyond `rating`, `status` and `games` (career
games, which choose the multiplier, N5). The engine computes in floats: the rules use exp()
(N1); ratings are rounded half up only at the very end of each segment.

Numbers (schemas/ratings.py, "Numbers"): earned wins are multiples of 0.5, exact; every
other figure (expected wins, acceleration, feedback, walked and unrounded ratings, a
newcomer opponent's rating) is the engine's float rounded to 2 decimals when it is written.
There is no exact value to keep: no `_exact` fields. The rounded per-game `expected` terms
may differ from the rounded `expected_wins` by a few hundredths; an `unrounded_rating` shown
as x.50 was rounded by the engine from its unrounded float.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from schemas.common import PlayerId, Round, Score

EarnedWins = Annotated[float, msgspec.Meta(description="Earned wins: a multiple of 0.5, exact.")]
ExpectedWins = Annotated[
    float | None,
    msgspec.Meta(description="Expected wins (N1, summed over the counted games), 2 decimals."),
]
Acceleration = Annotated[
    float, msgspec.Meta(description="Acceleration bonus received (N5), 2 decimals.")
]
Feedback = Annotated[
    float, msgspec.Meta(description="Feedback received from newcomer opponents (N5), 2 decimals.")
]
UnroundedRating = Annotated[
    float | None,
    msgspec.Meta(
        description="The new rating before it is rounded half up, 2 decimals (the engine rounds its float)."
    ),
]


class NaspaSegment(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """One segment of a long event (rounds numbered from 1): the player's figures in it.

    `old_rating` is the rating the segment starts from (the previous segment's rounded
    result); `unrounded_rating` the value before rounding (after feedback).
    """

    first_round: Annotated[int, msgspec.Meta(title="First round")]
    last_round: Annotated[int, msgspec.Meta(title="Last round")]
    old_rating: Annotated[int | None, msgspec.Meta(title="Rating before")]
    new_rating: Annotated[int | None, msgspec.Meta(title="Rating after")]
    games: Annotated[int, msgspec.Meta(title="Games")]
    earned_wins: Annotated[EarnedWins, msgspec.Meta(title="Earned wins")]
    expected_wins: Annotated[ExpectedWins, msgspec.Meta(title="Expected wins")]
    newcomer: Annotated[bool, msgspec.Meta(title="Newcomer")] = False
    # Rated players (N5): career games choosing the multiplier, the multipliers of the
    # band walk in order, the walked rating, acceleration and feedback received.
    career_games: Annotated[int | None, msgspec.Meta(title="Career games")] = None
    multipliers: Annotated[list[int], msgspec.Meta(title="Multipliers")] = []
    walked_rating: Annotated[
        float | None,
        msgspec.Meta(
            title="Rating after the band walk",
            description="The rating after the band walk (N5), 2 decimals.",
        ),
    ] = None
    acceleration: Annotated[Acceleration, msgspec.Meta(title="Acceleration bonus")] = 0.0
    feedback: Annotated[Feedback, msgspec.Meta(title="Feedback")] = 0.0
    # One-third-rated events: the rounded change was clipped to +/-50.
    clipped: Annotated[bool, msgspec.Meta(title="Change clipped to ±50")] = False
    # Newcomers (N2-N4): passes run (at most 50; 100 when averaged) and the averaging branch.
    newcomer_iterations: Annotated[int | None, msgspec.Meta(title="Newcomer iterations")] = None
    averaged: Annotated[bool, msgspec.Meta(title="Averaged")] = False
    unrounded_rating: Annotated[UnroundedRating, msgspec.Meta(title="Unrounded rating")] = None


class NaspaOpponent(
    msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True, gc=False
):
    """One counted game of the player, as the engine rated it (docs/rules/naspa.md, N1-N5).

    The figures are the engine's own: `expected` is the very term it sums into
    `expected_wins`, rounded to 2 decimals when written. Games are listed in round order;
    byes and forfeits, which count for nothing (docs/rules/naspa.md#naspa-basics), are left out. In
    a long event each game belongs to its segment, whose ratings it uses.
    """

    round: Annotated[Round, msgspec.Meta(title="Round", description="Round of the game.")]
    opponent: Annotated[
        PlayerId, msgspec.Meta(title="Opponent", description="The opponent's player id.")
    ]
    opponent_rating: Annotated[
        float,
        msgspec.Meta(
            title="Opponent's rating",
            description="The opponent's rating as used (N5): a rated opponent's rating before the event "
            "(before the segment, in a long event); a newcomer opponent's unrounded new rating from the "
            "newcomer iteration (N2-N4); 2 decimals.",
        ),
    ]
    score: Annotated[
        Score,
        msgspec.Meta(title="Earned wins", description="Earned wins in the game: 1, 0.5 or 0."),
    ]
    expected: Annotated[
        float,
        msgspec.Meta(
            title="Expected wins",
            description="Expected wins against `opponent_rating` (N1, logistic): from the player's rating "
            "before the event (segment) for a rated player, from their own unrounded new rating for a newcomer; "
            "2 decimals.",
        ),
    ]


class NaspaDetails(
    msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="system", tag="naspa"
):
    """How a NASPA figure was obtained, summed over the event's segments.

    `expected_wins`: for a rated player against the pre-event ratings of rated opponents
    and the unrounded new ratings of newcomers (N5); for a newcomer, the same at their
    own unrounded new rating. `seeded_from` names the pool whose rating a player's first CSW event started from.
    `segments` lists per-segment figures of an event of 17 or more rounds (else empty).
    `opponents` lists the counted games one by one (NaspaOpponent), whose `expected`
    terms make up `expected_wins`.
    """

    earned_wins: Annotated[EarnedWins, msgspec.Meta(title="Earned wins")]
    expected_wins: Annotated[ExpectedWins, msgspec.Meta(title="Expected wins")]
    multipliers: Annotated[list[int], msgspec.Meta(title="Multipliers")] = []
    acceleration: Annotated[Acceleration, msgspec.Meta(title="Acceleration bonus")] = 0.0
    feedback: Annotated[Feedback, msgspec.Meta(title="Feedback")] = 0.0
    newcomer_iterations: Annotated[int | None, msgspec.Meta(title="Newcomer iterations")] = None
    averaged: Annotated[bool, msgspec.Meta(title="Averaged")] = False
    clipped: Annotated[bool, msgspec.Meta(title="Change clipped to ±50")] = False
    seeded_from: Annotated[str | None, msgspec.Meta(title="Seeded from pool")] = None
    unrounded_rating: Annotated[UnroundedRating, msgspec.Meta(title="Unrounded rating")] = None
    segments: Annotated[list[NaspaSegment], msgspec.Meta(title="Segments")] = []
    opponents: Annotated[list[NaspaOpponent], msgspec.Meta(title="Games")] = []
