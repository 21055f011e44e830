"""The image and compose.yaml, run for real on a Docker engine: deploy/Dockerfile is built,
the stores are made (`docker compose run --rm init-store`), Redis and the two replicas come
up and answer /health/ready, the demo profile rates the
examples, the figures on the output stream equal the offline `rating-service rate` of the
same examples, and the demo subscriber (`watch`) is still running when the stream has been
idle for more than 10 s, having printed the four tables.

The engine is whichever answers first: $DOCKER_HOST, the default socket, or the one
.ci/run starts with docker-local.sh (/tmp/docker-local/docker.sock). Without one the
tests are skipped, saying so. Every service runs on the host network with
deploy/compose.host-network.yaml (that engine has no bridge network), on free loopback
ports, under a project name and image tag of their own; the project is removed (`down -v`)
and the tag deleted afterwards, whatever happens.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
import redis

from schemas.ratings import RatingsUpdated
from service.cli.watch import render
from service.entryids import entry_order
from service.runtime.embedded import free_port
from service.runtime.partitions import layout_of
from tests.conftest import needs

pytestmark = pytest.mark.container

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "deploy" / "examples"
# The demo producer's order (compose.yaml): every list, then these four messages.
DEMO_MESSAGES = ["cfc-event.json", "fide-event.json", "naspa-event.json", "fide-period-closed.json"]
DOCKER_LOCAL_SOCKET = Path(os.environ.get("STATE", "/tmp/docker-local")) / "docker.sock"
IDLE_S = 11  # the subscriber must outlive this much idle stream (watch used to die after 5 s)


def _answers(env: dict[str, str]) -> bool:
    try:
        return (
            subprocess.run(
                ["docker", "version", "--format", "{{.Server.Version}}"],
                env=env,
                capture_output=True,
                timeout=20,
            ).returncode
            == 0
        )
    except (OSError, subprocess.TimeoutExpired):
        return False


def find_engine() -> tuple[dict[str, str] | None, str]:
    """The environment for a docker client that reaches an engine, or None and why not."""
    if shutil.which("docker") is None:
        return None, "no docker client on PATH"
    base = {k: v for k, v in os.environ.items() if k not in ("DOCKER_HOST", "DOCKER_CONTEXT")}
    tried = []
    if os.environ.get("DOCKER_HOST"):
        tried.append(os.environ["DOCKER_HOST"])
        if _answers(dict(os.environ)):
            return dict(os.environ), ""
    tried.append("the default socket")
    if _answers(base):
        return base, ""
    if DOCKER_LOCAL_SOCKET.exists():
        env = {**base, "DOCKER_HOST": f"unix://{DOCKER_LOCAL_SOCKET}"}
        tried.append(env["DOCKER_HOST"])
        if _answers(env):
            return env, ""
    return (
        None,
        f"no Docker engine answers ({', '.join(tried)}); .ci/run starts one with docker-local.sh",
    )


class Stack:
    """One compose project: compose.yaml + the host-network override + the test's image tag."""

    def __init__(self, env: dict[str, str], workdir: Path):
        suffix = uuid.uuid4().hex[:10]
        self.project = f"rating-ct-{suffix}"
        self.image = f"rating-service:ct-{suffix}"
        self.redis_port, self.http_ports = free_port(), (free_port(), free_port())
        self.env = {
            **env,
            "HOST_REDIS_PORT": str(self.redis_port),
            "HOST_HTTP_PORT_1": str(self.http_ports[0]),
            "HOST_HTTP_PORT_2": str(self.http_ports[1]),
        }
        # The test's own image tag (other checkouts may build rating-service:latest meanwhile),
        # and a 1 s health check interval (the image's 10 s would only slow the demo's start).
        self.override = workdir / "compose.test.yaml"
        services = {
            name: {"image": self.image}
            for name in (
                "rating-service-1",
                "rating-service-2",
                "init-store",
                "demo-producer",
                "demo-subscriber",
            )
        }
        for name in ("rating-service-1", "rating-service-2"):
            services[name]["healthcheck"] = {"interval": "1s"}
        self.override.write_text(json.dumps({"services": services}))
        self.redis_url = f"redis://127.0.0.1:{self.redis_port}/0"

    def run(
        self, *args: str, timeout: float = 300, check: bool = True
    ) -> subprocess.CompletedProcess:
        done = subprocess.run(
            list(args), cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=timeout
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"{' '.join(args)}: exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
            )
        return done

    def compose(self, *args: str, **kwargs) -> subprocess.CompletedProcess:
        return self.run(
            "docker",
            "compose",
            "-p",
            self.project,
            "-f",
            "compose.yaml",
            "-f",
            "deploy/compose.host-network.yaml",
            "-f",
            str(self.override),
            *args,
            **kwargs,
        )

    def container(self, service: str) -> str:
        ids = self.compose("--profile", "demo", "ps", "-a", "-q", service).stdout.split()
        assert len(ids) == 1, f"{service}: containers {ids}"
        return ids[0]

    def state(self, service: str) -> dict:
        return json.loads(
            self.run(
                "docker", "inspect", "--format", "{{json .State}}", self.container(service)
            ).stdout
        )

    def logs(self, service: str) -> subprocess.CompletedProcess:
        return self.run("docker", "logs", self.container(service))

    def all_logs(self) -> str:
        return self.compose("--profile", "demo", "logs", "--no-color", check=False).stdout[-6000:]

    def down(self) -> None:
        self.compose(
            "--profile", "demo", "down", "-v", "--remove-orphans", "--timeout", "20", check=False
        )
        self.run("docker", "image", "rm", self.image, check=False)


