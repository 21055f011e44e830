"""Hostile input, fuzzed (hypothesis): random bytes, truncated and deeply nested JSON, huge
strings and arrays, wrong types, unicode oddities, missing and extra fields, events that
break cross-field rules - interleaved with good events. Every entry gets exactly one
outcome, every bad one is dead-lettered with a reason, every good one is rated, and the
processor never stops."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest
import redis.asyncio as aioredis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas import REASONS
from service.engine.registry import default_registry
from service.runtime.keys import StreamKeys
from service.runtime.processor import StreamProcessor
from service.runtime.records_io import import_records
from tests.integration.helpers import outputs, pending, rejections, settings_for
from tests.integration.processes import club_list
from tests.messages import event

pytestmark = pytest.mark.integration
MAX_BYTES = 200_000


def good(n: int) -> dict:
    return event(event_id=f"good-{n}", players=[{"id": "p1"}, {"id": "p2"}, {"id": "p3"}])


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)
REQUIRED = [
    "schema",
    "event_id",
    "system",
    "name",
    "start_date",
    "end_date",
    "rounds",
    "players",
    "games",
]


@st.composite
def bad_entries(draw) -> dict[bytes, bytes]:  # noqa: C901
    """One entry that must be dead-lettered."""
    base = good(0)
    kind = draw(
        st.sampled_from(
            [
                "bytes",
                "truncated",
                "nested",
                "nested_field",
                "huge_string",
                "too_big",
                "huge_array",
                "wrong_type",
                "odd_unicode_id",
                "lone_surrogate",
                "missing",
                "extra",
                "cross_field",
                "no_data",
                "not_object",
            ]
        )
    )
    if kind == "bytes":
        data = draw(
            st.binary(min_size=1, max_size=300).filter(lambda b: not b.strip().startswith(b"{"))
        )
    elif kind == "truncated":
        text = json.dumps(base)
        data = text[: draw(st.integers(0, len(text) - 1))].encode()
    elif kind == "nested":
        depth = draw(st.integers(1_000, 90_000))
        data = b"[" * depth + b"]" * depth
    elif kind == "nested_field":
        depth = draw(st.integers(100, 50_000))
        data = json.dumps(dict(base, name="X")).replace('"X"', "[" * depth + "]" * depth).encode()
    elif kind == "huge_string":
        data = json.dumps(dict(base, name="n" * draw(st.integers(201, 150_000)))).encode()
    elif kind == "too_big":
        data = json.dumps(dict(base, name="n" * (MAX_BYTES + 10))).encode()
    elif kind == "huge_array":
        players = [{"id": f"x{i}"} for i in range(draw(st.integers(51, 3_000)))]
        data = json.dumps(dict(base, players=players)).encode()
    elif kind == "wrong_type":
        field = draw(st.sampled_from(REQUIRED[1:]))
        value = draw(json_values.filter(lambda v: not isinstance(v, (list, str))))
        data = json.dumps(dict(base, **{field: value})).encode()
    elif kind == "odd_unicode_id":
        odd = draw(st.sampled_from(["é", "\u202e", "\x00", "🎲", "ﬁ", "\u00a0", "a\nb"]))
        data = json.dumps(dict(base, event_id=f"id{odd}x")).encode()
    elif kind == "lone_surrogate":
        data = json.dumps(base).replace('"Club championship"', '"\\ud800 club"').encode()
    elif kind == "missing":
        field = draw(st.sampled_from(REQUIRED))
        data = json.dumps({k: v for k, v in base.items() if k != field}).encode()
    elif kind == "extra":
        data = json.dumps(
            dict(
                base,
                **{draw(st.sampled_from(["colour", "Rounds", "__proto__"])): draw(json_values)},
            )
        ).encode()
    elif kind == "cross_field":
        broken = json.loads(json.dumps(base))
        how = draw(st.sampled_from(["score", "undeclared", "self", "twice", "round", "dates"]))
        if how == "score":
            broken["games"][0]["score"] = draw(st.sampled_from([0.25, 0.7, 2, -1]))
        elif how == "undeclared":
            broken["games"][1]["b"] = "ghost"
        elif how == "self":
            broken["games"][2]["a"] = broken["games"][2]["b"]
        elif how == "twice":
            broken["players"].append({"id": "p2"})
        elif how == "round":
            broken["games"][0]["round"] = 99
        else:
            broken["end_date"] = "2025-10-01"
        data = json.dumps(broken).encode()
    elif kind == "no_data":
        return {
            b"payload": json.dumps(base).encode(),
            draw(st.binary(min_size=1, max_size=5)): b"\xff",
        }
    else:
        data = json.dumps(
            draw(st.lists(json_values, max_size=3) | st.text(max_size=10) | st.integers())
        ).encode()
    return {b"__data__": data}


async def run_example(redis_url: str, entries: list[tuple[str, dict[bytes, bytes]]]) -> list[str]:
    """Publish and process the entries; check the outcomes; return the dead letters' reasons."""
    prefix = f"fz{uuid.uuid4().hex[:10]}"
    client = aioredis.Redis.from_url(redis_url)
    try:
        config = settings_for(redis_url, prefix, max_bytes=MAX_BYTES, max_players=50, batch_size=8)
        stream = config.input_streams[0]
        await import_records(client, StreamKeys(stream), club_list())
        processor = StreamProcessor(client, config, stream, default_registry())
        await processor.ensure_group()
        ids = [(await client.xadd(stream, fields)).decode() for _, fields in entries]
        await client.xreadgroup(config.group, "fuzz", {stream: ">"})
        await processor.handle(*ids)  # must not raise, whatever came in
        rated = {o.source_id: o for o in await outputs(client, config)}
        dead = {r.source_id: r for r in await rejections(client, config)}
        for entry_id, (kind, _) in zip(ids, entries):
            assert (entry_id in rated) != (entry_id in dead), (
                f"{kind} {entry_id}: exactly one outcome"
            )
            if kind == "good":
                assert entry_id in rated
            else:
                assert entry_id in dead, (
                    f"a bad entry was rated: {entries[ids.index(entry_id)]!r:.300}"
                )
                assert dead[entry_id].reason in REASONS and dead[entry_id].message
        assert await pending(client, config) == 0
        return [dead[i].reason for i in ids if i in dead]
    finally:
        keys = [k async for k in client.scan_iter(match=f"*{prefix}*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(bad_entries(), min_size=1, max_size=6), st.integers(0, 10_000))
def test_bad_entries_interleaved_with_good_ones(redis_url, bad, seed):
    entries: list[tuple[str, dict]] = []
    for n, fields in enumerate(bad):
        entries.append(("good", {b"__data__": json.dumps(good(seed * 100 + n)).encode()}))
        entries.append(("bad", fields))
    entries.append(("good", {b"__data__": json.dumps(good(seed * 100 + 99)).encode()}))
    asyncio.run(run_example(redis_url, entries))


def test_an_oversized_message_is_rejected_before_it_is_parsed(redis_url):
    # 2 MB of "[" would be a RecursionError if parsed; over the limit it is never parsed.
    entries = [
        ("bad", {b"__data__": b"[" * 2_000_000}),
        ("good", {b"__data__": json.dumps(good(1)).encode()}),
    ]
    assert asyncio.run(run_example(redis_url, entries)) == ["too_large"]
