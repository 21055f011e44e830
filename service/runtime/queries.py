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
from schemas.glicko2 import uncertainty
from schemas.ratings import RatingsUpdated
from schemas.reads import (
    ListDate,
    PlayerHistory,
    PlayerList,
    PlayerView,
    PoolList,
    PoolSummary,
    RankedPlayer,
)
from schemas.records import PlayerRecord, PoolState
from service.lists import FEDERATION, TITLE
from service.readmodel import (
    RATED_MAX,
    UNRATED_SCORE,
    name_words,
    sorted_entries,
    unpack_message,
)
from service.runtime.detailqueries import DetailQueries
from service.runtime.keys import StreamKeys
from service.runtime.listqueries import ListQueries
from service.runtime.replies import moment, text
from service.runtime.store import decode_record, event_names

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
# A page of a list filtered by several indexes (D47): the smallest of the sets KEYS is read
# in its order, up to the score ARGV[1], each member kept when every other set has it: (how
# many are kept, the ids of the kept ones from ARGV[2] on, at most ARGV[3]).
_FILTERED = """
local smallest, size = 1, redis.call('ZCARD', KEYS[1])
for i = 2, #KEYS do
  local n = redis.call('ZCARD', KEYS[i])
  if n < size then smallest, size = i, n end
end
local total, page, from, want = 0, {}, tonumber(ARGV[2]), tonumber(ARGV[3])
local start = 0
while true do
  local chunk = redis.call('ZRANGEBYSCORE', KEYS[smallest], '-inf', ARGV[1], 'LIMIT', start, 1000)
  if #chunk == 0 then break end
  for _, id in ipairs(chunk) do
    local kept = true
    for i = 1, #KEYS do
      if i ~= smallest and not redis.call('ZSCORE', KEYS[i], id) then kept = false break end
    end
    if kept then
      if total >= from and #page < want then page[#page + 1] = id end
      total = total + 1
    end
  end
  start = start + #chunk
end
return {total, page}
"""
MAX_MATCHES = 5_000  # a search looks at most at this many players whose name has the query's word
_pool_decoder = msgspec.json.Decoder(PoolState)


def _day(value: int) -> dt.date | None:
    return dt.date.fromordinal(value) if value > 0 else None


def _list_date(raw: bytes | None, active: int, state: PoolState | None) -> ListDate | None:
    """The list date the commits keep (`{S}:listdate`, D46), with the active players' count;
    None before the pool's indexes are built (backfill.py)."""
    if raw is None:
        return None
    ref, first, closed, _ = (int(x) for x in text(raw).split())
    return ListDate(
        period=state.closed_through if closed and state is not None else None,
        date=_day(ref),
        active_from=_day(first),
        active=active,
    )


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


