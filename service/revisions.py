"""An event's revision history (D43, `GET /v1/events/{event_id}/revisions`), from its archive
and its last published message.

The output stream is trimmed (RATING_OUTPUT_MAXLEN) and the results hash keeps the last
message only, so the archive keeps a log: one `timeline.Note` per revision, written in the
commit that publishes it. Revision 0 (the first result) needs none: the archive's order key
keeps the event's arrival. Revisions published before the log was kept (an archive whose
`revision` is above its log's) are listed by number only (`known` false), the last of them
with the cause and entry of the last message when that message is it.

Pure: Structs in, a Struct out.
"""

from __future__ import annotations

import datetime as dt

from schemas.ratings import Cause, RatingsUpdated
from schemas.reads import EventRevisions, RevisionLine
from service.entryids import entry_ms
from service.timeline import REVISION_CAUSES, Archived, Note

SEQUENCE_BITS = 16  # timeline.arrival_of: (ms << 16) | sequence


def source_of(arrival: int) -> tuple[dt.datetime | None, str | None]:
    """(when, stream id) of the input entry numbered `arrival` (timeline.arrival_of); nothing
    for an arrival that is no entry id's (the offline `rate` counts 1, 2, ...)."""
    ms, sequence = arrival >> SEQUENCE_BITS, arrival & ((1 << SEQUENCE_BITS) - 1)
    if ms == 0:
        return None, None
    return _time(ms), f"{ms}-{sequence}"


def _time(ms: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC)


def _line(note: Note, event_id: str) -> RevisionLine:
    cause = REVISION_CAUSES[note.cause]
    at, source = source_of(note.arrival)
    own = note.other == ""
    return RevisionLine(
        revision=note.revision,
        kind=cause if own else "rerated",  # type: ignore[arg-type]  # own: corrected or withdrawn
        at=at,
        source_id=source,
        cause=Cause(type=cause, event_id=event_id if own else note.other),  # type: ignore[arg-type]  # a REVISION_CAUSES value
        reason=note.reason or None,
        known=True,
    )


def _from_message(message: RatingsUpdated) -> RevisionLine:
    """The last revision told by its own message (no log line: published before the log)."""
    cause = message.cause
    own = cause is not None and cause.event_id == message.event_id
    kind = cause.type if own and cause is not None else "rerated"
    at, source = _message_source(message)
    return RevisionLine(
        revision=message.revision or 0,
        kind=kind,  # type: ignore[arg-type]  # a cause of this event is its correction or withdrawal
        at=at,
        source_id=source,
        cause=cause,
        reason=None,
        known=True,
    )


def revisions(message: RatingsUpdated, archived: Archived | None) -> EventRevisions:
    """The event's revisions, oldest first (`archived` None: not kept; then only the last
    message is known)."""
    assert message.event_id is not None
    event_id = message.event_id
    current = message.revision or 0
    lines: list[RevisionLine] = []
    if archived is not None:
        at, source = (
            source_of(int.from_bytes(archived.key[9:], "big"))  # the arrival it keeps
            if current
            else _message_source(message)  # the first result's own message
        )
        lines.append(RevisionLine(0, "rated", at, source, None, None, True))
        logged = {note.revision: note for note in archived.log}
        for n in range(1, max(archived.revision, current) + 1):
            if n in logged:
                lines.append(_line(logged[n], event_id))
            elif n == current and message.kind == "revision":
                lines.append(_from_message(message))
            else:
                lines.append(RevisionLine(n, "unknown", None, None, None, None, False))
    elif message.kind == "revision":
        lines.append(_from_message(message))
    else:
        at, source = _message_source(message)
        lines.append(RevisionLine(0, "rated", at, source, None, None, True))
    return EventRevisions(
        event_id=event_id,
        system=message.system,
        pool=message.pool,
        name=message.name,
        revision=current,
        withdrawn=message.withdrawn,
        revisions=lines,
    )


def _message_source(message: RatingsUpdated) -> tuple[dt.datetime | None, str | None]:
    """(when, stream id) of the entry a message answered (none for an offline location)."""
    if message.source_id[:1].isdigit():
        return _time(entry_ms(message.source_id)), message.source_id
    return None, None
