"""The use case shared by the service and the offline `rate` command: apply one input
message to a pool's state, by the engines' rules, in date order (docs/design/guarantees.md "Order").

An event that arrives in date order is rated at the end of its domain's timeline. A late
event, a correction or a withdrawal re-rates from its place: the same engines' fold run
again over the states the players had there (their histories), publishing a revision of
every later event whose results change. `MemoryLedger` holds the state (all of it for
`rate`; what one commit read, for the service) and records what each message changed, so
the service writes exactly that. Nothing here does I/O.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

import msgspec

from schemas.events import (
    EventContent,
    EventCorrected,
    EventFinished,
    EventWithdrawn,
    InputMessage,
    PeriodClosed,
)
from schemas.ratings import Cause, RatingsUpdated
from schemas.reads import HistoryEntry
from schemas.records import PlayerRecord, PoolState, unrated_record
from service.engine.contract import Engine, EngineRejection, EventInput
from service.engine.registry import Registry
from service.readmodel import entries_of, list_key, pack_entry, sorted_entries
from service.timeline import (
    KEY_LEN,
    Archived,
    as_finished,
    end_date_of,
    first_at_or_after,
    order_key,
    ordering_domain,
    pack_state,
    results_digest,
    split_member,
    timeline_member,
    unpack_state,
)

LIST_CHUNK = 1_000  # players per `ratings.updated` message of kind `list` (FIDE)

PlayerKey = tuple[str, str, str]  # (system, pool, player id)


class ListRules:
    """What the engines require of a record brought in a list (`import`, `rate --ratings`):
    the status the system's rules give a rating and games (`Engine.status_for`), and every
    problem any engine that rates the record's pool finds in it (`Engine.record_problems`,
    the very check `rate_event` makes), so that a list never leaves a record an engine
    will later refuse."""

    def __init__(self, registry: Registry):
        self.registry = registry
        self._by_pool: dict[tuple[str, str], list[Engine]] = {}

    def _engines(self, system: str, pool: str) -> list[Engine]:
        engines = self._by_pool.get((system, pool))
        if engines is None:
            engines = self._by_pool[(system, pool)] = [
                e for e in self.registry if e.system == system and pool in e.pools
            ]
        return engines

    def status_for(self, system: str, pool: str, rating: int | None, games: int) -> str | None:
        engines = self._engines(system, pool)
        return engines[0].status_for(rating, games) if engines else None

    def problems(self, record: PlayerRecord) -> list[tuple[str, str]]:
        engines = self._engines(record.system, record.pool)
        if not engines:
            known = sorted({p for e in self.registry if e.system == record.system for p in e.pools})
            return [
                (
                    "pool",
                    f"no {record.system} ruleset rates pool {record.pool!r} (pools: {', '.join(known)})",
                )
            ]
        found: list[tuple[str, str]] = []
        for engine in engines:
            for problem in engine.record_problems(record):
                if (problem.field, problem.message) not in found:
                    found.append((problem.field, problem.message))
        return found


class Rejected(Exception):
    """An input message that is not applied: a dead-letter `reason`, a message for a
    person, and the JSON path at fault."""

    def __init__(self, reason: str, message: str, path: str = "$", event_id: str | None = None):
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.path = path
        self.event_id = event_id


class Needs(msgspec.Struct, frozen=True):
    """What to read before applying a message: the pool, the player ids (None: all of
    the pool), the seed pool (if any), the idempotency marker's key, the ordering domain
    and, for a correction or withdrawal, the event id whose archive decides the rest."""

    system: str
    pool: str
    player_ids: tuple[str, ...] | None
    seed_pool: str | None
    marker: str
    domain: str = ""
    revises: str | None = None


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


class MemberChanges:
    """Members added to and removed from one sorted set (a timeline or a history); adding
    back what was removed, or removing what was added, cancels out."""

    __slots__ = ("added", "removed")

    def __init__(self) -> None:
        self.added: set[bytes] = set()
        self.removed: set[bytes] = set()

    def add(self, member: bytes) -> None:
        if member in self.removed:
            self.removed.discard(member)
        else:
            self.added.add(member)

    def remove(self, member: bytes) -> None:
        if member in self.added:
            self.added.discard(member)
        else:
            self.removed.add(member)


def marker_key(message: InputMessage) -> str:
    """The idempotency key: an event's id; a period's (system, pool, period)."""
    if isinstance(message, PeriodClosed):
        return f"period:{message.system}:{message.pool}:{message.period}"
    return f"event:{message.event_id}"


_json = msgspec.json.Encoder()


def content_digest(message: InputMessage) -> str:
    """A digest of the normalized message: equal content, equal digest."""
    return hashlib.sha256(_json.encode(message)).hexdigest()


def engine_for(message: InputMessage | EventContent, registry: Registry) -> Engine:
    ruleset = getattr(message, "ruleset", None) or ""
    engine = registry.get(message.system, ruleset)
    if engine is None:
        known = ", ".join(registry.rulesets(message.system)) or "none yet"
        raise Rejected(
            "unknown_system",
            f"no engine for system {message.system!r} ruleset {ruleset!r} (available: {known})",
            "$.ruleset" if registry.rulesets(message.system) else "$.system",
            getattr(message, "event_id", None),
        )
    if message.pool not in engine.pools:
        raise Rejected(
            "invalid", f"ruleset {engine.ruleset} does not rate pool {message.pool!r}", "$.pool"
        )
    return engine


def needs(message: InputMessage, registry: Registry) -> Needs:
    """What `process` will need read from the store (raises Rejected for an unknown engine)."""
    assert message.pool is not None  # normalized
    marker = marker_key(message)
    domain = ordering_domain(message.system, message.pool)
    if isinstance(message, EventWithdrawn):
        return Needs(message.system, message.pool, (), None, marker, domain, message.event_id)
    engine = engine_for(message, registry)
    if isinstance(message, EventContent):
        ids = tuple([p.id for p in message.players])
        revises = message.event_id if isinstance(message, EventCorrected) else None
        return Needs(
            message.system,
            message.pool,
            ids,
            engine.seed_pools.get(message.pool),
            marker,
            domain,
            revises,
        )
    return Needs(message.system, message.pool, None, None, marker, domain)


def event_output(
    event: EventFinished,
    engine: Engine,
    results: list,
    source_id: str,
    records: Mapping[str, PlayerRecord] | None = None,
    **revision,
) -> RatingsUpdated:
    """The `ratings.updated/v1` of one event (a first result, or a revision of it). Each
    player's name is their record's (`records`: the records the event was rated from, named
    from the list, else from an event), else the event's."""
    names = {p.id: p.name for p in event.players if p.name}
    if records:
        for pid, record in records.items():
            if record.name:
                names[pid] = record.name
    if names:
        results = [
            msgspec.structs.replace(r, name=names[r.id]) if r.id in names else r for r in results
        ]
    if revision:
        return RatingsUpdated(
            kind="revision",
            system=event.system,
            pool=event.pool or "",
            ruleset=engine.ruleset,
            source_id=source_id,
            players=results,
            event_id=event.event_id,
            period=event.period,
            name=event.name,
            start_date=event.start_date,
            end_date=event.end_date,
            **revision,
        )
    # kind, system, pool, ruleset, source_id, players, event_id, period, chunk, chunks, name,
    # start_date, end_date (positional: the hot path)
    return RatingsUpdated(
        "event",
        event.system,
        event.pool or "",
        engine.ruleset,
        source_id,
        results,
        event.event_id,
        event.period,
        1,
        1,
        event.name,
        event.start_date,
        event.end_date,
    )


