"""A cascade's large values encoded ahead, while Redis reads what its walk stopped for
(D136): the messages' JSON for the output stream, the messages packed as `{S}:results`
keeps them and the archived events as `{S}:events` does.

Each of these is made once per try of a commit: the JSON by `store.encode`, the results by
`readmodel.pack_message` (MessagePack, deflated by service/compact.py), the archives by
`timeline.encode_archived`. For the bench's correction that is 27 MB of JSON (~0.06 s),
432 revisions of ~45 kB of MessagePack deflated (~0.2 s) and 436 archives (~0.03 s), all
made after the walk. Each time the walk stops to read, the event loop waits for Redis: the
values of the messages and archives the walk made so far are made then, one at a time,
until the read is done (`while_reading`). `json`, `packed` and `archived` give them, or make
one not made yet there and then. The bytes are the encoders' own: only when they run changes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from schemas.ratings import RatingsUpdated
from service.readmodel import pack_message
from service.runtime.store import encode
from service.timeline import Archived, encode_archived

_Made = dict[
    int, tuple[Any, bytes]
]  # id(value) -> (value, bytes): the value is held, so its id stays its own


def _get(made: _Made, value: Any, make: Callable[[Any], bytes]) -> bytes:
    found = made.get(id(value))
    if found is not None and found[0] is value:
        return found[1]
    return make(value)


class PackAhead:
    """One try's messages and archives, encoded ahead while Redis reads."""

    __slots__ = ("_json", "_packed", "_archived")

    def __init__(self) -> None:
        self._json: _Made = {}
        self._packed: _Made = {}
        self._archived: _Made = {}

    def _todo(
        self, messages: Iterable[RatingsUpdated], archives: Iterable[Archived]
    ) -> Iterator[tuple[_Made, Any, Callable[[Any], bytes]]]:
        """What is not made yet: the messages' JSON, then their packing, then the archives."""
        messages = list(messages)
        for made, values, make in (
            (self._json, messages, encode),
            (self._packed, messages, pack_message),
            (self._archived, archives, encode_archived),
        ):
            for value in values:
                if id(value) not in made:
                    yield made, value, make

    async def while_reading(
        self,
        messages: Iterable[RatingsUpdated],
        archives: Iterable[Archived],
        reading: asyncio.Future,
    ) -> None:
        """Make the values of `messages` and `archives` not made yet, one at a time, letting
        the event loop run between two, until `reading` is done."""
        for made, value, make in self._todo(messages, archives):
            if reading.done():
                return
            made[id(value)] = (value, make(value))
            await asyncio.sleep(0)

    def json(self, message: RatingsUpdated) -> bytes:
        """`store.encode(message)`: made ahead, or here."""
        return _get(self._json, message, encode)

    def packed(self, message: RatingsUpdated) -> bytes:
        """`pack_message(message)`: made ahead, or here."""
        return _get(self._packed, message, pack_message)

    def archived(self, archived: Archived) -> bytes:
        """`encode_archived(archived)`: made ahead, or here."""
        return _get(self._archived, archived, encode_archived)
