"""CFC rating engine, ruleset `cfc-2009` (handbook articles 714-717, resolutions C1-C11).

- `formulas`: the equations of 714 and the floors of 716;
- `standing`: a player's standing before the event and their rated games in it;
- `order`: the order of calculation of 717;
- `engine`: the Engine (records in, results and new records out).
"""

from service.engine.cfc.engine import CfcEngine

__all__ = ["CfcEngine"]
