"""An input stream's consumer group: created at the applied cursor, created again there when
lost, and observed for the gauges (docs/design/guarantees.md "Recovery",
docs/reference/metrics.md)."""

from __future__ import annotations

import time
from typing import Any

import structlog
from redis.exceptions import RedisError

from service.entryids import entry_age, entry_order
from service.runtime.deadletters import oldest_open_dead_letter
from service.runtime.keys import StreamKeys
from service.runtime.metrics import Metrics
from service.runtime.partitions import Partition
from service.runtime.replies import text

log = structlog.get_logger("rating.consumer")


class ConsumerGroup:
    """The consumer group `group` of one input stream, and the gauges read from it."""

    def __init__(
        self,
        client: Any,
        stream: str,
        group: str,
        keys: StreamKeys,
        partition: Partition,
        metrics: Metrics,
    ):
        self.client = client
        self.stream = stream
        self.group = group
        self.keys = keys
        self.partition = partition
        self.metrics = metrics

    async def ensure(self) -> None:
        """Create the consumer group, if it does not exist, at the applied cursor (at 0, the
        whole stream, when nothing was applied yet)."""
        cursor = await self._create()
        if cursor not in (None, "0"):
            log.warning(
                "consumer group created at the applied cursor",
                stream=self.stream,
                group=self.group,
                cursor=cursor,
            )

    async def recover(self) -> bool:
        """The consumer group was found missing while the service runs (XGROUP DESTROY,
        FLUSHALL, Redis restarted without its data): create it again where the applied
        cursor is, so that nothing is applied twice and nothing is skipped, and say so as an
        error. False when another replica was first."""
        cursor = await self._create()
        if cursor is None:
            return False
        self.metrics.groups_recreated.labels(self.stream).inc()
        where = {"stream": self.stream, "group": self.group}
        if cursor != "0":
            log.error(
                "consumer group lost, created again at the applied cursor", cursor=cursor, **where
            )
        else:
            log.error(
                "consumer group lost with the applied cursor, created again at the start of the stream: "
                "the store was probably wiped (FLUSHALL, or Redis restarted without its data), and the "
                "records and markers of what was rated before with it",
                **where,
            )
        return True

    async def _create(self) -> str | None:
        """XGROUP CREATE at the applied cursor (or 0), MKSTREAM; the id it was created at,
        None when the group exists already (BUSYGROUP)."""
        cursor = text(await self.client.get(self.keys.cursor)) or "0"
        try:
            await self.client.xgroup_create(self.stream, self.group, id=cursor, mkstream=True)
        except RedisError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
            return None
        return cursor

    async def delivered_until(self) -> str | None:
        """The last entry a catch-up applies up to: the consumer group's last delivered entry
        (the entries after it go to the owner's subscriber, bodies and all), or the stream's
        last entry when the group is missing; None for an empty stream."""
        async with self.client.pipeline(transaction=False) as pipe:
            pipe.xinfo_groups(self.stream)
            pipe.xrevrange(self.stream, count=1)
            groups, last = await pipe.execute(raise_on_error=False)
        if isinstance(last, Exception):
            raise last
        if not last:
            return None
        newest = text(last[0][0])
        for group in groups if not isinstance(groups, Exception) else []:
            if text(group["name"]) == self.group:
                delivered = text(group["last-delivered-id"]) or "0-0"
                if entry_order(delivered) == (0, 0):
                    return None  # nothing delivered yet
                return min(newest, delivered, key=entry_order)
        return newest

    async def observe(self) -> bool:
        """Update the gauges: the consumer group's (lag: entries not yet delivered; pending),
        the age of the oldest entry not yet applied, the dead-letter stream's length and the
        age of its oldest letter not redriven. False when the group does not exist."""
        async with self.client.pipeline(transaction=False) as pipe:
            pipe.xinfo_groups(self.stream)
            pipe.get(self.keys.cursor)
            pipe.xlen(self.partition.dead_letter)
            groups, cursor, dead_letters = await pipe.execute(raise_on_error=False)
        for reply in (cursor, dead_letters):
            if isinstance(reply, Exception):
                raise reply
        dead_letter_stream = self.partition.dead_letter
        self.metrics.dead_letters.labels(dead_letter_stream).set(int(dead_letters))
        open_letter = (
            await oldest_open_dead_letter(self.client, dead_letter_stream) if dead_letters else None
        )
        self.metrics.dead_letter_age.labels(dead_letter_stream).set(_age(open_letter))
        if isinstance(groups, Exception):
            if "no such key" in str(groups).lower():
                groups = []  # the stream is gone, and its group with it
            else:
                raise groups
        found = False
        for group in groups:
            name = text(group["name"])
            if name == self.group:
                found = True
                self.metrics.pending.labels(self.stream).set(int(group["pending"]))
                if group.get("lag") is not None:
                    self.metrics.lag.labels(self.stream).set(int(group["lag"]))
        cursor = text(cursor)
        oldest = await self.client.xrange(self.stream, min=f"({cursor}" if cursor else "-", count=1)
        # The lag is this entry's age at each scrape: it grows while Redis is away (D26).
        self.metrics.oldest_unapplied(self.stream, text(oldest[0][0]) if oldest else None)
        return found


def _age(entry_id: str | None) -> float:
    """Seconds since a stream entry was added (now minus its id's milliseconds); 0 for none."""
    if entry_id is None:
        return 0.0
    return max(0.0, entry_age(entry_id, time.time()))
