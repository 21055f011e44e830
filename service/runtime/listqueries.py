"""The read side's queries of the lists (D46-D49), mixed into queries.ReadModel: the rank
among active players, the filters' labels, the latest events and the biggest changes, from
the indexes the commits keep (runtime/store.py `list_writes`)."""

from __future__ import annotations

import datetime as dt
from typing import Any, cast

import msgspec

from schemas.common import System
from schemas.reads import EventList, LabelCount, PlayerChange, PoolChanges
from schemas.records import PoolState
from service.lists import CHANGE_DAYS, biggest, unpack_card, window_changes
from service.readmodel import UNRATED_SCORE, unpack_message
from service.runtime.keys import StreamKeys
from service.runtime.replies import text
from service.runtime.store import decode_record

MAX_CHANGE_EVENTS = 300  # the biggest changes read at most this many events' results (D49)
_pool_decoder = msgspec.json.Decoder(PoolState)


def _day(value: int) -> dt.date | None:
    return dt.date.fromordinal(value) if value > 0 else None


class ListQueries:
    """The lists' reads; the class that mixes it in gives `client`, `keys` and `_locate`."""

    client: Any
    keys: list[StreamKeys]

    async def _locate(self, system: str, pool: str) -> StreamKeys | None:
        raise NotImplementedError

    async def _labels(
        self, keys: StreamKeys, system: str, pool: str, fields: list[bytes]
    ) -> list[LabelCount]:
        """The pool's labels with their players (each label's ranking's size, D47)."""
        found = sorted(text(f).partition(":")[::2] for f in fields)
        if not found:
            return []
        async with self.client.pipeline(transaction=False) as pipe:
            for kind, label in found:
                pipe.zcard(keys.label(system, pool, kind, label))
            sizes = await pipe.execute()
        return [
            LabelCount(kind=kind, label=label, players=n)  # type: ignore[arg-type]  # kinds we write
            for (kind, label), n in zip(found, sizes)
            if n
        ]

    async def active_rank(self, system: str, pool: str, player_id: str) -> int | None:
        """The player's rank among the pool's active players (D46): 1 + the active players
        rated higher; None when not active, unrated, or no such pool."""
        keys = await self._locate(system, pool)
        if keys is None:
            return None
        score = await self.client.zscore(keys.active(system, pool), player_id)
        if score is None or score >= UNRATED_SCORE:
            return None
        return int(await self.client.zcount(keys.active(system, pool), "-inf", f"({score}")) + 1

    async def _all_pools(self) -> list[tuple[StreamKeys, str, str]]:
        found = []
        for keys in self.keys:
            for field in sorted(text(f) for f in await self.client.hkeys(keys.catalog)):
                system, _, pool = field.partition(":")
                found.append((keys, system, pool))
        return found

    async def events(
        self,
        system: str | None = None,
        pool: str | None = None,
        *,
        limit: int = 50,
        offset: int = 0,
    ) -> EventList | None:
        """The latest rated events, newest first by end date (ties by event id, the larger
        first), of one pool, of a system's pools, of the pools of one name, or of every pool
        (D48); None: no such pool (both named)."""
        if system is not None and pool is not None:
            keys = await self._locate(system, pool)
            if keys is None:
                return None
            pools = [(keys, system, pool)]
        else:
            pools = [
                (keys, s, p)
                for keys, s, p in await self._all_pools()
                if system in (None, s) and pool in (None, p)
            ]
        async with self.client.pipeline(transaction=False) as pipe:
            for keys, s, p in pools:
                pipe.zcard(keys.dated(s, p))
                pipe.zrange(keys.dated(s, p), 0, offset + limit - 1, desc=True, withscores=True)
            replies = await pipe.execute()
        total = sum(replies[0::2])
        merged = sorted(
            (
                (float(day), text(member), n)
                for n, rows in enumerate(replies[1::2])
                for member, day in rows
            ),
            reverse=True,
        )[offset : offset + limit]
        async with self.client.pipeline(transaction=False) as pipe:
            for _, event_id, n in merged:
                keys, s, p = pools[n]
                pipe.hget(keys.cards(s, p), event_id)
            cards = await pipe.execute() if merged else []
        return EventList(
            system=cast(System, system),
            pool=pool,
            total=total,
            offset=offset,
            limit=limit,
            events=[unpack_card(raw) for raw in cards if raw is not None],
        )

    async def changes(self, system: str, pool: str, *, limit: int = 20) -> PoolChanges | None:
        """The biggest gains and losses of the pool's latest list (D49): FIDE after a close,
        the close's list; otherwise the events of the CHANGE_DAYS days up to the latest one
        (the latest MAX_CHANGE_EVENTS of them). None: no such pool."""
        keys = await self._locate(system, pool)
        if keys is None:
            return None
        async with self.client.pipeline(transaction=False) as pipe:
            pipe.hget(keys.pools, f"{system}:{pool}")
            pipe.zrange(keys.dated(system, pool), -1, -1, withscores=True)
            raw_state, latest = await pipe.execute()
        state = _pool_decoder.decode(raw_state) if raw_state is not None else None
        if state is not None and state.closed_through is not None:
            return await self._list_changes(keys, system, pool, state.closed_through, limit)
        through = int(latest[0][1]) if latest else 0
        ids: list[str] = []
        if through:
            ids = [
                text(m)
                for m in await self.client.zrangebyscore(
                    keys.dated(system, pool), through - CHANGE_DAYS + 1, through
                )
            ]
        counted = ids[-MAX_CHANGE_EVENTS:]
        messages = [
            unpack_message(raw)
            for raw in (await self.client.hmget(keys.results, counted) if counted else [])
            if raw is not None
        ]
        messages.sort(key=lambda m: (m.end_date or dt.date.min, m.start_date or dt.date.min))
        gains, losses = biggest(window_changes(messages), limit)
        return PoolChanges(
            system=cast(System, system),
            pool=pool,
            basis="days",
            period=None,
            since=_day(through - CHANGE_DAYS + 1) if through else None,
            through=_day(through),
            events=len(counted),
            truncated=len(ids) > len(counted),
            gains=await self._labelled(keys, system, pool, gains),
            losses=await self._labelled(keys, system, pool, losses),
        )

    async def _list_changes(
        self, keys: StreamKeys, system: str, pool: str, period: str, limit: int
    ) -> PoolChanges:
        moves = keys.moves(system, pool)
        async with self.client.pipeline(transaction=False) as pipe:
            pipe.zrevrangebyscore(moves, "+inf", "(0", start=0, num=limit, withscores=True)
            pipe.zrangebyscore(moves, "-inf", "(0", start=0, num=limit, withscores=True)
            up, down = await pipe.execute()
        changes = [(text(m), int(s)) for m, s in (*up, *down)]
        raws = await self.client.hmget(keys.players(system, pool), [m for m, _ in changes])
        records = {r.id: r for r in (decode_record(raw) for raw in raws if raw is not None)}
        found = []
        for pid, change in changes:
            record = records.get(pid)
            new = record.rating if record is not None else None
            found.append(
                PlayerChange(
                    id=pid,
                    name=record.name if record else None,
                    titles=list(record.titles) if record else [],
                    federation=record.federation if record else None,
                    old_rating=new - change if new is not None else None,
                    new_rating=new,
                    change=change,
                    events=None,
                )
            )
        gains, losses = biggest(found, limit)
        return PoolChanges(
            system=cast(System, system),
            pool=pool,
            basis="list",
            period=period,
            since=None,
            through=None,
            events=0,
            truncated=False,
            gains=gains,
            losses=losses,
        )

    async def _labelled(
        self, keys: StreamKeys, system: str, pool: str, changes: list[PlayerChange]
    ) -> list[PlayerChange]:
        """The changes with each player's record's name and labels."""
        if not changes:
            return []
        raws = await self.client.hmget(keys.players(system, pool), [c.id for c in changes])
        records = {r.id: r for r in (decode_record(raw) for raw in raws if raw is not None)}
        out = []
        for c in changes:
            r = records.get(c.id)
            out.append(
                msgspec.structs.replace(
                    c,
                    name=(r.name if r else None) or c.name,
                    titles=list(r.titles) if r else [],
                    federation=r.federation if r else None,
                )
            )
        return out
