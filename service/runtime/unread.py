"""Entries on input streams the partition layout does not read (docs/operations/upgrades.md
"Entries nobody reads"; decision D18).

A producer that appends with a plain XADD to `events.finished` under the domains layout (as
compose and the Kubernetes manifests run it), or to a partition's stream
(`{fide.standard}:events.finished`) under the single layout, is never rated: nothing reads
the stream. The replica holding the lease of the layout's first input stream looks at those
streams every EVERY seconds, for entries after that stream's own applied cursor (entries a
service of the other layout rated are behind it): each new one counts in
`rating_misrouted_entries_total{stream}`, and each look that finds some says so in one
warning line naming the stream, and, per pool, the stream to append to. The entries are left
where they are: moving them would put them after entries appended since, in another order
than the producer's; `rating-service publish` of the same messages routes them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import msgspec
import structlog
from redis.exceptions import NoPermissionError, RedisError

from schemas.common import DEFAULT_POOL
from service.runtime.connection import TRANSIENT
from service.runtime.keys import StreamKeys, has_hash_tag, in_slot_of
from service.runtime.metrics import Metrics
from service.runtime.partitions import Layout, domain_names, partition_name
from service.runtime.replies import text

log = structlog.get_logger("rating.unread")
EVERY = 5.0  # seconds between two looks
READ = 1_000  # entries read per look and stream
_document = msgspec.json.Decoder(dict)


def unread_streams(layout: Layout) -> tuple[str, ...]:
    """The input streams of the other layout of the same names: under domains the base
    stream (the single layout's), under single every domain's stream of each input."""
    if layout.layout == "domains":
        candidates = [] if has_hash_tag(layout.base) else [layout.base]
    else:
        candidates = [
            in_slot_of(partition_name(domain), stream)
            for stream in layout.inputs
            if not has_hash_tag(stream)
            for domain in domain_names()
        ]
    mine = set(layout.inputs)
    return tuple(s for s in dict.fromkeys(candidates) if s not in mine)


def destinations(layout: Layout, entries: list) -> str:
    """Where the entries belong, per pool ("cfc/regular -> {cfc.regular}:events.finished")."""
    found: dict[str, str] = {}
    for _, fields in entries:
        try:
            document = _document.decode(fields[b"__data__"])
            system = str(document["system"])
            pool = str(document.get("pool") or DEFAULT_POOL[system])
            found.setdefault(f"{system}/{pool}", layout.route(system, pool).input)
        except (KeyError, TypeError, AttributeError, msgspec.DecodeError):
            found.setdefault("unreadable", "none (dead-letter or drop it)")
    return ", ".join(f"{what} -> {where}" for what, where in sorted(found.items()))


class Unread:
    """The looks at one replica's unread streams (only while it holds `lease`)."""

    def __init__(self, client: Any, layout: Layout, metrics: Metrics, lease: Any) -> None:
        self.client, self.layout, self.metrics, self.lease = client, layout, metrics, lease
        self.streams = unread_streams(layout)
        self.after: dict[str, str] = {}  # the last entry counted, per stream
        self.forbidden: set[str] = set()  # streams the ACL does not let us read

    async def run(self, on_away: Callable[[BaseException], None]) -> None:
        said = None
        while self.streams:
            if self.lease.value is not None:
                try:
                    await self.look()
                    said = None
                except TRANSIENT as exc:
                    on_away(exc)
                except RedisError as exc:
                    if str(exc) != said:
                        log.warning("cannot look at the unread streams", error=str(exc))
                        said = str(exc)
            await asyncio.sleep(EVERY)

    async def look(self) -> None:
        for stream in self.streams:
            if stream in self.forbidden:
                continue
            try:
                await self._look_one(stream)
            except NoPermissionError as exc:
                self.forbidden.add(stream)
                log.info(
                    "not looking at an unread stream: not allowed", stream=stream, error=str(exc)
                )

    async def _look_one(self, stream: str) -> None:
        after = self.after.get(stream)
        if after is None:
            after = text(await self.client.get(StreamKeys(stream).cursor)) or "0-0"
        entries = await self.client.xrange(stream, min=f"({after}", count=READ)
        self.after[stream] = text(entries[-1][0]) if entries else after
        if not entries:
            return
        self.metrics.misrouted.labels(stream).inc(len(entries))
        log.warning(
            "entries on an input stream the partition layout does not read: they are not rated",
            stream=stream,
            entries=len(entries),
            layout=self.layout.layout,
            append_to=destinations(self.layout, entries),
            hint="append them there (`rating-service publish` routes by itself; `rating-service "
            "streams` lists the streams)",
        )
