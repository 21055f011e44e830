"""Test fixtures. Integration tests talk to a real Redis, found in this order:
`REDIS_URL` if set; testcontainers' Redis if a Docker engine answers; a `redis-server`
binary started on a free loopback port (stopped by its pid afterwards). Otherwise they
fail under CI and are skipped locally. Each test gets its own key prefix, cleaned up.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from typing import Iterator

import pytest


def pytest_addoption(parser):
    parser.addoption("--soak-full", action="store_true", help="run the full-size (20,000 events) soak test")


def _ping(url: str, attempts: int = 1) -> bool:
    import redis

    for attempt in range(attempts):
        try:
            client = redis.Redis.from_url(url, socket_connect_timeout=1)
            try:
                return bool(client.ping())
            finally:
                client.close()
        except Exception:
            if attempt + 1 < attempts:
                time.sleep(0.1)
    return False


def _docker_answers() -> bool:
    try:
        import docker

        client = docker.from_env(timeout=2)
        client.ping()
        return True
    except Exception:
        return False


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    url = os.environ.get("REDIS_URL")
    if url:
        if not _ping(url, attempts=20):
            pytest.fail(f"REDIS_URL={url} does not answer")
        yield url
        return
    if _docker_answers():
        from testcontainers.redis import RedisContainer

        with RedisContainer() as container:
            host = container.get_container_host_ip()
            port = container.get_exposed_port(6379)
            yield f"redis://{host}:{port}/0"
        return
    binary = shutil.which("redis-server")
    if binary:
        port = _free_port()
        workdir = tempfile.mkdtemp(prefix="redis-test-")
        process = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", workdir],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"redis://127.0.0.1:{port}/0"
        try:
            if not _ping(url, attempts=50):
                pytest.fail("redis-server did not start")
            yield url
        finally:
            process.terminate()
            process.wait(timeout=10)
            shutil.rmtree(workdir, ignore_errors=True)
        return
    message = "no Redis: set REDIS_URL, run a Docker engine, or install redis-server"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture
def key_prefix(redis_url: str) -> Iterator[str]:
    """A prefix of this test's own for stream and key names; its keys are deleted after."""
    import redis

    prefix = f"t{uuid.uuid4().hex[:12]}"
    yield prefix
    client = redis.Redis.from_url(redis_url)
    try:
        keys = list(client.scan_iter(match=f"*{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        client.close()
