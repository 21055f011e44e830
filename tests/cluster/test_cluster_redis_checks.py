"""The Redis checks on a Redis Cluster (D24): every master is asked, and a refusal names the
node at fault."""

from __future__ import annotations

import pytest

from service.runtime.connection import connect
from service.runtime.metrics import Metrics
from service.runtime.redischecks import RedisChecks, read_facts
from tests.integration.helpers import settings_for

pytestmark = pytest.mark.integration


async def test_every_master_is_checked_and_a_refusal_names_its_node(redis_cluster, cluster_prefix):
    masters = redis_cluster.masters()
    client = await connect(redis_cluster.url)
    settings = settings_for(redis_cluster.url, cluster_prefix, partitions="domains")
    checks = RedisChecks(client, settings, Metrics(), {})
    odd = masters[1]
    try:
        facts = await read_facts(client)
        assert sorted(f.node for f in facts) == sorted(f"127.0.0.1:{m.port}" for m in masters)
        assert all(f.role == "master" for f in facts)
        odd.client().config_set("maxmemory-policy", "volatile-lru")
        refused = await checks.at_start()
        assert refused is not None
        assert refused.startswith(
            f"Redis at {redis_cluster.url} (node 127.0.0.1:{odd.port}) is refused: "
            "maxmemory-policy volatile-lru"
        )
        assert refused.count("is refused") == 1  # the other masters pass
    finally:
        odd.client().config_set("maxmemory-policy", "noeviction")
        await client.aclose()
