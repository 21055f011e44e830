"""Closing periods through the running service (its own process, a real Redis): a typo'd
close is dead-lettered `period_not_due` and the pool goes on; a CFC close is dead-lettered
`invalid` at the decode step."""

from __future__ import annotations

import pytest

from service.runtime.keys import StreamKeys
from service.runtime.records_io import import_records
from tests.integration.helpers import outputs, publish, rejections, settings_for
from tests.integration.processes import Services, wait_until_applied
from tests.unit.test_periods import LIST, close, event

pytestmark = pytest.mark.integration


async def test_a_typo_in_a_close_is_dead_lettered_and_later_events_are_still_rated(
    client, redis_url, key_prefix
):
    settings = settings_for(redis_url, key_prefix)
    await import_records(client, StreamKeys(settings.input_streams[0]), LIST)
    services = Services(settings)
    try:
        services.start()
        ids = await publish(
            client,
            settings,
            event("nov-1", "2025-11-08", "2025-11-09"),
            close("2052-11"),  # the typo
            close("2025-11", "cfc"),  # CFC has no periods
            event("nov-2", "2025-11-22", "2025-11-23"),
            close("2025-11"),
        )
        await wait_until_applied(client, settings)
    finally:
        services.stop_all()
    typo, cfc = await rejections(client, settings)
    # Not over by the service's clock (docs/design/decisions.md "D14 Plausible dates"):
    # refused at decoding, before the engine's period_not_due.
    assert (typo.reason, typo.path, typo.source_id) == ("implausible", "$.period", ids[1])
    assert typo.message.startswith(
        "period 2052-11 is not over yet (it ends on 2052-11-30; today is "
    )
    assert (cfc.reason, cfc.path, cfc.source_id) == ("invalid", "$.system", ids[2])
    published = await outputs(client, settings)
    assert [(o.kind, o.event_id, o.source_id) for o in published] == [
        ("event", "nov-1", ids[0]),
        ("event", "nov-2", ids[3]),
        ("list", None, ids[4]),
    ]
    # Two wins of A over B at K 20: 2000 + 20 x (.5 + .5) = 2020.
    assert {p.id: p.new_rating for p in published[-1].players} == {"A": 2020, "B": 1980}
    pools = await client.hgetall(StreamKeys(settings.input_streams[0]).pools)
    assert b"2025-11" in pools[b"fide:standard"]
