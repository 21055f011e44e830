"""`rating-service backup` and `restore` on a Redis Cluster (D20): each partition copied in one
transaction on its slot's master while `rating-service serve` commits on every partition; the
copy restored onto a standalone server equals the cluster's store key for key, and written
back onto the cluster (`--force`) equals it again."""

from __future__ import annotations

import pytest

from service.runtime.connection import connect
from tests.cluster.partitioned import (
    check_partitions,
    load_lists,
    mixed_season,
    publish_routed,
    serve_on,
)
from tests.integration.helpers import settings_for
from tests.integration.test_backup import cli, dump, servers

pytestmark = pytest.mark.integration
__all__ = ["servers"]  # the fixture, imported


def cluster_dump(cluster, prefix: str) -> dict:
    found: dict = {}
    for node in cluster.masters():
        found.update(dump(cluster.node_url(node), f"*{prefix}*"))
    return found


async def test_a_cluster_store_backed_up_while_rated_restores_key_for_key(
    redis_cluster, cluster_prefix, tmp_path, servers
):
    settings = settings_for(redis_cluster.url, cluster_prefix, partitions="domains")
    client = await connect(redis_cluster.url)
    services = serve_on(settings)
    env = services.env
    try:
        await load_lists(client, settings)
        services.start()
        messages = mixed_season(60, seed=8)
        await publish_routed(client, settings, messages[:30])
        live = tmp_path / "live.backup"
        done = cli(env, "backup", str(live))  # while the service commits
        assert done.returncode == 0, done.stderr
        await publish_routed(client, settings, messages[30:])
        await check_partitions(client, settings, messages, tmp_path)
    finally:
        services.stop_all()
        await client.aclose()
    original = cluster_dump(redis_cluster, cluster_prefix)
    file = tmp_path / "store.backup"
    done = cli(env, "backup", str(file))
    assert done.returncode == 0, done.stderr
    assert "layout domains" in done.stdout and "fide.standard" in done.stdout

    standalone = servers("valkey")
    done = cli(env, "restore", str(file), "--redis-url", standalone.url)
    assert done.returncode == 0, done.stderr
    assert dump(standalone.url) == original

    one = cli(env, "backup", str(tmp_path / "fide.backup"), "--stream", "fide.standard")
    assert one.returncode == 0 and "naspa" not in one.stdout, one.stdout

    done = cli(env, "restore", str(file), "--force")  # onto the cluster, over its own store
    assert done.returncode == 0, done.stderr
    assert cluster_dump(redis_cluster, cluster_prefix) == original
