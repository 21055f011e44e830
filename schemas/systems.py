"""The rating systems the contract knows, one entry each: the one table that the defaults,
the pools' names and the period rules are read from (D70).

A new system adds its entry here (and its `Details` and record state in its own schema
module); nothing else in `schemas/` or `service/` lists systems or pools. The service's
engines (service/engine/registry.py) implement the rulesets named here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal, get_args

import msgspec

# A pool a platform names itself (systems with `open_pools`): lower case, a letter first, at
# most 32 characters of letters, digits, `_` and `-` (it is part of the store's keys and of
# the read API's paths).
POOL_NAME_PATTERN = r"^[a-z][a-z0-9_-]{0,31}$"
_POOL_NAME = re.compile(POOL_NAME_PATTERN)


class SystemInfo(msgspec.Struct, frozen=True):
    """One rating system as the contract sees it.

    `pools`: the pools every installation has, the default first. `open_pools`: any other
    pool name matching POOL_NAME_PATTERN is a pool too (named by the platform). `ruleset`:
    the default ruleset; `pool_rulesets` a pool's own default. `period_rulesets`: the
    rulesets that rate events into rating periods closed by `period.closed/v1` (an event of
    such a ruleset counts in the period of its end month unless it names one).
    `paged_close`: a close changes only the players with games in the period, so the service
    reads and commits it a page of them at a time (D60: FIDE); otherwise it rates the whole
    pool in one commit (Glicko-2's step 6 reaches every player)."""

    name: str
    title: str
    pools: tuple[str, ...]
    ruleset: str
    pool_rulesets: dict[str, str] = {}
    period_rulesets: tuple[str, ...] = ()
    open_pools: bool = False
    paged_close: bool = False


SYSTEM_INFO: tuple[SystemInfo, ...] = (
    SystemInfo("cfc", "CFC", ("regular", "active"), "cfc-2009"),
    SystemInfo(
        "fide",
        "FIDE",
        ("standard", "rapid", "blitz"),
        "fide-2024",
        period_rulesets=("fide-2024",),
        paged_close=True,
    ),
    SystemInfo(
        "glicko2",
        "Glicko-2",
        ("standard",),
        "glicko2",
        period_rulesets=("glicko2",),
        open_pools=True,
    ),
    SystemInfo("naspa", "NASPA", ("nwl", "csw"), "nsa2008", pool_rulesets={"csw": "naspa-csw"}),
)

# The type of a message's `system` field (its JSON Schema's enum): the table's names.
System = Literal["cfc", "fide", "glicko2", "naspa"]

BY_NAME: dict[str, SystemInfo] = {info.name: info for info in SYSTEM_INFO}
if tuple(get_args(System)) != tuple(BY_NAME):  # pragma: no cover - a table without its type
    raise AssertionError("schemas.systems: System must name the systems of SYSTEM_INFO")


def is_pool(system: str, pool: str) -> bool:
    """Whether `pool` names a pool of `system` (one of its pools, or a platform's name)."""
    info = BY_NAME.get(system)
    if info is None:
        return False
    if pool in info.pools:
        return True
    return info.open_pools and _POOL_NAME.fullmatch(pool) is not None


def pool_order(system: str, pools: Iterable[str]) -> list[str]:
    """`pools` of `system`, each once, as pages list them: the table's pools in its order,
    then the platform's own (`open_pools`) by name."""
    info = BY_NAME.get(system)
    known = info.pools if info is not None else ()
    names = set(pools)
    return [p for p in known if p in names] + sorted(names - set(known))


def pools_text(system: str) -> str:
    """The pools of `system` as a message names them (a platform's own too, D70)."""
    info = BY_NAME.get(system)
    if info is None:
        return ""
    known = ", ".join(info.pools)
    return f"{known}, or a name of the platform's" if info.open_pools else known


def rates_in_periods(system: str, ruleset: str | None) -> bool:
    """Whether events of `system` under `ruleset` (None: the default) count in periods."""
    info = BY_NAME.get(system)
    if info is None:
        return False
    return (ruleset or info.ruleset) in info.period_rulesets
