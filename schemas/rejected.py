"""Dead-letter message `event.rejected/v1`: an input entry that was not applied, and why."""

from __future__ import annotations

from typing import Literal, get_args

import msgspec

Reason = Literal[
    "malformed",  # not JSON, not an object, no __data__ field
    "invalid",  # fails the schema or a cross-field rule
    "conflict",  # an event_id already applied with other content
    "unknown_system",  # no engine for this system / ruleset
    "too_large",  # over the size, player or game limits
    "period_closed",  # FIDE: the event's rating period is already closed
    "period_not_due",  # FIDE: a close of a period that cannot be closed yet (an earlier one is open, or it is in the future)
    "unratable",  # the rules cannot rate it (e.g. no rated player)
    "poison",  # delivered too many times without being applied
    "misrouted",  # appended to another partition's input stream than its (system, pool)'s (the message names it)
    "implausible",  # dates that cannot be true by the service's clock: an event ending in the future, a span over the limit, a close of a period not yet over
]
REASONS: tuple[str, ...] = get_args(Reason)


class EventRejected(
    msgspec.Struct,
    frozen=True,
    forbid_unknown_fields=True,
    tag_field="schema",
    tag="event.rejected/v1",
):
    """The original entry's fields verbatim (UTF-8 text; other bytes as base64 in
    `fields_base64`), where it came from, and a reason a machine and a person can read."""

    reason: Reason
    message: str
    source_stream: str
    source_id: str
    path: str | None = None
    event_id: str | None = None
    fields: dict[str, str] = {}
    fields_base64: dict[str, str] = {}
