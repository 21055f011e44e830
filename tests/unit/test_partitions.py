"""Partition layouts, routing and key prefixes (service/runtime/partitions.py)."""

from __future__ import annotations

import binascii

import pytest

from schemas.common import POOLS, SYSTEMS
from service.runtime.keys import StreamKeys, has_hash_tag, key_prefix
from service.runtime.partitions import DOMAINS, Layout, cluster_problem, layout_of, misrouted
from service.runtime.settings import SettingsError, load_settings


def slot(key: str) -> int:
    """Redis Cluster's slot of a key (CRC16/XMODEM of the hash tag, else the key, mod 16384)."""
    start = key.find("{")
    if start >= 0:
        end = key.find("}", start + 1)
        if end > start + 1:
            key = key[start + 1 : end]
    return binascii.crc_hqx(key.encode(), 0) % 16384


def domains() -> Layout:
    return layout_of("domains", ("events.finished",), "ratings.updated", "events.rejected")


def test_single_layout_is_the_settings_streams():
    layout = load_settings({}).layout
    assert layout.layout == "single"
    (only,) = layout.partitions
    assert (only.input, only.output, only.dead_letter, only.domains) == (
        "events.finished",
        "ratings.updated",
        "events.rejected",
        None,
    )
    assert all(layout.route(s, p) is only for s in SYSTEMS for p in POOLS[s])


def test_domains_layout_names_one_partition_per_ordering_domain():
    layout = domains()
    assert [p.name for p in layout.partitions] == [
        "cfc.regular",
        "cfc.active",
        "fide.standard",
        "fide.rapid",
        "fide.blitz",
        "glicko2.standard",
        "naspa",
    ]
    fide = layout.route("fide", "standard")
    assert (fide.input, fide.output, fide.dead_letter) == (
        "{fide.standard}:events.finished",
        "{fide.standard}:ratings.updated",
        "{fide.standard}:events.rejected",
    )
    # NASPA's csw seeds from nwl: one ordering domain, one partition.
    assert layout.route("naspa", "csw") is layout.route("naspa", "nwl")


def test_every_key_of_a_partition_is_in_its_slot():
    for partition in domains().partitions:
        keys = StreamKeys(partition.input)
        names = [
            partition.input,
            partition.output,
            partition.dead_letter,
            keys.cursor,
            keys.markers,
            keys.players("fide", "standard"),
            keys.entries("cfc", "regular", "p1"),
            keys.ranking("x", "y"),
            StreamKeys(partition.input).lease,
            StreamKeys(partition.input).lease_fence,
        ]
        assert {slot(n) for n in names} == {slot(partition.input)}, partition.name


def test_earlier_versions_keys_are_unchanged():
    # The single layout's stream has no tag: its keys keep the `{<stream>}` prefix of before.
    assert StreamKeys("events.finished").cursor == "{events.finished}:cursor"
    assert (
        StreamKeys("{fide.standard}:events.finished").cursor
        == "{fide.standard}:events.finished:cursor"
    )
    assert key_prefix("a{}b") == "{a{}b}"  # an empty tag is no tag


@pytest.mark.parametrize(
    "key, tagged",
    [("x", False), ("{x}", True), ("a{b}c", True), ("{}x", False), ("}{x}", True), ("{x", False)],
)
def test_hash_tags_as_redis_reads_them(key, tagged):
    assert has_hash_tag(key) is tagged


def test_misrouted_names_the_right_stream():
    layout = domains()
    fide = layout.route("fide", "standard")
    assert misrouted(fide, layout, "fide", "standard") is None
    why = misrouted(fide, layout, "naspa", "csw")
    assert why == (
        "naspa/csw events belong on {naspa}:events.finished (partition naspa: naspa/csw, naspa/nwl), "
        "not {fide.standard}:events.finished"
    )
    single = load_settings({}).layout
    assert misrouted(single.partitions[0], single, "naspa", "csw") is None


def test_partitions_setting_is_checked():
    assert load_settings({"RATING_PARTITIONS": "Domains"}).partitions == "domains"
    with pytest.raises(SettingsError, match="not a partition layout"):
        load_settings({"RATING_PARTITIONS": "pools"})
    with pytest.raises(SettingsError, match="one input stream name"):
        load_settings({"RATING_PARTITIONS": "domains", "RATING_INPUT_STREAMS": "a,b"})


def test_every_domain_has_a_partition():
    layout = domains()
    for system in SYSTEMS:
        for pool in POOLS[system]:
            assert layout.route(system, pool).domains == (DOMAINS.of(system, pool),)


def test_on_a_cluster_the_single_layout_needs_its_outputs_in_the_input_streams_slot():
    plain = layout_of("single", ("events.finished",), "ratings.updated", "events.rejected")
    problem = cluster_problem(plain)
    assert problem is not None and "\n" not in problem
    assert "set RATING_PARTITIONS=domains" in problem
    assert (
        "RATING_OUTPUT_STREAM={events.finished}:ratings.updated "
        "RATING_DEAD_LETTER_STREAM={events.finished}:events.rejected"
    ) in problem
    tagged = layout_of(
        "single",
        ("events.finished",),
        "{events.finished}:ratings.updated",
        "{events.finished}:events.rejected",
    )
    assert cluster_problem(tagged) is None
    assert (
        cluster_problem(
            layout_of("domains", ("events.finished",), "ratings.updated", "events.rejected")
        )
        is None
    )
    # Several input streams share one output: only under one tag.
    two = layout_of("single", ("{ev}:a", "{ev}:b"), "{ev}:ratings.updated", "{ev}:events.rejected")
    assert cluster_problem(two) is None
    assert (
        cluster_problem(layout_of("single", ("{ev}:a", "b"), "{ev}:out", "{ev}:dead")) is not None
    )


def test_a_partitions_own_stream_takes_everything_with_the_layout_set(monkeypatch):
    """`--stream {cfc.active}:events.finished` with RATING_PARTITIONS=domains: that one stream,
    not a domains layout nested under its name."""
    import asyncio

    from service.cli.routing import layout_for

    class NoLayout:
        async def get(self, key):
            return None

    monkeypatch.setenv("RATING_PARTITIONS", "domains")
    monkeypatch.delenv("RATING_INPUT_STREAMS", raising=False)
    layout = asyncio.run(layout_for(NoLayout(), "{cfc.active}:events.finished"))
    (only,) = layout.partitions
    assert (
        only.input == "{cfc.active}:events.finished"
        and only.output == "{cfc.active}:ratings.updated"
    )
    assert layout.route("fide", "standard") is only
