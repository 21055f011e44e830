"""FIDE ratings (ruleset `fide-2024`): rating periods and lists, K, the 400-point rule,
initial ratings, performance and norms (docs/rules/fide.md, F1-F10, A1)."""

from service.engine.fide.engine import FideEngine

__all__ = ["FideEngine"]
