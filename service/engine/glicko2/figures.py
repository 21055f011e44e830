"""A Glicko-2 result as the output writes it (schemas/glicko2.py "Numbers", G2-3): rating
and RD to 2 decimals, volatility to 5, each beside the engine's unrounded float."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Protocol

from schemas.glicko2 import Glicko2Details, Glicko2Opponent
from schemas.ratings import PlayerResult
from schemas.records import PlayerRecord
from service.engine.arithmetic import decimal_number, half_away_from_zero
from service.engine.glicko2.algorithm import PeriodFigures
from service.engine.glicko2.records import State


class GameTerms(Protocol):
    @property
    def g(self) -> float: ...
    @property
    def expected(self) -> float: ...


def two(x: float) -> float:
    """2 decimals, half away from zero from the float's exact value (ratings.py rule 2)."""
    return float(decimal_number(x))


def five(x: float) -> float:
    """5 decimals (the paper prints the volatility so: 0.05999), half away from zero."""
    return half_away_from_zero(Fraction(x) * 100_000) / 100_000


def opponent_row(
    rnd: int | None,
    event_id: str | None,
    opponent: str,
    state: State,
    mu: float,
    phi: float,
    terms: GameTerms,
    score: float,
) -> Glicko2Opponent:
    """Step 3's figures of one game."""
    return Glicko2Opponent(
        round=rnd,
        event_id=event_id,
        opponent=opponent,
        opponent_rating=two(state.rating),
        opponent_rd=two(state.rd),
        mu=mu,
        phi=phi,
        g=terms.g,
        expected=terms.expected,
        score=score,
    )


def details(
    period: str | None,
    periods: int,
    tau: float,
    before: State,
    after: State,
    mu: float,
    phi: float,
    figures: PeriodFigures | None,
    rows: Sequence[Glicko2Opponent],
) -> Glicko2Details:
    """The details of one result: `phi` is the player's phi after any elapsed periods'
    growth, the one steps 3-7 start from."""
    return Glicko2Details(
        period=period,
        periods=periods,
        tau=tau,
        rating=two(before.rating),
        rd=two(before.rd),
        volatility=five(before.volatility),
        rating_unrounded=before.rating,
        rd_unrounded=before.rd,
        volatility_unrounded=before.volatility,
        new_rating=two(after.rating),
        new_rd=two(after.rd),
        new_volatility=five(after.volatility),
        new_rating_unrounded=after.rating,
        new_rd_unrounded=after.rd,
        new_volatility_unrounded=after.volatility,
        mu=mu,
        phi=phi,
        v=figures.v if figures else None,
        delta=figures.delta if figures else None,
        iterations=figures.iterations if figures else None,
        phi_star=figures.phi_star if figures else None,
        mu_new=figures.mu if figures else None,
        phi_new=figures.phi if figures else None,
        opponents=list(rows),
    )


def result(
    before: PlayerRecord,
    after: PlayerRecord,
    event_games: int,
    score: float,
    expected: float | None,
    shown: Glicko2Details | None,
) -> PlayerResult:
    """One player's result: whole ratings as the record keeps them, the figures in details."""
    old, new = before.rating, after.rating
    return PlayerResult(
        id=before.id,
        old_rating=old,
        new_rating=new,
        change=new - old if new is not None and old is not None else None,
        old_status=before.status,
        status=after.status,
        games=after.games,
        event_games=event_games,
        score=score,
        expected=two(expected) if expected is not None else None,
        details=shown,
    )
