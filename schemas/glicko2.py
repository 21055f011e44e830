"""Glicko-2 parts of the contract: the record's exact state and the per-player details.

Rules: Mark Glickman, "Example of the Glicko-2 system", steps 1-8 (rulesets `glicko2` and
`glicko2-event`), readings G2-1 .. G2-12 in docs/rules/glicko2.md.

Numbers (schemas/ratings.py, "Numbers", rule 4 as for NASPA): the algorithm uses exp(),
sqrt() and ln() (steps 3-5), so there is no exact rational value; the engine computes in
binary floats and never rounds in its arithmetic (G2-3). A figure is written twice: rounded
for people as the paper prints its results (rating and RD to 2 decimals, volatility to 5),
and the engine's float itself as `<field>_unrounded` (the value the next period starts
from; the record keeps it). The per-game figures (mu, phi, g, E) and the period's (v, Delta,
mu', phi') are the engine's floats unrounded: a rating officer redoing step 3 needs them.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated

import msgspec

from schemas.common import EventId, Period, PlayerId, Round, Score

Volatility = Annotated[
    float, msgspec.Meta(gt=0, lt=10, description="Rating volatility sigma (step 1).")
]
Deviation = Annotated[
    float, msgspec.Meta(gt=0, le=10_000, description="Rating deviation RD, Glicko scale.")
]


# G2-12: the RD shown as the rating's uncertainty, the half-width of a 95 % interval.
INTERVAL_Z = 1.96


def uncertainty(rd: float | None) -> float | None:
    """G2-12: 1.96 RD (a record without an RD, of another system: None)."""
    return None if rd is None else INTERVAL_Z * rd


class Glicko2Game(msgspec.Struct, frozen=True, forbid_unknown_fields=True, array_like=True):
    """A game counted in an open rating period (ruleset `glicko2`, G2-6), rated at the
    period's close: the opponent's rating, RD and volatility as they stood when the event
    was rated (the state before the period: ratings change only at a close), the score."""

    period: Period
    event_id: EventId
    round: Round
    opponent: PlayerId
    score: Score
    opponent_rating: float
    opponent_rd: float
    opponent_volatility: float


class Glicko2State(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """The record's exact Glicko-2 state (the record's `rating` is it rounded, `rd` and
    `volatility` are kept exact beside it).

    `rating`: the rating as the algorithm left it (step 8, unrounded). `last_rated`: the
    end date of the player's last rated event (`glicko2-event`, G2-8: the periods elapsed
    since then grow the RD first). `games`: ruleset `glicko2`, the games of open periods
    (G2-6), rated when their period closes. `closed_through`: ruleset `glicko2`, the pool's
    last close this state has seen (a re-rate from an older state applies the closes since,
    G2-7)."""

    rating: float | None = None
    last_rated: dt.date | None = None
    games: list[Glicko2Game] = []
    closed_through: Period | None = None


class Glicko2Opponent(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """One game of the period, as step 3 reads it: the opponent's rating and RD before the
    period (Glicko scale), mu_j, phi_j, g(phi_j) and E(mu, mu_j, phi_j), the score."""

    round: Annotated[Round | None, msgspec.Meta(title="Round")] = None
    event_id: Annotated[EventId | None, msgspec.Meta(title="Event")] = None
    opponent: Annotated[PlayerId, msgspec.Meta(title="Opponent")]
    opponent_rating: Annotated[
        float, msgspec.Meta(title="Opponent's rating", description="2 decimals.")
    ]
    opponent_rd: Annotated[float, msgspec.Meta(title="Opponent's RD", description="2 decimals.")]
    mu: Annotated[float, msgspec.Meta(title="μⱼ", description="The opponent's mu (step 2).")]
    phi: Annotated[float, msgspec.Meta(title="φⱼ", description="The opponent's phi (step 2).")]
    g: Annotated[
        float, msgspec.Meta(title="g(φⱼ)", description="Step 3's g of the opponent's phi.")
    ]
    expected: Annotated[
        float,
        msgspec.Meta(title="E", description="Step 3's E(mu, mu_j, phi_j): the expected score."),
    ]
    score: Annotated[Score, msgspec.Meta(title="Score")]


class Glicko2Details(
    msgspec.Struct,
    frozen=True,
    forbid_unknown_fields=True,
    kw_only=True,
    tag_field="system",
    tag="glicko2",
):
    """How a Glicko-2 figure was obtained (steps 1-8 of the paper).

    `periods`: the rating periods this result takes the player through: the elapsed
    periods without games that only grew the RD (step 6; `glicko2-event` G2-8, a close of
    several periods G2-7) plus the rated one (0: the event is counted in an open period,
    rated at its close). Rating, RD and volatility before (the state the result starts from,
    before any RD growth) and after: rounded for people (2, 2, 5 decimals, as the paper prints
    them) and unrounded. `v`, `delta`: steps 3-4; `mu`, `phi`, `phi_star`, `mu_new`,
    `phi_new`: steps 2, 6 and 7 on the Glicko-2 scale; `iterations`: the Illinois algorithm's
    passes (step 5). Null where no game was rated (only step 6 applied).
    """

    period: Annotated[Period | None, msgspec.Meta(title="Rating period")] = None
    periods: Annotated[int, msgspec.Meta(title="Rating periods")] = 1
    tau: Annotated[float, msgspec.Meta(title="τ")]
    rating: Annotated[float, msgspec.Meta(title="Rating before", description="2 decimals.")]
    rd: Annotated[float, msgspec.Meta(title="RD before", description="2 decimals.")]
    volatility: Annotated[float, msgspec.Meta(title="Volatility before", description="5 decimals.")]
    rating_unrounded: Annotated[float, msgspec.Meta(title="Rating before, unrounded")]
    rd_unrounded: Annotated[float, msgspec.Meta(title="RD before, unrounded")]
    volatility_unrounded: Annotated[float, msgspec.Meta(title="Volatility before, unrounded")]
    new_rating: Annotated[float, msgspec.Meta(title="Rating after", description="2 decimals.")]
    new_rd: Annotated[float, msgspec.Meta(title="RD after", description="2 decimals.")]
    new_volatility: Annotated[
        float, msgspec.Meta(title="Volatility after", description="5 decimals.")
    ]
    new_rating_unrounded: Annotated[float, msgspec.Meta(title="Rating after, unrounded")]
    new_rd_unrounded: Annotated[float, msgspec.Meta(title="RD after, unrounded")]
    new_volatility_unrounded: Annotated[float, msgspec.Meta(title="Volatility after, unrounded")]
    mu: Annotated[float | None, msgspec.Meta(title="μ")] = None
    phi: Annotated[
        float | None, msgspec.Meta(title="φ", description="After the elapsed periods' growth.")
    ] = None
    v: Annotated[float | None, msgspec.Meta(title="v", description="Step 3.")] = None
    delta: Annotated[float | None, msgspec.Meta(title="Δ", description="Step 4.")] = None
    iterations: Annotated[
        int | None, msgspec.Meta(title="Illinois passes", description="Step 5.")
    ] = None
    phi_star: Annotated[float | None, msgspec.Meta(title="φ*", description="Step 6.")] = None
    mu_new: Annotated[float | None, msgspec.Meta(title="μ′", description="Step 7.")] = None
    phi_new: Annotated[float | None, msgspec.Meta(title="φ′", description="Step 7.")] = None
    opponents: Annotated[list[Glicko2Opponent], msgspec.Meta(title="Games")] = []
