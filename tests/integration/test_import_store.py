"""The store an import writes, key for key, against the one written before the import was
made faster (issue 32, D110-D112): lists of every system imported into a new store and
then over it (records replaced with other names, titles and ratings; FIDE records with
their period sums and pooled games), each key's canonical content digested and compared
with tests/data/import-store.json, written by the import as it was before
(`python -m tests.integration.test_import_store URL` writes it again)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
import redis
import redis.asyncio as aioredis

from service.bench.bulk import write_fide_list
from service.bench.workloads import fide_pool_before_close, rated_list
from service.cli.data import list_rules
from service.formats.ratinglists import read_list, read_list_report
from service.runtime.keys import StreamKeys
from service.runtime.records_io import import_records

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "data" / "import-store.json"
STAMP = 1_764_000_000_000


def lists(folder: Path) -> list[tuple[Any, int]]:
    """The imports, in order, with the batch each is written in."""
    first, second = folder / "first.csv", folder / "second.csv"
    write_fide_list(first, 3_000, seed=1)
    write_fide_list(second, 1_200, seed=2)  # the same ids 1000001...: other names, titles
    rules = list_rules()
    fide = [msgspec.structs.replace(r, id=f"p{r.id}") for r in fide_pool_before_close(300, seed=5)]
    examples = [
        record
        for name in ("cfc-ratings.jsonl", "fide-ratings.jsonl", "naspa-ratings.jsonl")
        for record in read_list(ROOT / "deploy" / "examples" / name, rules=rules)
    ]
    return [
        (read_list_report(first, "fide", "standard", rules).records, 700),
        (read_list_report(second, "fide", "standard", rules).records, 5_000),
        (fide, 128),
        (fide[:100], 5_000),  # the same records again: nothing moves
        (examples, 5_000),
        (rated_list("cfc", 400, seed=3) + rated_list("glicko2", 300, seed=4), 250),
        (rated_list("cfc", 200, seed=9), 5_000),  # over the first 200 of them
    ]


async def import_all(url: str, stream: str, folder: Path) -> None:
    client = aioredis.Redis.from_url(url)
    try:
        for records, batch in lists(folder):
            await import_records(client, StreamKeys(stream), records, stamp=STAMP, batch=batch)
    finally:
        await client.aclose()


def dump(client: redis.Redis, stream: str) -> dict[str, str]:
    """Each key of the stream's store (its name without the stream) and a digest of its
    canonical content: a hash's fields, a sorted set's members with their scores, sorted."""
    found: dict[str, str] = {}
    for raw in client.scan_iter(match=f"{{{stream}}}*", count=1_000):
        key = raw.decode()
        kind = client.type(key).decode()
        value: Any
        if kind == "hash":
            value = sorted((k.hex(), v.hex()) for k, v in client.hgetall(key).items())
        elif kind == "zset":
            value = sorted((m.hex(), s) for m, s in client.zrange(key, 0, -1, withscores=True))
        elif kind == "string":
            value = client.get(key).hex()  # type: ignore[union-attr]  # the key exists
        elif kind == "set":
            value = sorted(m.hex() for m in client.smembers(key))  # type: ignore[union-attr]
        else:
            raise AssertionError(f"{key}: a {kind} the import is not known to write")
        text = json.dumps([kind, value]).encode()
        found[key.replace(f"{{{stream}}}", "{S}")] = hashlib.sha256(text).hexdigest()[:20]
    return dict(sorted(found.items()))


def test_the_store_is_the_one_the_import_wrote_before(redis_url, key_prefix, tmp_path):
    stream = f"{key_prefix}.store"
    asyncio.run(import_all(redis_url, stream, tmp_path))
    client = redis.Redis.from_url(redis_url)
    try:
        found = dump(client, stream)
    finally:
        client.close()
    wanted = json.loads(GOLDEN.read_text())
    assert sorted(found) == sorted(wanted)
    differ = [key for key in wanted if found[key] != wanted[key]]
    assert not differ, f"keys written otherwise than before: {differ}"


if (
    __name__ == "__main__"
):  # write the golden file: python -m tests.integration.test_import_store URL
    import tempfile
    import uuid

    url, stream = sys.argv[1], f"golden-{uuid.uuid4().hex[:8]}.store"
    with tempfile.TemporaryDirectory() as where:
        asyncio.run(import_all(url, stream, Path(where)))
    sync = redis.Redis.from_url(url)
    try:
        GOLDEN.write_text(json.dumps(dump(sync, stream), indent=1) + "\n")
        keys = list(sync.scan_iter(match=f"*{stream}*", count=1_000))
        if keys:
            sync.unlink(*keys)
    finally:
        sync.close()
