"""Glicko-2 (Glickman's "Example of the Glicko-2 system"): rulesets `glicko2` (rating
periods closed by `period.closed`) and `glicko2-event` (each event one rating period),
docs/rules/glicko2.md G2-1 .. G2-12."""

from __future__ import annotations

from collections.abc import Mapping

from service.engine.glicko2.engine import Glicko2Engine
from service.engine.glicko2.settings import POOL_SETTINGS, Glicko2Settings


def glicko2_engines(settings: Mapping[str, Glicko2Settings] = POOL_SETTINGS) -> list[Glicko2Engine]:
    """The two Glicko-2 rulesets, for the registry, with each pool's settings (G2-2)."""
    return [
        Glicko2Engine("glicko2", periods=True, settings=settings),
        Glicko2Engine("glicko2-event", periods=False, settings=settings),
    ]


__all__ = ["Glicko2Engine", "Glicko2Settings", "glicko2_engines"]
