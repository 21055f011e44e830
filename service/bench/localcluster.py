"""A local Redis Cluster, for `rating-service bench` (service/bench/cluster.py) and the
cluster tests: masters (and optional replicas) on free loopback ports, data under /tmp,
slots assigned and nodes met with CLUSTER ADDSLOTSRANGE / MEET / REPLICATE (no redis-cli
needed).

`LocalCluster(masters=3).start()`, `.url` (a node; clients find the others), `.stop()`. What
a test does to it while the service runs (move a slot, fail a master over) is the tests'
own: tests/cluster/reshaping.py.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import redis

from service.runtime.embedded import find_binary, free_port, port_is_free

SLOTS = 16384
NODE_TIMEOUT_MS = 2000  # cluster-node-timeout: how soon a dead master is failed over


@dataclass
class Node:
    port: int
    dir: Path
    process: subprocess.Popen | None = None
    id: str = ""

    def client(self) -> redis.Redis:
        return redis.Redis(
            host="127.0.0.1", port=self.port, socket_timeout=10, decode_responses=True
        )


def _ports(count: int) -> list[int]:
    """Free loopback ports whose cluster bus ports (port + 10000) are free too."""
    ports: list[int] = []
    while len(ports) < count:
        port = free_port()
        if port not in ports and port + 10_000 not in ports and port_is_free(port + 10_000):
            ports.append(port)
    return ports


class LocalCluster:
    """A Redis Cluster of `masters` masters, each with `replicas` replicas, on loopback."""

    def __init__(self, masters: int = 3, replicas: int = 0, *extra: str, binary: str | None = None):
        """`binary`: the server to run (default: a redis-server on PATH, else the embedded
        server's, service/runtime/embedded.py); `extra`: more server options."""
        self.masters_count = masters
        self.replicas_count = replicas
        self.extra = extra
        self.root = Path(tempfile.mkdtemp(prefix="redis-cluster-"))
        self.binary = binary or find_binary(prefer="path").path
        # The ports are chosen now: `url` is known before `start()` (a client may wait for it).
        self.nodes = [
            Node(port, self.root / f"node{n}")
            for n, port in enumerate(_ports(masters * (1 + replicas)))
        ]

    @property
    def url(self) -> str:
        """A URL of the first master (any node would do: clients discover the others)."""
        return f"redis://127.0.0.1:{self.nodes[0].port}/0"

    def node_url(self, node: Node) -> str:
        return f"redis://127.0.0.1:{node.port}/0"

    # ------------------------------------------------------------------ start / stop
    def start(self, timeout: float = 20.0) -> LocalCluster:
        for node in self.nodes:
            node.dir.mkdir()
            self._launch(node)
        for node in self.nodes:
            self.wait_started(node, timeout, attempts=3)
            node.id = node.client().execute_command("CLUSTER", "MYID")
        masters = self.nodes[: self.masters_count]
        share = SLOTS // len(masters)
        for n, node in enumerate(masters):
            last = SLOTS - 1 if n == len(masters) - 1 else (n + 1) * share - 1
            node.client().execute_command("CLUSTER", "ADDSLOTSRANGE", n * share, last)
        first = self.nodes[0].client()
        for node in self.nodes[1:]:
            first.execute_command("CLUSTER", "MEET", "127.0.0.1", node.port)
        deadline = time.monotonic() + timeout
        self._wait(
            lambda: all(
                len(n.client().execute_command("CLUSTER", "NODES").splitlines()) == len(self.nodes)
                for n in self.nodes
            ),
            deadline,
            "the nodes did not meet",
        )
        replicas = self.nodes[self.masters_count :]
        for r, node in enumerate(replicas):
            node.client().execute_command("CLUSTER", "REPLICATE", masters[r % len(masters)].id)
        self._wait(
            lambda: all(
                n.client().info("replication").get("master_link_status") == "up" for n in replicas
            ),
            deadline,
            "the replicas did not sync",
        )
        self.wait_ok(deadline - time.monotonic())
        return self

    def _launch(self, node: Node) -> None:
        with open(node.dir / "log", "ab") as output:  # what it prints before its log is open
            node.process = subprocess.Popen(
                [
                    self.binary,
                    "--port",
                    str(node.port),
                    "--bind",
                    "127.0.0.1",
                    "--dir",
                    str(node.dir),
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                    "--cluster-node-timeout",
                    str(NODE_TIMEOUT_MS),
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--cluster-replica-validity-factor",
                    "0",
                    "--logfile",
                    str(node.dir / "log"),
                    *self.extra,
                ],
                stdout=output,
                stderr=output,
            )

    def wait_started(self, node: Node, timeout: float = 20.0, attempts: int = 1) -> None:
        """Until the node answers PING. A node that exits because its port or bus port was
        taken between `_ports` and its launch (another process's connection, say) is
        launched again on new ports if `attempts` allows (a new node only: `start` gives 3;
        a member launched again on its data keeps its port), as the embedded server does;
        `url` then names the new port. Any other exit, or no answer within `timeout`, fails
        with its log's last line."""
        for attempt in range(attempts):
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if node.process is not None and node.process.poll() is not None:
                    break
                try:
                    if node.client().ping():
                        return
                except redis.RedisError:
                    pass
                time.sleep(0.05)
            said = self._log(node)
            if node.process is not None and node.process.poll() is None:
                problem = f"no answer in {timeout:g} s"
            else:
                problem = f"exit code {node.process.returncode if node.process else '?'}"
            if "in use" in said and attempt + 1 < attempts:
                taken = {n.port for n in self.nodes}
                node.port = next(p for p in _ports(len(taken) + 1) if p not in taken)
                shutil.rmtree(node.dir, ignore_errors=True)
                node.dir.mkdir()
                self._launch(node)
                continue
            last = said.strip().splitlines()[-1:] or [""]
            raise AssertionError(
                f"the cluster node on port {node.port} did not start ({problem}): {last[0]}"
            )

    @staticmethod
    def _log(node: Node) -> str:
        try:
            return (node.dir / "log").read_text(errors="replace")
        except OSError:
            return ""

    def wait_ok(self, timeout: float = 20.0) -> None:
        """Until every live node says cluster_state:ok and agrees on who owns every slot."""
        deadline = time.monotonic() + timeout

        def agreed() -> bool:
            views = set()
            for node in self.live_nodes():
                client = node.client()
                if "cluster_state:ok" not in client.execute_command("CLUSTER", "INFO"):
                    return False
                views.add(
                    tuple(
                        sorted(
                            (s[0], s[1], s[2][1])
                            for s in client.execute_command("CLUSTER", "SLOTS")
                        )
                    )
                )
            return len(views) == 1

        self._wait(agreed, deadline, "the cluster did not become ok")

    @staticmethod
    def _wait(check, deadline: float, problem: str) -> None:
        while time.monotonic() < deadline:
            try:
                if check():
                    return
            except redis.RedisError:
                pass
            time.sleep(0.05)
        raise AssertionError(problem)

    def live_nodes(self) -> list[Node]:
        return [n for n in self.nodes if n.process is not None and n.process.poll() is None]

    def stop(self) -> None:
        for node in self.nodes:
            if node.process is not None:
                node.process.terminate()
        for node in self.nodes:
            if node.process is not None:
                try:
                    node.process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    node.process.kill()
                    node.process.wait()
                node.process = None
        shutil.rmtree(self.root, ignore_errors=True)
