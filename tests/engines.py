"""A test double of the engine contract, for tests of the plumbing (not of any rules)."""

from __future__ import annotations

import msgspec

from schemas import PlayerResult
from service.engine.contract import EngineRejection, EventInput, Outcome
from service.engine.registry import Registry


class CountingEngine:
    """A rating that depends on the order of events: new = (old * 31 + 2 x score + len(event
    name)) mod 3000, old being 1000 when unrated. An event named "refuse" is unratable, one
    named "explode" raises a bug, and an event whose `period` is closed is refused."""

    seed_pools: dict = {}

    def __init__(
        self, system="cfc", ruleset="cfc-2009", pools=("regular", "active"), periods=False
    ):
        self.system, self.ruleset, self.pools, self.periods = system, ruleset, pools, periods

    def rate_event(self, data: EventInput) -> Outcome:
        if data.event.name == "refuse":
            raise EngineRejection("unratable", "no rated player", "$.players")
        if data.event.name == "explode":
            raise RuntimeError("a bug in an engine")
        closed = data.pool.closed_through
        if data.event.period and closed and data.event.period <= closed:
            raise EngineRejection(
                "period_closed", f"period {data.event.period} is closed", "$.period"
            )
        scores = {p.id: 0.0 for p in data.event.players}
        for g in data.event.games:
            scores[g.a] += g.score
            scores[g.b] += 1 - g.score
        results, records = [], []
        for p in data.event.players:
            old = data.records[p.id]
            new = ((old.rating or 1000) * 31 + int(2 * scores[p.id]) + len(data.event.name)) % 3000
            records.append(
                msgspec.structs.replace(old, rating=new, status="established", games=old.games + 1)
            )
            results.append(
                PlayerResult(
                    p.id,
                    old.rating,
                    new,
                    None,
                    old.status,
                    "established",
                    old.games + 1,
                    0,
                    scores[p.id],
                )
            )
        return Outcome(results, records, data.pool)

    def close_period(self, message, records, pool, last_end=None):
        results = [
            PlayerResult(r.id, r.rating, r.rating, 0, r.status, r.status, r.games, 0, 0.0)
            for r in sorted(records.values(), key=lambda r: r.id)
        ]
        return Outcome(results, [], msgspec.structs.replace(pool, closed_through=message.period))

    def check_close(self, message, periods, pool, last_end=None) -> None:
        """Any period may close (the double checks nothing)."""

    def list_players(self, message, records, pool):
        """A page of `close_period` (the service's paged close, D60)."""
        return msgspec.structs.replace(self.close_period(message, records, pool), pool=pool)

    def clear_k(self, message, records) -> list:
        return []

    def order_prefix(self, event) -> int:
        """With periods, an event's key starts with its period's month number, as FIDE's."""
        if not (self.periods and event.period):
            return 0
        year, month = event.period.split("-")
        return int(year) * 12 + int(month) - 1

    def list_period(self, period: str) -> str:
        year, month = (int(part) for part in period.split("-"))
        return f"{year + month // 12:04d}-{month % 12 + 1:02d}"

    def catch_up(self, state, pool):
        return state  # the double's records keep nothing per period


def counting_registry() -> Registry:
    """The double as CFC, and as FIDE (the system with periods, for the plumbing of a close)."""
    return Registry(
        [
            CountingEngine(),
            CountingEngine("fide", "fide-2024", ("standard", "rapid", "blitz"), True),
        ]
    )
