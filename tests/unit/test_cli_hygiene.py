"""The command line as a user meets it, in a subprocess: `--version`, and a user's slip (a
Redis URL without its scheme, an unknown log level) is one line on standard error and exit
2, never a traceback. (`watch | head`: tests/integration/test_watch.py.)"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, **env: str) -> subprocess.CompletedProcess:
    environ = {
        k: v for k, v in os.environ.items() if not k.startswith("RATING_") and k != "REDIS_URL"
    }
    environ.update(PYTHONPATH=str(ROOT), RATING_HTTP_PORT="0", **env)
    return subprocess.run(
        [sys.executable, "-m", "service", *args],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
    )


def one_line_error(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_version():
    done = run("--version")
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout == f"rating-service {importlib.metadata.version('rating-service')}\n"


@pytest.mark.parametrize(
    "command",
    [
        ("serve",),
        ("export", "--system", "cfc", "--pool", "regular"),
        ("rejected", "list"),
        ("watch", "--count", "1"),
    ],
)
def test_a_redis_url_without_scheme(command):
    line = one_line_error(run(*command, "--redis-url", "127.0.0.1:6379"))
    assert line == (
        f"rating-service {command[0]}: --redis-url '127.0.0.1:6379': not a Redis URL: it starts with "
        "redis://, rediss:// or unix:// (e.g. redis://127.0.0.1:6379/0)"
    )


@pytest.mark.parametrize(
    "command", [("serve",), ("export", "--system", "cfc", "--pool", "regular")]
)
def test_a_redis_url_without_scheme_in_the_environment(command):
    line = one_line_error(run(*command, RATING_REDIS_URL="127.0.0.1:6379"))
    assert line.startswith(
        f"rating-service {command[0]}: RATING_REDIS_URL='127.0.0.1:6379': not a Redis URL"
    )


@pytest.mark.parametrize(
    "command",
    [
        ("serve",),
        ("export", "--system", "cfc", "--pool", "regular"),
        ("rejected", "list"),
        ("watch", "--count", "1"),
        ("player", "cfc", "regular", "x"),
        ("publish", str(ROOT / "deploy" / "examples" / "cfc-event.json")),
    ],
)
def test_a_bad_log_level(command):
    line = one_line_error(run(*command, RATING_LOG_LEVEL="LOUD"))
    assert line == (
        f"rating-service {command[0]}: RATING_LOG_LEVEL='LOUD': not a log level "
        "(one of DEBUG, INFO, WARNING, ERROR, CRITICAL)"
    )
