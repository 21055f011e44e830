"""The read side's queries (README "For websites"): pools, ranked lists, players, histories
and events, from the read model the commits keep (service/readmodel.py, runtime/store.py).

Read-only and fast: each answer is one or two pipelined round trips to Redis, whatever the
size of the pool (a page of the list reads only its page; a history reads one hash).
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Iterable

import msgspec

from schemas.ratings import RatingsUpdated
from schemas.reads import PlayerHistory, PlayerList, PlayerView, PoolList, PoolSummary, RankedPlayer
from schemas.records import PlayerRecord, PoolState
from service.readmodel import (
    RATED_END,
    last_event_date,
    matches,
    member_id,
    name_words,
    rank_member,
    sorted_entries,
    unpack_message,
)
from service.runtime.store import StreamKeys, decode_record, text

MAX_MATCHES = 5_000  # a search looks at most at this many players whose name has the query's word
_pool_decoder = msgspec.json.Decoder(PoolState)


def _time(ms: bytes | str | int | None) -> dt.datetime | None:
    if ms is None:
        return None
    return dt.datetime.fromtimestamp(int(ms) / 1000, tz=dt.timezone.utc).replace(microsecond=0)


def _above(record: PlayerRecord) -> bytes:
    """The ZLEXCOUNT bound that counts the players rated above `record` (its rank - 1)."""
    return b"(" + rank_member(record).split(b":", 1)[0] + b":"


class ReadModel:
    """Answers the read API from the keys of the service's input streams (a pool is rated
    from one stream; the first stream that has it answers)."""

    def __init__(self, client: Any, streams: Iterable[str], namespace: str | None = None):
        self.client = client
        self.keys = [StreamKeys(stream, namespace) for stream in streams]
        self._where: dict[tuple[str, str], StreamKeys] = {}

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
            catalog = sorted((text(f), int(v)) for f, v in (await self.client.hgetall(keys.catalog)).items())
            if not catalog:
                continue
            async with self.client.pipeline(transaction=False) as pipe:
                for field, _ in catalog:
                    system, _, pool = field.partition(":")  # type: ignore[union-attr]
                    pipe.hlen(keys.players(system, pool))
                    pipe.zlexcount(keys.ranking(system, pool), b"-", RATED_END)
                pipe.hmget(keys.pools, [field for field, _ in catalog])
                replies = await pipe.execute()
            states = replies[-1]
            for n, (field, ms) in enumerate(catalog):
                system, _, pool = field.partition(":")  # type: ignore[union-attr]
                state = _pool_decoder.decode(states[n]) if states[n] is not None else None
                pools.append(PoolSummary(
                    system=system, pool=pool, players=replies[2 * n], rated=replies[2 * n + 1],  # type: ignore[arg-type]
                    last_update=_time(ms), closed_through=state.closed_through if state else None, stream=keys.stream,
                ))
        return PoolList(pools=pools)

    async def last_update(self, system: str, pool: str) -> dt.datetime | None:
        keys = await self._locate(system, pool)
        if keys is None:
            return None
        return _time(await self.client.hget(keys.catalog, f"{system}:{pool}"))

    async def players(self, system: str, pool: str, *, limit: int = 50, offset: int = 0, q: str | None = None,
                      unrated: bool = False) -> PlayerList | None:
        """A page of the pool's list, highest rating first (ties by id); None: no such pool."""
        keys = await self._locate(system, pool)
        if keys is None:
            return None
        ranking = keys.ranking(system, pool)
        if q:
            total, page = await self._search(keys, system, pool, q, unrated, limit, offset)
        else:
            upper = b"+" if unrated else RATED_END
            async with self.client.pipeline(transaction=False) as pipe:
                pipe.zlexcount(ranking, b"-", upper)
                pipe.zrange(ranking, b"-", upper, bylex=True, offset=offset, num=limit)
                total, members = await pipe.execute()
            page = []
            if members:
                raws = await self.client.hmget(keys.players(system, pool), [member_id(m) for m in members])
                page = [decode_record(raw) for raw in raws if raw is not None]
        ranks = await self._ranks(ranking, page)
        players = [RankedPlayer(rank=rank, id=r.id, name=r.name, rating=r.rating, status=r.status, games=r.games)
                   for r, rank in zip(page, ranks)]
        return PlayerList(system=system, pool=pool, total=total, offset=offset, limit=limit, q=q or None,  # type: ignore[arg-type]
                          unrated=unrated, players=players)

    async def _search(self, keys: StreamKeys, system: str, pool: str, q: str, unrated: bool, limit: int,
                      offset: int) -> tuple[int, list[PlayerRecord]]:
        """The players whose name has a word beginning with each word of `q`, or whose id is `q`."""
        words = name_words(q)
        ids: set[str] = set()
        if words:
            longest = max(words, key=len).encode()
            found = await self.client.zrange(keys.names(system, pool), b"[" + longest + b"\0", b"[" + longest + b"\xff",
                                             bylex=True, offset=0, num=MAX_MATCHES)
            ids = {m.split(b"\0", 1)[1].decode() for m in found}
        ids.add(q.strip())
        raws = await self.client.hmget(keys.players(system, pool), sorted(ids))
        records = [decode_record(raw) for raw in raws if raw is not None]
        chosen = [r for r in records if (r.id == q.strip() or matches(r, words)) and (unrated or r.rating is not None)]
        chosen.sort(key=rank_member)
        return len(chosen), chosen[offset : offset + limit]

    async def _ranks(self, ranking: str, records: list[PlayerRecord]) -> list[int | None]:
        """Each rated player's rank: 1 + the players rated higher (equal ratings share a rank)."""
        rated = [r for r in records if r.rating is not None]
        if not rated:
            return [None] * len(records)
        async with self.client.pipeline(transaction=False) as pipe:
            for record in rated:
                pipe.zlexcount(ranking, b"-", _above(record))
            above = iter(await pipe.execute())
        return [next(above) + 1 if r.rating is not None else None for r in records]

    async def player(self, system: str, pool: str, player_id: str) -> PlayerView | None:
        keys = await self._locate(system, pool)
        if keys is None:
            return None
        async with self.client.pipeline(transaction=False) as pipe:
            pipe.hget(keys.players(system, pool), player_id)
            pipe.hvals(keys.entries(system, pool, player_id))
            raw, values = await pipe.execute()
        if raw is None:
            return None
        record = decode_record(raw)
        (rank,) = await self._ranks(keys.ranking(system, pool), [record])
        return PlayerView(system=record.system, pool=record.pool, id=record.id, name=record.name, rating=record.rating,
                          status=record.status, games=record.games, rank=rank, last_event_date=last_event_date(values),
                          record=record)

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
        return PlayerHistory(system=system, pool=pool, id=player_id, name=name,  # type: ignore[arg-type]
                             entries=sorted_entries(fields.items()))

    async def event(self, event_id: str) -> RatingsUpdated | None:
        """The last message published for the event (a withdrawn event's says so)."""
        for keys in self.keys:
            raw = await self.client.hget(keys.results, event_id)
            if raw is not None:
                return unpack_message(raw)
        return None
