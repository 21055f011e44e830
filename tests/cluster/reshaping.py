"""What a cluster test does to the local cluster while the service runs: who owns a slot,
move a slot to another master (SETSLOT IMPORTING / MIGRATING, MIGRATE, SETSLOT NODE, as
`redis-cli --cluster reshard` does), fail a master over to its replica, and delete a test's
keys on every master. The cluster itself (start, stop, URLs) is the bench's:
service/bench/localcluster.py.

`ClusterUnderTest(masters=3).start()`, then `.move_slot(slot)` or `.move_key_slot(key)`,
`.fail_over(master)`; the test session's one is the `redis_cluster` fixture
(tests/cluster/conftest.py).
"""

from __future__ import annotations

import time

from redis.cluster import key_slot

from service.bench.localcluster import LocalCluster, Node


class ClusterUnderTest(LocalCluster):
    """A LocalCluster with the operations of the cluster tests."""

    def delete_matching(self, pattern: str) -> int:
        """Delete the keys matching `pattern` on every live master; how many."""
        deleted = 0
        for node in self.masters():
            client = node.client()
            for key in list(client.scan_iter(match=pattern, count=1000)):
                deleted += client.delete(key)
        return deleted

    # ------------------------------------------------------------------ who owns what
    def masters(self) -> list[Node]:
        """The live masters, in the order of their ports."""
        roles = {}
        for node in self.live_nodes():
            roles[node.id] = "master" in node.client().execute_command("ROLE")[0]
        return [n for n in self.live_nodes() if roles[n.id]]

    def owner(self, slot: int) -> Node:
        """The master that owns `slot` (as the first live node sees it)."""
        client = self.live_nodes()[0].client()
        for start, end, master, *_ in client.execute_command("CLUSTER", "SLOTS"):
            if start <= slot <= end:
                return next(n for n in self.nodes if n.port == int(master[1]))
        raise AssertionError(f"slot {slot} is not covered")

    @staticmethod
    def slot_of(key: str) -> int:
        return key_slot(key.encode())

    # ------------------------------------------------------------------ operations
    def move_slot(
        self, slot: int, to: Node | None = None, *, batch: int = 10, pause: float = 0.0
    ) -> Node:
        """Move `slot` to master `to` (default: the next master after its owner) as
        `redis-cli --cluster reshard` does: the target IMPORTING, the source MIGRATING, the
        keys MIGRATEd `batch` at a time (`pause` seconds between batches: clients meanwhile
        get ASK / TRYAGAIN), then SETSLOT NODE on the target, the source and every other
        master. Returns the new owner."""
        source = self.owner(slot)
        masters = self.masters()
        if to is None:
            to = masters[(masters.index(source) + 1) % len(masters)]
        if to.port == source.port:
            return to
        src, dst = source.client(), to.client()
        dst.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", source.id)
        src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", to.id)
        while True:
            keys = src.execute_command("CLUSTER", "GETKEYSINSLOT", slot, batch)
            if not keys:
                break
            src.execute_command("MIGRATE", "127.0.0.1", to.port, "", 0, 10_000, "KEYS", *keys)
            if pause:
                time.sleep(pause)
        dst.execute_command("CLUSTER", "SETSLOT", slot, "NODE", to.id)
        src.execute_command("CLUSTER", "SETSLOT", slot, "NODE", to.id)
        for node in masters:
            if node.port not in (source.port, to.port):
                node.client().execute_command("CLUSTER", "SETSLOT", slot, "NODE", to.id)
        return to

    def move_key_slot(self, key: str, to: Node | None = None, **options) -> Node:
        """Move the slot of `key` (e.g. a partition's stream: all its keys share it)."""
        return self.move_slot(self.slot_of(key), to, **options)

    def fail_over(self, master: Node, timeout: float = 20.0) -> Node:
        """Kill `master` (SIGKILL) and wait until one of its replicas owns its slots; returns it."""
        replicas = [
            n
            for n in self.live_nodes()
            if n.port != master.port
            and n.client().execute_command("ROLE")[0] == "slave"
            and int(n.client().execute_command("ROLE")[2]) == master.port
        ]
        if not replicas:
            raise AssertionError(f"master on port {master.port} has no replica to fail over to")
        assert master.process is not None
        master.process.kill()
        master.process.wait()
        master.process = None
        deadline = time.monotonic() + timeout
        self._wait(
            lambda: any(r.client().execute_command("ROLE")[0] == "master" for r in replicas),
            deadline,
            "no replica took over",
        )
        self.wait_ok(deadline - time.monotonic())
        return next(r for r in replicas if r.client().execute_command("ROLE")[0] == "master")
