"""D50 on a store of an earlier version: its name index holds names folded for case and
accents only, so `sondergaard` does not find "Søndergaard" until `rating-service
upgrade-store` refolds the index (its dry run writing nothing), after which both spellings
find the player and a second run has nothing to do."""

from __future__ import annotations

import pytest

from schemas.records import PlayerRecord
from service.readmodel import fold_before_d50
from service.runtime.keys import StreamKeys
from service.runtime.queries import ReadModel
from service.runtime.records_io import import_records
from service.runtime.storeid import FORMAT
from tests.integration.test_store_identity import cli, serving

pytestmark = pytest.mark.integration
NAMES = {"p1": "Søndergaard, Jens", "p2": "Łukasiewicz, Dorota", "p3": "Ólafsson, Friðrik"}


def old_members(record: PlayerRecord) -> list[bytes]:
    """The members an earlier version wrote (readmodel.name_words with the old fold)."""
    folded = "".join(c if c.isalnum() else " " for c in fold_before_d50(record.name or ""))
    return [f"{word}\0{record.id}".encode() for word in sorted(set(folded.split()))]


async def found(model: ReadModel, q: str) -> list[str]:
    page = await model.players("cfc", "regular", q=q)
    assert page is not None
    return [p.id for p in page.players]


async def test_upgrade_store_refolds_a_name_index_of_an_earlier_version(
    redis_url, key_prefix, client
):
    services = serving(redis_url, key_prefix)
    stream = services.env["RATING_INPUT_STREAMS"]
    keys = StreamKeys(stream)
    records = [
        PlayerRecord(
            system="cfc",
            pool="regular",
            id=pid,
            rating=1800,
            status="established",
            games=40,
            highest=1800,
            name=name,
        )
        for pid, name in NAMES.items()
    ]
    try:
        assert cli(services, "init-store").returncode == 0
        await import_records(client, keys, records)
        names = keys.names("cfc", "regular")
        await client.delete(names)  # the index as an earlier version wrote it
        await client.zadd(names, {m: 0 for r in records for m in old_members(r)})
        model = ReadModel(client, [stream])
        assert await found(model, "sondergaard") == []
        assert await found(model, "lukasiewicz") == []

        before = sorted(await client.zrange(names, 0, -1))
        dry = cli(services, "upgrade-store", "--dry-run")
        assert dry.returncode == 0, dry.stderr
        assert (
            f"{stream}: would refold the name index of cfc/regular: 3 members added, 3 removed "
            "(names folded as D50 searches them)"
        ) in dry.stdout.splitlines()
        assert sorted(await client.zrange(names, 0, -1)) == before

        done = cli(services, "upgrade-store")
        assert done.returncode == 0, done.stderr
        assert f"{stream}: refolded the name index of cfc/regular" in done.stdout
        assert sorted(await client.zrange(names, 0, -1)) == [
            b"dorota\0p2",
            b"fridrik\0p3",
            b"jens\0p1",
            b"lukasiewicz\0p2",
            b"olafsson\0p3",
            b"sondergaard\0p1",
        ]
        assert await found(model, "sondergaard") == ["p1"]
        assert await found(model, "Søndergaard") == ["p1"]
        assert await found(model, "lukas dor") == ["p2"]
        assert await found(model, "Friðrik") == ["p3"]

        again = cli(services, "upgrade-store")
        assert f"every store is at store format {FORMAT}: nothing written" in again.stdout
    finally:
        services.stop_all()
