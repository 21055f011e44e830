"""The fault campaign's CI-sized run (tests/campaign, docs/operations/faults.md): one round on
a private Redis with faults of every kind while the mixed workload is published, every
invariant kept; and the checks themselves, which must see a violation made on purpose.

The long run: `python -m tests.campaign --seed 7 --faults 10000 --sites standalone` (the
cluster's: tests/cluster/test_campaign_cluster.py and `--sites cluster`). CAMPAIGN_SEED
picks another round."""

from __future__ import annotations

import os

import msgspec
import pytest

from service.runtime.keys import StreamKeys
from tests.campaign.faults import STANDALONE_FAULTS
from tests.campaign.rounds import StandaloneSite, run_round

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SEED = int(os.environ.get("CAMPAIGN_SEED", "1000"))


@pytest.fixture
async def site():
    found = StandaloneSite()
    await found.start()
    yield found
    found.stop()


async def test_a_round_of_faults_of_every_kind_keeps_every_invariant(site, tmp_path):
    report = await run_round(site, SEED, faults=80, logs=tmp_path)
    assert report.violations == [], "\n".join(report.violations)
    assert sum(report.faults.values()) >= 80
    assert set(report.faults) >= set(STANDALONE_FAULTS) - {"kill-redis"}, report.faults
    # The faults met the service at work, not only an idle one.
    assert report.outputs_under_faults > 0 and report.outputs > 0


async def _output_twice(client, settings) -> None:
    [(_, fields)] = await client.xrevrange(settings.output_stream, count=1)
    await client.xadd(settings.output_stream, fields)


async def _record_changed(client, settings) -> None:
    keys = StreamKeys(settings.input_streams[0])
    key = keys.players("cfc", "regular")
    field, raw = next(iter((await client.hgetall(key)).items()))
    record = msgspec.json.decode(raw)
    record["rating"] += 1
    await client.hset(key, field, msgspec.json.encode(record))


async def _an_entry_the_workload_never_sent(client, settings) -> None:
    stream = settings.input_streams[0]
    await client.xadd(stream, {"__data__": b'{"schema": "event.finished/v1"}'})
    await client.xreadgroup(settings.group, "nobody", {stream: ">"}, count=1)


@pytest.mark.parametrize(
    "tamper", [_output_twice, _record_changed, _an_entry_the_workload_never_sent]
)
async def test_the_checks_see_a_violation(site, tamper, tmp_path):
    report = await run_round(site, SEED + 1, faults=5, tamper=tamper)
    assert len(report.violations) == 1, report.violations