def wait_ready(port: int, deadline: float) -> str:
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(
                f"http://127.0.0.1:{port}/health/ready", timeout=2
            ) as reply:
                if reply.status == 200:
                    return reply.read().decode()
        except (urllib.error.URLError, OSError) as exc:
            last = str(exc)
        time.sleep(0.5)
    raise AssertionError(f"port {port}: /health/ready not 200 in time ({last})")


@pytest.fixture(scope="module")
def stack(tmp_path_factory) -> Iterator[Stack]:
    env, why = find_engine()
    if env is None:
        needs("a Docker engine", why)
    if (
        subprocess.run(["docker", "compose", "version"], env=env, capture_output=True).returncode
        != 0
    ):
        pytest.fail("a Docker engine answers but `docker compose` (Compose v2) is missing")
    s = Stack(env, tmp_path_factory.mktemp("compose"))
    try:
        started = time.monotonic()
        s.run(
            "docker",
            "build",
            "--network",
            "host",
            "-f",
            "deploy/Dockerfile",
            "-t",
            s.image,
            ".",
            timeout=900,
        )
        s.built_s = time.monotonic() - started
        s.compose("run", "--rm", "init-store")  # once per volume (docs/operations/compose.md)
        s.compose("up", "-d", "--no-build")
        deadline = time.monotonic() + 120
        s.ready = [wait_ready(port, deadline) for port in s.http_ports]
        yield s
    finally:
        s.down()


@pytest.fixture(scope="module")
def demo(stack: Stack) -> dict:
    """The demo profile run: the producer's output and the four messages on the stream."""
    stack.compose("--profile", "demo", "up", "-d", "--no-build")
    producer = stack.container("demo-producer")
    code = stack.run("docker", "wait", producer, timeout=120).stdout.strip()
    assert code == "0", f"demo-producer exit {code}\n{stack.all_logs()}"
    # compose.yaml runs the domains layout: the results are on the partitions' output streams.
    layout = layout_of("domains", ("events.finished",), "ratings.updated", "events.rejected")
    client = redis.Redis.from_url(stack.redis_url)
    try:
        deadline = time.monotonic() + 60
        while (
            sum(client.xlen(p.output) for p in layout.partitions) < len(DEMO_MESSAGES)
            and time.monotonic() < deadline
        ):
            time.sleep(0.2)
        entries = [entry for p in layout.partitions for entry in client.xrange(p.output)]
        rejected = [entry for p in layout.partitions for entry in client.xrange(p.dead_letter)]
    finally:
        client.close()
    # In the order the producer published their inputs (one Redis clock: ids grow).
    entries.sort(key=lambda entry: entry_order(json.loads(entry[1][b"__data__"])["source_id"]))
    last_output = time.monotonic()
    assert len(entries) == len(DEMO_MESSAGES), f"{len(entries)} outputs\n{stack.all_logs()}"
    return {
        "producer": stack.run("docker", "logs", producer).stdout,
        "outputs": [json.loads(fields[b"__data__"]) for _, fields in entries],
        "rejected": rejected,
        "last_output": last_output,
    }