def _list_outputs(
    message: PeriodClosed, engine: Engine, results: list, source_id: str
) -> list[RatingsUpdated]:
    chunks = [results[i : i + LIST_CHUNK] for i in range(0, len(results), LIST_CHUNK)] or [[]]
    year, month = (int(part) for part in message.period.split("-"))
    in_force = (
        f"{year + month // 12:04d}-{month % 12 + 1:02d}"  # the list closing November is December's
    )
    return [
        RatingsUpdated(
            kind="list",
            system=message.system,
            pool=message.pool or "",
            ruleset=engine.ruleset,
            source_id=source_id,
            period=message.period,
            players=chunk,
            chunk=n,
            chunks=len(chunks),
            list_period=in_force,
        )
        for n, chunk in enumerate(chunks, 1)
    ]


def _rated(
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


def _named(record: PlayerRecord, name: str | None) -> PlayerRecord:
    """The record with the event's name for the player when it has none of its own."""
    if name and record.name is None:
        return msgspec.structs.replace(record, name=name)
    return record


class MemoryLedger:
    """The store kept in memory: the offline `rate` command's twin of the Redis store, and
    the working set of one service commit (then it holds only what the commit read).

    - `records[(system, pool)][id]`: the current records; `pools`: pool states; `markers`.
    - `timelines[domain]`: sorted `key + event_id` members; `archives[event_id]`: Archived.
    - `histories[(system, pool, id)]`: sorted `key + packed record before the event`.
    - The read model (service/readmodel.py): `results[event_id]`, the last message published
      for the event; `entries[(system, pool, id)][field]`, the player's history lines
      (`key + packed entry`); `previous_records`, each changed record as it was before.
    """

    def __init__(
        self, records: Iterable[PlayerRecord] = (), pools: Iterable[PoolState] = (), markers=None
    ):
        self.records: dict[tuple[str, str], dict[str, PlayerRecord]] = {}
        self.pools: dict[tuple[str, str], PoolState] = {(p.system, p.pool): p for p in pools}
        self.markers: dict[str, str] = dict(markers or {})
        self.timelines: dict[str, list[bytes]] = {}
        self.archives: dict[str, Archived] = {}
        self.histories: dict[PlayerKey, list[bytes]] = {}
        self.arrivals = 0  # the last arrival given to a message that came without one
        # What commits changed since the ledger was made (the service writes only these).
        self.changed_records: dict[PlayerKey, PlayerRecord] = {}
        self.changed_pools: dict[tuple[str, str], PoolState] = {}
        self.changed_markers: dict[str, str] = {}
        self.changed_archives: dict[str, Archived] = {}
        self.timeline_changes: dict[str, MemberChanges] = {}
        self.history_changes: dict[PlayerKey, MemberChanges] = {}
        self.results: dict[str, RatingsUpdated] = {}
        self.entries: dict[PlayerKey, dict[str, bytes]] = {}
        self.changed_results: dict[str, RatingsUpdated] = {}
        self.changed_entries: dict[PlayerKey, dict[str, bytes | None]] = {}
        self.previous_records: dict[PlayerKey, PlayerRecord | None] = {}
        for record in records:
            self.records.setdefault((record.system, record.pool), {})[record.id] = record

    # ------------------------------------------------------------------ reading

    def record(self, system: str, pool: str, player_id: str) -> PlayerRecord | None:
        return self.records.get((system, pool), {}).get(player_id)

    def pool_state(self, system: str, pool: str) -> PoolState:
        return self.pools.get((system, pool)) or PoolState(system=system, pool=pool)  # type: ignore[arg-type]  # system is a System (the callers' messages and records)

    def tail(self, domain: str) -> bytes | None:
        """The order key of the last event of the domain's timeline."""
        timeline = self.timelines.get(domain)
        return timeline[-1][:KEY_LEN] if timeline else None

    def in_order(self, message: InputMessage, arrival: int) -> bool:
        """Whether the message is rated at the end of its timeline (no cascade)."""
        if isinstance(message, PeriodClosed):
            return True
        if not isinstance(message, EventFinished):
            return False
        tail = self.tail(ordering_domain(message.system, message.pool or ""))
        return tail is None or order_key(message, arrival) > tail

    def stored_state(self, who: PlayerKey, key: bytes) -> PlayerRecord | None:
        """The player's state at `key` as stored: the record before their first event at or
        after `key`, else their current record (None: never seen)."""
        history = self.histories.get(who)
        if history:
            i = first_at_or_after(history, key)
            if i < len(history):
                return unpack_state(*who, split_member(history[i])[1])
        return self.record(*who)

    def _state_at(self, who: PlayerKey, key: bytes, engine: Engine) -> PlayerRecord | None:
        """The player's stored state at `key` with the period closings it missed applied.

        A history keeps the state before each event as it was when the event was rated. An
        event of a later period rated before an earlier period was closed (FIDE: November's
        events reported before October's list) kept a state from before that closing:
        re-rating from it as stored undid the published list (the closed period's sums open
        again, the rating back to the old list). Each closed period the state still holds
        games of is closed on it first, in order, as it was on the records."""
        state = self.stored_state(who, key)
        closed = self.pool_state(who[0], who[1]).closed_through
        if state is None or state.fide is None or closed is None:
            return state
        periods = {s.period for s in state.fide.periods} | {
            g.period for g in state.fide.initial_games
        }
        for period in sorted(p for p in periods if p <= closed):
            year, month = (int(part) for part in period.split("-"))
            before = f"{year - (month == 1):04d}-{(month - 2) % 12 + 1:02d}"  # closed through the month before
            outcome = engine.close_period(
                PeriodClosed(system=who[0], pool=who[1], period=period),  # type: ignore[arg-type]  # who[0] is the record's System
                {who[2]: state},
                PoolState(system=who[0], pool=who[1], closed_through=before),  # type: ignore[arg-type]  # who[0] is the record's System
            )
            state = next((r for r in outcome.records if r.id == who[2]), state)
        return state

    def member_at(self, who: PlayerKey, key: bytes) -> bytes | None:
        history = self.histories.get(who)
        if history:
            i = first_at_or_after(history, key)
            if i < len(history) and history[i][:KEY_LEN] == key:
                return history[i]
        return None

    # ------------------------------------------------------------------ applying

    def process(
        self,
        message: InputMessage,
        registry: Registry,
        source_id: str,
        arrival: int | None = None,
        max_cascade: int = 0,
    ) -> Applied | Duplicate:
        """Apply one message and commit its effect (raises Rejected: then nothing changed).
        `arrival` orders events with equal dates (the service: the entry id); `max_cascade`
        (0: none) is the most later events one message may re-rate."""
        if arrival is None:
            self.arrivals += 1
            arrival = self.arrivals
        else:
            self.arrivals = max(self.arrivals, arrival)
        if isinstance(message, PeriodClosed):
            return self._close(message, registry, source_id)
        if isinstance(message, EventFinished):
            key, digest = marker_key(message), content_digest(message)
            if self._seen(key, digest, message.event_id):
                return Duplicate(key)
            engine = engine_for(message, registry)
            order = order_key(message, arrival)
            domain = ordering_domain(message.system, message.pool or "")
            tail = self.tail(domain)
            if tail is None or order > tail:
                outputs = self._append(message, engine, order, domain, source_id)
                rerated = 0
            else:
                outputs, rerated = self._cascade(
                    message.event_id,
                    None,
                    message,
                    order,
                    "inserted",
                    registry,
                    source_id,
                    max_cascade,
                )
            self.markers[key] = self.changed_markers[key] = digest
            return Applied(outputs, key, digest, rerated)
        return self._revise(message, registry, source_id, max_cascade)

    def _seen(self, key: str, digest: str, event_id: str | None) -> bool:
        """True when this content was applied already; Rejected (conflict) for other content."""
        known = self.markers.get(key)
        if known is None:
            return False
        if known == digest:
            return True
        hint = " (to change a rated event, publish event.corrected/v1)" if event_id else ""
        raise Rejected(
            "conflict", f"{key} was already applied with other content{hint}", "$", event_id
        )

    def _close(
        self, message: PeriodClosed, registry: Registry, source_id: str
    ) -> Applied | Duplicate:
        """A period's close: the engine decides whether it is due, from the pool's records
        and the end date of the pool's last rated event (its timeline's tail)."""
        key, digest = marker_key(message), content_digest(message)
        if self._seen(key, digest, None):
            return Duplicate(key)
        engine = engine_for(message, registry)
        pool = message.pool or ""
        tail = self.tail(ordering_domain(message.system, pool))
        try:
            outcome = engine.close_period(
                message,
                dict(self.records.get((message.system, pool), {})),
                self.pool_state(message.system, pool),
                end_date_of(tail) if tail else None,
            )
        except EngineRejection as exc:
            raise Rejected(exc.reason, exc.message, exc.path) from None
        self._store_records(outcome.records)
        self.pools[(message.system, pool)] = self.changed_pools[(message.system, pool)] = (
            outcome.pool
        )
        self.markers[key] = self.changed_markers[key] = digest
        outputs = _list_outputs(message, engine, outcome.results, source_id)
        for output in outputs:
            self._publish(output, list_key(message.period))
        return Applied(outputs, key, digest)

    def _inputs(
        self, event: EventFinished, engine: Engine, before: Mapping[PlayerKey, PlayerRecord]
    ) -> EventInput:
        """The engine's input: the players' records as given by `before` (None: unrated)
        and, where the pool is seeded from another, their records there."""
        pool = event.pool or ""
        records = {}
        for p in event.players:
            state = before.get((event.system, pool, p.id)) or unrated_record(
                event.system, pool, p.id
            )
            current = self.record(event.system, pool, p.id)  # a state from a history has no name
            records[p.id] = _named(
                _named(state, current.name if current is not None else None), p.name
            )
        seed_pool = engine.seed_pools.get(pool)
        seeds: dict[str, PlayerRecord] = {}
        if seed_pool is not None:
            for p in event.players:
                seed = before.get((event.system, seed_pool, p.id))
                if seed is not None:
                    seeds[p.id] = seed
        return EventInput(event, records, self.pool_state(event.system, pool), seeds)

    def _append(
        self, event: EventFinished, engine: Engine, key: bytes, domain: str, source_id: str
    ) -> list[RatingsUpdated]:
        """Rate an event that comes last in date order: the players' current records. Each
        player's record before it is appended to their history (the hot path: no search)."""
        system, pool = event.system, event.pool or ""
        seed_pool = engine.seed_pools.get(pool)
        current = self.records.get((system, pool), {})
        records = {}
        for p in event.players:
            record = current.get(p.id)
            if record is None:
                record = unrated_record(system, pool, p.id)
            records[p.id] = _named(record, p.name) if p.name else record
        seeds: dict[str, PlayerRecord] = {}
        if seed_pool is not None:
            seeded = self.records.get((system, seed_pool), {})
            seeds = {p.id: seeded[p.id] for p in event.players if p.id in seeded}
        data = EventInput(event, records, self.pool_state(system, pool), seeds)
        results, changed = _rated(engine, data, event.event_id, own=True)
        histories, history_changes = self.histories, self.history_changes
        for pid, record in records.items():
            who = (system, pool, pid)
            member = key + pack_state(record)
            history = histories.get(who)
            if history is None:
                histories[who] = [member]
            elif not history or member > history[-1]:
                history.append(member)
            else:
                self._history_change(who).add(member)
                continue
            changes = history_changes.get(who)
            if changes is None:
                changes = history_changes[who] = MemberChanges()
            changes.add(member)
        self._store_records(changed)
        self._timeline_change(domain).add(timeline_member(key, event.event_id))
        self._archive(Archived(key, event, 0, results_digest(results)))
        output = event_output(event, engine, results, source_id, records)
        self._publish(output, key)
        return [output]

    def _revise(
        self,
        message: EventCorrected | EventWithdrawn,
        registry: Registry,
        source_id: str,
        max_cascade: int,
    ) -> Applied | Duplicate:
        """A correction or withdrawal of an archived event."""
        marker = marker_key(message)
        archived = self.archives.get(message.event_id)
        if archived is None:
            rated = (
                " (it was rated before the archive began: re-rate offline and import)"
                if marker in self.markers
                else ""
            )
            raise Rejected(
                "invalid",
                f"event {message.event_id!r} is not a rated event of this stream{rated}",
                "$.event_id",
                message.event_id,
            )
        old = archived.event
        for field in ("system", "pool"):
            if getattr(message, field) != getattr(old, field):
                raise Rejected(
                    "invalid",
                    f"event {message.event_id!r} was rated in {field} {getattr(old, field)!r};"
                    f" a correction cannot change its {field}",
                    f"$.{field}",
                    message.event_id,
                )
        if isinstance(message, EventWithdrawn):
            if archived.withdrawn:
                return Duplicate(marker)
            outputs, rerated = self._cascade(
                message.event_id,
                archived,
                None,
                None,
                "withdrawn",
                registry,
                source_id,
                max_cascade,
            )
        else:
            event = as_finished(message)
            if not archived.withdrawn and event == old:
                return Duplicate(marker)
            engine_for(event, registry)
            key = order_key(event, int.from_bytes(archived.key[9:], "big"))  # its arrival stays
            outputs, rerated = self._cascade(
                message.event_id,
                archived,
                event,
                key,
                "corrected",
                registry,
                source_id,
                max_cascade,
            )
        return Applied(outputs, marker, self.markers.get(marker, ""), rerated)

    def _check_open(self, event: EventFinished, what: str) -> None:
        """FIDE: nothing in a closed period is inserted, corrected or withdrawn."""
        closed = self.pool_state(event.system, event.pool or "").closed_through
        if closed is not None and event.period is not None and event.period <= closed:
            raise Rejected(
                "period_closed",
                f"{what} period {event.period}, which is closed (closed through {closed})",
                "$.period",
                event.event_id,
            )

    def _cascade(  # noqa: C901
        self,
        event_id: str,
        old: Archived | None,
        new: EventFinished | None,
        new_key: bytes | None,
        cause: str,
        registry: Registry,
        source_id: str,
        max_cascade: int,
    ) -> tuple[list[RatingsUpdated], int]:
        """Re-rate from the earliest place the change touches (docs/design/guarantees.md "Order").

        Walk the domain's events from there in date order, with `dirty` holding each player
        whose state differs from the stored one. An event is re-rated when it is the changed
        one or one of its players (or their seed records) is dirty; a dirty player whose
        state equals the stored state before an event is clean again. Everything read is
        the stored state; what changes is collected and committed at the end, so a
        rejection changes nothing.
        """
        old_key = old.key if old is not None and not old.withdrawn else None
        if old is not None and old_key:
            self._check_open(old.event, "the event is in")
        if new is not None:
            self._check_open(
                new, "it would move the event into" if old is not None else "the event is in"
            )
        start = min(k for k in (old_key, new_key) if k)
        domain = ordering_domain((new or old.event).system, (new or old.event).pool or "")  # type: ignore[union-attr]  # old is set when new is None
        timeline = self.timelines.get(domain, [])
        steps: list[tuple[bytes, int, str]] = []  # (key, 0 removal / 1 event, event id)
        for entry in timeline[first_at_or_after(timeline, start) :]:
            at, at_id = split_member(entry)
            steps.append((at, 0 if at_id.decode() == event_id else 1, at_id.decode()))
        later = len(steps) - (1 if old_key else 0)
        if max_cascade and later > max_cascade:
            raise Rejected(
                "too_large",
                f"this {cause} correction re-rates {later} later events of {domain}, over the"
                f" limit of {max_cascade} (RATING_MAX_CASCADE_EVENTS)",
                "$",
                event_id,
            )
        if new is not None:
            steps.append((new_key, 1, event_id))  # type: ignore[arg-type]  # new_key is set with new
        steps.sort(key=lambda step: (step[0], step[1]))

        dirty: dict[PlayerKey, PlayerRecord] = {}
        history: dict[PlayerKey, MemberChanges] = {}
        archives: dict[str, Archived] = {}
        outputs: list[RatingsUpdated] = []
        published: list[
            tuple[RatingsUpdated, bytes, Iterable[str]]
        ] = []  # (message, key, players it drops)
        revision_cause = Cause(type=cause, event_id=event_id)  # type: ignore[arg-type]  # cause is one of Cause.type's values
        rerated = 0
        if cause == "withdrawn":
            assert old is not None
            engine = engine_for(old.event, registry)
            outputs.append(
                event_output(
                    old.event,
                    engine,
                    [],
                    source_id,
                    revision=old.revision + 1,
                    cause=revision_cause,
                    withdrawn=True,
                )
            )
            published.append((outputs[-1], old.key, [p.id for p in old.event.players]))
            archives[event_id] = Archived(old.key, old.event, old.revision + 1, b"", True)
        for key, kind, eid in steps:
            if kind == 0:  # the changed event's old place: it no longer counts there
                assert old is not None
                for p in old.event.players:
                    who: PlayerKey = (old.event.system, old.event.pool or "", p.id)
                    member = self.member_at(who, key)
                    if member is not None:
                        history.setdefault(who, MemberChanges()).remove(member)
                    if who not in dirty:
                        state = self._state_at(who, key, engine_for(old.event, registry))
                        if state is not None:
                            dirty[who] = state
                continue
            changed = eid == event_id
            archived = old if changed else self.archives[eid]
            event = new if changed else archived.event  # type: ignore[union-attr]  # archived is set when the event is not the changed one
            assert event is not None
            engine = engine_for(event, registry)
            pool = event.pool or ""
            seed_pool = engine.seed_pools.get(pool)
            touched = [
                (event.system, pl, p.id)
                for p in event.players
                for pl in ((pool, seed_pool) if seed_pool else (pool,))
            ]
            if not changed:
                for who in touched:
                    if who in dirty:
                        stored_state = self._state_at(who, key, engine)
                        if stored_state is not None and pack_state(stored_state) == pack_state(
                            dirty[who]
                        ):
                            del dirty[who]
                if not any(who in dirty for who in touched):
                    continue
                rerated += 1
            before: dict[PlayerKey, PlayerRecord] = {}
            for who in touched:
                state = dirty.get(who) or self._state_at(who, key, engine)
                if state is not None:
                    before[who] = state
            data = self._inputs(event, engine, before)
            results, records = _rated(engine, data, event_id, own=changed)
            after = {p.id: data.records[p.id] for p in event.players}
            after.update({r.id: r for r in records if r.pool == pool and r.system == event.system})
            for p in event.players:
                who = (event.system, pool, p.id)
                dirty[who] = after[p.id]
                member = key + pack_state(data.records[p.id])
                stored = None if changed else self.member_at(who, key)
                if stored != member:
                    changes = history.setdefault(who, MemberChanges())
                    if stored is not None:
                        changes.remove(stored)
                    changes.add(member)
            digest = results_digest(results)
            if changed and cause == "inserted":
                outputs.append(event_output(event, engine, results, source_id, data.records))
                published.append((outputs[-1], key, ()))
                archives[eid] = Archived(key, event, 0, digest)
            elif changed or digest != archived.digest:  # type: ignore[union-attr]  # archived is set when the event is not the changed one
                assert archived is not None
                revision = archived.revision + 1
                outputs.append(
                    event_output(
                        event,
                        engine,
                        results,
                        source_id,
                        data.records,
                        revision=revision,
                        cause=revision_cause,
                    )
                )
                dropped: Iterable[str] = (
                    {p.id for p in old.event.players} - {p.id for p in event.players}
                    if changed and old is not None
                    else ()
                )
                published.append((outputs[-1], key, dropped))
                archives[eid] = Archived(key, event, revision, digest)

        # Commit: nothing above changed the ledger.
        records = []
        for who, state in dirty.items():
            current = self.record(*who)
            if current is None or pack_state(current) != pack_state(state):
                records.append(state)
        self._store_records(records)
        for who, changes in history.items():
            mine = self._history_change(who)
            for member in changes.removed:
                mine.remove(member)
            for member in changes.added:
                mine.add(member)
        line = self._timeline_change(domain)
        if old_key:
            line.remove(timeline_member(old_key, event_id))
        if new_key:
            line.add(timeline_member(new_key, event_id))
        for archived in archives.values():
            self._archive(archived)
        for output, key, dropped in published:
            self._publish(output, key, dropped)
        return outputs, rerated

    # ------------------------------------------------------------------ writing

    def _store_records(self, records: Iterable[PlayerRecord]) -> None:
        previous, changed = self.previous_records, self.changed_records
        for record in records:
            pool = self.records.get((record.system, record.pool))
            if pool is None:
                pool = self.records[(record.system, record.pool)] = {}
            current = pool.get(record.id)
            if current is not None and record.name is None and current.name is not None:
                record = msgspec.structs.replace(
                    record, name=current.name
                )  # a state from a history has no name
            who = (record.system, record.pool, record.id)
            if who not in previous:
                previous[who] = current
            pool[record.id] = changed[who] = record

    def _publish(self, message: RatingsUpdated, key: bytes, dropped: Iterable[str] = ()) -> None:
        """Keep the read model's view of a published message: the event's last message and
        each player's history line (a player the event no longer has loses theirs)."""
        system, pool = message.system, message.pool
        entries, changed = self.entries, self.changed_entries
        if message.event_id is not None:
            self.results[message.event_id] = self.changed_results[message.event_id] = message
            for pid in dropped:
                who = (system, pool, pid)
                entries.get(who, {}).pop(message.event_id, None)
                changed.setdefault(who, {})[message.event_id] = None
        for pid, field, entry in entries_of(message):
            who = (system, pool, pid)
            value = pack_entry(key, entry)
            mine = entries.get(who)
            if mine is None:
                entries[who] = {field: value}
            else:
                mine[field] = value
            pending = changed.get(who)
            if pending is None:
                changed[who] = {field: value}
            else:
                pending[field] = value

    def history(self, system: str, pool: str, player_id: str) -> list[HistoryEntry]:
        """The player's history lines in date order (service/readmodel.py)."""
        return sorted_entries(self.entries.get((system, pool, player_id), {}).items())

    def _archive(self, archived: Archived) -> None:
        self.archives[archived.event.event_id] = self.changed_archives[archived.event.event_id] = (
            archived
        )

    def _timeline_change(self, domain: str) -> _SortedChanges:
        timeline = self.timelines.get(domain)
        if timeline is None:
            timeline = self.timelines[domain] = []
        changes = self.timeline_changes.get(domain)
        if changes is None:
            changes = self.timeline_changes[domain] = MemberChanges()
        return _SortedChanges(timeline, changes)

    def _history_change(self, who: PlayerKey) -> _SortedChanges:
        return _SortedChanges(
            self.histories.setdefault(who, []),
            self.history_changes.setdefault(who, MemberChanges()),
        )

    def all_records(self) -> list[PlayerRecord]:
        return [r for key in sorted(self.records) for _, r in sorted(self.records[key].items())]


class _SortedChanges:
    """Adds to / removes from one sorted member list, noting the change for the store."""

    __slots__ = ("members", "changes")

    def __init__(self, members: list[bytes], changes: MemberChanges):
        self.members = members
        self.changes = changes

    def add(self, member: bytes) -> None:
        members = self.members
        if not members or member > members[-1]:
            members.append(member)  # the in-order case: no search
        else:
            i = first_at_or_after(members, member)
            if i < len(members) and members[i] == member:
                return
            members.insert(i, member)
        self.changes.add(member)

    def remove(self, member: bytes) -> None:
        i = first_at_or_after(self.members, member)
        if i < len(self.members) and self.members[i] == member:
            del self.members[i]
        self.changes.remove(member)
