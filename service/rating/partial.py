"""A ledger read in part (D65): what a cascade's walk lacks, and what to read next.

For a late event, a correction or a withdrawal the service does not read the domain's whole
history: only the timeline from the place the change touches, the changed event and its
players (service/runtime/store.py `load_cascade`). The walk (service/rating/cascade.py) then
asks for more by raising `Missing`: the archives of the events its dirty players play in
next, and the records and histories of those events' players; the adapter reads them
(`load_missing`) and the walk goes on where it stopped. A later event that no dirty player
plays in is passed by its order key alone: a loaded player's history has a member at the
key of every event they play in, so the loaded histories say whether a dirty player is in
it without its archive.

Pure: bytes and records in, ids out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from schemas.events import EventFinished
from schemas.records import PlayerRecord
from service.engine.contract import Engine
from service.rating.projection import PlayerKey
from service.timeline import KEY_LEN, Archived, first_at_or_after, pack_state


class Read(NamedTuple):
    """What the lookahead reads of the ledger (MemoryLedger's own, and the walk's engines)."""

    archives: Mapping[str, Archived]
    histories: Mapping[PlayerKey, list[bytes]]
    state_at: Callable[[PlayerKey, bytes, Engine], PlayerRecord | None]
    engine_of: Callable[[EventFinished], Engine]


class Missing(Exception):
    """The walk stopped for want of these archives (event ids) and these players' records and
    histories (player ids): read them into the ledger, then apply again (it resumes). `at`:
    the order key of the step it stopped at; the walk only goes on from there, so the
    players' histories are needed from it on, not from the cascade's start (D137)."""

    def __init__(self, archives: list[str], players: list[str], at: bytes = b""):
        super().__init__(f"{len(archives)} archives and {len(players)} players to read")
        self.archives = archives
        self.players = players
        self.at = at


class PartialReads:
    """What a ledger read in part holds: the players whose records and histories from `start`
    are loaded (in every pool of the domain, `pools`), the order keys at which each loaded
    player has a history member, and the walk that stopped for want of more (`paused`)."""

    __slots__ = ("start", "pools", "players", "at", "paused", "stops", "_complete")

    def __init__(self, start: bytes, pools: Iterable[tuple[str, str]]):
        self.start = start
        self.pools = tuple(pools)
        self.players: set[str] = set()
        self.at: dict[bytes, list[str]] = {}
        self.paused: Any = None  # service/rating/cascade.py's Walk
        self.stops = 0  # how many times the walk asked for more (a count for tests and logs)
        # The archived events whose players are all loaded (by id(event), the event held): a
        # loaded player stays loaded, so `lacks` tests each event until it is complete.
        self._complete: dict[int, EventFinished] = {}

    def made(self) -> tuple[list, list]:
        """The messages and archived events the paused walk made so far (none: no walk is
        paused). The commit writes them unless the walk is begun again (another try): a
        runtime may encode them while it reads (D136)."""
        walk = self.paused
        if walk is None:
            return [], []
        return list(walk.outputs), list(walk.archives.values())

    def loaded(self, ids: Iterable[str], histories: Mapping[PlayerKey, list[bytes]]) -> None:
        """The players `ids` were read (their histories are in `histories`)."""
        for pid in ids:
            if pid in self.players:
                continue
            self.players.add(pid)
            for system, pool in self.pools:
                for member in histories.get((system, pool, pid), ()):
                    self.at.setdefault(member[:KEY_LEN], []).append(pid)

    def dirty_at(self, key: bytes, dirty: Mapping[PlayerKey, Any]) -> bool:
        """Whether a dirty player plays in the event at `key` (a player's record in any pool
        of the domain counts: an event may read its seed pool's)."""
        pools = self.pools
        for pid in self.at.get(key, ()):
            for system, pool in pools:
                if (system, pool, pid) in dirty:
                    return True
        return False

    def lacks(self, archived: Archived) -> bool:
        """Whether a player of the event is not loaded."""
        event = archived.event
        if self._complete.get(id(event)) is event:
            return False
        players = self.players
        if any(p.id not in players for p in event.players):
            return True
        self._complete[id(event)] = event
        return False

    def missing(
        self,
        step: tuple[bytes, str],
        dirty: Mapping[PlayerKey, PlayerRecord],
        events: Mapping[bytes, str],
        read: Read,
    ) -> Missing:
        """What to read before the walk goes on from `step` (its order key and event id): its
        archive or its players, and, looking ahead, for each dirty player the event they play
        in next (`events`: the walk's later events by order key): its archive when it is not
        read, its players when it is and the player is still dirty there (a dirty player's
        state does not change before their next event, so this is the walk's own test)."""
        self.stops += 1
        key, event_id = step
        archives: set[str] = set()
        players: set[str] = set()
        archived = read.archives.get(event_id)
        if archived is None:
            archives.add(event_id)
        else:
            players.update(p.id for p in archived.event.players)
        for who, state in dirty.items():
            at = self._next(who[2], key, events, read.histories)
            if at is None:
                continue
            archived = read.archives.get(events[at])
            if archived is None:
                archives.add(events[at])
            elif self.lacks(archived):
                stored = read.state_at(who, at, read.engine_of(archived.event))
                if stored is None or pack_state(stored) != pack_state(state):
                    players.update(p.id for p in archived.event.players)
        return Missing(sorted(archives), sorted(players - self.players), key)

    def _next(
        self,
        pid: str,
        key: bytes,
        events: Mapping[bytes, str],
        histories: Mapping[PlayerKey, list[bytes]],
    ) -> bytes | None:
        """The order key of the first of `events` at or after `key` that the player plays in
        (in any pool of the domain)."""
        found = None
        for system, pool in self.pools:
            history = histories.get((system, pool, pid))
            if not history:
                continue
            for member in history[first_at_or_after(history, key) :]:
                at = member[:KEY_LEN]
                if found is not None and at >= found:
                    break
                if at in events:
                    found = at
                    break
        return found
