"""A read model for the web tests: the methods of `service/runtime/queries.py`'s ReadModel,
over the example events rated in memory (the same engines and outputs as the service)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from schemas.common import POOLS
from schemas.periods import add_months
from schemas.ratings import RatingsUpdated
from schemas.reads import (
    Crosstable,
    EventRevisions,
    HistoryEntry,
    PlayerHistory,
    PlayerList,
    PlayerView,
    PoolList,
    PoolSummary,
    RankedPlayer,
)
from schemas.records import PlayerRecord
from schemas.validation import decode_input
from service.crosstable import crosstable
from service.engine.registry import default_registry
from service.formats.ratinglists import read_list
from service.rating import MemoryLedger, apply_message
from service.revisions import revisions

EXAMPLES = Path(__file__).resolve().parents[1] / "deploy" / "examples"
UPDATED = {
    ("cfc", "regular"): dt.datetime(2025, 11, 3, 12, 0, tzinfo=dt.UTC),
    ("fide", "standard"): dt.datetime(2025, 12, 1, 9, 30, tzinfo=dt.UTC),
    ("naspa", "nwl"): dt.datetime(2025, 10, 20, 18, 0, tzinfo=dt.UTC),
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
    ) -> PlayerList | None:
        ranked = self._ranked(system, pool)
        if not ranked:
            return None
        if not unrated:
            ranked = [p for p in ranked if p.rating is not None]
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


FakeReads.crosstable = _crosstable  # type: ignore[attr-defined]
FakeReads.revisions = _revisions  # type: ignore[attr-defined]
