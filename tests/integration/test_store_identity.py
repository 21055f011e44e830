"""A store that knows itself (service/runtime/storeid.py, storegate.py, unread.py;
docs/operations/upgrades.md): `rating-service serve` refuses, in one line and before it
writes anything, an empty store (a naive restore), a store of the old layout after
migrate-partitions, a store of a newer format and one written before store formats (which
upgrade-store brings up, its dry run writing nothing); a running replica stops consuming a
stream whose record went (FLUSHALL) and resumes when init-store writes it again, and writes a
deleted layout advertisement again; entries appended to a stream the layout does not read are
counted and said; the writing commands refuse a store without record."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

import msgspec
import pytest

from service import __version__
from service.runtime import embedded
from service.runtime.embedded import free_port, redis_for_serve
from service.runtime.keys import StreamKeys, layout_key
from service.runtime.records_io import import_records
from service.runtime.settings import DEFAULT_REDIS_URL, load_settings
from service.runtime.storeid import FORMAT, StoreRecord
from service.timeline import split_history
from tests.integration.helpers import settings_for
from tests.integration.processes import (
    ROOT,
    PrivateRedis,
    Services,
    club_list,
    http_get,
    log_containing,
)

pytestmark = pytest.mark.integration
SERVE = ("-m", "service", "serve")
EVENT = ROOT / "deploy" / "examples" / "cfc-event.json"
LIST = ROOT / "deploy" / "examples" / "cfc-ratings.jsonl"


def serving(url: str, prefix: str, http: bool = False, **overrides) -> Services:
    """`rating-service serve` processes on the test's streams, creating no store."""
    services = Services(settings_for(url, prefix, create_store=False, **overrides), command=SERVE)
    services.env["RATING_LOG_LEVEL"] = "INFO"
    if http:
        services.env.update(RATING_HTTP_PORT=str(free_port()), RATING_HTTP_HOST="127.0.0.1")
    return services


