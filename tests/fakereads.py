"""A read model for the web tests: the methods of `service/runtime/queries.py`'s ReadModel,
over the example events rated in memory (the same engines and outputs as the service)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import msgspec

from schemas.common import POOLS
from schemas.periods import add_months
from schemas.ratings import RatingsUpdated
from schemas.reads import (
    Crosstable,
    EventList,
    EventRevisions,
    HistoryEntry,
    LabelCount,
    ListDate,
    PlayerChange,
    PlayerHistory,
    PlayerList,
    PlayerProfile,
    PlayerView,
    PoolChanges,
    PoolList,
    PoolSummary,
    RankedPlayer,
)
from schemas.records import PlayerRecord
from schemas.validation import decode_input
from service.crosstable import crosstable
from service.engine.registry import default_registry
from service.formats.ratinglists import read_list
from service.lists import (
    CHANGE_DAYS,
    active_from_day,
    biggest,
    closed_list_days,
    played_day,
    rated_players,
    summary_of,
    window_changes,
)
from service.profiles import PoolRead, profile_of
from service.rating import MemoryLedger, apply_message
from service.revisions import revisions

EXAMPLES = Path(__file__).resolve().parents[1] / "deploy" / "examples"
UPDATED = {
    ("cfc", "regular"): dt.datetime(2025, 11, 3, 12, 0, tzinfo=dt.UTC),
    ("fide", "standard"): dt.datetime(2025, 12, 1, 9, 30, tzinfo=dt.UTC),
    ("naspa", "nwl"): dt.datetime(2025, 10, 20, 18, 0, tzinfo=dt.UTC),
}

# The labels (D35) of some example players: (titles, federation).
LABELS = {
    "2010001": (["GM"], "NOR"),
    "2010002": (["IM", "FT"], "SWE"),
    "2010003": (["WFM"], "CHN"),
    "2010004": ([], "NOR"),
    "100001": ([], "ON"),
    "100002": ([], "QC"),
}


def rate_examples() -> tuple[MemoryLedger, list[RatingsUpdated]]:
    records: list[PlayerRecord] = []
    for name in ("cfc-ratings.jsonl", "fide-ratings.jsonl", "naspa-ratings.jsonl"):
        records += read_list(str(EXAMPLES / name))
    ledger = MemoryLedger(records)
    outputs: list[RatingsUpdated] = []
    for name in (
        "cfc-event.json",
        "fide-event.json",
        "fide-period-closed.json",
        "naspa-event.json",
    ):
        message = decode_input((EXAMPLES / name).read_bytes())
        outputs += apply_message(
            ledger, message, default_registry(), source_id=f"1764500000000-{len(outputs)}"
        ).outputs
    return ledger, outputs


class FakeReads:
    def __init__(self) -> None:
        self.ledger, self.outputs = rate_examples()
        self.names = {p.id: p.name for o in self.outputs for p in o.players if p.name}

    def _ranked(self, system: str, pool: str) -> list[RankedPlayer]:
        records = self.ledger.records.get((system, pool), {}).values()
        rated = sorted(
            (r for r in records if r.rating is not None), key=lambda r: (-r.rating, r.id)
        )  # type: ignore[operator]
        unrated = sorted((r for r in records if r.rating is None), key=lambda r: r.id)
        return [
            RankedPlayer(
                rank=i + 1 if r.rating is not None else None,
                id=r.id,
                name=self.names.get(r.id),
                rating=r.rating,
                status=r.status,
                games=r.games,
                titles=LABELS.get(r.id, ([], None))[0],
                federation=LABELS.get(r.id, ([], None))[1],
                active=r.id in self._active(system, pool),
            )
            for i, r in enumerate(rated + unrated)
        ]

    async def pools(self) -> PoolList:
        found = []
        for (system, pool), records in sorted(self.ledger.records.items()):
            state = self.ledger.pool_state(system, pool)
            found.append(
                PoolSummary(
                    system=system,
                    pool=pool,
                    players=len(records),  # type: ignore[arg-type]
                    rated=sum(r.rating is not None for r in records.values()),
                    last_update=UPDATED.get((system, pool)),
                    closed_through=state.closed_through,
                    stream="events.finished",
                    list_date=self._list_date(system, pool),
                )
            )
        return PoolList(pools=found)

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
        ranked = self._ranked(system, pool)
        if not ranked:
            return None
        if not unrated:
            ranked = [p for p in ranked if p.rating is not None]
        ranked = [
            p
            for p in ranked
            if (not active or p.active)
            and (federation is None or p.federation == federation)
            and (title is None or title in p.titles)
        ]
        if q:
            needle = q.lower()
            ranked = [
                p
                for p in ranked
                if p.id.lower().startswith(needle)
                or any(word.lower().startswith(needle) for word in (p.name or "").split())
            ]
        return PlayerList(
            system=system,
            pool=pool,
            total=len(ranked),
            offset=offset,
            limit=limit,
            q=q,  # type: ignore[arg-type]
            unrated=unrated,
            players=ranked[offset : offset + limit],
            active=active,
            federation=federation,
            title=title,
            list_date=self._list_date(system, pool),
            labels=self._labels(system, pool),
        )

    async def player(self, system: str, pool: str, player_id: str) -> PlayerView | None:
        record = self.ledger.record(system, pool, player_id)
        if record is None:
            return None
        rank = next((p.rank for p in self._ranked(system, pool) if p.id == player_id), None)
        dates = [
            o.end_date
            for o in self.outputs
            if o.kind == "event"
            and o.end_date
            and o.system == system
            and o.pool == pool
            and any(p.id == player_id for p in o.players)
        ]
        return PlayerView(
            system=system,
            pool=pool,
            id=player_id,
            name=self.names.get(player_id),  # type: ignore[arg-type]
            rating=record.rating,
            status=record.status,
            games=record.games,
            rank=rank,
            last_event_date=max(dates) if dates else None,
            record=record,
        )

    async def history(self, system: str, pool: str, player_id: str) -> PlayerHistory | None:
        if self.ledger.record(system, pool, player_id) is None:
            return None
        entries = []
        for o in self.outputs:
            if o.system != system or o.pool != pool:
                continue
            for p in o.players:
                if p.id != player_id:
                    continue
                listed = o.kind == "list"
                entries.append(
                    HistoryEntry(
                        kind="list" if listed else "event",
                        event_id=o.event_id,
                        name=o.name,
                        start_date=o.start_date,
                        end_date=o.end_date,
                        period=o.period or getattr(p.details, "period", None),
                        list_period=add_months(o.period, 1) if listed and o.period else None,
                        old_rating=p.old_rating,
                        new_rating=p.new_rating,
                        change=p.change,
                        old_status=p.old_status,
                        status=p.status,
                        games=p.games,
                        event_games=p.event_games,
                        score=p.score,
                        expected=p.expected,
                        performance=p.performance,
                        revision=o.revision or 0,
                        projection=bool(getattr(p.details, "projection", False)),
                    )
                )
        return PlayerHistory(
            system=system,
            pool=pool,
            id=player_id,
            name=self.names.get(player_id),  # type: ignore[arg-type]
            entries=entries,
        )

    async def event(self, event_id: str) -> RatingsUpdated | None:
        return next((o for o in reversed(self.outputs) if o.event_id == event_id), None)

    async def last_update(self, system: str, pool: str) -> dt.datetime | None:
        return UPDATED.get((system, pool)) if pool in POOLS.get(system, ()) else None

    # ------------------------------------------------------------ the lists (D46-D49)

    def _events(self, system: str, pool: str) -> list[RatingsUpdated]:
        return [
            o
            for o in self.outputs
            if o.system == system and o.pool == pool and o.event_id and o.kind != "list"
        ]

    def _reference(self, system: str, pool: str) -> tuple[int, int, str | None]:
        """(the list's day, the first active day, the closed period) as the commits keep them."""
        closed = self.ledger.pool_state(system, pool).closed_through
        if closed is not None:
            return (*closed_list_days(closed), closed)
        days = [played_day(o) for o in self._events(system, pool)]
        ref = max(days, default=0)
        return ref, active_from_day(ref), None

    def _active(self, system: str, pool: str) -> set[str]:
        ref, first, _ = self._reference(system, pool)
        last: dict[str, int] = {}
        for o in self._events(system, pool):
            for pid in rated_players(o):
                last[pid] = max(last.get(pid, 0), played_day(o))
        return {pid for pid, day in last.items() if ref and day >= first}

    def _list_date(self, system: str, pool: str) -> ListDate | None:
        if (system, pool) not in self.ledger.records:
            return None
        ref, first, closed = self._reference(system, pool)
        records = self.ledger.records[(system, pool)]
        active = self._active(system, pool)
        return ListDate(
            period=closed,
            date=dt.date.fromordinal(ref) if ref else None,
            active_from=dt.date.fromordinal(first) if first else None,
            active=sum(1 for pid in active if records[pid].rating is not None),
        )

    def _labels(self, system: str, pool: str) -> list[LabelCount]:
        counts: dict[tuple[str, str], int] = {}
        for pid in self.ledger.records.get((system, pool), {}):
            titles, federation = LABELS.get(pid, ([], None))
            for kind, label in [("title", t) for t in titles] + (
                [("federation", federation)] if federation else []
            ):
                counts[(kind, label)] = counts.get((kind, label), 0) + 1
        return [
            LabelCount(kind=kind, label=label, players=n)  # type: ignore[arg-type]
            for (kind, label), n in sorted(counts.items())
        ]

    async def active_rank(self, system: str, pool: str, player_id: str) -> int | None:
        page = await self.players(system, pool, active=True, limit=10_000)
        if page is None:
            return None
        return next((i + 1 for i, p in enumerate(page.players) if p.id == player_id), None)

    async def events(
        self,
        system: str | None = None,
        pool: str | None = None,
        *,
        limit: int = 50,
        offset: int = 0,
    ) -> EventList | None:
        if system and pool and (system, pool) not in self.ledger.records:
            return None
        pools = [
            (s, p) for s, p in self.ledger.records if system in (None, s) and pool in (None, p)
        ]
        found = [summary_of(o) for s, p in pools for o in self._events(s, p) if not o.withdrawn]
        found.sort(key=lambda e: (e.end_date or dt.date.min, e.event_id), reverse=True)
        return EventList(
            system=system,  # type: ignore[arg-type]
            pool=pool,
            total=len(found),
            offset=offset,
            limit=limit,
            events=found[offset : offset + limit],
        )

    async def changes(self, system: str, pool: str, *, limit: int = 20) -> PoolChanges | None:
        if (system, pool) not in self.ledger.records:
            return None
        ref, _, closed = self._reference(system, pool)
        if closed is not None:
            rows = [
                PlayerChange(
                    id=p.id,
                    name=self.names.get(p.id),
                    titles=LABELS.get(p.id, ([], None))[0],
                    federation=LABELS.get(p.id, ([], None))[1],
                    old_rating=p.new_rating - p.change,
                    new_rating=p.new_rating,
                    change=p.change,
                    events=None,
                )
                for o in self.outputs
                if o.kind == "list" and o.system == system and o.pool == pool
                for p in o.players
                if p.change and p.new_rating is not None
            ]
            gains, losses = biggest(rows, limit)
            return PoolChanges(
                system=system,  # type: ignore[arg-type]
                pool=pool,
                basis="list",
                period=closed,
                since=None,
                through=None,
                events=0,
                truncated=False,
                gains=gains,
                losses=losses,
            )
        window = [
            o
            for o in self._events(system, pool)
            if ref and played_day(o) > ref - CHANGE_DAYS and not o.withdrawn
        ]
        rows = [
            msgspec.structs.replace(
                c,
                titles=LABELS.get(c.id, ([], None))[0],
                federation=LABELS.get(c.id, ([], None))[1],
            )
            for c in window_changes(window)
        ]
        gains, losses = biggest(rows, limit)
        return PoolChanges(
            system=system,  # type: ignore[arg-type]
            pool=pool,
            basis="days",
            period=None,
            since=dt.date.fromordinal(ref - CHANGE_DAYS + 1) if ref else None,
            through=dt.date.fromordinal(ref) if ref else None,
            events=len(window),
            truncated=False,
            gains=gains,
            losses=losses,
        )

    async def profile(self, system: str, player_id: str) -> PlayerProfile | None:
        """service/profiles.py over the ledger's records (named as the events name them)."""
        reads = []
        for pool in POOLS.get(system, ()):
            record = self.ledger.record(system, pool, player_id)
            history = await self.history(system, pool, player_id)
            if record is None or history is None:
                continue
            if record.name is None and player_id in self.names:
                record = msgspec.structs.replace(record, name=self.names[player_id])
            rank = next((p.rank for p in self._ranked(system, pool) if p.id == player_id), None)
            reads.append(
                PoolRead(pool, record, history.entries, rank, await self.last_update(system, pool))
            )
        return profile_of(system, player_id, reads)


class BrokenReads(FakeReads):
    """A read model that fails: the app must answer 500 without a traceback."""

    async def pools(self) -> PoolList:
        raise RuntimeError("the read model broke: secret detail")


# ---------------------------------------------------------------- an event's crosstable and
# revisions (D42, D43): the same pure builders as the ReadModel, over the ledger's archives


async def _crosstable(self: FakeReads, event_id: str) -> Crosstable | None:
    message = await self.event(event_id)
    return crosstable(message, self.ledger.archives.get(event_id)) if message else None


async def _revisions(self: FakeReads, event_id: str) -> EventRevisions | None:
    message = await self.event(event_id)
    return revisions(message, self.ledger.archives.get(event_id)) if message else None


async def _revision_message(self: FakeReads, event_id: str, revision: int) -> RatingsUpdated | None:
    """Every message published for the event is among the outputs (D101's audit trail)."""
    return next(
        (o for o in self.outputs if o.event_id == event_id and (o.revision or 0) == revision),
        None,
    )


FakeReads.crosstable = _crosstable  # type: ignore[attr-defined]
FakeReads.revisions = _revisions  # type: ignore[attr-defined]
FakeReads.revision_message = _revision_message  # type: ignore[attr-defined]
