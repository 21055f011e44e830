"""The ACL rule for a Redis Cluster (docs/operations/security.md), set on every node: the
service runs the domains layout under it, its read API answers under it, and the user can
touch nothing else."""

from __future__ import annotations

import pytest
import redis.asyncio as aioredis
from redis.exceptions import NoPermissionError

from service.runtime.connection import connect
from service.runtime.queries import ReadModel
from tests.cluster.partitioned import (
    check_partitions,
    load_lists,
    mixed_season,
    publish_routed,
    serve_on,
)
from tests.integration.helpers import settings_for
from tests.integration.processes import ROOT

pytestmark = pytest.mark.integration


def cluster_acl_rule(prefix: str, password: str) -> list[str]:
    """The rule of docs/operations/security.md for a cluster, on this test's stream names."""
    line = next(
        line
        for line in (ROOT / "docs" / "operations" / "security.md").read_text().splitlines()
        if "ACL SETUSER rating-service" in line and "+cluster|slots" in line
    )
    names = {
        "events.finished": f"{prefix}.events",
        "ratings.updated": f"{prefix}.ratings",
        "events.rejected": f"{prefix}.rejected",
    }
    rule = []
    for word in line.split("ACL SETUSER ", 1)[1].split():
        for old, new in names.items():
            word = word.replace(old, new)
        rule.append(f">{password}" if word == ">PASSWORD" else word)
    return rule


async def test_the_readme_rule_runs_the_service_on_a_cluster_and_nothing_more(
    redis_cluster, cluster_prefix, tmp_path
):
    rule = cluster_acl_rule(cluster_prefix, "cl-pw")
    for node in redis_cluster.nodes:
        node.client().execute_command("ACL", "SETUSER", *rule)
    url = f"redis://rating-service:cl-pw@127.0.0.1:{redis_cluster.nodes[1].port}/0"
    admin = await connect(redis_cluster.url)
    settings = settings_for(url, cluster_prefix, partitions="domains")
    services = serve_on(settings)
    try:
        await load_lists(admin, settings)
        services.start()
        messages = mixed_season(30, seed=8)
        await publish_routed(admin, settings, messages)
        try:
            await check_partitions(admin, settings, messages, tmp_path)
        except Exception as exc:
            raise AssertionError(f"{exc}; logs:\n{services.logs()[-3000:]}") from None
        assert "NOPERM" not in services.logs() and "cl-pw" not in services.logs()
        user = await connect(url)
        reads = ReadModel(user, list(settings.layout.inputs))
        page = await reads.players("fide", "standard", limit=3)
        assert page is not None and len(page.players) == 3 and page.players[0].rank == 1
        assert await reads.event(messages[0]["event_id"]) is not None
        with pytest.raises(NoPermissionError):
            await user.get("someone-else:key")
        await user.aclose()
        plain = aioredis.Redis.from_url(url)
        with pytest.raises(NoPermissionError):
            await plain.flushall()
        await plain.aclose()
    finally:
        services.stop_all()
        await admin.aclose()
        for node in redis_cluster.nodes:
            node.client().execute_command("ACL", "DELUSER", "rating-service")
