"""The records of a running replica's stores (docs/operations/upgrades.md; decision D17).

At start `check_start` refuses what storeid.check_layout refuses. Afterwards the gate is asked
when a lease is taken (leases.py: the acquisition script takes no lease of a store without a
record, then `admits` checks the record it found), and looks every second (`run`):

    record gone (FLUSHALL, a DEL)   one error line; the stream is not consumed (its lease given
                                    back, not taken again) and /health/ready says unready, until
                                    the record is back (init-store, a restore); with
                                    RATING_CREATE_STORE=true it is created again at once
    record disagrees, or is newer   one error line and the replica exits 1 (ServiceFailed)
    every record there              the layout advertisement (keys.layout_key) is written again
                                    if it is missing (SET NX: one replica says so)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import structlog
from redis.exceptions import RedisError

from service.runtime.connection import TRANSIENT
from service.runtime.keys import StreamKeys, layout_key
from service.runtime.metrics import Metrics
from service.runtime.partitions import advertise
from service.runtime.settings import Settings, redact
from service.runtime.storeid import (
    BACKUPS,
    StoreRefused,
    check_layout,
    decode,
    encode,
    mismatch,
    note_writer,
    record_for,
)

log = structlog.get_logger("rating.stores")
EVERY = 1.0  # seconds between two looks at the records


class StoreGate:
    """Which of this replica's streams may be consumed, by their stores' records."""

    def __init__(
        self, client: Any, settings: Settings, metrics: Metrics, on_fatal: Callable[[str], None]
    ) -> None:
        self.client, self.settings, self.metrics = client, settings, metrics
        self.layout = settings.layout
        self.url = redact(settings.redis_url)
        self.on_fatal = on_fatal
        self.partitions = {p.input: p for p in self.layout.partitions}
        self.gone: set[str] = set()  # streams whose record is missing: not consumed
        self.fatal: str | None = None
        for stream in self.partitions:
            metrics.store_ok.labels(stream).set(0)

    def problem(self) -> str | None:
        """Why the replica is not ready as far as its stores go (None: it is)."""
        if self.fatal is not None:
            return self.fatal
        if not self.gone:
            return None
        return "; ".join(
            f"no store record for {s} ({StreamKeys(s).store}): not consumed"
            for s in sorted(self.gone)
        )

    async def check_start(self) -> None:
        """Before anything is written: StoreRefused unless every store may be served."""
        known = {StreamKeys(s).store for s in self.partitions if await self._present(s)}
        await check_layout(self.client, self.layout, self.url, create=self.settings.create_store)
        for stream in self.partitions:
            if StreamKeys(stream).store not in known:
                log.warning(
                    "store created: its store record written (RATING_CREATE_STORE=true, or an "
                    "embedded server on a new data directory)",
                    stream=stream,
                )
        await note_writer(self.client, self.layout)
        for stream in self.partitions:
            self.metrics.store_ok.labels(stream).set(1)

    async def _present(self, stream: str) -> bool:
        return bool(await self.client.exists(StreamKeys(stream).store))

    async def admits(self, stream: str) -> bool:
        """Just after taking the stream's lease: whether its record lets this replica serve it."""
        raw = await self.client.get(StreamKeys(stream).store)
        if raw is None:
            await self.missing(stream)
            return False
        said = self._problem(stream, raw)
        if said is not None:
            self._fatal(said)
            return False
        self._back(stream)
        return True

    def _problem(self, stream: str, raw: bytes) -> str | None:
        try:
            record = decode(raw, stream)
        except StoreRefused as exc:
            return str(exc)
        return mismatch(record, self.layout, self.partitions[stream])

    async def missing(self, stream: str) -> None:
        """The stream's record is not there: said once; created again with RATING_CREATE_STORE."""
        key = StreamKeys(stream).store
        if stream not in self.gone:
            self.gone.add(stream)
            self.metrics.store_ok.labels(stream).set(0)
            log.error(
                "store record gone: not consuming the stream until it is back (a FLUSHALL? a "
                f"restore? run `rating-service init-store` for a new store, or restore ({BACKUPS}))",
                stream=stream,
                record=key,
            )
        if self.settings.create_store:
            record = record_for(self.layout, self.partitions[stream])
            if await self.client.set(key, encode(record), nx=True):
                log.error(
                    "store record created again (RATING_CREATE_STORE=true): consuming the "
                    "stream again, against what its store holds now",
                    stream=stream,
                    record=key,
                )
            self.gone.discard(stream)
            self.metrics.store_ok.labels(stream).set(1)

    def _back(self, stream: str) -> None:
        if stream in self.gone:
            self.gone.discard(stream)
            self.metrics.store_ok.labels(stream).set(1)
            log.warning("store record back: consuming the stream again", stream=stream)

    def _fatal(self, said: str) -> None:
        if self.fatal is None:
            self.fatal = said
            for stream in self.partitions:
                self.metrics.store_ok.labels(stream).set(0)
            log.error("store refused: stopping", problem=said)
            self.on_fatal(said)

    async def run(self, leases: Any, on_away: Callable[[BaseException], None]) -> None:
        """Every EVERY seconds: look at the records (a side task of the service)."""
        said = None
        while self.fatal is None:
            try:
                await self.round(leases)
                said = None
            except TRANSIENT as exc:
                on_away(exc)
            except RedisError as exc:
                if str(exc) != said:  # once per problem
                    log.warning(
                        "cannot read the store records", error=f"{type(exc).__name__}: {exc}"
                    )
                    said = str(exc)
            await asyncio.sleep(EVERY)

    async def round(self, leases: Any) -> None:
        for stream in self.partitions:
            raw = await self.client.get(StreamKeys(stream).store)
            if raw is None:
                await self.missing(stream)
                lease = leases[stream]
                if stream in self.gone and lease.value is not None:
                    await leases.release(lease, "store record gone")
                continue
            said = self._problem(stream, raw)
            if said is not None:
                self._fatal(said)
                return
            self._back(stream)
        if not self.gone and await advertise(self.client, self.layout, if_missing=True):
            log.warning(
                "layout advertisement was missing: advertised again",
                key=layout_key(self.layout.base),
                layout=self.layout.layout,
            )
