"""Norm check: the FIDE title benchmarks met, with the floors applied, and why each
failed otherwise (Title Regulations 1.4 as in docs/rules/fide.md#fide-title-1-4, computed by
service.engine.fide.performance.norm_benchmarks). Benchmarks, never awarded."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from schemas.fide import NormCheck
from service.calculators.games import Game
from service.engine.fide.performance import norm_benchmarks


@dataclass(frozen=True)
class NormReport:
    checks: list[tuple[NormCheck, list[str]]]  # every title; an empty reason list: met
    titles: dict[str, int]  # the opponents' titles as given, counted (not checked)

    @property
    def met(self) -> list[str]:
        return [check.title for check, reasons in self.checks if not reasons]


def norm_report(played: Sequence[Game]) -> NormReport:
    checks = norm_benchmarks([g.opponent for g in played], sum(g.halves for g in played))
    titles = Counter(g.title or "untitled" for g in played)
    return NormReport(checks, dict(sorted(titles.items())))
