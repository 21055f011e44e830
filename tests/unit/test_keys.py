"""The Redis key names, pinned byte for byte: a store written by an earlier version must still
be found (docs/reference/keys.md). The literals are the names the code made before the names
moved into service/runtime/keys.py."""

from service.runtime.keys import StreamKeys, key_layout, layout_key, redriven_key
from service.runtime.leases import StreamLease
from service.runtime.partitions import cluster_problem, layout_of


def test_the_store_keys_of_a_plain_stream():
    k = StreamKeys("events.finished")
    assert (k.cursor, k.pools, k.markers, k.attempts, k.events, k.results, k.catalog) == (
        "{events.finished}:cursor",
        "{events.finished}:pools",
        "{events.finished}:markers",
        "{events.finished}:attempts",
        "{events.finished}:events",
        "{events.finished}:results",
        "{events.finished}:catalog",
    )
    assert k.players("fide", "standard") == "{events.finished}:players:fide:standard"
    assert k.timeline("naspa") == "{events.finished}:timeline:naspa"
    assert k.history("cfc", "regular", "p1") == "{events.finished}:history:cfc:regular:p1"
    assert k.entries("cfc", "regular", "p1") == "{events.finished}:entries:cfc:regular:p1"
    assert k.ranking("cfc", "regular") == "{events.finished}:ranking:cfc:regular"
    assert k.names("cfc", "regular") == "{events.finished}:names:cfc:regular"
    assert k.players("", "") == "{events.finished}:players::"  # live_pools' scan prefix + ":"
    assert k.prefix == "{events.finished}:"  # migrate's and replay's scans


def test_the_store_keys_of_a_hash_tagged_stream_and_of_a_namespace():
    k = StreamKeys("{fide.standard}:events.finished")
    assert k.cursor == "{fide.standard}:events.finished:cursor"
    assert k.players("fide", "standard") == "{fide.standard}:events.finished:players:fide:standard"
    assert k.timeline("fide:standard") == "{fide.standard}:events.finished:timeline:fide:standard"
    assert k.names("fide", "standard") == "{fide.standard}:events.finished:names:fide:standard"
    replay = StreamKeys("events.finished", "replay1")
    assert replay.cursor == "replay1:{events.finished}:cursor"
    assert replay.prefix == "replay1:{events.finished}:"
    assert (
        replay.history("cfc", "regular", "p1") == "replay1:{events.finished}:history:cfc:regular:p1"
    )
    assert replay.ranking("cfc", "regular") == "replay1:{events.finished}:ranking:cfc:regular"


def test_the_lease_keys():
    for stream, prefix in (
        ("events.finished", "{events.finished}"),
        ("{fide.standard}:events.finished", "{fide.standard}:events.finished"),
    ):
        lease = StreamLease(stream)
        assert (lease.key, lease.fence_key, lease.token_key, lease.replicas_key) == (
            f"{prefix}:lease",
            f"{prefix}:lease:fence",
            f"{prefix}:lease:token",
            f"{prefix}:replicas",
        )
        keys = StreamKeys(stream)
        assert (keys.lease, keys.lease_fence, keys.lease_token, keys.replicas) == (
            lease.key,
            lease.fence_key,
            lease.token_key,
            lease.replicas_key,
        )


def test_the_store_record():
    assert StreamKeys("events.finished").store == "{events.finished}:store"
    assert (
        StreamKeys("{fide.standard}:events.finished").store
        == "{fide.standard}:events.finished:store"
    )
    assert StreamKeys("events.finished", "fix1").store == "fix1:{events.finished}:store"


def test_the_redrive_ledger_and_the_advertised_layout():
    assert redriven_key("events.rejected") == "events.rejected:redriven"
    assert (
        redriven_key("{events.finished}:events.rejected")
        == "{events.finished}:events.rejected:redriven"
    )
    assert layout_key("events.finished") == "rating-service:partitions:events.finished"


def test_the_streams_of_the_domains_layout():
    layout = layout_of("domains", ("events.finished",), "ratings.updated", "events.rejected")
    fide = layout.of_stream("{fide.standard}:events.finished")
    assert (fide.name, fide.output, fide.dead_letter) == (
        "fide.standard",
        "{fide.standard}:ratings.updated",
        "{fide.standard}:events.rejected",
    )
    assert layout.inputs[:2] == ("{cfc.regular}:events.finished", "{cfc.active}:events.finished")
    single = layout_of("single", ("a", "b"), "ratings.updated", "events.rejected")
    assert [(p.input, p.output, p.dead_letter) for p in single.partitions] == [
        ("a", "ratings.updated", "events.rejected"),
        ("b", "ratings.updated", "events.rejected"),
    ]
    # What the cluster check tells to name the streams.
    plain = cluster_problem(single) or ""
    assert plain.endswith(
        "(RATING_OUTPUT_STREAM={a}:ratings.updated RATING_DEAD_LETTER_STREAM={a}:events.rejected)"
    )
    tagged = cluster_problem(layout_of("single", ("{x}:in",), "{x}:out", "dead")) or ""
    assert tagged.endswith(
        "(RATING_OUTPUT_STREAM={x}:in:out RATING_DEAD_LETTER_STREAM={x}:in:dead)"
    )


def test_the_documented_layout():
    assert [k.name for k in key_layout("S")] == [
        "{S}:cursor",
        "{S}:players:<system>:<pool>",
        "{S}:pools",
        "{S}:markers",
        "{S}:attempts",
        "{S}:events",
        "{S}:timeline:<domain>",
        "{S}:history:<system>:<pool>:<id>",
        "{S}:results",
        "{S}:revisions",
        "{S}:eventnames",
        "{S}:entries:<system>:<pool>:<id>",
        "{S}:ranking:<system>:<pool>",
        "{S}:names:<system>:<pool>",
        "{S}:played:<system>:<pool>",
        "{S}:active:<system>:<pool>",
        "{S}:label:<system>:<pool>:<kind>:<label>",
        "{S}:labels:<system>:<pool>",
        "{S}:dated:<system>:<pool>",
        "{S}:cards:<system>:<pool>",
        "{S}:moves:<system>:<pool>",
        "{S}:listdate:<system>:<pool>",
        "{S}:due:<system>:<pool>",
        "{S}:nextmoves:<system>:<pool>",
        "{S}:closing",
        "{S}:loading",
        "{S}:catalog",
        "{S}:lease",
        "{S}:lease:fence",
        "{S}:lease:token",
        "{S}:replicas",
        "{S}:store",
        "{S}:durable",
    ]


def test_every_kind_of_key_belongs_to_one_group():
    # migrate.py moves a store by these groups: a new kind of key must say where it goes.
    from service.runtime import keys

    kinds = {k.name.removeprefix("{S}:").split(":")[0] for k in key_layout("S")}
    groups = (keys.BY_POOL, keys.BY_DOMAIN, keys.SHARED, keys.PER_STREAM)
    assert sorted(kinds) == sorted(kind for group in groups for kind in group)


def test_a_namespace_keeps_the_hash_tag_and_the_separator():
    from service.runtime.keys import is_namespace

    assert is_namespace("replay-2024")
    assert not any(is_namespace(n) for n in ("", "a:b", "{a", "a}"))
