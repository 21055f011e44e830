"""What applying one input message does: `Applied` (with the messages to publish),
`Duplicate` (the same content was applied before), or `Rejected` (nothing changed; a
dead-letter reason, a message for a person and the JSON path at fault)."""

from __future__ import annotations

import msgspec

from schemas.ratings import RatingsUpdated


class Rejected(Exception):
    """An input message that is not applied: a dead-letter `reason`, a message for a
    person, and the JSON path at fault."""

    def __init__(self, reason: str, message: str, path: str = "$", event_id: str | None = None):
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.path = path
        self.event_id = event_id


class Applied(msgspec.Struct, frozen=True):
    """The effect of one message: the output messages (the event's, then any revisions)
    and the idempotency marker (key -> content digest); `rerated` counts the later events
    re-rated by a cascade."""

    outputs: list[RatingsUpdated]
    marker: str
    digest: str
    rerated: int = 0


class Duplicate(msgspec.Struct, frozen=True):
    """The same message was applied before: nothing to do."""

    marker: str
