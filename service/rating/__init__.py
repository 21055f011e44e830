"""The use case shared by the service and the offline `rate` command: apply one input
message to a pool's state, by the engines' rules, in date order (docs/design/guarantees.md
"Order"). Nothing here does I/O.

- `ledger`: the unit of work (MemoryLedger: the state one commit read, and its change set).
- `apply`: the use case (`apply_message`: one input to a ledger; `in_order`).
- `cascade`: re-rating from a late event's, a correction's or a withdrawal's place;
  `partial`: what a cascade on a ledger read in part asks to read.
- `projection`: the read model's view of what was published.
- `needs`: what the store must read for a message, its engine and marker.
- `outputs`: the `ratings.updated/v1` messages; `effects`: Applied, Duplicate, Rejected.
- `lists`: what the engines require of the records a rating list brings.
"""

from service.rating.apply import apply_message, in_order
from service.rating.effects import Applied, Duplicate, Rejected
from service.rating.ledger import Changes, MemberChanges, MemoryLedger
from service.rating.lists import ListRules
from service.rating.needs import Needs, content_digest, engine_for, marker_key, needs
from service.rating.outputs import LIST_CHUNK, event_output, list_outputs
from service.rating.partial import Missing

__all__ = [
    "LIST_CHUNK",
    "Applied",
    "Changes",
    "Duplicate",
    "ListRules",
    "MemberChanges",
    "MemoryLedger",
    "Missing",
    "Needs",
    "Rejected",
    "apply_message",
    "content_digest",
    "engine_for",
    "event_output",
    "in_order",
    "list_outputs",
    "marker_key",
    "needs",
]
