"""Is this Redis fit to hold the ratings? Its configuration, read by INFO at start-up and
every few seconds while running (docs/operations/monitoring.md; D24, D25).

INFO, not CONFIG GET: managed Redis services and ACL'd users often refuse CONFIG. On a Redis
Cluster every master is asked. What is judged (`findings`, pure):

    eviction  maxmemory-policy other than noeviction: evicted records, markers and
              timelines make every later rating wrong. Refused (RATING_ALLOW_EVICTION=true:
              a warning).
    replica   role:slave: the server follows a master and does not take the writes. Refused.
    aof       appendonly no: a restart loses the commits since the last snapshot. A warning
              (RATING_REQUIRE_AOF=true: refused).

At start-up a refusal is the one line `serve` exits with; while running it holds the
replica off consuming (its subscribers do not read, it is not ready: Health.unready) until
the check passes again. Memory: used_memory / maxmemory of the fullest master as a gauge,
one line when it crosses 0.8, one when it crosses 0.9, and one when it falls back.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import structlog
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import RedisClusterException, RedisError, ResponseError

from service.runtime.connection import TRANSIENT, Cluster
from service.runtime.metrics import Metrics
from service.runtime.settings import Settings, redact, redact_error

log = structlog.get_logger("rating.redis")

CHECK_EVERY = 5.0  # seconds between two checks while running
THRESHOLDS = (0.8, 0.9)  # memory used / maxmemory: high, nearly full
SETTLE = 0.02  # a level is left on the way down only this far below its threshold
CHECKS = ("eviction", "replica", "aof")
HOLD = "redis"  # the key of the checks' reason in Health.unready


class NodeFacts(msgspec.Struct, frozen=True):
    """What INFO says of one server (a master of a cluster: `node` is its host:port)."""

    node: str
    role: str
    master: str | None  # the master a replica follows, host:port
    policy: str
    maxmemory: int
    used_memory: int
    aof: bool


class Finding(msgspec.Struct, frozen=True):
    """One check that fails on one node: refused (start-up fails, consuming is held) or a
    warning; what is wrong and how to fix it, for a person."""

    check: str  # one of CHECKS
    node: str
    refused: bool
    problem: str
    fix: str
    brief: str  # the problem without addresses (the readiness answer)


def facts_of(node: str, info: dict[str, Any]) -> NodeFacts:
    """The facts of one INFO reply (redis-py's parsed dict)."""
    master = info.get("master_host")
    return NodeFacts(
        node=node,
        role=str(info.get("role", "master")),
        master=f"{master}:{info.get('master_port')}" if master else None,
        policy=str(info.get("maxmemory_policy", "noeviction")),
        maxmemory=int(info.get("maxmemory") or 0),
        used_memory=int(info.get("used_memory") or 0),
        aof=bool(int(info.get("aof_enabled") or 0)),
    )


MAP_TRIES = 10  # slot maps read again while a "master" says it is a replica (a failover)


async def read_facts(client: Any) -> list[NodeFacts]:
    """INFO of the server, or of every master of a Redis Cluster. On a cluster, a master of
    the client's slot map that answers role:slave is a failover the map has not caught up
    with (a killed master back as its successor's replica): the map is read again, for a few
    seconds, before that node is judged (the campaign's cluster rounds found a start-up
    refused so, D97)."""
    if not isinstance(client, Cluster):
        return [facts_of("", await client.info())]
    for attempt in range(MAP_TRIES):
        replies = await client.info(target_nodes=RedisCluster.PRIMARIES)
        if "redis_version" in replies:  # one master: its reply, not a reply per node
            replies = {client.get_primaries()[0].name: replies}
        facts = [facts_of(node, info) for node, info in sorted(replies.items())]
        if all(f.role == "master" for f in facts) or attempt == MAP_TRIES - 1:
            return facts
        await asyncio.sleep(0.1 * (attempt + 1))
        await client.refresh()
    return facts


def findings(facts: list[NodeFacts], settings: Settings) -> list[Finding]:
    """The checks that fail, node by node (D24)."""
    found = []
    for node in facts:
        if node.role != "master":
            follows = f" of {node.master}" if node.master else ""
            found.append(
                Finding(
                    "replica",
                    node.node,
                    True,
                    f"a replica{follows} (role:{node.role}): it does not take the service's writes",
                    "point RATING_REDIS_URL at its master"
                    + (f" ({node.master})" if node.master else ""),
                    f"the server is a replica (role:{node.role})",
                )
            )
            continue  # a replica's memory and persistence are its master's business
        if node.policy != "noeviction":
            found.append(
                Finding(
                    "eviction",
                    node.node,
                    not settings.allow_eviction,
                    f"maxmemory-policy {node.policy}: when memory is full Redis deletes keys (records, "
                    "markers, timelines, histories) and every rating after is wrong",
                    "CONFIG SET maxmemory-policy noeviction, and maxmemory-policy noeviction in redis.conf"
                    + (
                        ""
                        if settings.allow_eviction
                        else " (or RATING_ALLOW_EVICTION=true to run anyway)"
                    ),
                    f"maxmemory-policy {node.policy} evicts keys",
                )
            )
        if not node.aof:
            found.append(
                Finding(
                    "aof",
                    node.node,
                    settings.require_aof,
                    "appendonly no: a restart loses every commit since the last snapshot",
                    "CONFIG SET appendonly yes, and appendonly yes in redis.conf"
                    + (
                        " (or RATING_REQUIRE_AOF=false to run anyway)"
                        if settings.require_aof
                        else ""
                    ),
                    "AOF persistence is off (RATING_REQUIRE_AOF)",
                )
            )
    return found


def memory_ratio(facts: list[NodeFacts]) -> tuple[float, str]:
    """used_memory / maxmemory of the fullest master with a maxmemory, and its node; 0 when
    none has one."""
    ratios = [
        (f.used_memory / f.maxmemory, f.node) for f in facts if f.maxmemory and f.role == "master"
    ]
    return max(ratios, default=(0.0, ""))


def memory_level(ratio: float, was: int) -> int:
    """0 under 0.8, 1 from 0.8, 2 from 0.9; a level is left downwards only SETTLE below its
    threshold, so that a ratio hovering at one does not say so at every check."""
    up = sum(ratio >= t for t in THRESHOLDS)
    if up >= was:
        return up
    return max(up, min(was, sum(ratio >= t - SETTLE for t in THRESHOLDS)))


class RedisChecks:
    """The checks of one replica's Redis: at start-up (`at_start`) and while running (`run`),
    their gauges, their lines once per change, and the hold on consuming (`unready`, which
    Health and the subscribers read)."""

    def __init__(self, client: Any, settings: Settings, metrics: Metrics, unready: dict[str, str]):
        self.client, self.settings, self.metrics, self.unready = client, settings, metrics, unready
        self.failing: dict[tuple[str, str], Finding] = {}
        self.level = 0
        self.refused_info = False  # INFO refused (an ACL): said once

    def where(self, node: str) -> str:
        url = redact(self.settings.redis_url)
        return f"{url} (node {node})" if node else url

    def line(self, finding: Finding) -> str:
        """A refusal as the one line `serve` exits with."""
        return (
            f"Redis at {self.where(finding.node)} is refused: {finding.problem}; fix: {finding.fix}"
        )

    async def at_start(self) -> str | None:
        """The start-up's checks: the line that refuses the server (the start-up fails with
        it), else None (warnings logged)."""
        facts = await self._read()
        if facts is None:
            return None
        found = findings(facts, self.settings)
        refusals = [f for f in found if f.refused]
        if refusals:
            return "; ".join(self.line(f) for f in refusals)
        self._judge(facts, found)
        return None

    async def run(self, every: float = CHECK_EVERY) -> None:
        """The side task: the checks again every `every` seconds (while Redis is away, the
        outage log says so: nothing here)."""
        while True:
            await asyncio.sleep(every)
            try:
                await self.check()
            except (RedisError, RedisClusterException, *TRANSIENT):
                continue
            except Exception as exc:  # never the end of the checks
                log.error("redis checks failed, trying again", error=f"{type(exc).__name__}: {exc}")

    async def check(self) -> None:
        """The checks once while running: what changed is said, the gauges and the hold
        follow."""
        facts = await self._read()
        if facts is not None:
            self._judge(facts, findings(facts, self.settings))

    async def _read(self) -> list[NodeFacts] | None:
        """The facts, or None when INFO is refused (an ACL without +info; said once)."""
        try:
            facts = await read_facts(self.client)
        except ResponseError as exc:  # NoPermissionError, or INFO renamed away
            if isinstance(exc, TRANSIENT):
                raise
            if not self.refused_info:
                self.refused_info = True
                log.warning(
                    "cannot check the redis configuration",
                    redis=redact(self.settings.redis_url),
                    error=f"{type(exc).__name__}: {redact_error(exc, self.settings.redis_url)}",
                    fix="allow INFO to the service's user (+info, docs/operations/security.md)",
                )
            return None
        self.refused_info = False
        return facts

    def _judge(self, facts: list[NodeFacts], found: list[Finding]) -> None:
        """Log what changed, keep the gauges and the hold."""
        now = {(f.check, f.node): f for f in found}
        for key, finding in now.items():
            if key not in self.failing:
                self._said_failing(finding)
        held_before = bool(self.unready.get(HOLD))
        refusals = [f for f in found if f.refused]
        if refusals:
            self.unready[HOLD] = "; ".join(f"refused: {f.brief} (see the log)" for f in refusals)
        else:
            self.unready.pop(HOLD, None)
        for check, node in self.failing.keys() - now.keys():
            log.warning(
                "redis check passes again",
                check=check,
                redis=self.where(node),
                consuming="resumes" if held_before and not refusals else None,
            )
        self.failing = now
        for check in CHECKS:
            self.metrics.redis_check_failing.labels(check).set(any(f.check == check for f in found))
        self.metrics.consuming_held.set(1 if refusals else 0)
        self._memory(facts)

    def _said_failing(self, finding: Finding) -> None:
        where = self.where(finding.node)
        if finding.refused:  # only while running: at start-up a refusal ends it
            log.error(
                "redis check failed: consuming stops until it passes",
                check=finding.check,
                redis=where,
                problem=finding.problem,
                fix=finding.fix,
            )
        else:
            log.warning(
                "redis check failed",
                check=finding.check,
                redis=where,
                problem=finding.problem,
                fix=finding.fix,
            )

    def _memory(self, facts: list[NodeFacts]) -> None:
        """The memory gauge, and a line when its level changes."""
        ratio, node = memory_ratio(facts)
        self.metrics.redis_memory_ratio.set(round(ratio, 4))
        level = memory_level(ratio, self.level)
        if level == self.level:
            return
        said = {"redis": self.where(node), "used_ratio": round(ratio, 3)}
        if level == 2:
            log.error(
                "redis memory nearly full: commits fail (OOM) when it is",
                fix="raise maxmemory or give Redis more memory",
                **said,
            )
        elif level == 1:
            log.warning("redis memory high", **said)
        else:
            log.warning("redis memory back under 0.8", **said)
        self.level = level
