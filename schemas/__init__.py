"""The rating service's wire contract (v1): msgspec Structs for every message and record.

Importable on its own by downstream services; JSON Schemas generated from these types are
committed under `schemas/json/`; the wire contract page of the docs
(docs/reference/contract.md) is made from them.
"""

from schemas.cfc import CfcDetails, CfcOpponentValue, CfcState
from schemas.common import DEFAULT_POOL, DEFAULT_RULESET, POOLS, SYSTEMS
from schemas.events import (
    Bye,
    EventContent,
    EventCorrected,
    EventFinished,
    EventWithdrawn,
    Game,
    InputMessage,
    PeriodClosed,
    PeriodReopened,
    PlayerRef,
)
from schemas.fide import FideDetails, FideState, InitialGame, NormCheck, PeriodSums, PublishedRating
from schemas.naspa import NaspaDetails, NaspaSegment
from schemas.ratings import Cause, Details, PlayerResult, RatingsUpdated
from schemas.records import PlayerRecord, PoolState, unrated_record
from schemas.rejected import REASONS, EventRejected
from schemas.validation import InvalidMessage, Limits, Problem, decode_input, normalize

__all__ = [
    "DEFAULT_POOL",
    "DEFAULT_RULESET",
    "POOLS",
    "REASONS",
    "SYSTEMS",
    "Bye",
    "Cause",
    "CfcDetails",
    "CfcOpponentValue",
    "CfcState",
    "Details",
    "EventContent",
    "EventCorrected",
    "EventFinished",
    "EventRejected",
    "EventWithdrawn",
    "FideDetails",
    "FideState",
    "Game",
    "InitialGame",
    "InputMessage",
    "InvalidMessage",
    "Limits",
    "NaspaDetails",
    "NaspaSegment",
    "NormCheck",
    "PeriodClosed",
    "PeriodReopened",
    "PeriodSums",
    "PlayerRecord",
    "PlayerRef",
    "PlayerResult",
    "PoolState",
    "Problem",
    "PublishedRating",
    "RatingsUpdated",
    "decode_input",
    "normalize",
    "unrated_record",
]
