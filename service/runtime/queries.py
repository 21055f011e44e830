"""The read side's queries (docs/guides/websites.md): pools, ranked lists, players, histories
and events, from the read model the commits keep (service/readmodel.py, runtime/store.py).

Read-only and fast: each answer is one or two pipelined round trips to Redis, whatever the
size of the pool (a page of the list reads only its page; a history reads one hash).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any, cast

import msgspec

from schemas.common import System
from schemas.ratings import RatingsUpdated
from schemas.reads import (
    Crosstable,
    EventRevisions,
    PlayerHistory,
    PlayerList,
    PlayerView,
    PoolList,
    PoolSummary,
    RankedPlayer,
)
from schemas.records import PlayerRecord, PoolState
from service.crosstable import crosstable
from service.readmodel import RATED_MAX, UNRATED_SCORE, name_words, sorted_entries, unpack_message
from service.revisions import revisions
from service.runtime.keys import StreamKeys
from service.runtime.replies import text
from service.runtime.store import decode_record
from service.timeline import Archived, decode_archived

# One round trip per answer: the page of the list (total, the players above its first row,
# the rows with their scores, their records) ...
_PAGE = """
local total = redis.call('ZCOUNT', KEYS[1], '-inf', ARGV[1])
local rows = redis.call('ZRANGE', KEYS[1], '-inf', ARGV[1], 'BYSCORE', 'LIMIT', ARGV[2], ARGV[3], 'WITHSCORES')
local above, ids = 0, {}
for i = 1, #rows, 2 do ids[#ids + 1] = rows[i] end
if #rows > 0 then above = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. rows[2]) end
local records = {}
if #ids > 0 then records = redis.call('HMGET', KEYS[2], unpack(ids)) end
return {total, above, rows, records}
"""
# ... and a player (the record, the players rated higher, the end day of the last event: the
# largest day number in bytes 4-6 of the history values, 0xffffff being a FIDE list's).
_PLAYER = """
local record = redis.call('HGET', KEYS[1], ARGV[1])
if not record then return false end
local score = redis.call('ZSCORE', KEYS[2], ARGV[1])
local above = -1
if score and tonumber(score) < tonumber(ARGV[2]) then above = redis.call('ZCOUNT', KEYS[2], '-inf', '(' .. score) end
local last = 0
for _, value in ipairs(redis.call('HVALS', KEYS[3])) do
  local a, b, c = string.byte(value, 4, 6)
  local day = (a * 256 + b) * 256 + c
  if day ~= 16777215 and day > last then last = day end
