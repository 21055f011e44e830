"""The read model's view of what a ledger published (service/readmodel.py encodes it): each
event's last message and each player's history lines, with what changed for the store."""

from __future__ import annotations

from collections.abc import Iterable

from schemas.ratings import RatingsUpdated
from schemas.reads import HistoryEntry
from service.readmodel import entries_of, list_field, pack_entry, sorted_entries

PlayerKey = tuple[str, str, str]  # (system, pool, player id)


class Projection:
    """`results[event_id]`: the last message published for the event; `entries[(system, pool,
    id)][field]`: the player's history lines (`key + packed entry`); `names[event_id]`: the
    event's name, which the lines leave out (D122). What changes is noted in
    `changed_results`, `changed_entries` (None: a line removed) and `changed_names`, the
    ledger's change set's maps."""

    __slots__ = (
        "results",
        "entries",
        "names",
        "changed_results",
        "changed_entries",
        "changed_names",
        "published",
    )

    def __init__(
        self,
        changed_results: dict[str, RatingsUpdated],
        changed_entries: dict[PlayerKey, dict[str, bytes | None]],
        changed_names: dict[str, str],
        published: list[RatingsUpdated] | None = None,
    ) -> None:
        self.results: dict[str, RatingsUpdated] = {}
        self.entries: dict[PlayerKey, dict[str, bytes]] = {}
        self.names: dict[str, str] = {}
        self.changed_results = changed_results
        self.changed_entries = changed_entries
        self.changed_names = changed_names
        self.published = [] if published is None else published  # every event message, in order

    def publish(self, message: RatingsUpdated, key: bytes, dropped: Iterable[str] = ()) -> None:
        """Keep a published message: the event's last message and each player's history line
        (a player the event no longer has loses theirs)."""
        system, pool = message.system, message.pool
        entries, changed = self.entries, self.changed_entries
        if message.event_id is not None:
            self.results[message.event_id] = self.changed_results[message.event_id] = message
            self.published.append(message)
            if message.name is not None and self.names.get(message.event_id) != message.name:
                self.names[message.event_id] = message.name
                self.changed_names[message.event_id] = message.name
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

    def withdraw_list(self, system: str, pool: str, period: str, player_ids: Iterable[str]) -> None:
        """A reopened period's list no longer counts: each player's line of it goes."""
        field = list_field(period)
        for pid in player_ids:
            who = (system, pool, pid)
            self.entries.get(who, {}).pop(field, None)
            self.changed_entries.setdefault(who, {})[field] = None

    def history(self, system: str, pool: str, player_id: str) -> list[HistoryEntry]:
        """The player's history lines in date order (service/readmodel.py)."""
        return sorted_entries(self.entries.get((system, pool, player_id), {}).items(), self.names)