def offline_rate(tmp_path: Path) -> list[dict]:
    """`rating-service rate` of the demo's messages, in its order, from all example lists."""
    events = tmp_path / "demo.jsonl"
    events.write_text(
        "".join(
            json.dumps(json.loads((EXAMPLES / name).read_text())) + "\n" for name in DEMO_MESSAGES
        )
    )
    ratings = tmp_path / "lists.jsonl"
    ratings.write_text("".join(p.read_text() for p in sorted(EXAMPLES.glob("*-ratings.jsonl"))))
    done = subprocess.run(
        [sys.executable, "-m", "service", "rate", str(events), "--ratings", str(ratings)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_both_replicas_answer_ready(stack):
    assert all(json.loads(body)["status"] == "ready" for body in stack.ready)
    # Docker's own check too: the override's, on each replica's port (the image's asks 8080).
    for service in ("rating-service-1", "rating-service-2"):
        deadline = time.monotonic() + 30
        while (state := stack.state(service))["Health"][
            "Status"
        ] == "starting" and time.monotonic() < deadline:
            time.sleep(0.5)
        assert state["Running"] and state["Health"]["Status"] == "healthy", state


def test_the_demo_figures_equal_the_offline_rate(demo, tmp_path):
    assert demo["rejected"] == []
    outputs, expected = demo["outputs"], offline_rate(tmp_path)
    assert [(o["kind"], o.get("event_id"), o["system"], o["pool"]) for o in outputs] == [
        ("event", "ottawa-fall-open-2025", "cfc", "regular"),
        ("event", "montreal-international-2025", "fide", "standard"),
        ("event", "toronto-scrabble-club-2025-11-20", "naspa", "nwl"),
        ("list", None, "fide", "standard"),
    ]
    # The entries the producer published are the ones rated, in order.
    assert [o["source_id"] for o in outputs] == demo["producer"].split()[-len(DEMO_MESSAGES) :]
    for got, want in zip(outputs, expected):
        players = [
            (p["id"], p["old_rating"], p["new_rating"], p["change"], p["status"])
            for p in got["players"]
        ]
        assert players == [
            (p["id"], p["old_rating"], p["new_rating"], p["change"], p["status"])
            for p in want["players"]
        ]
        # And every other figure (details: K, bonuses, projections...) too; only source_id,
        # the input entry's id (a file line offline), differs.
        assert {**got, "source_id": None} == {**want, "source_id": None}


def test_the_demo_subscriber_outlives_an_idle_stream_and_printed_the_tables(stack, demo):
    time.sleep(max(0.0, demo["last_output"] + IDLE_S - time.monotonic()))
    state = stack.state("demo-subscriber")
    logs = stack.logs("demo-subscriber")
    assert state["Running"], (
        f"demo-subscriber stopped: {state}\n{logs.stdout[-2000:]}{logs.stderr[-2000:]}"
    )
    assert logs.stderr == ""
    messages = [msgspec.json.decode(json.dumps(o), type=RatingsUpdated) for o in demo["outputs"]]
    # A list message carries no names: watch shows the store's, which the demo's events gave.
    named = {(m.system, m.pool, p.id): p.name for m in messages for p in m.players if p.name}
    tables = "".join(
        render(
            m,
            known={
                p.id: named[m.system, m.pool, p.id]
                for p in m.players
                if (m.system, m.pool, p.id) in named
            },
        )
        + "\n\n"
        for m in messages
    )
    # watch follows every partition's stream: the partitions' messages may interleave.
    assert sorted(logs.stdout.split("\n\n")) == sorted(tables.split("\n\n"))
