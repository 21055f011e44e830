"""Ordering domains (docs/design/guarantees.md "Order"): the pools whose events form one
sequence, read off the engines.

A pool whose ruleset seeds a player's first event from another pool (`Engine.seed_pools`:
NASPA csw from nwl, N5) reads that pool's records, so the two are rated in one sequence: one
domain, named after the system (`naspa`). Every other pool is a domain of its own,
`system:pool` (`fide:standard`). The names are part of the store's keys and of the partitions'
streams: a new seed pool that joins two pools renames their domain, which takes a migration.
"""

from __future__ import annotations

from collections.abc import Iterable

from service.engine.contract import Engine

Pool = tuple[str, str]  # (system, pool)


class Domains:
    """Each (system, pool) a set of engines rates, grouped into its ordering domain."""

    def __init__(self, engines: Iterable[Engine]):
        groups: dict[Pool, set[Pool]] = {}
        for engine in engines:
            for pool in engine.pools:
                groups.setdefault((engine.system, pool), {(engine.system, pool)})
            for pool, seed in engine.seed_pools.items():
                joined = groups.setdefault((engine.system, pool), {(engine.system, pool)})
                joined |= groups.setdefault((engine.system, seed), {(engine.system, seed)})
                for member in joined:
                    groups[member] = joined
        shared: dict[str, int] = {}
        for group in {id(g): g for g in groups.values() if len(g) > 1}.values():
            system = next(iter(group))[0]
            shared[system] = shared.get(system, 0) + 1
        self._names: dict[Pool, str] = {}
        for pair, group in groups.items():
            system = pair[0]
            if len(group) == 1:
                self._names[pair] = f"{system}:{pair[1]}"
            elif shared[system] == 1:
                self._names[pair] = system
            else:  # two shared groups in one system: each named by its pools
                self._names[pair] = f"{system}:" + "+".join(sorted(p for _, p in group))
        self._pools: dict[str, tuple[Pool, ...]] = {}
        for pair, name in sorted(self._names.items()):
            self._pools[name] = (*self._pools.get(name, ()), pair)

    def of(self, system: str, pool: str) -> str:
        """The domain of a pool (one no engine rates: a domain of its own)."""
        return self._names.get((system, pool)) or f"{system}:{pool}"

    def pools(self, domain: str) -> tuple[Pool, ...]:
        """The (system, pool) pairs of a domain, sorted."""
        found = self._pools.get(domain)
        if found:
            return found
        system, _, pool = domain.partition(":")
        return ((system, pool),)
