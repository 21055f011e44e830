"""The read side's queries of one player across pools and of one event's details (D38,
D42, D43): the profile, the crosstable and the revision history, mixed into ReadModel."""

from __future__ import annotations

from typing import Any

from schemas.common import POOLS
from schemas.ratings import RatingsUpdated
from schemas.reads import (
    Crosstable,
    EventRevisions,
    PlayerProfile,
)
from schemas.records import PlayerRecord
from schemas.systems import BY_NAME, pool_order
from service.crosstable import crosstable
from service.profiles import PoolRead, profile_of
from service.readmodel import (
    rank_score,
    sorted_entries,
    unpack_message,
)
from service.revisions import revisions
from service.runtime.keys import StreamKeys
from service.runtime.replies import moment, text
from service.runtime.store import decode_record, queue_event_names, revision_field
from service.timeline import Archived, decode_archived


class DetailQueries:
    """ReadModel's profile and event-detail queries (it holds the client and the keys)."""

    client: Any
    keys: list[StreamKeys]
    _where: dict[tuple[str, str], StreamKeys]

    async def _catalog_pools(self, system: str) -> list[str]:
        """The pools of `system` the catalogs of the input streams name (those with data)."""
        async with self.client.pipeline(transaction=False) as pipe:
            for keys in self.keys:
                pipe.hkeys(keys.catalog)
            replies = await pipe.execute()
        prefix = f"{system}:"
        return [
            text(f)[len(prefix) :]
            for fields in replies
            for f in fields
            if text(f).startswith(prefix)
        ]

    async def profile(self, system: str, player_id: str) -> PlayerProfile | None:
        """The player in every pool of the system (D38) in two pipelined round trips: each
        pool's record, history and last update (asked of every input stream for a pool not
        located yet: a pool lives in one), then the ranks of the rated ones. A system whose
        pools the platform names (D70) costs one round trip more: the catalog's pools of it."""
        wanted: list[tuple[str, StreamKeys]] = []
        pools = list(POOLS.get(system, ()))
        info = BY_NAME.get(system)
        if info is not None and info.open_pools:
            pools = pool_order(system, [*pools, *await self._catalog_pools(system)])
        for pool in pools:
            known = self._where.get((system, pool))
            wanted += [(pool, keys) for keys in ([known] if known else self.keys)]
        if not wanted:
            return None
        async with self.client.pipeline(transaction=False) as pipe:
            for pool, keys in wanted:
                pipe.hget(keys.players(system, pool), player_id)
                pipe.hgetall(keys.entries(system, pool, player_id))
                pipe.hget(keys.catalog, f"{system}:{pool}")
            replies = await pipe.execute()
        found: list[tuple[str, StreamKeys, PlayerRecord, dict, Any]] = []
        for n, (pool, keys) in enumerate(wanted):
            raw, fields, ms = replies[3 * n : 3 * n + 3]
            if raw is not None:
                self._where[(system, pool)] = keys
                found.append((pool, keys, decode_record(raw), fields, ms))
        rated = [(pool, keys, r) for pool, keys, r, _, _ in found if r.rating is not None]
        ranks: dict[str, int] = {}
        names: list[dict[str, str]] = [{} for _ in found]
        if found:  # the ranks and the events' names (D122), one round trip
            async with self.client.pipeline(transaction=False) as pipe:
                for pool, keys, record in rated:
                    pipe.zcount(keys.ranking(system, pool), "-inf", f"({rank_score(record)}")
                makers = [queue_event_names(pipe, keys, fields) for _, keys, _, fields, _ in found]
                replies = await pipe.execute()
            ranks = {pool: n + 1 for (pool, _, _), n in zip(rated, replies)}
            rest = replies[len(rated) :]
            names = [named(rest) for named in makers]
        return profile_of(
            system,
            player_id,
            [
                PoolRead(
                    pool=pool,
                    record=record,
                    entries=sorted_entries(fields.items(), named),
                    rank=ranks.get(pool),
                    last_update=moment(ms),
                )
                for (pool, _, record, fields, ms), named in zip(found, names)
            ],
        )

    # ---------------------------------------------------------- an event's crosstable and
    # revisions (D42, D43): its archive and its last message, in one round trip

    async def _event_and_archive(
        self, event_id: str
    ) -> tuple[RatingsUpdated, Archived | None] | None:
        for keys in self.keys:
            async with self.client.pipeline(transaction=False) as pipe:
                pipe.hget(keys.results, event_id)
                pipe.hget(keys.events, event_id)
                raw, archive = await pipe.execute()
            if raw is not None:
                return unpack_message(raw), decode_archived(archive) if archive else None
        return None

    async def crosstable(self, event_id: str) -> Crosstable | None:
        found = await self._event_and_archive(event_id)
        return crosstable(*found) if found is not None else None

    async def revision_message(self, event_id: str, revision: int) -> RatingsUpdated | None:
        """The message the event's `revision` published (0: its first result), details
        included: the last from `{S}:results`, an earlier one from `{S}:revisions` (D101)."""
        for keys in self.keys:
            async with self.client.pipeline(transaction=False) as pipe:
                pipe.hget(keys.results, event_id)
                pipe.hget(keys.revisions, revision_field(event_id, revision))
                last, kept = await pipe.execute()
            if last is None:
                continue
            message = unpack_message(last)
            if (message.revision or 0) == revision:
                return message
            return unpack_message(kept) if kept is not None else None
        return None

    async def revisions(self, event_id: str) -> EventRevisions | None:
        found = await self._event_and_archive(event_id)
        return revisions(*found) if found is not None else None