def cli(services: Services, *args: str) -> subprocess.CompletedProcess:
    """A command in the replicas' environment."""
    return subprocess.run(
        [sys.executable, "-m", "service", *args],
        cwd=ROOT,
        env=services.env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def refused(services: Services) -> str:
    """Start a replica that must refuse: its one line (exit 1, no traceback)."""
    process = services.start()
    code = process.wait(timeout=120)
    log = services.logs(process)
    lines = [line for line in log.splitlines() if line.startswith("rating-service serve: ")]
    assert (code, len(lines)) == (1, 1), log[-3000:]
    assert "Traceback" not in log
    return lines[0]


async def keys_of(client, prefix: str) -> list[bytes]:
    return [k async for k in client.scan_iter(match=f"*{prefix}*", count=1000)]


async def until(check, timeout: float = 60.0, every: float = 0.1):
    """Until `await check()` is truthy (its value); AssertionError after `timeout` s."""
    deadline = time.monotonic() + timeout
    while not (value := await check()):
        assert time.monotonic() < deadline, "the condition did not come"
        await asyncio.sleep(every)
    return value


async def test_an_empty_store_is_refused_before_anything_is_written(redis_url, key_prefix, client):
    """The naive restore: the service meets a Redis with nothing of its store."""
    services = serving(redis_url, key_prefix)
    try:
        line = refused(services)
        stream = services.env["RATING_INPUT_STREAMS"]
        assert line.startswith(
            f"rating-service serve: no store at {redis_url} for input stream {stream}"
        )
        assert "run `rating-service init-store` once" in line
        assert "RATING_CREATE_STORE=true" in line and "docs/operations/backups.md" in line
        assert await keys_of(client, key_prefix) == []  # no group, lease or stream made
        made = cli(services, "init-store")
        assert made.returncode == 0, made.stderr
        assert made.stdout.splitlines() == [
            f"created the store of {stream}: store format {FORMAT}, partition {stream} of the single layout",
            f"advertised the single layout for {stream} (`rating-service streams`)",
        ]
        again = cli(services, "init-store")
        assert again.returncode == 2 and "stores are there already, nothing written" in again.stderr
        assert (
            f"  {stream}: store format {FORMAT}, partition {stream} of the single layout"
            in again.stderr
        )
        await log_containing(services, services.start(), '"ready"')
    finally:
        services.stop_all()


async def test_a_replica_of_the_old_layout_is_refused_after_migrate_partitions(
    redis_url, key_prefix, client
):
    single = serving(redis_url, key_prefix)
    domains = serving(redis_url, key_prefix, partitions="domains")
    try:
        assert cli(single, "init-store").returncode == 0
        assert cli(single, "import", str(LIST)).returncode == 0
        process = single.start()
        await log_containing(single, process, '"ready"')
        published = cli(single, "publish", "--wait", str(EVENT))
        assert published.returncode == 0, published.stderr
        single.kill(process, 15)
        moved = cli(single, "migrate-partitions", "--yes")
        assert moved.returncode == 0, moved.stderr
        assert "marked" in moved.stdout and "store migrated" in moved.stdout
        stream = single.env["RATING_INPUT_STREAMS"]
        line = refused(single)  # started without RATING_PARTITIONS=domains
        assert line.startswith(
            f"rating-service serve: the store of {stream} was migrated to the domains layout on "
        )
        assert line.endswith(
            "this replica runs RATING_PARTITIONS=single: set RATING_PARTITIONS=domains"
        )
        advertised = json.loads(await client.get(layout_key(stream)))
        assert advertised["layout"] == "domains"  # publish routes to the partitions at once
        explicit = cli(single, "publish", "--stream", f"{{cfc.regular}}:{stream}", str(EVENT))
        assert explicit.returncode == 0, explicit.stderr  # a partition's own store: it has one
        await log_containing(domains, domains.start(), '"ready"')
    finally:
        single.stop_all()
        domains.stop_all()


async def test_a_store_of_a_newer_format_is_refused(redis_url, key_prefix, client):
    services = serving(redis_url, key_prefix)
    try:
        assert cli(services, "init-store").returncode == 0
        stream = services.env["RATING_INPUT_STREAMS"]
        key = StreamKeys(stream).store
        document = json.loads(await client.get(key))
        newer = FORMAT + 1
        await client.set(key, json.dumps({**document, "format": newer, "written_by": "9.9.9"}))
        line = refused(services)
        assert line == (
            f"rating-service serve: the store of {stream} is store format {newer}, newer than this "
            f"version's ({FORMAT}; rating-service {__version__}); it was last written by rating-service 9.9.9: "
            "run that version or a later one"
        )
        sent = cli(services, "publish", str(EVENT))
        assert sent.returncode == 2 and f"store format {newer}, newer" in sent.stderr
        assert not await client.exists(stream)
    finally:
        services.stop_all()


async def test_a_store_written_before_formats_is_upgraded_and_the_dry_run_writes_nothing(
    redis_url, key_prefix, client
):
    services = serving(redis_url, key_prefix)
    stream = services.env["RATING_INPUT_STREAMS"]
    keys = StreamKeys(stream)
    await import_records(client, keys, club_list())  # what an earlier version left
    await client.incr(keys.lease_token)
    try:
        line = refused(services)
        assert line == (
            f"rating-service serve: the store of {stream} at {redis_url} was written before store "
            f"format 1 (it has keys but no store record, {keys.store}): run `rating-service "
            "upgrade-store` (--dry-run shows what it would write)"
        )
        sent = cli(services, "publish", str(EVENT))
        assert sent.returncode == 2 and "run `rating-service upgrade-store`" in sent.stderr
        refused_init = cli(services, "init-store")
        assert refused_init.returncode == 2 and "keys but no store record" in refused_init.stderr
        before = sorted(await keys_of(client, key_prefix))
        dry = cli(services, "upgrade-store", "--dry-run")
        assert dry.returncode == 0, dry.stderr
        assert dry.stdout.splitlines() == [
            f"{stream}: keys but no store record (a store written before store format 1): would "
            f"write its store record (store format {FORMAT}, partition {stream} of the single layout)",
            "nothing written (--dry-run)",
        ]
        assert sorted(await keys_of(client, key_prefix)) == before
        done = cli(services, "upgrade-store")
        assert done.returncode == 0, done.stderr
        assert "wrote its store record" in done.stdout
        record = msgspec.json.decode(await client.get(keys.store), type=StoreRecord)
        assert (record.format, record.layout, record.upgraded_from) == (FORMAT, "single", 0)
        again = cli(services, "upgrade-store")
        assert f"every store is at store format {FORMAT}: nothing written" in again.stdout
        await log_containing(services, services.start(), '"ready"')
    finally:
        services.stop_all()


async def test_a_store_of_format_1_is_refused_until_upgrade_store_raises_it(
    redis_url, key_prefix, client
):
    """D104: a store 0.2.0 wrote (format 1) is refused by this version in one line, as this
    version's store is by 0.2.0; upgrade-store raises its record (its data read as it is), and
    the store is served with what it held."""
    services = serving(redis_url, key_prefix)
    try:
        assert cli(services, "init-store").returncode == 0
        assert cli(services, "import", str(LIST)).returncode == 0
        stream = services.env["RATING_INPUT_STREAMS"]
        key = StreamKeys(stream).store
        document = json.loads(await client.get(key))
        await client.set(key, json.dumps({**document, "format": 1, "written_by": "0.2.0"}))
        line = refused(services)
        assert line == (
            f"rating-service serve: the store of {stream} is store format 1, older than this "
            f"version's ({FORMAT}): run `rating-service upgrade-store` (--dry-run shows what it "
            "would write)"
        )
        dry = cli(services, "upgrade-store", "--dry-run")
        assert dry.returncode == 0, dry.stderr
        assert dry.stdout.splitlines()[0].startswith(f"{stream}: store format 1, partition ")
        assert f"would raise it to store format {FORMAT}" in dry.stdout
        assert json.loads(await client.get(key))["format"] == 1
        done = cli(services, "upgrade-store")
        assert done.returncode == 0 and f"raised it to store format {FORMAT}" in done.stdout
        record = msgspec.json.decode(await client.get(key), type=StoreRecord)
        assert (record.format, record.upgraded_from, record.written_by) == (
            FORMAT,
            1,
            __version__,
        )
        assert record.created_at == document["created_at"]
        again = cli(services, "upgrade-store")
        assert f"every store is at store format {FORMAT}: nothing written" in again.stdout
        await log_containing(services, services.start(), '"ready"')
        sent = cli(services, "publish", str(EVENT))
        assert sent.returncode == 0, sent.stderr
    finally:
        services.stop_all()


async def test_a_store_of_format_2_gets_its_histories_as_strings_from_upgrade_store(
    redis_url, key_prefix, client, tmp_path
):
    """D121: a store of format 2 keeps each player's history as a sorted set; upgrade-store
    makes each one string of the same members (its dry run only counts them) before it raises
    the record, and a correction's re-rate then reads them."""
    services = serving(redis_url, key_prefix)
    try:
        assert cli(services, "init-store").returncode == 0
        assert cli(services, "import", str(LIST)).returncode == 0
        services.start()
        sent = cli(services, "publish", "--wait", str(EVENT))
        assert sent.returncode == 0, sent.stderr
        services.stop_all()
        keys = StreamKeys(services.env["RATING_INPUT_STREAMS"])
        names = [keys.history("cfc", "regular", f"10000{n}") for n in range(1, 6)]
        strings = {name: await client.get(name) for name in names}
        assert all(strings.values())
        for name, stored in strings.items():  # as format 2 kept them
            await client.delete(name)
            await client.zadd(name, {member: 0 for member in split_history(stored)})
        document = json.loads(await client.get(keys.store))
        await client.set(keys.store, json.dumps({**document, "format": 2}))
        dry = cli(services, "upgrade-store", "--dry-run")
        assert dry.returncode == 0, dry.stderr
        assert "would make its 5 players' histories one string each" in dry.stdout
        assert [await client.type(name) for name in names] == [b"zset"] * 5
        done = cli(services, "upgrade-store")
        assert done.returncode == 0, done.stderr
        assert "made its 5 players' histories one string each" in done.stdout
        assert {name: await client.get(name) for name in names} == strings
        assert json.loads(await client.get(keys.store))["format"] == FORMAT
        services.start()
        corrected = json.loads(EVENT.read_text())
        corrected["games"][0]["score"] = 0  # the first game's result reversed
        path = tmp_path / "corrected.json"
        path.write_text(json.dumps(corrected))
        fixed = cli(services, "correct", "--wait", str(path))
        assert fixed.returncode == 0, fixed.stderr
        assert "ottawa-fall-open-2025  REVISION 1" in fixed.stdout, fixed.stdout
    finally:
        services.stop_all()


async def test_a_flushall_stops_consumption_until_the_store_is_back(key_prefix):
    """Also: a deleted layout advertisement is written again while the record is there."""
    import redis.asyncio as aioredis

    server = PrivateRedis()
    server.start()
    await server.wait_ready()
    client = aioredis.Redis.from_url(server.url)
    services = serving(server.url, key_prefix, http=True)
    port = int(services.env["RATING_HTTP_PORT"])
    stream = services.env["RATING_INPUT_STREAMS"]
    keys = StreamKeys(stream)

    async def ready() -> tuple[int, dict]:
        status, body = await http_get(port, "/health/ready")
        return status, json.loads(body)

    try:
        assert cli(services, "init-store").returncode == 0
        process = services.start()
        await log_containing(services, process, '"ready"')
        await client.delete(layout_key(stream))
        await until(lambda: client.exists(layout_key(stream)))
        await log_containing(services, process, "layout advertisement was missing")
        await client.flushall()
        await until(lambda: _status(ready, 503))
        status, body = await ready()
        assert body["stores"] == f"no store record for {stream} ({keys.store}): not consumed"
        await log_containing(services, process, "store record gone")
        sent = cli(services, "publish", str(EVENT))
        assert sent.returncode == 2 and sent.stderr.startswith(
            f"rating-service publish: no store at {server.url} for {stream}: is serve running "
            "against this Redis?"
        )
        entry = (await client.xadd(stream, {"__data__": EVENT.read_bytes()})).decode()
        assert await client.get(keys.cursor) is None  # not applied: no lease without the record
        assert cli(services, "init-store").returncode == 0
        await until(lambda: _cursor_is(client, keys, entry))
        await until(lambda: _status(ready, 200))
        await log_containing(services, process, "store record back")
        assert process.poll() is None
    finally:
        services.stop_all()
        await client.aclose()
        server.remove()


async def _status(ready, wanted: int) -> bool:
    return (await ready())[0] == wanted


async def _cursor_is(client, keys: StreamKeys, entry: str) -> bool:
    return await client.get(keys.cursor) == entry.encode()


async def test_entries_on_a_stream_the_layout_does_not_read_are_counted_and_said(
    redis_url, key_prefix, client
):
    services = serving(redis_url, key_prefix, http=True, partitions="domains")
    port = int(services.env["RATING_HTTP_PORT"])
    base = services.env["RATING_INPUT_STREAMS"]
    try:
        assert cli(services, "init-store").returncode == 0
        process = services.start()
        await log_containing(services, process, '"ready"')
        await client.xadd(base, {"__data__": EVENT.read_bytes()})  # a raw producer's XADD
        log = await log_containing(services, process, "does not read: they are not rated")
        line = next(json.loads(x) for x in log.splitlines() if "does not read" in x)
        assert (line["stream"], line["entries"], line["layout"]) == (base, 1, "domains")
        assert line["append_to"] == f"cfc/regular -> {{cfc.regular}}:{base}"
        status, metrics = await http_get(port, "/metrics")
        wanted = f'rating_misrouted_entries_total{{stream="{base}"}} 1.0'
        assert status == 200 and wanted in metrics.decode()
    finally:
        services.stop_all()


def test_the_writing_commands_refuse_a_store_without_record(
    redis_url, key_prefix, monkeypatch, capsys
):
    from service.cli.main import main

    monkeypatch.setenv("RATING_CREATE_STORE", "false")
    stream = f"{key_prefix}.events"
    url = redis_url
    common = ["--stream", stream, "--redis-url", url]
    for args in (
        ["publish", str(EVENT)],
        ["import", str(LIST)],
        ["withdraw", "ottawa-fall-open-2025", "--system", "cfc"],
        ["close-period", "fide", "2025-11"],
    ):
        capsys.readouterr()
        assert main([*args, *common]) == 2
        err = capsys.readouterr().err
        assert err == (
            f"rating-service {args[0]}: no store at {url} for {stream}: is serve running against "
            "this Redis? a new deployment: run `rating-service init-store` once (--no-check "
            "appends anyway); nothing appended\n"
        )
    assert main(["publish", str(EVENT), "--no-check", *common]) == 0
    assert len(capsys.readouterr().out.split()) == 1  # the entry id


def test_an_embedded_server_on_a_new_data_directory_creates_its_store(tmp_path, monkeypatch):
    """D16: a data directory without an append-only file is new; one with it is a store."""
    real = embedded.answers  # as if no Redis answered on the default address
    monkeypatch.setattr(
        embedded,
        "answers",
        lambda url, timeout=1.0: url != DEFAULT_REDIS_URL and real(url, timeout),
    )
    settings = load_settings({"RATING_DATA_DIR": str(tmp_path / "data")}, http_port=0)
    with redis_for_serve(settings, configured=False) as chosen:
        assert chosen.create_store
    with redis_for_serve(settings, configured=False) as chosen:
        assert not chosen.create_store


async def test_a_replay_namespace_is_made_live_and_back(redis_url, key_prefix, client, tmp_path):
    services = serving(redis_url, key_prefix)
    stream = services.env["RATING_INPUT_STREAMS"]
    live, fix, previous = (StreamKeys(stream, ns) for ns in (None, "fix1", "previous"))
    try:
        assert cli(services, "init-store").returncode == 0
        assert cli(services, "import", str(LIST)).returncode == 0
        process = services.start()
        await log_containing(services, process, '"ready"')
        assert cli(services, "publish", "--wait", str(EVENT)).returncode == 0
        services.kill(process, 15)
        replayed = cli(
            services, "replay", "--stream", stream, "--into", "fix1", "--ratings", str(LIST)
        )
        assert replayed.returncode == 0, replayed.stderr
        assert "no differences from the live state" in replayed.stdout
        record = msgspec.json.decode(await client.get(fix.store), type=StoreRecord)
        assert (record.namespace, record.layout, record.partition) == ("fix1", "single", stream)
        dry = cli(services, "adopt-namespace", "fix1", "--stream", stream)
        assert dry.returncode == 0 and "nothing moved" in dry.stdout
        assert await client.exists(fix.store) and not await client.exists(previous.store)
        done = cli(services, "adopt-namespace", "fix1", "--stream", stream, "--yes")
        assert done.returncode == 0, done.stderr
        assert "back: rating-service adopt-namespace previous --keep-as fix1 --yes" in done.stdout
        now = msgspec.json.decode(await client.get(live.store), type=StoreRecord)
        kept = msgspec.json.decode(await client.get(previous.store), type=StoreRecord)
        assert (now.namespace, kept.namespace) == (None, "previous")
        assert not await keys_of(client, "fix1:")
        process = services.start()
        await log_containing(services, process, '"ready"')
        later = tmp_path / "later.json"
        dates = {"event_id": "later", "start_date": "2025-12-06", "end_date": "2025-12-07"}
        later.write_text(json.dumps(json.loads(EVENT.read_text()) | dates))
        sent = cli(services, "publish", "--wait", str(later))  # rated on the adopted store
        assert sent.returncode == 0 and "later: rated" in sent.stdout, sent.stdout + sent.stderr
        services.kill(process, 15)
        back = cli(
            services,
            "adopt-namespace",
            "previous",
            "--keep-as",
            "fix1",
            "--stream",
            stream,
            "--yes",
        )
        assert back.returncode == 0, back.stderr
    finally:
        services.stop_all()


async def test_a_replica_without_the_deployment_s_layout_is_told_which_it_is(
    redis_url, key_prefix, client
):
    """The domains layout's stores are there (compose, Kubernetes), the replica was started
    without RATING_PARTITIONS: refused, naming the setting; nothing written."""
    domains = serving(redis_url, key_prefix, partitions="domains")
    single = serving(redis_url, key_prefix)
    base = single.env["RATING_INPUT_STREAMS"]
    try:
        assert cli(domains, "init-store").returncode == 0
        before = sorted(await keys_of(client, key_prefix))
        line = refused(single)
        assert line == (
            f"rating-service serve: no store at {redis_url} for {base} in the single layout, but "
            f"the domains layout's stores of {base} are there: set RATING_PARTITIONS=domains"
        )
        assert sorted(await keys_of(client, key_prefix)) == before
        made = cli(single, "init-store")  # nor is a second system of record made beside them
        assert (
            made.returncode == 2 and f"{{cfc.regular}}:{base}: store format {FORMAT}" in made.stderr
        )
    finally:
        single.stop_all()
        domains.stop_all()
