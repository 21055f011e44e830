"""The stores' identity records without Redis (service/runtime/storeid.py, unread.py): what a
replica says of each record, the other layout of the same names, and the streams nobody reads."""

from __future__ import annotations

import json

import msgspec
import pytest

from service.runtime.partitions import layout_of
from service.runtime.storeid import (
    FORMAT,
    StoreRefused,
    decode,
    encode,
    mismatch,
    record_for,
    replay_record,
    sibling_of,
)
from service.runtime.unread import destinations, unread_streams

SINGLE = layout_of("single", ("events.finished",), "ratings.updated", "events.rejected")
DOMAINS = layout_of("domains", ("events.finished",), "ratings.updated", "events.rejected")


def test_a_record_round_trips_and_agrees_with_its_own_layout():
    record = record_for(SINGLE, SINGLE.partitions[0])
    assert decode(encode(record), "events.finished") == record
    assert record.format == FORMAT and record.namespace is None
    assert mismatch(record, SINGLE, SINGLE.partitions[0]) is None
    cfc = DOMAINS.of_stream("{cfc.regular}:events.finished")
    assert mismatch(record_for(DOMAINS, cfc), DOMAINS, cfc) is None


def test_a_newer_or_unreadable_record_is_refused_naming_the_version_that_wrote_it():
    newer = json.dumps({"format": FORMAT + 1, "written_by": "9.9.9", "anything": "else"})
    with pytest.raises(
        StoreRefused, match=rf"store format {FORMAT + 1}, newer than this version's \({FORMAT}; "
    ):
        decode(newer.encode(), "events.finished")
    with pytest.raises(StoreRefused, match="run that version or a later one"):
        decode(newer.encode(), "events.finished")
    with pytest.raises(StoreRefused, match="cannot be read"):
        decode(b"not json", "events.finished")


def test_what_a_replica_of_another_layout_is_told():
    old = record_for(SINGLE, SINGLE.partitions[0])
    migrated = msgspec.structs.replace(
        old, migrated_to="domains", migrated_at="2026-12-02T04:00:00Z"
    )
    assert mismatch(migrated, SINGLE, SINGLE.partitions[0]) == (
        "the store of events.finished was migrated to the domains layout on 2026-12-02 "
        "(rating-service migrate-partitions); this replica runs RATING_PARTITIONS=single: set "
        "RATING_PARTITIONS=domains"
    )
    cfc = DOMAINS.of_stream("{cfc.regular}:events.finished")
    as_single = layout_of("single", (cfc.input,), "ratings.updated", "events.rejected")
    said = mismatch(record_for(DOMAINS, cfc), as_single, as_single.partitions[0])
    assert said is not None and said.endswith(
        "is partition cfc.regular of the domains layout; this replica runs "
        "RATING_PARTITIONS=single: set RATING_PARTITIONS=domains"
    )
    replayed = msgspec.structs.replace(old, namespace="fix1")
    said = mismatch(replayed, SINGLE, SINGLE.partitions[0])
    assert said is not None and "names namespace 'fix1' but lies under the live keys" in said


def test_a_replay_record_keeps_the_live_identity_under_its_namespace():
    live = msgspec.structs.replace(
        record_for(SINGLE, SINGLE.partitions[0]), upgraded_from=0, migrated_to="domains"
    )
    replayed = replay_record(live, "events.finished", "fix1")
    assert (replayed.namespace, replayed.layout, replayed.upgraded_from) == ("fix1", "single", None)
    assert replayed.migrated_to is None
    tagged = replay_record(None, "{naspa}:events.finished", "fix1")
    assert (tagged.layout, tagged.partition) == ("domains", "naspa")


def test_the_other_layout_of_the_same_names():
    assert sibling_of(SINGLE).inputs == DOMAINS.inputs  # type: ignore[union-attr]
    assert sibling_of(DOMAINS).inputs == ("events.finished",)  # type: ignore[union-attr]
    tagged = layout_of("single", ("{x}:in",), "{x}:out", "{x}:dead")
    assert sibling_of(tagged) is None


def test_the_streams_nobody_reads_and_where_their_entries_belong():
    assert unread_streams(DOMAINS) == ("events.finished",)
    assert unread_streams(SINGLE) == DOMAINS.inputs
    entries = [
        (b"1-0", {b"__data__": b'{"system": "cfc"}'}),
        (b"2-0", {b"__data__": b'{"system": "fide", "pool": "rapid"}'}),
        (b"3-0", {b"__data__": b"not json"}),
    ]
    assert destinations(DOMAINS, entries) == (
        "cfc/regular -> {cfc.regular}:events.finished, fide/rapid -> "
        "{fide.rapid}:events.finished, unreadable -> none (dead-letter or drop it)"
    )
