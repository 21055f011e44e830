"""A Glicko-2 pool's settings (G2-2): the system constant tau, the rating period's length,
the values an unrated player starts from. Set per pool in `POOL_SETTINGS` below (a pool not
named there has `DEFAULT`); the registry builds the engines with them
(service/engine/registry.py `default_registry`), and a deployment that wants other values
builds its registry with its own mapping (`glicko2_engines(settings)`)."""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

# The paper's scale factor (step 2): mu = (r - 1500) / 173.7178, phi = RD / 173.7178.
SCALE = 173.7178
CENTRE = 1500.0
# Step 5's convergence tolerance (the paper's epsilon).
EPSILON = 0.000001


class Glicko2Settings(msgspec.Struct, frozen=True):
    """tau (step 1: "between 0.3 and 1.2"), the period's length in months (periods end on
    the months whose number is a multiple of it: 1 monthly, 3 quarterly, 12 yearly, G2-5),
    and an unrated player's rating, RD and volatility (step 1: 1500, 350, 0.06)."""

    tau: float = 0.5
    period_months: int = 1
    rating: float = 1500.0
    rd: float = 350.0
    volatility: float = 0.06


DEFAULT = Glicko2Settings()

# Every pool named here rates by the paper's values; a platform's own pool (`bullet`, ...) too.
POOL_SETTINGS: Mapping[str, Glicko2Settings] = {"standard": DEFAULT}


def settings_for(settings: Mapping[str, Glicko2Settings], pool: str) -> Glicko2Settings:
    """The settings of `pool` (DEFAULT for a pool the mapping does not name)."""
    return settings.get(pool, DEFAULT)
