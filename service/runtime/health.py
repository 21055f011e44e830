"""Whether the service is live and ready: the checks behind `/health/live` and
`/health/ready` (served by `service/web/`), also used by the periodic group watcher.

    live   the process's event loop answers
    ready  Redis answers a PING within a second, nothing holds the replica off consuming
           (`unready`: a Redis check that refuses the server, D25), and every store it
           serves has its identity record (`stores`: storegate.py, D17); else 503 with the
           reason
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import msgspec

from service.runtime.metrics import Metrics
from service.runtime.settings import redact_error

PING_TIMEOUT = 1.0


class Live(msgspec.Struct, frozen=True):
    status: str = "live"


class Ready(msgspec.Struct, frozen=True, omit_defaults=True):
    """`status` ready or unready; `redis` ok, or why Redis is not answering; `stores` (only
    when something is wrong) why a store is not served."""

    status: str
    redis: str
    stores: str | None = None


class Health:
    """Asks Redis each time it is asked; keeps the `rating_redis_up` gauge."""

    def __init__(self, client: Any, metrics: Metrics, redis_url: str = ""):
        self.client = client
        self.metrics = metrics
        self.redis_url = redis_url
        # Why this replica holds off consuming though Redis answers, by who said so
        # (redischecks.py); while any, it is not ready and its subscribers do not read.
        self.unready: dict[str, str] = {}
        self.stores: Callable[[], str | None] = lambda: None  # storegate.StoreGate.problem

    async def redis_answers(self) -> str | None:
        """None when Redis answers a PING within a second, else why not. The PING runs in
        the caller's task (asyncio.timeout, not wait_for): on Python 3.11 a wait_for cancelled
        from outside (a shutdown) cancels its inner task and leaves the error that task ends
        with (the connection closed under it) unretrieved, logged as "Task exception was never
        retrieved" with a traceback."""
        try:
            async with asyncio.timeout(PING_TIMEOUT):
                await self.client.ping()
        except Exception as exc:  # any failure means not ready; say which
            task = asyncio.current_task()
            if task is not None and task.cancelling():  # stopped: the error is the stop's
                raise asyncio.CancelledError from exc
            self.metrics.redis_up.set(0)
            text = redact_error(exc, self.redis_url)
            return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
        self.metrics.redis_up.set(1)
        return None

    async def ready(self) -> Ready:
        problem = await self.redis_answers()
        if problem is not None:
            return Ready(status="unready", redis=problem)
        if self.unready:
            return Ready(status="unready", redis="; ".join(self.unready.values()))
        stores = self.stores()
        if stores is not None:
            return Ready(status="unready", redis="ok", stores=stores)
        return Ready(status="ready", redis="ok")
