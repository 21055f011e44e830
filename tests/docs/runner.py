"""Runs the commands of one docs page (docs/development.md, "Commands in the docs"): with
`bash` from the root of the checkout, in the order of the page, on a Redis database of the
page's own, with a `rating-service serve` of its own when the page has the serve marker.

The page's key space is a database number of the test Redis (claimed, found empty, flushed
after): the commands and outputs of the docs name the default streams (`events.finished`,
`ratings.updated`, ...), which a reader has too, so the streams keep their names."""

from __future__ import annotations

import difflib
import os
import re
import shlex
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from service.bench.readload import wait_ready
from service.runtime.embedded import free_port
from tests.docs.pages import Page, Step, matches, normalise

ROOT = Path(__file__).resolve().parents[2]
COMMAND_TIMEOUT_S = 120
READY_TIMEOUT_S = 60
STOP_TIMEOUT_S = 30
DATABASES = range(1, 16)  # Redis's 16 databases, less the one the suite's other tests use
_STATE_NAMES = {"_", "SHLVL", "PWD"}  # what bash sets by itself in every shell


class PageFailed(AssertionError):
    """A command of the page whose output or exit status is not the page's."""


@contextmanager
def page_database(redis_url: str) -> Iterator[str]:
    """The URL of a database of the test Redis that no one uses (claimed with a key in the
    suite's database, empty when claimed), flushed and given back afterwards."""
    import redis

    parts = urlsplit(redis_url)
    if parts.scheme not in ("redis", "rediss"):
        raise PageFailed(
            f"the docs tests need a redis:// URL with a database number, not {redis_url}"
        )
    base = int(parts.path.strip("/") or 0)
    owner = uuid.uuid4().hex
    suite = redis.Redis.from_url(redis_url)
    try:
        for number in DATABASES:
            if number == base:
                continue
            claim = f"docs-test:database:{number}"
            if not suite.set(claim, owner, nx=True, ex=3600):
                continue
            url = urlunsplit(parts._replace(path=f"/{number}"))
            page = redis.Redis.from_url(url)
            try:
                if page.dbsize():  # someone else's data: leave it alone
                    suite.delete(claim)
                    continue
                try:
                    yield url
                finally:
                    page.flushdb()
                    suite.delete(claim)
                return
            finally:
                page.close()
        raise PageFailed(
            f"no free database on {redis_url} for a docs page (1-15 taken or not empty)"
        )
    finally:
        suite.close()


@contextmanager
def _new_redis(page: Page, redis_url: str) -> Iterator[str | None]:
    """A second empty database for a page with the new-redis marker (NEW_REDIS_URL)."""
    if not page.new_redis:
        yield None
        return
    with page_database(redis_url) as url:
        yield url


