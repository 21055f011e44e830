"""The campaign on a Redis Cluster (docs/operations/faults.md, D97): three masters with a
replica each (service/bench/localcluster.py), the round's input stream and its keys under one
hash tag (one slot), and the cluster's faults besides the replicas':

- `fail-over`: a master SIGKILLed (the stream's own, mostly), its replica promoted by the
  cluster (cluster-node-timeout 2 s; meanwhile the slots of a dead master answer CLUSTERDOWN),
  the killed node started again on its data, where it rejoins as its successor's replica;
- `switch-over`: CLUSTER FAILOVER on the replica of the stream's master (an operator's
  planned switch: the replica catches up first, nothing lost);
- `move-slot`: the stream's slot moved to another master while the service commits, keys
  MIGRATEd two at a time (clients meanwhile get ASK and TRYAGAIN), as `redis-cli --cluster
  reshard` does.

Replication is asynchronous: a master killed right after a commit may take the commit with
it. The publisher therefore waits for its entry to reach the replica (WAIT 1, D86's `--replicas
1`): an entry so acknowledged survives the failover; the service's own commits that did not
reach the replica are lost with the master, and the service must then apply their entries
again from the stream, as if they had never been applied (docs/operations/durability.md).
"""

from __future__ import annotations

import asyncio
import random
import time

import msgspec
import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from service.entryids import entry_order
from service.runtime.connection import TRANSIENT, Cluster, connect
from service.runtime.replies import text
from service.runtime.store import DATA_FIELD
from tests.campaign.faults import REPLICA_FAULTS, Injector
from tests.campaign.rounds import Publisher
from tests.cluster.reshaping import ClusterUnderTest
from tests.integration.processes import Services

CLUSTER_FAULTS = {
    **REPLICA_FAULTS,
    "fail-over": 5,
    "switch-over": 5,
    "move-slot": 6,
}


async def replicated(cluster: Cluster, key: str, probe: str) -> None:
    """Until the replica of `key`'s master has every write made before (a write of `probe`,
    a key of the same slot, then WAIT 1 on its connection: replication keeps order)."""
    while True:
        try:
            owner = await cluster.owner(key)
            async with owner.pipeline(transaction=False) as pipe:
                pipe.incr(probe)
                pipe.execute_command("WAIT", 1, 2000)
                if int((await pipe.execute())[-1]) >= 1:
                    return
        except (*TRANSIENT, ResponseError):
            await cluster.refresh()
        await asyncio.sleep(0.05)


class ClusterPublisher(Publisher):
    """The publisher of D86's `--replicas 1`: an entry counts as published once the replica
    of its master has it (WAIT 1). After a failover that lost it, it is added again."""

    def __init__(self, client: Cluster, stream: str, probe: str):
        super().__init__(client, stream)
        self.cluster = client
        self.probe = probe  # a key of the stream's slot, written to ask WAIT about the past

    async def add(self, message: dict) -> None:
        data = msgspec.json.encode(message)
        entry_id = self.next_id()
        while True:
            try:
                if await self._landed(entry_id, data):
                    return
            except (*TRANSIENT, ResponseError):
                await self.cluster.refresh()
            await asyncio.sleep(0.05)

    async def replicated(self) -> None:
        await replicated(self.cluster, self.stream, self.probe)

    async def _landed(self, entry_id: str, data: bytes) -> bool:
        """Add the entry unless the stream has it; True once a replica has acknowledged it
        (the write of `probe` after it, on the same connection: replication keeps order)."""
        owner = await self.cluster.owner(self.stream)
        found = await owner.xrange(self.stream, entry_id, entry_id)
        if found:
            assert found[0][1][DATA_FIELD.encode()] == data, f"entry {entry_id} is another's"
        elif await owner.exists(self.stream):
            last = (await owner.xinfo_stream(self.stream))["last-generated-id"]
            if entry_order(text(last)) >= entry_order(entry_id):
                raise AssertionError(f"entry {entry_id} lost, and the stream went on past it")
        async with owner.pipeline(transaction=False) as pipe:
            if not found:
                pipe.xadd(self.stream, {DATA_FIELD: data}, id=entry_id)
            pipe.incr(self.probe)
            pipe.execute_command("WAIT", 1, 2000)
            answers = await pipe.execute()
        return int(answers[-1]) >= 1


