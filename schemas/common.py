"""Field types shared by every message of the contract (design: "The wire contract (v1)")."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from schemas.systems import SYSTEM_INFO
from schemas.systems import System as System  # the messages' `system` type, re-exported

EVENT_ID_PATTERN = r"^[A-Za-z0-9._:-]{1,128}$"
PLAYER_ID_PATTERN = r"^[A-Za-z0-9._:@/-]{1,64}$"
PERIOD_PATTERN = r"^[0-9]{4}-(0[1-9]|1[0-2])$"
# An exact rational number as text: an integer ("1234", "-7") or a fraction ("12345/7").
EXACT_PATTERN = r"^-?[0-9]+(/[1-9][0-9]*)?$"

EventId = Annotated[
    str,
    msgspec.Meta(
        pattern=EVENT_ID_PATTERN,
        description="Idempotency key: 1-128 characters of [A-Za-z0-9._:-].",
    ),
]
PlayerId = Annotated[
    str,
    msgspec.Meta(
        pattern=PLAYER_ID_PATTERN, description="Player id: 1-64 characters of [A-Za-z0-9._:@/-]."
    ),
]
Period = Annotated[str, msgspec.Meta(pattern=PERIOD_PATTERN, description="Rating period YYYY-MM.")]
Exact = Annotated[
    str,
    msgspec.Meta(
        pattern=EXACT_PATTERN,
        description="Exact rational number: an integer or 'numerator/denominator'.",
    ),
]
Round = Annotated[int, msgspec.Meta(ge=1, description="Round number, from 1.")]
BirthYear = Annotated[int, msgspec.Meta(ge=1850, le=2200)]
# Labels a federation's list gives (D35): kept on the record like the name, shown by the read
# side and the pages, never used by the rules.
Title = Annotated[
    str,
    msgspec.Meta(
        pattern=r"^[A-Za-z][A-Za-z0-9]{0,7}$",
        description="A title as the list abbreviates it: GM, IM, WGM, FM, CM, FA, IA, ...",
    ),
]
Federation = Annotated[
    str,
    msgspec.Meta(
        pattern=r"^[A-Za-z0-9][A-Za-z0-9 .'-]{0,31}$",
        description="The player's federation (FIDE: its three-letter code) or region, as listed.",
    ),
]
Sex = Literal["M", "F"]
# Wider than any real list: the rules' own arithmetic can leave 0..4000 in absurd fields
# (CFC 714a has no cap; naspa2024 and naspa-csw have no floor), and what an engine computes
# must always be storable and readable back.
Rating = Annotated[int, msgspec.Meta(ge=-10_000, le=10_000)]
Count = Annotated[int, msgspec.Meta(ge=0)]
# A player's career games: far above any career (lichess's busiest bots play a few million),
# far below what the store's MessagePack can hold (64 bits) after any event adds to it.
Games = Annotated[int, msgspec.Meta(ge=0, le=1_000_000_000)]
Score = Annotated[
    float,
    msgspec.Meta(
        ge=0,
        le=1,
        description="Score of a game: 1, 0.5 or 0.",
        extra_json_schema={"enum": [0, 0.5, 1]},
    ),
]

Status = Literal["unrated", "provisional", "established"]

# Read off the one table of the systems (schemas/systems.py, D70).
SYSTEMS: tuple[str, ...] = tuple(info.name for info in SYSTEM_INFO)
POOLS: dict[str, tuple[str, ...]] = {info.name: info.pools for info in SYSTEM_INFO}
DEFAULT_POOL: dict[str, str] = {info.name: info.pools[0] for info in SYSTEM_INFO}
DEFAULT_RULESET: dict[str, str] = {info.name: info.ruleset for info in SYSTEM_INFO}
# The systems with rulesets that rate events into periods closed by `period.closed/v1`
# (FIDE's monthly lists, Glicko-2's rating periods); the engines of the others refuse a close
# (`WithoutPeriods`; tests/unit/test_periods.py checks it).
PERIOD_SYSTEMS: tuple[str, ...] = tuple(info.name for info in SYSTEM_INFO if info.period_rulesets)
