"""Fixtures of the Redis Cluster tests: one local 3-master cluster for the session
(tests/cluster/reshaping.py over service/bench/localcluster.py: free loopback ports, data under
/tmp, stopped after), and a key prefix of each test's own, its keys deleted after on every
master."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.cluster.reshaping import ClusterUnderTest


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[ClusterUnderTest]:
    cluster = ClusterUnderTest(masters=3)
    try:
        cluster.start()
    except AssertionError as exc:
        cluster.stop()
        pytest.fail(f"the local Redis Cluster did not start: {exc}")
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def cluster_prefix(redis_cluster: ClusterUnderTest) -> Iterator[str]:
    """A prefix of this test's own for stream and key names; its keys are deleted after."""
    prefix = f"t{uuid.uuid4().hex[:12]}"
    yield prefix
    redis_cluster.delete_matching(f"*{prefix}*")


@pytest.fixture(autouse=True)
def new_stores_get_their_record(monkeypatch):
    """Every test's store is new: the commands it runs in this process create the stores'
    records (RATING_CREATE_STORE, docs/operations/upgrades.md)."""
    monkeypatch.setenv("RATING_CREATE_STORE", "true")
