"""Re-rating from the earliest place a change touches (docs/design/guarantees.md "Order"):
a late event inserted, a correction, a withdrawal.

`plan` lists the domain's events from there in date order; `Walk` goes through them with
`dirty` holding each player whose state differs from the stored one: an event is re-rated
when it is the changed one or one of its players (or their seed records) is dirty, and a
dirty player whose state equals the stored state before an event is clean again. Everything
read is the stored state; what changes is collected, and `commit` writes it to the ledger at
the end, so a rejection changes nothing. On a ledger read in part (the service's, D65) the
walk stops with `Missing` when it needs what is not read yet, and `cascade` resumes it once
it is (service/rating/partial.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

import msgspec

from schemas.events import EventFinished
from schemas.ratings import Cause, RatingsUpdated
from schemas.records import PlayerRecord, unrated_record
from service.engine.contract import Engine, EngineRejection, EventInput
from service.engine.registry import Registry
from service.rating.effects import Rejected
from service.rating.ledger import MemberChanges, MemoryLedger
from service.rating.needs import engine_for
from service.rating.outputs import event_output
from service.rating.partial import Missing, Read
from service.rating.projection import PlayerKey
from service.timeline import (
    REVISION_CAUSES,
    Archived,
    Note,
    first_at_or_after,
    pack_state,
    results_digest,
    split_member,
    timeline_member,
)

LEAVE, EVENT = 0, 1  # a step's kind: the changed event leaves its old place; an event is rated


class Change(NamedTuple):
    """What a cascade applies: the event's id, the cause (`inserted`, `corrected`,
    `withdrawn`), its archive before (None: a new event), its content after (None: withdrawn)
    and its order key after; for the revision log (D43), the arrival of the input entry and
    its `reason`."""

    event_id: str
    cause: str
    old: Archived | None
    new: EventFinished | None
    new_key: bytes | None
    arrival: int = 0
    reason: str | None = None

    @property
    def old_key(self) -> bytes | None:
        """Where the event counted before (None: nowhere: new, or withdrawn already)."""
        old = self.old
        return old.key if old is not None and not old.withdrawn else None


class Step(NamedTuple):
    key: bytes
    kind: int  # LEAVE or EVENT
    event_id: str


def rated(
    engine: Engine, data: EventInput, event_id: str, own: bool
) -> tuple[list, list[PlayerRecord]]:
    """Rate one event; a rejection names the event when it is a later one of a cascade."""
    try:
        outcome = engine.rate_event(data)
    except EngineRejection as exc:
        if own:
            raise Rejected(exc.reason, exc.message, exc.path, event_id) from None
        raise Rejected(
            exc.reason,
            f"re-rating the later event {data.event.event_id!r}: {exc.message}",
            "$",
            event_id,
        ) from None
    return outcome.results, outcome.records


def named(record: PlayerRecord, name: str | None) -> PlayerRecord:
    """The record with the event's name for the player when it has none of its own."""
    if name and record.name is None:
        return msgspec.structs.replace(record, name=name)
    return record


def _check_open(ledger: MemoryLedger, event: EventFinished, what: str) -> None:
    """FIDE: nothing in a closed period is inserted, corrected or withdrawn."""
    closed = ledger.pool_state(event.system, event.pool or "").closed_through
    if closed is not None and event.period is not None and event.period <= closed:
        raise Rejected(
            "period_closed",
            f"{what} period {event.period}, which is closed (closed through {closed})",
            "$.period",
            event.event_id,
        )


