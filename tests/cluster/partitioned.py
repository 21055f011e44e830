"""Traffic over the domains layout's partitions, the end state each partition must reach, and
`rating-service serve` run on them: the season of mixed events
(tests/integration/mixed_events.py: CFC, FIDE with period closes, NASPA), each message
appended to its partition's input stream, the starting lists imported into each
partition's store; then, per partition, everything applied, once, in order, the records
equal to an offline re-rate of that partition's own entries.

Written for the cluster tests and reusable by any test of several partitions (standalone
too: the helpers take any client); `serve_on(settings)` runs the real `rating-service serve`
(tests/integration/processes.Services) on the settings' layout."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import msgspec
from redis.exceptions import ResponseError

from schemas import EventRejected, PlayerRecord, RatingsUpdated
from schemas.common import DEFAULT_POOL
from service.entryids import entry_order
from service.runtime.keys import StreamKeys
from service.runtime.partitions import Partition
from service.runtime.records_io import import_records
from service.runtime.settings import Settings
from service.runtime.store import glob_escape
from tests.integration.mixed_events import season, starting_lists
from tests.integration.processes import Services, offline_records


def partition_of(settings: Settings, message: dict) -> Partition:
    system = message["system"]
    return settings.layout.route(system, message.get("pool") or DEFAULT_POOL[system])


def lists_by_partition(
    settings: Settings, records: list[PlayerRecord] | None = None
) -> dict[str, list[PlayerRecord]]:
    """The starting records (default: the season's lists), by input stream."""
    found: dict[str, list[PlayerRecord]] = {}
    for record in starting_lists() if records is None else records:
        found.setdefault(settings.layout.route(record.system, record.pool).input, []).append(record)
    return found


async def load_lists(client, settings: Settings, records: list[PlayerRecord] | None = None) -> None:
    for stream, partition in lists_by_partition(settings, records).items():
        await import_records(client, StreamKeys(stream), partition)


async def publish_routed(client, settings: Settings, messages: list[dict]) -> dict[str, list[str]]:
    """Append each message to its partition's input stream; the entry ids, by stream."""
    ids: dict[str, list[str]] = {}
    for message in messages:
        stream = partition_of(settings, message).input
        ids.setdefault(stream, []).append(
            (await client.xadd(stream, {"__data__": json.dumps(message)})).decode()
        )
    return ids


def mixed_season(count: int, seed: int) -> list[dict]:
    return season(count, seed, per_month=max(4, count // 3))


async def wait_applied(client, settings: Settings, streams, timeout: float = 60.0) -> None:
    """Until every stream's cursor is at its last entry and nothing is pending."""
    deadline = time.monotonic() + timeout
    for stream in streams:
        [(last, _)] = await client.xrevrange(stream, count=1)
        while True:
            cursor = await client.get(StreamKeys(stream).cursor)
            try:
                pending = int((await client.xpending(stream, settings.group))["pending"])
            except ResponseError as exc:  # the service has not created its group yet
                if "NOGROUP" not in str(exc):
                    raise
                pending = None
            if cursor == last and pending == 0:
                break
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{stream} not applied in {timeout} s: cursor {cursor!r}, last {last!r}, "
                    f"pending {pending}"
                )
            await asyncio.sleep(0.1)


async def stored(client, stream: str) -> dict[tuple, PlayerRecord]:
    records = {}
    async for key in client.scan_iter(
        match=glob_escape(StreamKeys(stream).players("", ""))[:-1] + "*"
    ):
        for raw in (await client.hgetall(key)).values():
            record = msgspec.json.decode(raw, type=PlayerRecord)
            records[(record.system, record.pool, record.id)] = record
    return records


async def check_partitions(
    client,
    settings: Settings,
    messages: list[dict],
    tmp_path: Path,
    start: list[PlayerRecord] | None = None,
) -> None:
    """Every partition that was sent messages: applied, once each, in order, records equal to
    the offline re-rate of its entries from `start` (default: the season's lists); nothing
    dead-lettered, pending or half counted."""
    sent: dict[str, list[dict]] = {}
    for message in messages:
        sent.setdefault(partition_of(settings, message).input, []).append(message)
    await wait_applied(client, settings, sent)
    lists = lists_by_partition(settings, start)
    for stream, mine in sent.items():
        partition = settings.layout.of_stream(stream)
        entries = await client.xrange(stream)
        folder = tmp_path / partition.name
        folder.mkdir(exist_ok=True)
        assert await stored(client, stream) == offline_records(
            entries, folder, lists.get(stream, [])
        )
        produced = [
            msgspec.json.decode(f[b"__data__"], type=RatingsUpdated)
            for _, f in await client.xrange(partition.output)
        ]
        expected = [m["event_id"] for m in mine if "event_id" in m]
        assert [
            o.event_id for o in produced if o.kind == "event"
        ] == expected  # once each, in order
        letters = [
            msgspec.json.decode(f[b"__data__"], type=EventRejected)
            for _, f in await client.xrange(partition.dead_letter)
        ]
        assert letters == []
        keys = StreamKeys(stream)
        cursor = entry_order((await client.get(keys.cursor)).decode())
        assert all(entry_order(e.decode()) <= cursor for e in await client.hkeys(keys.attempts))


# ---------------------------------------------------------------- the service on a cluster
SERVE = ("-m", "service", "serve")


def serve_on(settings: Settings, http_port: int = 0) -> Services:
    """`rating-service serve` processes on `settings` (its partition layout too); HTTP on
    127.0.0.1:`http_port` (0: none)."""
    services = Services(settings, command=SERVE)
    services.env.update(
        {
            "RATING_PARTITIONS": settings.partitions,
            "RATING_HTTP_PORT": str(http_port),
            "RATING_HTTP_HOST": "127.0.0.1",
        }
    )
    return services


async def until(check, timeout: float = 30.0) -> None:
    """Until `await check()` is true (AssertionError after `timeout` seconds)."""
    deadline = time.monotonic() + timeout
    while not await check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


def not_owning(cluster, streams) -> str:
    """The URL of a master that owns none of the streams' slots (else of any other node)."""
    owners = {cluster.owner(cluster.slot_of(s)).port for s in streams}
    node = next((n for n in cluster.nodes if n.port not in owners), cluster.nodes[-1])
    return cluster.node_url(node)
