"""An input stream's entries as the stream processor takes them: decoded and checked before
the store is read (what cannot be rated is a rejection already: docs/design/guarantees.md
"Bad input"), and what each one's commit does with it."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import NamedTuple

import msgspec

from schemas.events import InputMessage
from schemas.validation import InvalidMessage, decode_input
from service.engine.registry import Registry
from service.entryids import entry_order
from service.rating import Applied, Duplicate, Needs, Rejected, needs
from service.runtime.partitions import Partition, misrouted
from service.runtime.settings import Settings
from service.runtime.store import DATA_FIELD


class Entry(NamedTuple):
    """One input entry, decoded as far as it can be before reading the store (a tuple: made
    for every entry, it costs a third of a frozen dataclass)."""

    id: str
    fields: dict
    message: InputMessage | None
    want: Needs | None
    rejected: Rejected | None
    event_id: str | None


class Decision(NamedTuple):
    """What one entry's commit does: apply, skip a duplicate, or dead-letter."""

    entry: Entry
    outcome: Applied | Duplicate | Rejected


def utc_today() -> dt.date:
    """The adapters' clock: today's date in UTC (docs/design/decisions.md "D14 Plausible dates")."""
    return dt.datetime.now(dt.UTC).date()


class EntryDecoder:
    """Decodes and checks the entries of one input stream: strictly (schemas/validation.py),
    plausible by `clock` (today, UTC: schemas/plausible.py), and routed to this stream's
    partition (service/runtime/partitions.py)."""

    def __init__(
        self,
        settings: Settings,
        registry: Registry,
        partition: Partition,
        clock: Callable[[], dt.date] = utc_today,
    ):
        self.settings = settings
        self.layout = settings.layout
        self.registry = registry
        self.partition = partition
        self.clock = clock

    def decode(self, entry_id: str, fields: dict) -> Entry:
        """Decode and check an entry; what cannot be rated is a rejection already."""
        data = fields.get(DATA_FIELD.encode())
        if data is None:
            return Entry(
                entry_id,
                fields,
                None,
                None,
                Rejected("malformed", f"entry has no {DATA_FIELD} field"),
                None,
            )
        try:
            message = decode_input(data, self.settings.limits, self.clock())
            want = needs(message, self.registry)
            wrong = misrouted(self.partition, self.layout, want.system, want.pool)
            if wrong is not None:
                raise Rejected("misrouted", wrong, "$.pool")
        except InvalidMessage as exc:
            problem = exc.problems[0]
            more = f" (and {len(exc.problems) - 1} more)" if len(exc.problems) > 1 else ""
            rejected = Rejected(problem.reason, problem.message + more, problem.path)
            return Entry(entry_id, fields, None, None, rejected, event_id_of(fields))
        except Rejected as exc:
            return Entry(entry_id, fields, None, None, exc, event_id_of(fields))
        return Entry(entry_id, fields, message, want, None, getattr(message, "event_id", None))

    def decode_batch(self, entry_ids: Sequence[str], bodies: Sequence[dict]) -> list[Entry]:
        """Entries (ids and fields, aligned), decoded and checked, in stream order."""
        return sorted(
            (self.decode(i, f) for i, f in zip(entry_ids, bodies)), key=lambda e: entry_order(e.id)
        )


class _EventId(msgspec.Struct):
    """The one field event_id_of reads: msgspec skips the others without building them."""

    event_id: object = None


_event_ids = msgspec.json.Decoder(_EventId)


def event_id_of(fields: dict) -> str | None:
    """The event id of an entry, when it can be read at all (for logs and dead letters). Only
    that field is built: a refused entry of many MB is scanned, not made into objects (D92)."""
    try:
        value = _event_ids.decode(fields.get(DATA_FIELD.encode(), b"")).event_id
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    return value if isinstance(value, str) and len(value) <= 128 else None