def plan(ledger: MemoryLedger, change: Change, domain: str, max_cascade: int) -> list[Step]:
    """The steps from the earliest place the change touches, in date order (Rejected: the
    event's period is closed, or more later events than `max_cascade` would be re-rated)."""
    old, new, old_key = change.old, change.new, change.old_key
    if old is not None and old_key:
        _check_open(ledger, old.event, "the event is in")
    if new is not None:
        _check_open(
            ledger, new, "it would move the event into" if old is not None else "the event is in"
        )
    start = min(k for k in (old_key, change.new_key) if k)
    timeline = ledger.timelines.get(domain, [])
    steps: list[Step] = []
    for entry in timeline[first_at_or_after(timeline, start) :]:
        at, at_id = split_member(entry)
        eid = at_id.decode()
        steps.append(Step(at, LEAVE if eid == change.event_id else EVENT, eid))
    later = len(steps) - (1 if old_key else 0)
    if max_cascade and later > max_cascade:
        raise Rejected(
            "too_large",
            f"this {change.cause} correction re-rates {later} later events of {domain}, over the"
            f" limit of {max_cascade} (RATING_MAX_CASCADE_EVENTS)",
            "$",
            change.event_id,
        )
    if new is not None:
        steps.append(Step(change.new_key, EVENT, change.event_id))  # type: ignore[arg-type]  # new_key is set with new
    steps.sort(key=lambda step: (step.key, step.kind))
    return steps