end
return {record, above, last}
"""
MAX_MATCHES = 5_000  # a search looks at most at this many players whose name has the query's word
_pool_decoder = msgspec.json.Decoder(PoolState)


def _time(ms: bytes | str | int | None) -> dt.datetime | None:
    if ms is None:
        return None
    return dt.datetime.fromtimestamp(int(ms) / 1000, tz=dt.UTC).replace(microsecond=0)


def _page_ranks(scores: list[float], offset: int, above: int) -> list[int | None]:
    """The ranks of a page of the list from its rows' scores: the first row's is 1 + the
    players above it; a row whose rating differs from the row before is at its own
    position (everyone before it is rated higher); equal ratings share a rank."""
    ranks: list[int | None] = []
    for i, score in enumerate(scores):
        if score >= UNRATED_SCORE:
            ranks.append(None)
        elif i == 0:
            ranks.append(above + 1)
        elif score == scores[i - 1]:
            ranks.append(ranks[-1])
        else:
            ranks.append(offset + i + 1)
    return ranks


class ReadModel:
    """Answers the read API from the keys of the service's input streams (a pool is rated
    from one stream; the first stream that has it answers)."""

    def __init__(self, client: Any, streams: Iterable[str], namespace: str | None = None):
        self.client = client
        self.keys = [StreamKeys(stream, namespace) for stream in streams]
        self._where: dict[tuple[str, str], StreamKeys] = {}
        self._page = client.register_script(_PAGE)
        self._player = client.register_script(_PLAYER)

    async def _locate(self, system: str, pool: str) -> StreamKeys | None:
        found = self._where.get((system, pool))
        if found is not None:
            return found
        for keys in self.keys:
            if await self.client.exists(keys.players(system, pool)):
                self._where[(system, pool)] = keys
                return keys
        return None

    async def pools(self) -> PoolList:
        pools: list[PoolSummary] = []
        for keys in self.keys:
            catalog = sorted(
                (text(f), int(v)) for f, v in (await self.client.hgetall(keys.catalog)).items()
            )
            if not catalog:
                continue
            async with self.client.pipeline(transaction=False) as pipe:
                for field, _ in catalog:
                    system, _, pool = field.partition(":")
                    pipe.hlen(keys.players(system, pool))
                    pipe.zcount(keys.ranking(system, pool), "-inf", RATED_MAX)
                pipe.hmget(keys.pools, [field for field, _ in catalog])
                replies = await pipe.execute()
            states = replies[-1]
            for n, (field, ms) in enumerate(catalog):
                system, _, pool = field.partition(":")
                state = _pool_decoder.decode(states[n]) if states[n] is not None else None
                pools.append(
                    PoolSummary(
                        system=system,
                        pool=pool,
                        players=replies[2 * n],
                        rated=replies[2 * n + 1],
                        last_update=_time(ms),
                        closed_through=state.closed_through if state else None,
                        stream=keys.stream,
                    )
                )
        return PoolList(pools=pools)

    async def last_update(self, system: str, pool: str) -> dt.datetime | None:
        keys = await self._locate(system, pool)
        if keys is None:
            return None
        return _time(await self.client.hget(keys.catalog, f"{system}:{pool}"))

    async def players(
        self,
        system: str,
        pool: str,
        *,
        limit: int = 50,
        offset: int = 0,
        q: str | None = None,
        unrated: bool = False,
    ) -> PlayerList | None:
        """A page of the pool's list, highest rating first (ties by id); None: no such pool."""
        keys = await self._locate(system, pool)
        if keys is None:
            return None
        ranking = keys.ranking(system, pool)
        if q:
            total, ids = await self._search(keys, system, pool, q, unrated, limit, offset)
            page = []
            if ids:
                raws = await self.client.hmget(keys.players(system, pool), ids)
                page = [decode_record(raw) for raw in raws if raw is not None]
            ranks = await self._ranks(ranking, page)
        else:
            upper = "+inf" if unrated else RATED_MAX
            total, above, rows, raws = await self._page(
                keys=[ranking, keys.players(system, pool)], args=[upper, offset, limit]
            )
            page = [decode_record(raw) for raw in raws if raw is not None]
            ranks = _page_ranks([float(score) for score in rows[1::2]], offset, above)
        players = [
            RankedPlayer(
                rank=rank, id=r.id, name=r.name, rating=r.rating, status=r.status, games=r.games
            )
            for r, rank in zip(page, ranks)
        ]
        return PlayerList(
            system=cast(System, system),  # a system whose pool _locate found
            pool=pool,
            total=total,
            offset=offset,
            limit=limit,
            q=q or None,
            unrated=unrated,
            players=players,
        )

    async def _search(
        self,
        keys: StreamKeys,
        system: str,
        pool: str,
        q: str,
        unrated: bool,
        limit: int,
        offset: int,
    ) -> tuple[int, list[str]]:
        """The players whose id is `q`, or whose name has, for each word of `q`, a word that
        begins with it: (how many, the ids of the page in the list's order)."""
        words = name_words(q)
        wanted = q.strip()
        async with self.client.pipeline(transaction=False) as pipe:
            for word in words:
                pipe.zrange(
                    keys.names(system, pool),
                    b"[" + word.encode() + b"\0",
                    b"[" + word.encode() + b"\xff",
                    bylex=True,
                    offset=0,
                    num=MAX_MATCHES,
                )
            pipe.hexists(keys.players(system, pool), wanted)
            replies = await pipe.execute()
        found: set[str] | None = None
        for members in replies[:-1]:
            ids = {m.split(b"\0", 1)[1].decode() for m in members}
            found = ids if found is None else found & ids
        candidates = sorted((found or set()) | ({wanted} if replies[-1] else set()))
        if not candidates:
            return 0, []
        scores = await self.client.zmscore(keys.ranking(system, pool), candidates)
        ranked = sorted(
            (score, pid)
            for pid, score in zip(candidates, scores)
            if score is not None and (unrated or score < UNRATED_SCORE)
        )
        return len(ranked), [pid for _, pid in ranked[offset : offset + limit]]

    async def _ranks(self, ranking: str, records: list[PlayerRecord]) -> list[int | None]:
        """Each rated player's rank: 1 + the players rated higher (equal ratings share a rank)."""
        rated = [r for r in records if r.rating is not None]
        if not rated:
            return [None] * len(records)
        async with self.client.pipeline(transaction=False) as pipe:
            for record in rated:
                pipe.zcount(ranking, "-inf", f"({-record.rating}")  # type: ignore[operator]  # a ranked record has a rating
            above = iter(await pipe.execute())
        return [next(above) + 1 if r.rating is not None else None for r in records]

    async def player(self, system: str, pool: str, player_id: str) -> PlayerView | None:
        keys = await self._locate(system, pool)
        if keys is None:
            return None
        found = await self._player(
            keys=[
                keys.players(system, pool),
                keys.ranking(system, pool),
                keys.entries(system, pool, player_id),
            ],
            args=[player_id, UNRATED_SCORE],
        )
        if not found:
            return None
        raw, above, last = found
        record = decode_record(raw)
        return PlayerView(
            system=record.system,
            pool=record.pool,
            id=record.id,
            name=record.name,
            rating=record.rating,
            status=record.status,
            games=record.games,
            rank=above + 1 if above >= 0 else None,
            last_event_date=dt.date.fromordinal(last) if last else None,
            record=record,
        )

    async def history(self, system: str, pool: str, player_id: str) -> PlayerHistory | None:
        """The player's history in date order; None when the pool has no such player."""
        keys = await self._locate(system, pool)
        if keys is None:
            return None
        async with self.client.pipeline(transaction=False) as pipe:
            pipe.hget(keys.players(system, pool), player_id)
            pipe.hgetall(keys.entries(system, pool, player_id))
            raw, fields = await pipe.execute()
        if raw is None and not fields:
            return None
        name = decode_record(raw).name if raw is not None else None
        return PlayerHistory(
            system=cast(System, system),  # a system whose pool _locate found
            pool=pool,
            id=player_id,
            name=name,
            entries=sorted_entries(fields.items()),
        )

    async def event(self, event_id: str) -> RatingsUpdated | None:
        """The last message published for the event (a withdrawn event's says so)."""
        for keys in self.keys:
            raw = await self.client.hget(keys.results, event_id)
            if raw is not None:
                return unpack_message(raw)
        return None

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

    async def revisions(self, event_id: str) -> EventRevisions | None:
        found = await self._event_and_archive(event_id)
        return revisions(*found) if found is not None else None
