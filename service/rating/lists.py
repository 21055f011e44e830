"""What the engines require of the records a rating list brings (`import`, `rate --ratings`)."""

from __future__ import annotations

import msgspec

from schemas.records import PlayerRecord
from service.engine.contract import Engine
from service.engine.registry import Registry, rates_pool

_packer = msgspec.msgpack.Encoder()


class ListRules:
    """What the engines require of a record brought in a list (`import`, `rate --ratings`):
    the status the system's rules give a rating and games (`Engine.status_for`), and every
    problem any engine that rates the record's pool finds in it (`Engine.record_problems`,
    the very check `rate_event` makes), so that a list never leaves a record an engine
    will later refuse."""

    def __init__(self, registry: Registry):
        self.registry = registry
        self._by_pool: dict[tuple[str, str], list[Engine]] = {}

    def _engines(self, system: str, pool: str) -> list[Engine]:
        engines = self._by_pool.get((system, pool))
        if engines is None:
            engines = self._by_pool[(system, pool)] = [
                e for e in self.registry if e.system == system and rates_pool(e, pool)
            ]
        return engines

    def status_for(self, system: str, pool: str, rating: int | None, games: int) -> str | None:
        engines = self._engines(system, pool)
        return engines[0].status_for(rating, games) if engines else None

    def problems(self, record: PlayerRecord) -> list[tuple[str, str]]:
        engines = self._engines(record.system, record.pool)
        if not engines:
            known = sorted({p for e in self.registry if e.system == record.system for p in e.pools})
            return [
                (
                    "pool",
                    f"no {record.system} ruleset rates pool {record.pool!r} (pools: {', '.join(known)})",
                )
            ]
        found: list[tuple[str, str]] = []
        for engine in engines:
            for problem in engine.record_problems(record):
                if (problem.field, problem.message) not in found:
                    found.append((problem.field, problem.message))
        if not found:
            try:  # a number MessagePack cannot hold (the record packed: every field a history
                _packer.encode(record)  # state packs, pack_state, and strings; a third quicker)
            except OverflowError:
                found.append((_unpackable(record), "a number too large to store (beyond 64 bits)"))
        return found


def _unpackable(record: PlayerRecord) -> str:
    """The first field of the record that MessagePack cannot hold."""
    for field in msgspec.structs.fields(record):
        try:
            _packer.encode(getattr(record, field.name))
        except OverflowError:
            return field.name
    return "games"  # not reached: the record packed is its fields
