"""The unit of work: a pool's state as one commit (or the offline `rate`) sees it, and the
change set of what the messages applied to it changed, which is what the service writes.

The store reads into a ledger with the `load_*` methods and writes what `changes` holds (or,
for a replay, `whole_state()`); the use case (service/rating/apply.py) reads and changes it
with the others. Nothing here knows a rule or does I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import msgspec

from schemas.ratings import RatingsUpdated
from schemas.reads import HistoryEntry
from schemas.records import PlayerRecord, PoolState
from schemas.systems import BY_NAME
from service.closeindex import due_members
from service.engine.contract import Engine
from service.rating.partial import PartialReads
from service.rating.projection import PlayerKey, Projection
from service.timeline import (
    KEY_LEN,
    Archived,
    first_at_or_after,
    pack_state,
    split_member,
    unpack_state,
)


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


class Changes:
    """What commits changed since the ledger was made: the records (with each one's state
    before, for the indexes), pool states, markers, archives, timelines' and histories'
    members, and the read model's messages and history lines."""

    __slots__ = (
        "records",
        "previous_records",
        "pools",
        "markers",
        "archives",
        "timelines",
        "histories",
        "results",
        "published",
        "entries",
        "names",
    )

    def __init__(self) -> None:
        self.records: dict[PlayerKey, PlayerRecord] = {}
        self.previous_records: dict[PlayerKey, PlayerRecord | None] = {}
        self.pools: dict[tuple[str, str], PoolState] = {}
        self.markers: dict[str, str] = {}
        self.archives: dict[str, Archived] = {}
        self.timelines: dict[str, MemberChanges] = {}
        self.histories: dict[PlayerKey, MemberChanges] = {}
        self.results: dict[str, RatingsUpdated] = {}
        # Every event message published, in order: two revisions of one event in one commit
        # are both kept in the revisions hash (D101), though `results` keeps the last.
        self.published: list[RatingsUpdated] = []
        self.entries: dict[PlayerKey, dict[str, bytes | None]] = {}
        self.names: dict[str, str] = {}  # event id -> name (D122)


def _all_added(members: Iterable[bytes]) -> MemberChanges:
    changes = MemberChanges()
    changes.added.update(members)
    return changes