class ReadModel(ListQueries, DetailQueries):
    """Answers the read API from the keys of the service's input streams (a pool is rated
    from one stream; the first stream that has it answers)."""

    def __init__(self, client: Any, streams: Iterable[str], namespace: str | None = None):
        self.client = client
        self.keys = [StreamKeys(stream, namespace) for stream in streams]
        self._where: dict[tuple[str, str], StreamKeys] = {}
        self._page = client.register_script(_PAGE)
        self._player = client.register_script(_PLAYER)
        self._filtered = client.register_script(_FILTERED)

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
                    pipe.get(keys.listdate(system, pool))
                    pipe.zcount(keys.active(system, pool), "-inf", RATED_MAX)
                pipe.hmget(keys.pools, [field for field, _ in catalog])
                replies = await pipe.execute()
            states = replies[-1]
            for n, (field, ms) in enumerate(catalog):
                system, _, pool = field.partition(":")
                state = _pool_decoder.decode(states[n]) if states[n] is not None else None
                listed = _list_date(replies[4 * n + 2], replies[4 * n + 3], state)
                pools.append(
                    PoolSummary(
                        system=system,
                        pool=pool,
                        players=replies[4 * n],
                        rated=replies[4 * n + 1],
                        last_update=moment(ms),
                        closed_through=state.closed_through if state else None,
                        stream=keys.stream,
                        list_date=listed,
                    )
                )
        return PoolList(pools=pools)

    async def last_update(self, system: str, pool: str) -> dt.datetime | None:
        keys = await self._locate(system, pool)
        if keys is None:
            return None
        return moment(await self.client.hget(keys.catalog, f"{system}:{pool}"))

    async def players(
        self,
        system: str,
        pool: str,
        *,
        limit: int = 50,
        offset: int = 0,
        q: str | None = None,
        unrated: bool = False,
        active: bool = False,
        federation: str | None = None,
        title: str | None = None,
    ) -> PlayerList | None:
        """A page of the pool's list, highest rating first (ties by id); None: no such pool.
        `active`, `federation`, `title` keep the players active on the list (D46), of that
        federation, with that title (D47): each an index of its own, never a scan of the
        pool (several: the smallest one's members, looked up in the others)."""
        keys = await self._locate(system, pool)
        if keys is None:
            return None
        filters = [keys.active(system, pool)] if active else []
        filters += [keys.label(system, pool, FEDERATION, federation)] if federation else []
        filters += [keys.label(system, pool, TITLE, title)] if title else []
        total, page, ranks = await self._rows(
            keys, system, pool, q, unrated, limit, offset, filters
        )
        async with self.client.pipeline(transaction=False) as pipe:
            if page:
                pipe.zmscore(keys.active(system, pool), [r.id for r in page])
            pipe.get(keys.listdate(system, pool))
            pipe.zcount(keys.active(system, pool), "-inf", RATED_MAX)
            pipe.hget(keys.pools, f"{system}:{pool}")
            pipe.hkeys(keys.labels(system, pool))
            replies = await pipe.execute()
        actives = replies.pop(0) if page else []
        raw_date, counted, raw_state, label_fields = replies
        state = _pool_decoder.decode(raw_state) if raw_state is not None else None
        players = [
            RankedPlayer(
                rank=rank,
                id=r.id,
                name=r.name,
                rating=r.rating,
                status=r.status,
                games=r.games,
                titles=list(r.titles),
                federation=r.federation,
                active=is_active is not None,
                rd=r.rd,
                uncertainty=uncertainty(r.rd),
            )
            for r, rank, is_active in zip(page, ranks, actives)
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
            active=active,
            federation=federation,
            title=title,
            list_date=_list_date(raw_date, counted, state),
            labels=await self._labels(keys, system, pool, label_fields),
        )

    async def _rows(
        self,
        keys: StreamKeys,
        system: str,
        pool: str,
        q: str | None,
        unrated: bool,
        limit: int,
        offset: int,
        filters: list[str],
    ) -> tuple[int, list[PlayerRecord], list[int | None]]:
        """(how many match, the page's records, their ranks on the whole list): one index's
        page read directly, several's (or a search's) looked up member by member."""
        ranking = keys.ranking(system, pool)
        upper = "+inf" if unrated else RATED_MAX
        if q or len(filters) > 1:
            if q:
                total, ids = await self._search(
                    keys, system, pool, q, unrated, limit, offset, filters
                )
            else:
                total, ids = await self._filtered(keys=filters, args=[upper, offset, limit])
                ids = [text(i) for i in ids]
            page = []
            if ids:
                raws = await self.client.hmget(keys.players(system, pool), ids)
                page = [decode_record(raw) for raw in raws if raw is not None]
            ranks = await self._ranks(ranking, page)
        else:
            total, above, rows, raws = await self._page(
                keys=[filters[0] if filters else ranking, keys.players(system, pool)],
                args=[upper, offset, limit],
            )
            page = [decode_record(raw) for raw in raws if raw is not None]
            if filters:
                ranks = await self._ranks(ranking, page)
            else:
                ranks = _page_ranks([float(score) for score in rows[1::2]], offset, above)
        return total, page, ranks

    async def _search(
        self,
        keys: StreamKeys,
        system: str,
        pool: str,
        q: str,
        unrated: bool,
        limit: int,
        offset: int,
        filters: list[str] = [],  # noqa: B006  # read only
    ) -> tuple[int, list[str]]:
        """The players whose id is `q`, or whose name has, for each word of `q`, a word that
        begins with it, and who are in every set of `filters`: (how many, the ids of the page
        in the list's order)."""
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
        async with self.client.pipeline(transaction=False) as pipe:
            for key in (keys.ranking(system, pool), *filters):
                pipe.zmscore(key, candidates)
            scores, *kept = await pipe.execute()
        ranked = sorted(
            (score, pid)
            for n, (pid, score) in enumerate(zip(candidates, scores))
            if score is not None
            and (unrated or score < UNRATED_SCORE)
            and all(k[n] is not None for k in kept)
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
        names = await event_names(self.client, keys, fields)
        return PlayerHistory(
            system=cast(System, system),  # a system whose pool _locate found
            pool=pool,
            id=player_id,
            name=name,
            entries=sorted_entries(fields.items(), names),
        )

    async def event(self, event_id: str) -> RatingsUpdated | None:
        """The last message published for the event (a withdrawn event's says so)."""
        for keys in self.keys:
            raw = await self.client.hget(keys.results, event_id)
            if raw is not None:
                return unpack_message(raw)
        return None
