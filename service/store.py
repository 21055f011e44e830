"""The Redis store: key layout, snapshot reads, and the writes of one commit.

Every key of one input stream shares the hash tag `{<stream>}` (the stream's own key
hashes to the same slot), so one MULTI/EXEC covers them on Redis Cluster too:

    {S}:cursor                       string  id of the last input entry whose effect is committed
    {S}:players:<system>:<pool>      hash    player id -> player.record/v1 JSON (the read model)
    {S}:pools                        hash    "<system>:<pool>" -> pool state JSON (closed periods)
    {S}:markers                      hash    "event:<event_id>" / "period:..." -> content digest
    {S}:attempts                     hash    entry id -> failed attempts (poison detection)

The output and dead-letter streams are written in the same transaction: on a cluster,
name them with the input stream's hash tag (e.g. `{events.finished}:ratings.updated`).
"""

from __future__ import annotations

from typing import Any, Iterable

import msgspec

from schemas.records import PlayerRecord, PoolState
from service.rating import Applied, Needs, Snapshot

_record_decoder = msgspec.json.Decoder(PlayerRecord)
_pool_decoder = msgspec.json.Decoder(PoolState)
_encoder = msgspec.json.Encoder()
DATA_FIELD = "__data__"


class StreamKeys:
    """The names of the keys that belong to one input stream."""

    def __init__(self, stream: str):
        self.stream = stream
        tag = "{" + stream + "}"
        self.cursor = f"{tag}:cursor"
        self.pools = f"{tag}:pools"
        self.markers = f"{tag}:markers"
        self.attempts = f"{tag}:attempts"
        self._players = f"{tag}:players"

    def players(self, system: str, pool: str) -> str:
        return f"{self._players}:{system}:{pool}"


def entry_order(entry_id: str) -> tuple[int, int]:
    """A stream entry id ("1700000000000-3") as a sortable pair."""
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


def text(value: bytes | str | None) -> str | None:
    return value.decode() if isinstance(value, bytes) else value


def decode_record(raw: bytes) -> PlayerRecord:
    return _record_decoder.decode(raw)


def encode(message: Any) -> bytes:
    return _encoder.encode(message)


async def read_snapshot(client: Any, keys: StreamKeys, want: Needs) -> Snapshot:
    """Read what `want` names through `client` (a pipeline in WATCH mode, or a client)."""
    players_key = keys.players(want.system, want.pool)
    if want.player_ids is None:
        raw = await client.hgetall(players_key)
        records = {k.decode(): decode_record(v) for k, v in raw.items()}
    else:
        records = await _records_of(client, players_key, want.player_ids)
    seed = {}
    if want.seed_pool is not None and want.player_ids is not None:
        seed = await _records_of(client, keys.players(want.system, want.seed_pool), want.player_ids)
    raw_pool = await client.hget(keys.pools, f"{want.system}:{want.pool}")
    pool = _pool_decoder.decode(raw_pool) if raw_pool else PoolState(system=want.system, pool=want.pool)  # type: ignore[arg-type]
    marker = text(await client.hget(keys.markers, want.marker))
    return Snapshot(records, pool, seed, marker)


async def _records_of(client: Any, key: str, ids: Iterable[str]) -> dict[str, PlayerRecord]:
    ids = list(ids)
    if not ids:
        return {}
    values = await client.hmget(key, ids)
    return {pid: decode_record(raw) for pid, raw in zip(ids, values) if raw is not None}


def queue_applied(pipe: Any, keys: StreamKeys, applied: Applied, output_stream: str, maxlen: int) -> None:
    """Queue, inside MULTI, the writes of an applied message: records, pool, marker, outputs."""
    by_key: dict[str, dict[str, bytes]] = {}
    for record in applied.records:
        by_key.setdefault(keys.players(record.system, record.pool), {})[record.id] = encode(record)
    for key, mapping in by_key.items():
        pipe.hset(key, mapping=mapping)
    pipe.hset(keys.pools, f"{applied.pool.system}:{applied.pool.pool}", encode(applied.pool))
    pipe.hset(keys.markers, applied.marker, applied.digest)
    for output in applied.outputs:
        xadd(pipe, output_stream, encode(output), maxlen)


def xadd(client: Any, stream: str, data: bytes, maxlen: int) -> Any:
    """Append one message as plain JSON in `__data__` (the wire contract)."""
    if maxlen:
        return client.xadd(stream, {DATA_FIELD: data}, maxlen=maxlen, approximate=True)
    return client.xadd(stream, {DATA_FIELD: data})


async def import_records(client: Any, keys: StreamKeys, records: list[PlayerRecord], batch: int = 1_000) -> tuple[int, int]:
    """Write records into their pools (replacing what is there). Returns (new, replaced)."""
    new = replaced = 0
    for start in range(0, len(records), batch):
        chunk = records[start : start + batch]
        async with client.pipeline(transaction=False) as pipe:
            for record in chunk:
                pipe.hexists(keys.players(record.system, record.pool), record.id)
            exists = await pipe.execute()
        replaced += sum(bool(e) for e in exists)
        new += len(chunk) - sum(bool(e) for e in exists)
        async with client.pipeline(transaction=True) as pipe:
            for record in chunk:
                pipe.hset(keys.players(record.system, record.pool), record.id, encode(record))
            await pipe.execute()
    return new, replaced


async def export_records(client: Any, keys: StreamKeys, system: str, pool: str) -> list[PlayerRecord]:
    """Every record of one pool, by player id."""
    records = []
    async for _, raw in client.hscan_iter(keys.players(system, pool), count=1_000):
        records.append(decode_record(raw))
    return sorted(records, key=lambda r: r.id)
