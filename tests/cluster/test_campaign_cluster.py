"""The fault campaign's cluster round, CI-sized (tests/campaign/cluster.py): a local cluster of
three masters with a replica each, the round's workload published (each entry acknowledged by
a replica: WAIT 1) while the stream's master fails over, switches over and its slot moves,
and replicas of the service are killed and paused; every invariant kept after.

The long run: `python -m tests.campaign --seed 8 --faults 600 --round-faults 20 --sites cluster`."""

from __future__ import annotations

import os

import pytest

from tests.campaign.cluster import ClusterSite
from tests.campaign.rounds import run_round

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SEED = int(os.environ.get("CAMPAIGN_SEED", "1001"))


@pytest.fixture
async def site():
    found = ClusterSite()
    await found.start()
    yield found
    found.stop()


async def test_a_cluster_round_of_failovers_and_slot_moves_keeps_every_invariant(site, tmp_path):
    report = await run_round(site, SEED, faults=10, logs=tmp_path)
    assert report.violations == [], "\n".join(report.violations)
    assert sum(report.faults.values()) >= 10
    assert report.faults["fail-over"] + report.faults["switch-over"] >= 1, report.faults
    assert report.outputs_under_faults > 0
