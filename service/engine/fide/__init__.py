"""FIDE ratings (ruleset `fide-2024`): rating periods and lists, K, the 400-point rule,
initial ratings, performance and norms (rules-fide.md, F1-F9)."""

from service.engine.fide.engine import FideEngine

__all__ = ["FideEngine"]
