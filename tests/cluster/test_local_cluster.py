"""The local cluster the cluster tests and `bench --cluster` start (service/bench/localcluster.py):
a node whose port another process took between choosing and launching is launched again on
new ports (a CI run once failed so: "the cluster node on port 50135 did not start"); any other
failure names the node's own words."""

from __future__ import annotations

import socket

import pytest

from service.bench.localcluster import LocalCluster


def test_a_node_whose_port_was_taken_is_launched_on_another():
    cluster = LocalCluster(masters=3)
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    held = taken.getsockname()[1]
    # as if another process bound the second node's port after `_ports` chose it
    cluster.nodes[1].port = held
    try:
        cluster.start()
        assert cluster.nodes[1].port != held
        assert len({n.port for n in cluster.nodes}) == 3
        client = cluster.nodes[1].client()
        assert "cluster_state:ok" in client.execute_command("CLUSTER", "INFO")
        client.close()
    finally:
        cluster.stop()
        taken.close()


def test_a_node_that_cannot_start_says_why():
    cluster = LocalCluster(1, 0, "--no-such-directive", "yes")
    try:
        with pytest.raises(AssertionError, match=r"did not start \(exit code \d+\): Bad directive"):
            cluster.start(timeout=10)
    finally:
        cluster.stop()