class Walk:
    """The cascade's walk through its steps, collecting (not yet committing) the players'
    new states, their history members, the archives and the messages to publish."""

    def __init__(
        self,
        ledger: MemoryLedger,
        change: Change,
        registry: Registry,
        source_id: str,
        steps: list[Step] | None = None,
    ):
        self.ledger = ledger
        self.change = change
        self.registry = registry
        self.source_id = source_id
        self.dirty: dict[PlayerKey, PlayerRecord] = {}
        self.history: dict[PlayerKey, MemberChanges] = {}
        self.archives: dict[str, Archived] = {}
        self.outputs: list[RatingsUpdated] = []
        self.published: list[
            tuple[RatingsUpdated, bytes, Iterable[str]]
        ] = []  # (message, key, players it drops)
        self.cause = Cause(type=change.cause, event_id=change.event_id)  # type: ignore[arg-type]  # cause is one of Cause.type's values
        self.rerated = 0
        self.steps = steps or []
        self.position = 0  # the next step to take (run resumes there)
        self.events = {  # the later events by order key (the changed one is in `change`)
            s.key: s.event_id
            for s in self.steps
            if s.kind == EVENT and s.event_id != change.event_id
        }

    def run(self) -> None:
        """Take the steps from where the walk stopped (Missing: the ledger, read in part,
        lacks what the next step needs; run again once it is read)."""
        steps = self.steps
        while self.position < len(steps):
            step = steps[self.position]
            if step.kind == LEAVE:
                self.leave(step.key)
            else:
                self.event(step)
            self.position += 1

    def withdraw(self) -> None:
        """A withdrawal's own message: the event, with no results, marked withdrawn."""
        old = self.change.old
        assert old is not None
        engine = engine_for(old.event, self.registry)
        output = event_output(
            old.event,
            engine,
            [],
            self.source_id,
            revision=old.revision + 1,
            cause=self.cause,
            withdrawn=True,
        )
        self._publish(output, old.key, [p.id for p in old.event.players])
        self.archives[self.change.event_id] = Archived(
            old.key, old.event, old.revision + 1, b"", True, old.noted(self.note(old, True))
        )

    def note(self, archived: Archived, own: bool) -> Note:
        """The revision log's line for the next revision of `archived` (D43): the change's
        arrival, its cause, the changed event's id when it is another's, the input's reason
        when it is this event's own."""
        change = self.change
        return Note(
            archived.revision + 1,
            REVISION_CAUSES.index(change.cause),
            change.arrival,
            "" if own else change.event_id,
            (change.reason or "") if own else "",
        )

    def leave(self, key: bytes) -> None:
        """The changed event's old place: it no longer counts there."""
        old = self.change.old
        assert old is not None
        for p in old.event.players:
            who: PlayerKey = (old.event.system, old.event.pool or "", p.id)
            member = self.ledger.member_at(who, key)
            if member is not None:
                self.history.setdefault(who, MemberChanges()).remove(member)
            if who not in self.dirty:
                state = self.ledger.state_at(who, key, engine_for(old.event, self.registry))
                if state is not None:
                    self.dirty[who] = state

    def event(self, step: Step) -> None:
        """Rate the event of `step` again, when it is the changed one or touches a dirty
        player, and keep what changed."""
        changed = step.event_id == self.change.event_id
        reads = self.ledger.partial
        if changed:
            archived, event = self.change.old, self.change.new
        elif reads is None:
            archived = self.ledger.archives[step.event_id]
            event = archived.event
        else:  # read in part: the archive is read when a dirty player plays in the event
            archived = self.ledger.archives.get(step.event_id)
            if archived is None:
                if reads.dirty_at(step.key, self.dirty):
                    raise self._missing(step)
                return
            event = archived.event
        assert event is not None
        engine = engine_for(event, self.registry)
        touched = _touched(event, engine)
        if not changed:
            self._clean(touched, step.key, engine)  # again when resumed: the same outcome
            if not any(who in self.dirty for who in touched):
                return
            if reads is not None and reads.lacks(archived):  # type: ignore[arg-type]  # set here
                raise self._missing(step)
            self.rerated += 1
        before: dict[PlayerKey, PlayerRecord] = {}
        for who in touched:
            state = self.dirty.get(who) or self.ledger.state_at(who, step.key, engine)
            if state is not None:
                before[who] = state
        data = inputs(self.ledger, event, engine, before)
        results, records = rated(engine, data, self.change.event_id, own=changed)
        self._keep_states(event, engine, data, records, step.key, changed)
        self._keep_output(event, engine, data, results, step, archived)

    def _missing(self, step: Step) -> Missing:
        """What to read before `step` (the ledger is read in part)."""
        ledger = self.ledger
        assert ledger.partial is not None
        read = Read(
            ledger.archives,
            ledger.histories,
            ledger.state_at,
            lambda event: engine_for(event, self.registry),
        )
        return ledger.partial.missing((step.key, step.event_id), self.dirty, self.events, read)

    def _clean(self, touched: list[PlayerKey], key: bytes, engine: Engine) -> None:
        """A dirty player whose state is the stored one again is clean."""
        for who in touched:
            if who in self.dirty:
                stored = self.ledger.state_at(who, key, engine)
                if stored is not None and pack_state(stored) == pack_state(self.dirty[who]):
                    del self.dirty[who]

    def _keep_states(
        self,
        event: EventFinished,
        engine: Engine,
        data: EventInput,
        records: list[PlayerRecord],
        key: bytes,
        changed: bool,
    ) -> None:
        """The players' states after the event and their history members at it. A state that
        differs from the stored one after the event is dirty; one that equals it is clean at
        once (D66: the walk would find it clean at the player's next event)."""
        pool = event.pool or ""
        after = {p.id: data.records[p.id] for p in event.players}
        after.update({r.id: r for r in records if r.pool == pool and r.system == event.system})
        pool_state = self.ledger.pool_state(event.system, pool)
        for p in event.players:
            who = (event.system, pool, p.id)
            state = after[p.id]
            at, packed_after = self.ledger.member_and_after(who, key)
            if packed_after == pack_state(state) and engine.catch_up(state, pool_state) is state:
                self.dirty.pop(who, None)
            else:
                self.dirty[who] = state
            member = key + pack_state(data.records[p.id])
            stored = None if changed else at
            if stored != member:
                changes = self.history.setdefault(who, MemberChanges())
                if stored is not None:
                    changes.remove(stored)
                changes.add(member)

    def _keep_output(
        self,
        event: EventFinished,
        engine: Engine,
        data: EventInput,
        results: list,
        step: Step,
        archived: Archived | None,
    ) -> None:
        """The event's message: the first result of an inserted event, or a revision when it
        is the changed event or its results changed."""
        changed = step.event_id == self.change.event_id
        digest = results_digest(results)
        if changed and self.change.cause == "inserted":
            output = event_output(event, engine, results, self.source_id, data.records)
            self._publish(output, step.key, ())
            self.archives[step.event_id] = Archived(step.key, event, 0, digest)
            return
        assert archived is not None
        if not changed and digest == archived.digest:
            return
        revision = archived.revision + 1
        output = event_output(
            event,
            engine,
            results,
            self.source_id,
            data.records,
            revision=revision,
            cause=self.cause,
        )
        old = self.change.old
        dropped: Iterable[str] = (
            {p.id for p in old.event.players} - {p.id for p in event.players}
            if changed and old is not None
            else ()
        )
        self._publish(output, step.key, dropped)
        self.archives[step.event_id] = Archived(
            step.key, event, revision, digest, False, archived.noted(self.note(archived, changed))
        )

    def _publish(self, output: RatingsUpdated, key: bytes, dropped: Iterable[str]) -> None:
        self.outputs.append(output)
        self.published.append((output, key, dropped))


