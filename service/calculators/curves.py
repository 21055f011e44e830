"""The continuous curves beside the official tables (for comparison, never for rating).

FIDE and CFC: the logistic curve of the Elo family that tables 8.1.2 and 714b
approximate (seed: E = 1 / (1 + 10^(-D/400)); at D = 400 the curve gives 0.909 where
the table says 0.92). NASPA has no table: its curve is N1 itself
(service.engine.naspa.expected).
"""

from __future__ import annotations

from service.engine.naspa.expected import expected_wins

ELO_SCALE = 400  # seed: E = 1 / (1 + 10^((R_opp - R) / 400))


def elo_logistic(difference: float) -> float:
    """The seed's continuous curve: expected score for D = own - opponent."""
    return 1.0 / (1.0 + 10.0 ** (-difference / ELO_SCALE))


def curve(system: str, difference: float) -> float:
    """The continuous expected score of a player D points above the opponent."""
    if system == "naspa":
        return expected_wins(difference, 0.0)  # N1 depends on r - o only
    return elo_logistic(difference)


def curve_name(system: str) -> str:
    return (
        "NASPA N1 logistic 1/(1+e^(-0.0031879 D))"
        if system == "naspa"
        else "logistic 1/(1+10^(-D/400))"
    )
