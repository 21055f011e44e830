"""`player.record/v1`: one player's state in one pool, and the pool's own state.

An import needs only `system`, `pool`, `id`, `rating`, `status` and `games` (and may give
a `name`), plus the
fields a system uses (CFC `highest`; FIDE `birth_year`, `ever_2300`, `ever_2400`, `k`;
Glicko-2 `rd`, `volatility`).
The engines keep their accumulators in `cfc` / `fide` / `glicko2` (design: "player.record/v1").
"""

from __future__ import annotations

import msgspec

from schemas.cfc import CfcState
from schemas.common import (
    BirthYear,
    Federation,
    Games,
    Period,
    PlayerId,
    Rating,
    Sex,
    Status,
    System,
    Title,
)
from schemas.fide import FideState
from schemas.glicko2 import Deviation, Glicko2State, Volatility


class PlayerRecord(
    msgspec.Struct,
    frozen=True,
    forbid_unknown_fields=True,
    omit_defaults=True,
    tag_field="schema",
    tag="player.record/v1",
):
    """A player's rating in one pool; `rating` null means unrated."""

    system: System
    pool: str
    id: PlayerId
    # The player's name as the federation lists it (from an import, else from the first
    # event that names the player); never used by the rules.
    name: str | None = None
    # Labels of the list (D35), never used by the rules: titles in the list's order (FIDE:
    # `Tit`, `WTit`, then `OTit`), federation, sex.
    titles: list[Title] = []
    federation: Federation | None = None
    sex: Sex | None = None
    rating: Rating | None = None
    status: Status = "unrated"
    games: Games = 0
    # CFC: highest rating ever held (714c result bonus).
    highest: Rating | None = None
    # FIDE: K factor inputs (8.3.3).
    birth_year: BirthYear | None = None
    ever_2300: bool = False
    ever_2400: bool = False
    k: int | None = None
    # Glicko-2: the rating deviation and volatility (exact floats; an import gives them
    # beside `rating`; the exact rating is `glicko2.rating`).
    rd: Deviation | None = None
    volatility: Volatility | None = None
    # Engine accumulators.
    cfc: CfcState | None = None
    fide: FideState | None = None
    glicko2: Glicko2State | None = None


class PoolState(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """State of a whole pool (one rating list): the periods already closed (FIDE, Glicko-2)."""

    system: System
    pool: str
    closed_through: Period | None = None
    # Per close that a reopen can undo, newest last: `closed_through` before it (what a
    # reopen of the latest close restores; null: no period was closed before).
    reopen_to: list[Period | None] = []


def unrated_record(system: str, pool: str, player_id: str) -> PlayerRecord:
    """The record of a player the store has never seen: unrated, no games."""
    return PlayerRecord(system=system, pool=pool, id=player_id)  # type: ignore[arg-type]  # system is a System name (the callers')
