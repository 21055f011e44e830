"""Output message `ratings.updated/v1`: one per rated event, per chunk of a new list, and one
per revision of an already-published event (design: "v1.1 additions").

Numbers (the rule for every figure of this message and its `details`, schemas/cfc.py,
schemas/fide.py, schemas/glicko2.py, schemas/naspa.py):

1. Ratings, changes, K, D, counts and other whole figures are JSON integers. Scores (W,
   points, earned wins) are multiples of 0.5 and exact.
2. Every other figure is a JSON number rounded half away from zero to 2 decimals
   (hundredths, the unit of the CFC and FIDE tables): 1598.3333... is written 1598.33. A
   value that is a whole number of hundredths is therefore exact as a number: FIDE's PD
   (table 8.1.2: 0.76), W - We and K x (W - We), CFC's expected scores (C3). The rounding
   is done once, when the engine writes its result (service/engine/arithmetic.py
   `decimal_number`); the engines compute with the exact values, and the ratings never
   depend on it.
3. Where a rating officer redoes the arithmetic - the sums and unrounded values a published
   rating or change is rounded from (CFC's performance, AR, pass-1, 714a sum, Rn and bonus,
   the opponents' values; FIDE's event and period sums and K x sum; FIDE 8.2's Ra) - the
   exact value is kept next to the number, as an `Exact` string in lowest terms named
   `<field>_exact` ("19/25", "-49/100", "7033/4"): compute with the string, read the number.
   A decimal number read into a binary float may land on the wrong side of a .5 that the
   rules round.
4. NASPA and Glicko-2 have no exact value (their rules use exp(), N1, G2-3): their figures
   are the engine's floats rounded by rule 2, and no `_exact` is kept (Glicko-2 writes the
   volatility to 5 decimals and keeps each unrounded float beside, schemas/glicko2.py).
   Rounded terms need not add up to the rounded sum beside them to the last hundredth.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

import msgspec

from schemas.cfc import CfcDetails
from schemas.common import Count, Period, PlayerId, Status, System
from schemas.fide import FideDetails
from schemas.glicko2 import Glicko2Details
from schemas.naspa import NaspaDetails

Details = CfcDetails | FideDetails | Glicko2Details | NaspaDetails


class PlayerResult(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One player's outcome. `new_rating` is null for a player who stays unrated."""

    id: PlayerId
    old_rating: int | None
    new_rating: int | None
    change: int | None
    old_status: Status
    status: Status
    games: Count
    event_games: Count
    score: Annotated[
        float,
        msgspec.Meta(
            description="Points scored in the event's rated games: a multiple of 0.5, exact."
        ),
    ]
    expected: Annotated[
        float | None,
        msgspec.Meta(
            description="Expected score over those games (CFC 714b Sx, FIDE sum of PD, NASPA expected wins), "
            "2 decimals (exact for CFC and FIDE, whose tables are in hundredths); null where the system has none."
        ),
    ] = None
    performance: Annotated[
        float | None,
        msgspec.Meta(
            description="The event's performance rating, 2 decimals (CFC 714a, exact in "
            "`details.performance_exact`; FIDE Ra + dp, a whole number); null where the system has none."
        ),
    ] = None
    details: Details | None = None
    name: str | None = None


class Cause(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What set off a revision: the correction, withdrawal or late arrival of `event_id`; or
    (`reopened`) the reopening of a closed period, whose list is withdrawn: `event_id` is
    then the list's name, `list/<period>` (the period it closed)."""

    type: Literal["corrected", "withdrawn", "inserted", "reopened"]
    event_id: str


class RatingsUpdated(
    msgspec.Struct,
    frozen=True,
    forbid_unknown_fields=True,
    tag_field="schema",
    tag="ratings.updated/v1",
):
    """New ratings: of one event (`kind` event), one chunk of a published list (`list`), or
    the complete new result of an already-published event (`revision`, with `revision`
    counting 1, 2, ... and the `cause`; a withdrawn event's revision has `withdrawn` and no
    players). A consumer that keeps the last message per `event_id` holds the current results.

    A FIDE list message says which list it is: `list_period` is the month the list is in
    force from (the records' `fide.published[].period`, e.g. `2025-12`) and `period` the
    rating period it closes (`2025-11`)."""

    kind: Literal["event", "list", "revision"]
    system: System
    pool: str
    ruleset: str
    source_id: str
    players: list[PlayerResult]
    event_id: str | None = None
    period: Period | None = None
    chunk: int = 1
    chunks: int = 1
    name: str | None = None
    start_date: dt.date | None = None
    end_date: dt.date | None = None
    revision: int | None = None
    cause: Cause | None = None
    withdrawn: bool = False
    list_period: Period | None = None
