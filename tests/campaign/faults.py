"""The faults of the campaign and those who inject them (docs/operations/faults.md, D95).

`Injector`: the faults of the service's replicas (SIGKILL, SIGSTOP), on any Redis.
`StandaloneInjector`: those, SIGKILL of the Redis server (restarted from its AOF), and the
network: every replica reaches Redis through a proxy of its own (tests/campaign/proxy.py), so
that a network fault cuts one replica off, as a fault of its host or link would, while the
other may take its stream over. The cluster's (failover, slot moves): tests/campaign/cluster.py.

Each fault is injected at once and, where it lasts, healed by a task of its own after a drawn
time; `heal_all` lifts whatever is still in force at the end of a round, so that the checks
run on a healthy system.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
from collections import Counter
from collections.abc import Awaitable, Callable

from tests.campaign.proxy import FaultyProxy
from tests.integration.processes import PrivateRedis, Services

REPLICA_FAULTS = {"kill-replica": 6, "pause-replica": 10}
STANDALONE_FAULTS = {
    **REPLICA_FAULTS,
    "kill-redis": 3,
    "cut-connections": 20,
    "latency": 14,
    "loss": 14,
    "partition-silent": 11,
    "partition-one-way-up": 11,
    "partition-one-way-down": 11,
}
REPLICAS = 2  # at least this many running (paused ones included)


class Injector:
    """Injects the drawn faults (`weights`: kind -> weight) into one round's replicas."""

    weights = REPLICA_FAULTS

    def __init__(self, rng: random.Random, services: Services):
        self.rng = rng
        self.services = services
        self.injected: Counter[str] = Counter()
        self.paused: set[int] = set()
        self.healing: set[asyncio.Task] = set()
        self.exited: list[tuple[int, int, str]] = []  # replicas that stopped by themselves

    async def start_replicas(self) -> None:
        while len(self.services.running) < REPLICAS:
            await self.start_replica()

    async def start_replica(self) -> None:
        self.services.start()

    async def _retire(self, process: subprocess.Popen) -> None:
        """What a replica had of its own, once it is gone."""

    def possible(self, kind: str) -> bool:
        return True

    async def inject(self) -> str:
        """Draw one fault and inject it; returns its kind."""
        await self.check_replicas()
        kinds = [k for k in self.weights if self.possible(k)]
        kind = self.rng.choices(kinds, [self.weights[k] for k in kinds])[0]
        await getattr(self, "_" + kind.replace("-", "_"))()
        self.injected[kind] += 1
        return kind

    async def check_replicas(self) -> None:
        """A replica that exited by itself (the campaign only SIGKILLs and SIGSTOPs) is noted
        with the end of its log, and another started in its place."""
        for process in list(self.services.running):
            code = process.poll()
            if code is not None:
                self.services.running.remove(process)
                self.exited.append((process.pid, code, self.services.logs(process)[-3000:]))
                await self._retire(process)
        await self.start_replicas()

    def _later(self, delay: float, heal: Callable[[], Awaitable[None] | None]) -> None:
        async def run() -> None:
            await asyncio.sleep(delay)
            done = heal()
            if done is not None:
                await done

        task = asyncio.create_task(run())
        self.healing.add(task)
        task.add_done_callback(self.healing.discard)

    def _victim(self) -> subprocess.Popen:
        return self.rng.choice(self.services.running)

    async def _kill_replica(self) -> None:
        victim = self._victim()
        self.paused.discard(victim.pid)
        self.services.kill(victim)  # SIGKILL, wherever it is (a paused one too)
        await self._retire(victim)
        await self.start_replica()

    async def _pause_replica(self) -> None:
        victim = self._victim()
        if victim.pid in self.paused:
            return  # already paused: counted, as a longer pause
        os.kill(victim.pid, signal.SIGSTOP)
        self.paused.add(victim.pid)
        # Up to 2.5 lease times (1 s): sometimes the lease expires and the other replica takes
        # the stream over while this one is stopped mid-commit.
        self._later(self.rng.uniform(0.05, 2.5), lambda: self._resume(victim))

    def _resume(self, victim: subprocess.Popen) -> None:
        if victim.pid in self.paused:
            self.paused.discard(victim.pid)
            if victim.poll() is None:
                os.kill(victim.pid, signal.SIGCONT)

    async def heal_all(self) -> None:
        """Every fault lifted: the pending heals cancelled, paused replicas continued, Redis
        running, the proxy clean, at least `REPLICAS` replicas running."""
        for task in list(self.healing):
            task.cancel()
        await asyncio.gather(*self.healing, return_exceptions=True)
        for pid in list(self.paused):
            self.paused.discard(pid)
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        await self._heal_servers()
        await self.check_replicas()

    async def _heal_servers(self) -> None:
        """Redis and the network as they were (nothing here: the subclasses')."""

    async def stop(self) -> None:
        for pid in list(self.paused):
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        self.paused.clear()
        self.services.stop_all()


