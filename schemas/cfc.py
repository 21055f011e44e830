"""CFC parts of the contract: the record's accumulators and the per-player details.

Rules: CFC handbook 714-717 (ruleset `cfc-2009`), resolutions C1-C11 in rules-cfc.md.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from schemas.common import Exact, PlayerId


class CfcState(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """C1: a provisional player's exact running sum of `sum(opponent values) + 400(W-L)`
    over all their rated games so far (the rating is this sum / games)."""

    provisional_sum: Exact | None = None


class CfcOpponentValue(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One rated game as it entered the player's calculation (717: the opponent's value)."""

    opponent: PlayerId
    value: Exact
    score: float
    expected: float | None = None


class CfcDetails(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="system", tag="cfc"):
    """How a CFC figure was obtained, for a rating officer to check by hand."""

    method: Literal["none", "performance", "established"]
    wins: int
    losses: int
    draws: int
    k: int | None
    rating_before_bonus: Exact | None
    participation_bonus: Exact
    result_bonus: int
    floor: Literal["716a", "716b", "716c"] | None
    rule_2199: bool
    opponents: list[CfcOpponentValue]
