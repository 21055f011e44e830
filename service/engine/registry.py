"""The engines by (system, ruleset): the one place that says which rules are available."""

from __future__ import annotations

from collections.abc import Iterable

from schemas.systems import BY_NAME, is_pool
from service.engine.cfc import CfcEngine
from service.engine.contract import Engine
from service.engine.domains import Domains
from service.engine.fide import FideEngine
from service.engine.glicko2 import glicko2_engines
from service.engine.naspa import naspa_engines


class Registry:
    """Engines keyed by (system, ruleset). Immutable once built; no module-level state."""

    def __init__(self, engines: Iterable[Engine] = ()):
        self._engines: dict[tuple[str, str], Engine] = {}
        for engine in engines:
            key = (engine.system, engine.ruleset)
            if key in self._engines:
                raise ValueError(f"two engines for {key}")
            self._engines[key] = engine
        self.domains = Domains(self._engines.values())

    def get(self, system: str, ruleset: str) -> Engine | None:
        return self._engines.get((system, ruleset))

    def rulesets(self, system: str) -> list[str]:
        return sorted(r for s, r in self._engines if s == system)

    def __iter__(self):
        return iter(self._engines.values())

    def __len__(self) -> int:
        return len(self._engines)


def rates_pool(engine: Engine, pool: str) -> bool:
    """Whether `engine` rates `pool`: one of its pools, or, for a system whose pools the
    platform names (schemas/systems.py `open_pools`, D70), any valid pool name."""
    if pool in engine.pools:
        return True
    info = BY_NAME.get(engine.system)
    return info is not None and info.open_pools and is_pool(engine.system, pool)


def default_registry() -> Registry:
    """Every engine this version of the service implements."""
    engines: list[Engine] = []
    engines.append(CfcEngine())  # CFC: cfc-2009
    engines.append(FideEngine())  # FIDE: fide-2024
    engines.extend(naspa_engines())  # NASPA: nsa2008, naspa-csw, naspa2024
    engines.extend(glicko2_engines())  # Glicko-2: glicko2, glicko2-event
    return Registry(engines)
