"""The source the HTTP side reads from: the read model's interface (`service/runtime/queries.py`
implements it over Redis; the tests use a fake with the same methods)."""

from __future__ import annotations

import datetime as dt
from typing import Protocol

from schemas.ratings import RatingsUpdated
from schemas.reads import PlayerHistory, PlayerList, PlayerView, PoolList


class Reads(Protocol):
    async def pools(self) -> PoolList: ...

    async def players(
        self,
        system: str,
        pool: str,
        *,
        limit: int = 50,
        offset: int = 0,
        q: str | None = None,
        unrated: bool = False,
    ) -> PlayerList | None:
        """None: no players in that pool."""

    async def player(self, system: str, pool: str, player_id: str) -> PlayerView | None: ...

    async def history(self, system: str, pool: str, player_id: str) -> PlayerHistory | None: ...

    async def event(self, event_id: str) -> RatingsUpdated | None:
        """The last message published for the event."""

    async def last_update(self, system: str, pool: str) -> dt.datetime | None: ...
