"""The name indexes refolded by `upgrade-store` (D50): a store written before D50 holds
name-index members folded for case and accents only (`søndergaard\\0<id>`); this version
searches for `sondergaard`. Each pool's index is compared with the members its records give
now (readmodel.name_members) and the difference swapped: the members no record gives
removed, the missing ones added. Read first and shown (`--dry-run`), written after."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from service.readmodel import name_members
from service.runtime.keys import StreamKeys
from service.runtime.store import decode_record, text

CHUNK = 1_000  # members per ZREM / ZADD, records per HSCAN step


class Refold(msgspec.Struct):
    """One pool's name index: the members to remove and to add."""

    stream: str
    system: str
    pool: str
    key: str
    gone: list[bytes]
    added: list[bytes]


async def plan_refold(client: Any, streams: Iterable[str]) -> list[Refold]:
    """The pools (of the catalogs of `streams`' stores) whose name index differs from what
    their records give; none when every index is current."""
    plans = []
    for stream in streams:
        keys = StreamKeys(stream)
        for field in sorted(text(f) for f in await client.hkeys(keys.catalog)):
            system, _, pool = field.partition(":")
            wanted: set[bytes] = set()
            async for _, raw in client.hscan_iter(keys.players(system, pool), count=CHUNK):
                wanted.update(name_members(decode_record(raw)))
            names = keys.names(system, pool)
            there = set(await client.zrange(names, 0, -1))
            if wanted != there:
                plans.append(
                    Refold(
                        stream, system, pool, names, sorted(there - wanted), sorted(wanted - there)
                    )
                )
    return plans


async def apply_refold(client: Any, plans: Iterable[Refold]) -> None:
    """Add the missing members first, then remove the stale ones: a search during the swap
    finds a player by either fold, never by neither."""
    for plan in plans:
        for n in range(0, len(plan.added), CHUNK):
            await client.zadd(plan.key, {member: 0 for member in plan.added[n : n + CHUNK]})
        for n in range(0, len(plan.gone), CHUNK):
            await client.zrem(plan.key, *plan.gone[n : n + CHUNK])


def said(plan: Refold) -> str:
    return (
        f"the name index of {plan.system}/{plan.pool}: {len(plan.added)} members added, "
        f"{len(plan.gone)} removed (names folded as D50 searches them)"
    )