class StandaloneInjector(Injector):
    """The replicas' faults, the Redis server's (`redis`, restarted from its AOF after a
    SIGKILL) and the network's, through a proxy per replica."""

    weights = STANDALONE_FAULTS

    def __init__(self, rng: random.Random, services: Services, redis: PrivateRedis):
        super().__init__(rng, services)
        self.redis = redis
        self.proxies: dict[int, FaultyProxy] = {}  # per replica's pid
        self.redis_down = False

    async def start_replica(self) -> None:
        proxy = FaultyProxy(self.redis.port, random.Random(self.rng.random()))
        await proxy.start()
        self.services.env["RATING_REDIS_URL"] = proxy.url
        self.proxies[self.services.start().pid] = proxy

    async def _retire(self, process: subprocess.Popen) -> None:
        proxy = self.proxies.pop(process.pid, None)
        if proxy is not None:
            await proxy.stop()

    def possible(self, kind: str) -> bool:
        return not (kind == "kill-redis" and self.redis_down)

    async def _kill_redis(self) -> None:
        process = self.redis.process
        assert process is not None
        process.kill()  # SIGKILL: no shutdown, the AOF as it was written (fsync always)
        process.wait(timeout=30)
        self.redis.process = None
        self.redis_down = True
        self._later(self.rng.uniform(0.05, 1.5), self._restart_redis)

    async def _restart_redis(self) -> None:
        if self.redis_down:
            self.redis_down = False  # before the wait: a heal cancelled in it starts no second
            self.redis.start()
        await self.redis.wait_ready()

    def _link(self) -> FaultyProxy:
        """The proxy of a replica drawn at random."""
        return self.proxies[self._victim().pid]

    async def _cut_connections(self) -> None:
        self._link().cut()

    async def _latency(self) -> None:
        proxy = self._link()
        proxy.latency = self.rng.uniform(0.001, 0.15)
        self._later(self.rng.uniform(0.2, 3.0), lambda: setattr(proxy, "latency", 0.0))

    async def _loss(self) -> None:
        proxy = self._link()
        proxy.loss = self.rng.uniform(0.02, 0.5)
        self._later(self.rng.uniform(0.2, 3.0), lambda: setattr(proxy, "loss", 0.0))

    async def _partition_silent(self) -> None:
        proxy = self._link()
        proxy.hold()
        self._later(self.rng.uniform(0.05, 3.0), proxy.release)

    async def _partition_one_way_up(self) -> None:
        await self._one_way("up")

    async def _partition_one_way_down(self) -> None:
        await self._one_way("down")

    async def _one_way(self, way: str) -> None:
        proxy = self._link()
        proxy.drop(way)

        def heal() -> None:
            if way in proxy.dropping:
                proxy.dropping.discard(way)
                proxy.cut()

        self._later(self.rng.uniform(0.05, 2.0), heal)

    async def _heal_servers(self) -> None:
        await self._restart_redis()
        for proxy in self.proxies.values():
            proxy.heal()

    async def stop(self) -> None:
        await super().stop()
        for proxy in self.proxies.values():
            await proxy.stop()
        self.proxies.clear()