def page_environment(redis_url: str, home: Path) -> dict[str, str]:
    """A reader's environment: the installed `rating-service` first on PATH, a home and a
    temporary directory of the page's own, the page's Redis, UTC, no other RATING_ setting."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", os.defpath)])
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    return {
        "PATH": path,
        "HOME": str(home),
        "TMPDIR": str(home / "tmp"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "PYTHONUNBUFFERED": "1",  # standard output and error in the order a terminal shows them
        "RATING_REDIS_URL": redis_url,
        "REDIS_URL": redis_url,
        "RATING_DATA_DIR": str(home / "rating-service"),
    }


class Serve:
    """`rating-service serve` for one page: started, waited for until ready, stopped. Its
    store is made first (`rating-service init-store`, as an operator does once: serve refuses
    an empty store; the reader's embedded server on a new data directory makes it itself)."""

    def __init__(self, env: dict[str, str], home: Path):
        made = subprocess.run(
            ["rating-service", "init-store"], cwd=ROOT, env=env, capture_output=True, text=True
        )
        if made.returncode != 0:
            raise PageFailed(f"rating-service init-store: {made.stdout}{made.stderr}")
        self.port = free_port()
        self.log_path = home / "serve.log"
        env = dict(env, RATING_HTTP_PORT=str(self.port), RATING_HTTP_HOST="127.0.0.1")
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                ["rating-service", "serve"],
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def log(self, last: int = 40) -> str:
        lines = self.log_path.read_text(errors="replace").splitlines()
        return "\n".join(lines[-last:])

    def wait_ready(self) -> None:
        """Until /health/ready answers 200 (the bench's wait: it fails if serve exits)."""
        try:
            wait_ready(f"http://127.0.0.1:{self.port}", self.process, READY_TIMEOUT_S)
        except RuntimeError as exc:
            raise PageFailed(f"rating-service serve: {exc}") from None

    def stop(self) -> None:
        """SIGTERM, then wait; a serve that does not stop, or stops with an error, fails."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise PageFailed(
                    f"rating-service serve did not stop within {STOP_TIMEOUT_S} s of SIGTERM"
                ) from None
        if self.process.returncode != 0:
            raise PageFailed(f"rating-service serve exited {self.process.returncode} after SIGTERM")


class Shell:
    """The reader's shell: each command in its own `bash -c`, which starts in the directory
    and with the variables the earlier ones left (assignments are exported: `set -a`)."""

    def __init__(self, env: dict[str, str], state: Path):
        self.env = env
        self.cwd = str(ROOT)
        self.state = state
        state.mkdir(parents=True, exist_ok=True)

    def run(self, command: str) -> tuple[int, str]:
        env_file, cwd_file = self.state / "env", self.state / "cwd"
        script = (
            "set -a\n"
            f"trap '__docs_status=$?; env -0 > {shlex.quote(str(env_file))}; "
            f"pwd > {shlex.quote(str(cwd_file))}; exit $__docs_status' EXIT\n"
            f"{command}\n"
        )
        process = subprocess.Popen(
            ["bash", "-c", script],
            cwd=self.cwd,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            output, _ = process.communicate(timeout=COMMAND_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output, _ = process.communicate()
            raise PageFailed(
                f"did not end within {COMMAND_TIMEOUT_S} s; its output:\n{output.decode(errors='replace')}"
            ) from None
        if env_file.exists():
            pairs = (
                item.split("=", 1)
                for item in env_file.read_bytes().decode().split("\0")
                if "=" in item
            )
            self.env = {
                name: value
                for name, value in pairs
                if name not in _STATE_NAMES and not name.startswith("__docs")
            }
            self.cwd = cwd_file.read_text().strip() or self.cwd
        return process.returncode, output.decode(errors="replace")


def run_page(page: Page, name: str, redis_url: str, home: Path) -> int:
    """Run the page's steps in order; the first that fails raises PageFailed naming the page,
    the command's line, the command, and the difference (and the serve's log, when there is
    one). Returns the number of steps run."""
    with page_database(redis_url) as url, _new_redis(page, redis_url) as new_url:
        env = page_environment(url, home)
        if new_url is not None:
            env["NEW_REDIS_URL"] = new_url
        shell = Shell(env, home / "shell")
        serve = Serve(env, home) if page.serve else None
        failure = None
        try:
            if serve is not None:
                serve.wait_ready()
            for step in page.steps:
                _check(step, name, shell, serve)
        except PageFailed as exc:
            failure = str(exc)
        finally:
            if serve is not None:
                try:
                    serve.stop()
                except PageFailed as exc:
                    failure = failure or str(exc)
        if failure is not None:
            if serve is not None:
                failure += f"\n\nthe serve's log (last lines):\n{serve.log()}"
            raise PageFailed(failure)
    return len(page.steps)


def _check(step: Step, name: str, shell: Shell, serve: Serve | None) -> None:
    port = serve.port if serve is not None else None
    command = re.sub(r"\b8080\b", str(port), step.command) if port is not None else step.command
    where = f"{name}:{step.line}: $ {step.command}"
    try:
        status, output = shell.run(command)
    except PageFailed as exc:
        raise PageFailed(f"{where}\n{exc}") from None
    expected = normalise(step.expected, port)
    actual = normalise(output, port)
    problems = []
    if status != step.status:
        problems.append(f"exit status {status}, the page says {step.status}")
    if not matches(expected, actual):
        diff = difflib.unified_diff(expected, actual, "expected", "real", lineterm="")
        problems.append("output differs (normalised):\n" + "\n".join(diff))
    if problems:
        shown = "\n".join(f"    {line}" for line in output.splitlines())
        raise PageFailed(f"{where}\n" + "\n".join(problems) + f"\nreal output:\n{shown}")
