"""What the load tests share: a history through the stream processor at the entry ids the
load gives its messages (D116), and a store dumped key by key."""

from __future__ import annotations

import random
from pathlib import Path

import msgspec

from service.engine.registry import default_registry
from service.runtime.keys import StreamKeys
from service.runtime.onboard import entry_id
from service.runtime.processor import StreamProcessor
from service.runtime.records_io import import_records
from service.runtime.replies import text
from service.runtime.store import DATA_FIELD, glob_escape

SKIPPED = ("loading", "store", "attempts")  # the load's checkpoint; identity; poison counts


def write_history(path: Path, messages: list[dict]) -> Path:
    path.write_bytes(b"".join(msgspec.json.encode(m) + b"\n" for m in messages))
    return path


async def through_the_service(client, settings, messages, start, base: int, seed: int) -> None:
    """The starting list imported at `base`, then the messages published at the load's
    entry ids in chunks of random size, each applied by the processor before the next."""
    stream = settings.input_streams[0]
    await import_records(client, StreamKeys(stream), start, stamp=base)
    processor = StreamProcessor(client, settings, stream, default_registry())
    await processor.ensure_group()
    rng = random.Random(seed)
    at = 0
    while at < len(messages):
        size = rng.randint(1, 40)
        async with client.pipeline(transaction=False) as pipe:
            for n in range(at + 1, min(at + size, len(messages)) + 1):
                data = msgspec.json.encode(messages[n - 1])
                pipe.xadd(stream, {DATA_FIELD: data}, id=entry_id(base, n))
            ids = [i.decode() for i in await pipe.execute()]
        await client.xreadgroup(settings.group, "c1", {stream: ">"}, count=1_000)
        await processor.handle(ids[-1])
        at += size


async def dump(client, keys: StreamKeys) -> dict[str, tuple[str, object]]:
    """Every key under the stream's prefix (but SKIPPED's kinds), by its name after the
    prefix: its type and whole value."""
    found: dict[str, tuple[str, object]] = {}
    async for raw in client.scan_iter(match=glob_escape(keys.prefix) + "*", count=1_000):
        key = text(raw)
        name = key[len(keys.prefix) :]
        if name.split(":", 1)[0] in SKIPPED:
            continue
        kind = text(await client.type(key))
        if kind == "string":
            value: object = await client.get(key)
        elif kind == "hash":
            value = await client.hgetall(key)
        elif kind == "zset":
            value = await client.zrange(key, 0, -1, withscores=True)
        elif kind == "set":
            value = sorted(await client.smembers(key))
        elif kind == "list":
            value = await client.lrange(key, 0, -1)
        else:
            value = await client.xrange(key)
        found[name] = (kind, value)
    return found


def differences(a: dict, b: dict, show: int = 10) -> list[str]:
    lines = [f"only in the first: {k}" for k in sorted(set(a) - set(b))]
    lines += [f"only in the second: {k}" for k in sorted(set(b) - set(a))]
    for k in sorted(set(a) & set(b)):
        if a[k] != b[k]:
            lines.append(f"differs: {k}: {str(a[k])[:300]} != {str(b[k])[:300]}")
    return lines[:show] + ([f"... {len(lines) - show} more"] if len(lines) > show else [])
