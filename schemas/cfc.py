"""CFC parts of the contract: the record's accumulators and the per-player details.

Rules: CFC handbook 714-717 (ruleset `cfc-2009`), resolutions C1-C14 in docs/rules/cfc.md.

Numbers (schemas/ratings.py, "Numbers"): the engine computes exactly (fractions). Each
unrounded value - the performance, AR, pass 1, the 714a sum, Rn, the participation bonus,
each opponent's value - is a number rounded to 2 decimals for reading, with its exact value
next to it as `<field>_exact` (an `Exact` string in lowest terms: "7033/4") for checking
the arithmetic. Expected scores are the C3 table's hundredths, exact as numbers.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from schemas.common import Exact, PlayerId

# Where an opponent's value in a player's calculation comes from (717).
OpponentBasis = Literal[
    "pre_event",  # the opponent's rating before the event
    "ar_minus_200",  # 717 pass 1: an unrated opponent of an unrated player, AR - 200 (C8)
    "pass_1",  # 717 pass 2: an unrated opponent at its unrounded pass-1 performance
    "post_event",  # a previously unrated / provisional opponent's new rating, rounded, before bonus and floors (C9)
    "higher_of_pre_post",  # C10: an established opponent below 800, higher of pre- and post-event
]

# The step of 717 in which the player was rated.
Step = Literal["none", "unrated", "provisional", "established_below_800", "established"]


class CfcState(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """C1: a provisional player's exact running sum of `sum(opponent values) + 400(W-L)`
    over all their rated games so far (the rating is this sum / games). Absent for an
    established player; an imported provisional record without it uses rating x games."""

    provisional_sum: Exact | None = None


class CfcOpponentValue(msgspec.Struct, frozen=True, forbid_unknown_fields=True, gc=False):
    """One rated game as it entered the player's calculation (717: the opponent's value).

    `expected` is the player's expected score of the game from the 714b table (C3), for
    players rated by 714b; for 714a (performance) players it is null.
    """

    round: Annotated[int, msgspec.Meta(title="Round")]
    opponent: Annotated[PlayerId, msgspec.Meta(title="Opponent")]
    value: Annotated[
        float,
        msgspec.Meta(
            title="Opponent's value", description="The opponent's value as used (717), 2 decimals."
        ),
    ]
    value_exact: Annotated[
        Exact,
        msgspec.Meta(
            title="Opponent's value, exact", description="`value`, exact (a term of the 714a sum)."
        ),
    ]
    basis: Annotated[OpponentBasis, msgspec.Meta(title="Value from")]
    score: Annotated[float, msgspec.Meta(title="Score")]
    expected: Annotated[
        float | None,
        msgspec.Meta(
            title="Expected score",
            description="Expected score of the game, from the C3 table: exact hundredths.",
        ),
    ] = None


class CfcDetails(
    msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="system", tag="cfc"
):
    """How a CFC figure was obtained, for a rating officer to check by hand.

    - `method`: 714a performance rating, 714b established formula, or none (no rated game).
    - `performance`: the event's performance, 714a form, (sum(values) + 400(W-L)) / N,
      with the opponent values listed in `opponents`.
    - `ar`, `pass_1`: 717 AR and, for a previously unrated player, the pass-1 performance.
    - `provisional_sum`: C1, the cumulative 714a sum after the event.
    - `rating_before_bonus`: unrounded; 714a sum / games, or 714b Rn after the 2199 rule.
    - `participation_bonus`: 714c A, the per-game amount times games played.
    - `expected_hundredths`: Sx in hundredths (C3 table, summed).
    - `result_percent`: score / rounds as a truncated whole percent (C5).
    - `rating_before_floor`: rating_before_bonus + bonuses, rounded once half up (C11).
    - `floor`: the 716 article that changed the published rating, if any.

    Each unrounded value is a number (2 decimals, to read) with its exact value next to it
    (`<field>_exact`, to check the arithmetic); both null together.
    """

    method: Annotated[Literal["none", "performance", "established"], msgspec.Meta(title="Method")]
    step: Annotated[Step, msgspec.Meta(title="Step of 717")]
    became_established: Annotated[bool, msgspec.Meta(title="Became established")]
    wins: Annotated[int, msgspec.Meta(title="Wins")]
    losses: Annotated[int, msgspec.Meta(title="Losses")]
    draws: Annotated[int, msgspec.Meta(title="Draws")]
    performance: Annotated[
        float | None,
        msgspec.Meta(
            title="Performance",
            description="The event's performance (714a form), 2 decimals (exact: `performance_exact`).",
        ),
    ]
    performance_exact: Annotated[
        Exact | None, msgspec.Meta(title="Performance, exact", description="`performance`, exact.")
    ]
    ar: Annotated[
        float | None,
        msgspec.Meta(
            title="Opponents' average rating (AR)",
            description="717 AR, 2 decimals (exact: `ar_exact`).",
        ),
    ]
    ar_exact: Annotated[Exact | None, msgspec.Meta(title="AR, exact", description="`ar`, exact.")]
    pass_1: Annotated[
        float | None,
        msgspec.Meta(
            title="Pass-1 performance",
            description="717 pass-1 performance of a previously unrated player, 2 decimals (exact: `pass_1_exact`).",
        ),
    ]
    pass_1_exact: Annotated[
        Exact | None,
        msgspec.Meta(title="Pass-1 performance, exact", description="`pass_1`, exact."),
    ]
    provisional_sum: Annotated[
        float | None,
        msgspec.Meta(
            title="Provisional sum (C1)",
            description="C1: the cumulative 714a sum after the event, 2 decimals (exact: `provisional_sum_exact`).",
        ),
    ]
    provisional_sum_exact: Annotated[
        Exact | None,
        msgspec.Meta(title="Provisional sum, exact", description="`provisional_sum`, exact."),
    ]
    k: Annotated[int | None, msgspec.Meta(title="K")]
    expected_hundredths: Annotated[int | None, msgspec.Meta(title="Expected score (hundredths)")]
    rating_before_bonus: Annotated[
        float | None,
        msgspec.Meta(
            title="Rating before bonuses",
            description="The unrounded rating before the 714c bonuses, 2 decimals (exact: `rating_before_bonus_exact`).",
        ),
    ]
    rating_before_bonus_exact: Annotated[
        Exact | None,
        msgspec.Meta(
            title="Rating before bonuses, exact", description="`rating_before_bonus`, exact."
        ),
    ]
    rule_2199: Annotated[bool, msgspec.Meta(title="2199 rule applied")]
    participation_bonus: Annotated[
        float,
        msgspec.Meta(
            title="Participation bonus",
            description="714c A participation bonus, 2 decimals (exact: `participation_bonus_exact`).",
        ),
    ]
    participation_bonus_exact: Annotated[
        Exact,
        msgspec.Meta(
            title="Participation bonus, exact", description="`participation_bonus`, exact."
        ),
    ]
    result_percent: Annotated[int | None, msgspec.Meta(title="Result (%)")]
    highest_before: Annotated[int | None, msgspec.Meta(title="Highest rating before")]
    result_bonus: Annotated[int, msgspec.Meta(title="Result bonus")]
    rating_before_floor: Annotated[int | None, msgspec.Meta(title="Rating before floors")]
    floor: Annotated[Literal["716a", "716b", "716c"] | None, msgspec.Meta(title="Floor applied")]
    opponents: Annotated[list[CfcOpponentValue], msgspec.Meta(title="Games")]
