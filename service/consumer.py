"""Applying one input stream in order, exactly once (design: "Processing guarantees").

Each input stream has an applied cursor. A replica handed entry X applies, one commit
each, every entry after the cursor up to X (read with XRANGE), then X; an entry at or
below the cursor is only acknowledged. One commit = WATCH (cursor, the pool's records),
read, rate with the pure engine, then MULTI: records, pool state, idempotency marker,
cursor, output or dead-letter entry, XACK; EXEC. A WatchError means another replica
moved first: re-read and go on.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

import msgspec
import structlog
from redis.exceptions import RedisError, WatchError

from schemas.rejected import EventRejected
from schemas.validation import InvalidMessage, decode_input
from service.engine.registry import Registry
from service.rating import Applied, Duplicate, Rejected, apply, needs
from service.settings import Settings
from service.store import DATA_FIELD, StreamKeys, entry_order, queue_applied, read_snapshot, text, xadd

log = structlog.get_logger("rating.consumer")
CATCH_UP_BATCH = 100


@dataclass(frozen=True)
class Decision:
    """What one entry's commit does: apply, skip a duplicate, or dead-letter."""

    outcome: Applied | Duplicate | Rejected
    event_id: str | None = None


class StreamProcessor:
    """Applies the entries of one input stream, in stream order, exactly once."""

    def __init__(self, client: Any, settings: Settings, stream: str, registry: Registry):
        self.client = client
        self.settings = settings
        self.keys = StreamKeys(stream)
        self.stream = stream
        self.registry = registry

    async def ensure_group(self) -> None:
        """Create the consumer group at 0 (the whole stream), ignoring BUSYGROUP."""
        try:
            await self.client.xgroup_create(self.stream, self.settings.group, id="0", mkstream=True)
        except RedisError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    async def handle(self, entry_id: str) -> None:
        """Make entry `entry_id` take effect (after every entry before it), then ack it."""
        target = entry_order(entry_id)
        while True:
            cursor = text(await self.client.get(self.keys.cursor)) or "0-0"
            if target <= entry_order(cursor):
                await self.client.xack(self.stream, self.settings.group, entry_id)
                return
            batch = await self.client.xrange(self.stream, min=f"({cursor}", max=entry_id, count=CATCH_UP_BATCH)
            if not batch:  # the entry was deleted from the stream: nothing to apply
                await self.client.xack(self.stream, self.settings.group, entry_id)
                return
            for raw_id, fields in batch:
                eid = raw_id.decode()
                if not await self._commit(eid, fields, cursor):
                    break  # another replica moved the cursor first: re-read it
                cursor = eid

    async def _commit(self, entry_id: str, fields: dict, expected_cursor: str) -> bool:
        """One atomic step for the entry right after the cursor. False when the cursor was
        not where expected (another replica committed this entry first).

        Poison: each attempt is counted before it starts and the count is removed by the
        commit, so an entry whose processing fails, or kills its process, `max_deliveries`
        times is dead-lettered with reason `poison` instead of blocking the stream.
        """
        attempts = await self.client.hincrby(self.keys.attempts, entry_id, 1)
        structlog.contextvars.bind_contextvars(stream=self.stream, stream_id=entry_id)
        try:
            async with self.client.pipeline(transaction=True) as pipe:
                await pipe.watch(self.keys.cursor)
                current = text(await pipe.get(self.keys.cursor)) or "0-0"
                if current != expected_cursor:
                    await self._forget_attempts(entry_id)
                    return False
                if attempts > self.settings.max_deliveries:
                    reason = f"entry failed {attempts - 1} times (limit {self.settings.max_deliveries})"
                    decision = Decision(Rejected("poison", reason), _event_id_of(fields))
                else:
                    decision = await self._decide(pipe, entry_id, fields)
                pipe.multi()
                self._queue(pipe, entry_id, fields, decision)
                pipe.set(self.keys.cursor, entry_id)
                pipe.xack(self.stream, self.settings.group, entry_id)
                pipe.hdel(self.keys.attempts, entry_id)
                await pipe.execute()
        except WatchError:
            await self._forget_attempts(entry_id)
            return False
        except RedisError:
            raise
        except Exception:
            log.exception("entry failed", event_id=_event_id_of(fields), attempt=attempts)
            raise
        finally:
            structlog.contextvars.unbind_contextvars("stream", "stream_id")
        self._log(entry_id, decision)
        return True

    async def _forget_attempts(self, entry_id: str) -> None:
        """The cursor moved past this entry: another replica committed it."""
        await self.client.hdel(self.keys.attempts, entry_id)

    async def _decide(self, pipe: Any, entry_id: str, fields: dict) -> Decision:
        data = fields.get(DATA_FIELD.encode())
        if data is None:
            return Decision(Rejected("malformed", f"entry has no {DATA_FIELD} field", "$"))
        try:
            message = decode_input(data, self.settings.limits)
            want = needs(message, self.registry)
        except InvalidMessage as exc:
            problem = exc.problems[0]
            more = f" (and {len(exc.problems) - 1} more)" if len(exc.problems) > 1 else ""
            return Decision(Rejected(problem.reason, problem.message + more, problem.path), _event_id_of(fields))
        except Rejected as exc:
            return Decision(exc, _event_id_of(fields))
        event_id = getattr(message, "event_id", None)
        structlog.contextvars.bind_contextvars(event_id=event_id)
        watched = [self.keys.players(want.system, want.pool)]
        if want.seed_pool:
            watched.append(self.keys.players(want.system, want.seed_pool))
        await pipe.watch(*watched)
        snapshot = await read_snapshot(pipe, self.keys, want)
        try:
            return Decision(apply(message, snapshot, self.registry, entry_id), event_id)
        except Rejected as exc:
            return Decision(exc, event_id)

    def _queue(self, pipe: Any, entry_id: str, fields: dict, decision: Decision) -> None:
        outcome = decision.outcome
        maxlen = self.settings.output_maxlen
        if isinstance(outcome, Applied):
            queue_applied(pipe, self.keys, outcome, self.settings.output_stream, maxlen)
        elif isinstance(outcome, Rejected):
            rejected = rejection_message(outcome, self.stream, entry_id, fields, decision.event_id)
            xadd(pipe, self.settings.dead_letter_stream, msgspec.json.encode(rejected), maxlen)

    def _log(self, entry_id: str, decision: Decision) -> None:
        outcome = decision.outcome
        bound = log.bind(stream=self.stream, stream_id=entry_id, event_id=decision.event_id)
        if isinstance(outcome, Applied):
            bound.info("applied", marker=outcome.marker, outputs=len(outcome.outputs))
        elif isinstance(outcome, Duplicate):
            bound.info("duplicate, already applied", marker=outcome.marker)
        elif isinstance(outcome, Rejected):
            bound.warning("rejected", reason=outcome.reason, path=outcome.path, detail=outcome.message)
        structlog.contextvars.unbind_contextvars("event_id")


def rejection_message(
    rejected: Rejected, stream: str, entry_id: str, fields: dict, event_id: str | None
) -> EventRejected:
    """The dead-letter message: the entry's fields verbatim, where from, and why."""
    as_text: dict[str, str] = {}
    as_base64: dict[str, str] = {}
    for key, value in fields.items():
        name = key.decode("utf-8", "backslashreplace")
        try:
            as_text[name] = value.decode("utf-8")
        except UnicodeDecodeError:
            as_base64[name] = base64.b64encode(value).decode()
    return EventRejected(
        reason=rejected.reason,  # type: ignore[arg-type]
        message=rejected.message,
        path=rejected.path,
        source_stream=stream,
        source_id=entry_id,
        event_id=rejected.event_id or event_id,
        fields=as_text,
        fields_base64=as_base64,
    )


def _event_id_of(fields: dict) -> str | None:
    """The event id of an entry, when it can be read at all (for logs and dead letters)."""
    try:
        document = msgspec.json.decode(fields.get(DATA_FIELD.encode(), b""))
    except msgspec.DecodeError:
        return None
    value = document.get("event_id") if isinstance(document, dict) else None
    return value if isinstance(value, str) and len(value) <= 128 else None