def _touched(event: EventFinished, engine: Engine) -> list[PlayerKey]:
    """The records an event reads: its players' in its pool and, where the pool is seeded
    from another, in that one."""
    pool = event.pool or ""
    seed_pool = engine.seed_pools.get(pool)
    return [
        (event.system, pl, p.id)
        for p in event.players
        for pl in ((pool, seed_pool) if seed_pool else (pool,))
    ]


def inputs(
    ledger: MemoryLedger,
    event: EventFinished,
    engine: Engine,
    before: Mapping[PlayerKey, PlayerRecord],
) -> EventInput:
    """The engine's input: the players' records as given by `before` (None: unrated)
    and, where the pool is seeded from another, their records there."""
    pool = event.pool or ""
    records = {}
    for p in event.players:
        state = before.get((event.system, pool, p.id)) or unrated_record(event.system, pool, p.id)
        current = ledger.record(event.system, pool, p.id)  # a state from a history has no name
        records[p.id] = named(named(state, current.name if current is not None else None), p.name)
    seed_pool = engine.seed_pools.get(pool)
    seeds: dict[str, PlayerRecord] = {}
    if seed_pool is not None:
        for p in event.players:
            seed = before.get((event.system, seed_pool, p.id))
            if seed is not None:
                seeds[p.id] = seed
    return EventInput(event, records, ledger.pool_state(event.system, pool), seeds)


def commit(ledger: MemoryLedger, change: Change, domain: str, walk: Walk) -> None:
    """Write what the walk collected to the ledger: nothing before this changed it."""
    records = []
    for who, state in walk.dirty.items():
        current = ledger.record(*who)
        if current is None or pack_state(current) != pack_state(state):
            records.append(state)
    ledger.store_records(records)
    for who, changes in walk.history.items():
        mine = ledger.history_change(who)
        for member in changes.removed:
            mine.remove(member)
        for member in changes.added:
            mine.add(member)
    line = ledger.timeline_change(domain)
    if change.old_key:
        line.remove(timeline_member(change.old_key, change.event_id))
    if change.new_key:
        line.add(timeline_member(change.new_key, change.event_id))
    for archived in walk.archives.values():
        ledger.archive(archived)
    for output, key, dropped in walk.published:
        ledger.publish(output, key, dropped)


def cascade(
    ledger: MemoryLedger, change: Change, registry: Registry, source_id: str, max_cascade: int
) -> tuple[list[RatingsUpdated], int]:
    """Apply a change that does not come last in date order: plan, walk, commit. Returns
    the messages to publish and how many later events were re-rated. On a ledger read in
    part, Missing says what to read first; applied again, the walk resumes where it stopped."""
    event = change.new or change.old.event  # type: ignore[union-attr]  # old is set when new is None
    domain = registry.domains.of(event.system, event.pool or "")
    reads = ledger.partial
    walk = reads.paused if reads is not None else None
    if walk is None or walk.change != change:
        walk = Walk(ledger, change, registry, source_id, plan(ledger, change, domain, max_cascade))
        if change.cause == "withdrawn":
            walk.withdraw()
    try:
        walk.run()
    except Missing:
        assert reads is not None
        reads.paused = walk  # apply again once it is read: the walk goes on from there
        raise
    if reads is not None:
        reads.paused = None
    ledger.forget_states()
    commit(ledger, change, domain, walk)
    return walk.outputs, walk.rerated
