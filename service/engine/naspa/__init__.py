"""The NASPA (Scrabble) rating engine: docs/rules/naspa.md, N1-N6 and the newcomer seed.

- `nsa2008` (pool nwl): the system of 2009-01-01, with its floor of 1.
- `naspa-csw` (pool csw): the same without the floor (N6); a first CSW event starts from the
  player's NWL rating (career games from 0).
- `naspa2024`: career games advance between segments; no floor (N6).
"""

from __future__ import annotations

from service.engine.naspa.engine import NaspaEngine

CSW_SEED = {"csw": "nwl"}


def naspa_engines() -> list[NaspaEngine]:
    """The three NASPA rulesets, for the registry."""
    return [
        NaspaEngine("nsa2008", pools=("nwl",), floor_of_one=True),
        NaspaEngine("naspa-csw", pools=("csw",), seed_pools=CSW_SEED),
        NaspaEngine(
            "naspa2024", pools=("nwl", "csw"), advance_career_games=True, seed_pools=CSW_SEED
        ),
    ]


__all__ = ["NaspaEngine", "naspa_engines"]
