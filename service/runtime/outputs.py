"""What a commit publishes, in the same MULTI/EXEC as its writes: one `ratings.updated/v1`
per rated event or revision on the partition's output stream, one `event.rejected/v1` per
rejected entry on its dead-letter stream, in the entries' order (docs/design/guarantees.md
"Bad input")."""

from __future__ import annotations

import base64
from typing import Any

from schemas.rejected import EventRejected
from service.rating import Applied, Rejected
from service.runtime.entries import Decision, Entry
from service.runtime.partitions import Partition
from service.runtime.store import encode, xadd


def queue_outputs(
    pipe: Any, partition: Partition, stream: str, decisions: list[Decision], maxlen: int
) -> None:
    """The ratings.updated and event.rejected entries of `decisions` (entries of `stream`), in
    order; each stream is trimmed (approximately, to `maxlen`: RATING_OUTPUT_MAXLEN, 0 for
    never) once per commit rather than per entry."""
    written: set[str] = set()
    for decision in decisions:
        outcome = decision.outcome
        if isinstance(outcome, Applied):
            for output in outcome.outputs:
                xadd(pipe, partition.output, encode(output))
            written.add(partition.output)
        elif isinstance(outcome, Rejected):
            rejected = rejection_message(outcome, stream, decision.entry)
            xadd(pipe, partition.dead_letter, encode(rejected))
            written.add(partition.dead_letter)
    if maxlen:
        for output_stream in sorted(written):
            pipe.xtrim(output_stream, maxlen=maxlen, approximate=True)


def rejection_message(rejected: Rejected, stream: str, entry: Entry) -> EventRejected:
    """The dead-letter message: the entry's fields verbatim, where from, and why."""
    as_text: dict[str, str] = {}
    as_base64: dict[str, str] = {}
    for key, value in entry.fields.items():
        name = key.decode("utf-8", "backslashreplace")
        try:
            as_text[name] = value.decode("utf-8")
        except UnicodeDecodeError:
            as_base64[name] = base64.b64encode(value).decode()
    return EventRejected(
        reason=rejected.reason,  # type: ignore[arg-type]  # Rejected.reason is one of schemas.rejected.Reason
        message=rejected.message,
        path=rejected.path,
        source_stream=stream,
        source_id=entry.id,
        event_id=rejected.event_id or entry.event_id,
        fields=as_text,
        fields_base64=as_base64,
    )