class ClusterInjector(Injector):
    weights = CLUSTER_FAULTS

    def __init__(
        self, rng: random.Random, services: Services, cluster: ClusterUnderTest, stream: str
    ):
        super().__init__(rng, services)
        self.cluster = cluster
        self.stream = stream

    def _master(self):
        owner = self.cluster.owner(self.cluster.slot_of(self.stream))
        if self.rng.random() < 0.7:
            return owner
        return self.rng.choice(self.cluster.masters())

    async def _fail_over(self) -> None:
        await asyncio.to_thread(self._fail_over_now)

    def _fail_over_now(self) -> None:
        victim = self._master()
        self.cluster.fail_over(victim, timeout=60)
        rejoin(self.cluster, victim)

    async def _switch_over(self) -> None:
        await asyncio.to_thread(self._switch_over_now)

    def _switch_over_now(self) -> None:
        """CLUSTER FAILOVER, asked again while it does not happen: a manual failover is
        abandoned after twice cluster-node-timeout when the replica cannot catch up in time
        (a loaded machine)."""
        master = self.cluster.owner(self.cluster.slot_of(self.stream))
        replica = next(
            (
                n
                for n in self.cluster.live_nodes()
                if n.client().execute_command("ROLE")[0] == "slave"
                and int(n.client().execute_command("ROLE")[2]) == master.port
            ),
            None,  # (a StopIteration cannot cross asyncio.to_thread)
        )
        if replica is None:
            raise AssertionError(f"the master {master.port} has no replica to switch over to")
        deadline = time.monotonic() + 120
        for _ in range(10):
            self.cluster._wait(
                lambda: replica.client().info("replication").get("master_link_status") == "up",
                deadline,
                f"the replica {replica.port} is not in sync",
            )
            replica.client().execute_command("CLUSTER", "FAILOVER")
            try:
                self.cluster._wait(
                    lambda: replica.client().execute_command("ROLE")[0] == "master",
                    min(deadline, time.monotonic() + 10),
                    "the switch-over did not happen",
                )
                break
            except AssertionError:
                continue
        else:
            raise AssertionError(f"the switch-over to {replica.port} did not happen in 10 tries")
        self.cluster.wait_ok(deadline - time.monotonic())

    async def _move_slot(self) -> None:
        await asyncio.to_thread(self.cluster.move_key_slot, self.stream, None, batch=2)


def rejoin(cluster: ClusterUnderTest, node, timeout: float = 60.0) -> None:
    """Start a killed node again on its data and wait until it is an in-sync replica."""
    cluster._launch(node)
    deadline = time.monotonic() + timeout
    cluster.wait_started(node, timeout)
    cluster._wait(
        lambda: node.client().info("replication").get("master_link_status") == "up",
        deadline,
        f"node {node.port} did not rejoin as a replica",
    )
    cluster.wait_ok(deadline - time.monotonic())


class ClusterSite:
    """Where the cluster rounds run: one local cluster for the campaign."""

    name = "cluster"
    weights = CLUSTER_FAULTS
    loses_commits = True  # asynchronous replication: a master can die with its last commits

    def __init__(self) -> None:
        self.cluster = ClusterUnderTest(masters=3, replicas=1)

    async def start(self) -> None:
        await asyncio.to_thread(self.cluster.start)

    def stop(self) -> None:
        self.cluster.stop()

    @property
    def url(self) -> str:
        return self.cluster.url

    def prefix(self, seed: int) -> str:
        return "{" + f"c{seed}" + "}"  # one slot: the commits are MULTI/EXEC on one master

    async def client(self) -> aioredis.Redis:
        return await connect(self.url)  # type: ignore[return-value]

    async def clear(self, client, prefix: str) -> None:
        await asyncio.to_thread(self.cluster.delete_matching, f"*{prefix[1:-1]}*")

    def publisher(self, client, stream: str) -> Publisher:
        return ClusterPublisher(client, stream, f"{self.prefix_of(stream)}.probe")

    @staticmethod
    def prefix_of(stream: str) -> str:
        return stream.partition(".")[0]

    def injector(self, rng: random.Random, services: Services, stream: str) -> Injector:
        return ClusterInjector(rng, services, self.cluster, stream)