class MemoryLedger:
    """The store kept in memory: the offline `rate` command's twin of the Redis store, and
    the working set of one service commit (then it holds only what the commit read).

    - `records[(system, pool)][id]`: the current records; `pools`: pool states; `markers`.
    - `timelines[domain]`: sorted `key + event_id` members; `archives[event_id]`: Archived.
    - `histories[(system, pool, id)]`: sorted `key + packed record before the event`.
    - `projection`: the read model's view (service/rating/projection.py).
    - `changes`: what was changed since the ledger was made (Changes).
    - `partial`: None when the ledger holds all the commit may need; for a cascade read in
      part (D65), what it holds (service/rating/partial.py).
    - `closing`: None, or (`track_closing`, a streamed load's resident ledger, D142) per pool
      whose close changes only the players with games (D60: FIDE), the ids of the records a
      close must read.
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
        self.changes = Changes()
        self.projection = Projection(
            self.changes.results, self.changes.entries, self.changes.names, self.changes.published
        )
        self.partial: PartialReads | None = None
        self._states: dict[tuple[PlayerKey, bytes], PlayerRecord] = {}
        self.closing: dict[tuple[str, str], set[str]] | None = None
        self.load_records(records)

    # ------------------------------------------------------------------ loading (the store)

    def load_records(self, records: Iterable[PlayerRecord]) -> None:
        closing = self.closing
        for record in records:
            self.records.setdefault((record.system, record.pool), {})[record.id] = record
            if closing is not None and BY_NAME[record.system].paged_close:
                _closing_ids(closing, record).add(record.id)

    def track_closing(self) -> None:
        """Keep, from now on, the close index in memory (D142): for each pool whose close
        changes only the players with games in the period (D60's paged close, FIDE), the ids
        of every record with members in the close index (service/closeindex.py: games in an
        open period, pooled games, an imported K), and of any record loaded or stored since
        the pool's last close. A close then reads those records only (`closing_records`):
        what D60's close index gives the service's paged close."""
        self.closing = {
            where: {pid for pid, record in records.items() if due_members(record)}
            for where, records in self.records.items()
            if BY_NAME[where[0]].paged_close
        }

    def load_pool(self, state: PoolState) -> None:
        self.pools[(state.system, state.pool)] = state

    def load_timeline(self, domain: str, members: Iterable[bytes]) -> None:
        """The domain's timeline members as stored (all of them, or the end the commit reads)."""
        self.timelines[domain] = list(members)

    def load_archive(self, archived: Archived) -> None:
        self.archives[archived.event.event_id] = archived

    def load_history(self, who: PlayerKey, members: Iterable[bytes]) -> None:
        self.histories[who] = list(members)

    # ------------------------------------------------------------------ reading

    def record(self, system: str, pool: str, player_id: str) -> PlayerRecord | None:
        return self.records.get((system, pool), {}).get(player_id)

    def pool_state(self, system: str, pool: str) -> PoolState:
        return self.pools.get((system, pool)) or PoolState(system=system, pool=pool)  # type: ignore[arg-type]  # system is a System (the callers' messages and records)

    def tail(self, domain: str) -> bytes | None:
        """The order key of the last event of the domain's timeline."""
        timeline = self.timelines.get(domain)
        return timeline[-1][:KEY_LEN] if timeline else None

    def stored_state(self, who: PlayerKey, key: bytes) -> PlayerRecord | None:
        """The player's state at `key` as stored: the record before their first event at or
        after `key`, else their current record (None: never seen)."""
        history = self.histories.get(who)
        if history:
            i = first_at_or_after(history, key)
            if i < len(history):
                return self._unpacked(who, history[i])
        return self.record(*who)

    def _unpacked(self, who: PlayerKey, member: bytes) -> PlayerRecord:
        """A history member's state (each unpacked once: a cascade reads a state at an event
        for the event, its players' cleaning and the next event's)."""
        found = self._states.get((who, member))
        if found is None:
            found = self._states[(who, member)] = unpack_state(*who, split_member(member)[1])
        return found

    def forget_states(self) -> None:
        """Drop the unpacked states (a cascade's: the next one unpacks its own)."""
        self._states.clear()

    def packed_after(self, who: PlayerKey, key: bytes) -> bytes | None:
        """The player's state after their event at `key` as stored, packed (pack_state): the
        record before their next event after it, else their current record (None: never
        seen)."""
        history = self.histories.get(who)
        if history:
            i = first_at_or_after(history, key)
            if i < len(history) and history[i][:KEY_LEN] == key:
                i += 1
            if i < len(history):
                return history[i][KEY_LEN:]
        record = self.record(*who)
        return pack_state(record) if record is not None else None

    def member_and_after(self, who: PlayerKey, key: bytes) -> tuple[bytes | None, bytes | None]:
        """`member_at(who, key)` and `packed_after(who, key)`, by one search."""
        history = self.histories.get(who)
        if history:
            i = first_at_or_after(history, key)
            n = len(history)
            member = None
            if i < n and history[i][:KEY_LEN] == key:
                member = history[i]
                i += 1
            if i < n:
                return member, history[i][KEY_LEN:]
        else:
            member = None
        record = self.record(*who)
        return member, pack_state(record) if record is not None else None

    def state_at(self, who: PlayerKey, key: bytes, engine: Engine) -> PlayerRecord | None:
        """The player's stored state at `key` with the period closings it missed applied
        (`Engine.catch_up`): where a re-rate starts from."""
        state = self.stored_state(who, key)
        if state is None:
            return None
        return engine.catch_up(state, self.pool_state(who[0], who[1]))

    def member_at(self, who: PlayerKey, key: bytes) -> bytes | None:
        """The player's history member at exactly `key` (None: they have none there)."""
        history = self.histories.get(who)
        if history:
            i = first_at_or_after(history, key)
            if i < len(history) and history[i][:KEY_LEN] == key:
                return history[i]
        return None

    def history(self, system: str, pool: str, player_id: str) -> list[HistoryEntry]:
        """The player's history lines in date order (service/readmodel.py)."""
        return self.projection.history(system, pool, player_id)

    def closing_records(self, system: str, pool: str) -> dict[str, PlayerRecord]:
        """The records a close of the pool reads: every one, or with `track_closing` those
        that may have members in the close index (a superset of those that do, D142)."""
        records = self.records.get((system, pool), {})
        ids = self.closing.get((system, pool)) if self.closing is not None else None
        if ids is None:
            return dict(records)
        return {pid: records[pid] for pid in ids if pid in records}

    def closed(self, system: str, pool: str) -> None:
        """After a close of the pool: keep in `closing` only the records still in the close
        index (D142)."""
        if self.closing is None or (system, pool) not in self.closing:
            return
        records = self.records.get((system, pool), {})
        self.closing[(system, pool)] = {
            pid for pid in self.closing[(system, pool)] if due_members(records.get(pid))
        }

    def all_records(self) -> list[PlayerRecord]:
        return [r for key in sorted(self.records) for _, r in sorted(self.records[key].items())]

    # ------------------------------------------------------------------ changing

    def store_records(self, records: Iterable[PlayerRecord]) -> None:
        """Keep new records (a state from a history has no name nor labels: the current
        record's stay, D35)."""
        previous, changed = self.changes.previous_records, self.changes.records
        closing = self.closing
        for record in records:
            pool = self.records.get((record.system, record.pool))
            if pool is None:
                pool = self.records[(record.system, record.pool)] = {}
            current = pool.get(record.id)
            if current is not None:
                record = with_labels(record, current)
            who = (record.system, record.pool, record.id)
            if who not in previous:
                previous[who] = current
            pool[record.id] = changed[who] = record
            if closing is not None and BY_NAME[record.system].paged_close:
                _closing_ids(closing, record).add(record.id)

    def set_pool(self, state: PoolState) -> None:
        self.pools[(state.system, state.pool)] = self.changes.pools[(state.system, state.pool)] = (
            state
        )

    def set_marker(self, key: str, digest: str) -> None:
        self.markers[key] = self.changes.markers[key] = digest

    def archive(self, archived: Archived) -> None:
        event_id = archived.event.event_id
        self.archives[event_id] = self.changes.archives[event_id] = archived

    def publish(self, message: RatingsUpdated, key: bytes, dropped: Iterable[str] = ()) -> None:
        """Keep a published message in the read model (Projection.publish)."""
        self.projection.publish(message, key, dropped)

    def timeline_change(self, domain: str) -> SortedChanges:
        timeline = self.timelines.get(domain)
        if timeline is None:
            timeline = self.timelines[domain] = []
        changes = self.changes.timelines.get(domain)
        if changes is None:
            changes = self.changes.timelines[domain] = MemberChanges()
        return SortedChanges(timeline, changes)

    def history_change(self, who: PlayerKey) -> SortedChanges:
        return SortedChanges(
            self.histories.setdefault(who, []),
            self.changes.histories.setdefault(who, MemberChanges()),
        )

    def append_histories(
        self, system: str, pool: str, key: bytes, before: Mapping[str, PlayerRecord]
    ) -> None:
        """Each player's record before an event at `key` that comes last in date order, added
        to their history (the hot path: no search when it is the last member)."""
        histories, history_changes = self.histories, self.changes.histories
        for pid, record in before.items():
            who = (system, pool, pid)
            member = key + pack_state(record)
            history = histories.get(who)
            if history is None:
                histories[who] = [member]
            elif not history or member > history[-1]:
                history.append(member)
            else:
                self.history_change(who).add(member)
                continue
            changes = history_changes.get(who)
            if changes is None:
                changes = history_changes[who] = MemberChanges()
            changes.add(member)

    def written(self) -> None:
        """The change set is in the store: forget it and what only it needed (a streamed
        load's chunk, D115). Keep the records, pool states and markers, and each timeline's
        last member (where the next event in date order goes); drop the histories, archives,
        timelines' other members and the read model's messages and lines, which later events
        in date order never read (a late event or a revision reads them from the store)."""
        self.changes = Changes()
        self.projection = Projection(self.changes.results, self.changes.entries, self.changes.names)
        self.histories = {}
        self.archives = {}
        self.timelines = {d: members[-1:] for d, members in self.timelines.items()}
        self._states.clear()

    def whole_state(self) -> Changes:
        """Everything the ledger holds, as a change set (what a replay writes to fresh keys)."""
        whole = Changes()
        for (system, pool), records in sorted(self.records.items()):
            for pid, record in sorted(records.items()):
                whole.records[(system, pool, pid)] = record
                whole.previous_records[(system, pool, pid)] = None
        whole.pools.update(self.pools)
        whole.markers.update(sorted(self.markers.items()))
        whole.archives.update(sorted(self.archives.items()))
        for domain, members in self.timelines.items():
            whole.timelines[domain] = _all_added(members)
        for who, members in self.histories.items():
            if members:
                whole.histories[who] = _all_added(members)
        whole.results.update(sorted(self.projection.results.items()))
        whole.names.update(sorted(self.projection.names.items()))
        for who, fields in self.projection.entries.items():
            if fields:
                whole.entries[who] = dict(fields)
        return whole


class SortedChanges:
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


def _closing_ids(closing: dict[tuple[str, str], set[str]], record: PlayerRecord) -> set[str]:
    ids = closing.get((record.system, record.pool))
    if ids is None:
        ids = closing[(record.system, record.pool)] = set()
    return ids


LABELS = ("name", "titles", "federation", "sex")  # what a state from a history does not hold


def with_labels(record: PlayerRecord, current: PlayerRecord) -> PlayerRecord:
    """`record` with the name and labels of `current` that it lacks (D35)."""
    missing = {
        label: getattr(current, label)
        for label in LABELS
        if not getattr(record, label) and getattr(current, label)
    }
    return msgspec.structs.replace(record, **missing) if missing else record
