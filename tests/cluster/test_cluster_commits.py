"""The processor on a Redis Cluster (service/runtime/connection.py): telling a cluster from a
standalone server, the domains layout's commits on the slots' owners, and a slot moved to
another master while commits run (MOVED / ASK / TRYAGAIN tried again: nothing lost, nothing
twice, nothing pending, never a dead letter)."""

from __future__ import annotations

import asyncio
import json

import pytest

from service.engine.registry import default_registry
from service.runtime.connection import Cluster, ConnectionRefused, connect, is_cluster
from service.runtime.processor import StreamProcessor
from tests.cluster.partitioned import check_partitions, load_lists, mixed_season, publish_routed
from tests.integration.helpers import settings_for
from tests.integration.processes import club_list, random_events

pytestmark = pytest.mark.integration


@pytest.fixture
async def client(redis_cluster):
    client = await connect(redis_cluster.url)
    yield client
    await client.aclose()


async def test_a_cluster_is_told_from_a_standalone_server(redis_cluster, redis_url):
    for node in redis_cluster.nodes:
        assert await is_cluster(redis_cluster.node_url(node))
    assert not await is_cluster(redis_url)
    client = await connect(redis_cluster.url)
    assert isinstance(client, Cluster)
    await client.aclose()


async def test_an_acl_without_cluster_info_is_told_what_to_allow(redis_cluster, cluster_prefix):
    node = redis_cluster.nodes[0]
    user = f"{cluster_prefix}-user"
    node.client().execute_command("ACL", "SETUSER", user, "on", ">pw", "~*", "+@all", "-cluster")
    try:
        with pytest.raises(ConnectionRefused, match=r"\+cluster\|info"):
            await is_cluster(f"redis://{user}:pw@127.0.0.1:{node.port}/0")
    finally:
        node.client().execute_command("ACL", "DELUSER", user)


async def test_domains_layout_commits_on_every_partition(
    client, redis_cluster, cluster_prefix, tmp_path
):
    settings = settings_for(redis_cluster.url, cluster_prefix, partitions="domains", batch_size=8)
    await load_lists(client, settings)
    messages = mixed_season(60, seed=3)
    ids = await publish_routed(client, settings, messages)
    assert len(ids) == 3  # CFC regular, FIDE standard, NASPA: three partitions ...
    owners = {redis_cluster.owner(redis_cluster.slot_of(stream)).port for stream in ids}
    assert len(owners) >= 2  # ... on more than one master
    for stream, entries in ids.items():
        processor = StreamProcessor(client, settings, stream, default_registry())
        await processor.ensure_group()
        await processor.handle(entries[-1])
    await check_partitions(client, settings, messages, tmp_path)


async def test_a_slot_moved_while_commits_run_loses_nothing_and_rates_nothing_twice(
    client,
    redis_cluster,
    cluster_prefix,
    tmp_path,
):
    settings = settings_for(redis_cluster.url, cluster_prefix, partitions="domains", batch_size=2)
    stream = settings.layout.route("cfc", "regular").input
    await load_lists(client, settings, club_list())
    events = random_events(80, seed=11)
    ids = [(await client.xadd(stream, {"__data__": json.dumps(e)})).decode() for e in events]
    processor = StreamProcessor(client, settings, stream, default_registry())
    await processor.ensure_group()
    await client.xreadgroup(
        settings.group, "c1", {stream: ">"}
    )  # delivered: pending until committed
    slot = redis_cluster.slot_of(stream)
    first_owner = redis_cluster.owner(slot).port

    async def commit_one_by_one() -> None:
        for entry in ids:
            await processor.handle(entry)
            await asyncio.sleep(0.005)

    async def move_around() -> list[int]:
        owners = []
        for _ in range(
            4
        ):  # around the three masters and on: keys moved two at a time, ASK meanwhile
            await asyncio.sleep(0.05)
            moved = await asyncio.to_thread(
                redis_cluster.move_slot, slot, None, batch=2, pause=0.01
            )
            owners.append(moved.port)
        return owners

    _, owners = await asyncio.gather(commit_one_by_one(), move_around())
    assert len(set(owners) | {first_owner}) == 3
    redirects = processor.metrics.redirects.labels(stream)._value.get()
    assert redirects > 0  # the moves did cut commits short: they were tried again
    await check_partitions(client, settings, events, tmp_path, club_list())
