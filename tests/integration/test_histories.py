"""A player's history as one string (D121, service/runtime/histories.py) against a real Redis:
the MERGE and FROM scripts do what ZADD, ZREM and ZRANGE BYLEX did on a sorted set of one score
(the model: a Python set, sorted), for any members, lengths and orders of changes."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.rating.ledger import Changes, MemberChanges
from service.runtime.histories import APPEND_FROM, FROM, history_writes, members_from, queue_from
from service.runtime.keys import StreamKeys
from service.timeline import KEY_LEN, join_history, split_history

pytestmark = pytest.mark.integration

# Members as the store makes them: a 17-byte order key, then a state of 0 to 300 bytes (the
# lengths that need one and three bytes to say), bytes over 0x7f included (the locale trap).
# Keys share a prefix of any length with one another (as order keys share their system's prefix
# and the end date's high bytes), so that the scripts' comparisons, six bytes at a time, meet
# their first difference in every position of a chunk and in the tail; equal keys too.
_BASE = bytes((0, 0, 0, 0x0B, 0x8F, 0x3C, 0xFF, 0x80, 0x7F, 0x01, 0, 0, 0, 0, 0, 0x12, 0x34))
_key = st.one_of(
    st.binary(min_size=KEY_LEN, max_size=KEY_LEN),
    st.builds(
        lambda n, tail: _BASE[:n] + tail[: KEY_LEN - n],
        st.integers(0, KEY_LEN),
        st.binary(min_size=KEY_LEN, max_size=KEY_LEN),
    ),
)
_member = st.builds(lambda k, s: k + s, _key, st.binary(max_size=300) | st.just(_BASE))
_step = st.tuples(st.lists(_member, max_size=6), st.lists(st.integers(0, 50), max_size=3))


def _changes(keys: StreamKeys, who: tuple[str, str, str], added, removed) -> list:
    changes = Changes()
    members = changes.histories[who] = MemberChanges()
    members.removed.update(removed)
    members.added.update(m for m in added if m not in members.removed)
    return list(history_writes(keys, changes))


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=st.lists(_step, min_size=1, max_size=8), start=_key)
def test_merges_and_reads_equal_a_sorted_set(redis_url, key_prefix, steps, start):
    import redis

    client = redis.Redis.from_url(redis_url)
    keys = StreamKeys(f"{key_prefix}.in")
    who = ("fide", "standard", "p1")
    name = keys.history(*who)
    client.delete(name)
    model: set[bytes] = set()
    try:
        for added, picks in steps:
            ordered = sorted(model)
            removed = {ordered[i % len(ordered)] for i in picks} if ordered else set()
            removed.add(b"\x00" * KEY_LEN + b"never there")  # removing a stranger: no effect
            for command in _changes(keys, who, added, removed):
                client.execute_command(*command)
            model = (model - removed) | (set(added) - removed)
            stored = client.get(name)
            assert split_history(stored or b"") == sorted(model)
            assert (stored is None) == (not model)  # an emptied history is removed
        expected = [m for m in sorted(model) if m[:KEY_LEN] >= start]
        (reply,) = client.eval(FROM, 1, name, start)
        assert split_history(reply) == expected
    finally:
        client.delete(name)
        client.close()


async def test_a_commit_appends_to_many_histories_and_a_cascade_reads_them_from_a_key(
    client, key_prefix
):
    keys = StreamKeys(f"{key_prefix}.in")
    rng = random.Random(5)
    players = [("cfc", "regular", f"p{i}") for i in range(2_500)]  # over one FROM call's keys
    expected: dict[tuple[str, str, str], list[bytes]] = {}
    for event in range(3):  # three events in date order: appended, never read
        changes = Changes()
        for who in players:
            member = bytes([0, 0, 1, event]) + bytes(13) + rng.randbytes(rng.choice([8, 140]))
            changes.histories.setdefault(who, MemberChanges()).add(member)
            expected.setdefault(who, []).append(member)
        commands = list(history_writes(keys, changes))
        assert len(commands) == 1  # one call for a commit's players
        await client.execute_command(*commands[0])
    start = bytes([0, 0, 1, 1]) + bytes(13)
    async with client.pipeline(transaction=False) as reads:
        queue_from(reads, [keys.history(*who) for who in players], start)
        replies = await reads.execute()
    got = members_from(iter(replies), len(players))
    assert got == [expected[who][1:] for who in players]
    assert split_history(await client.get(keys.history(*players[0]))) == expected[players[0]]
    assert join_history(expected[players[0]]) == await client.get(keys.history(*players[0]))


async def test_merge_writes_the_value_to_its_size(client, key_prefix):
    """SET, not APPEND: the value is no bigger than its bytes need (APPEND doubles the space)."""
    keys = StreamKeys(f"{key_prefix}.in")
    who = ("fide", "standard", "p1")
    for n in range(40):
        changes = Changes()
        changes.histories[who] = MemberChanges()
        changes.histories[who].add(n.to_bytes(KEY_LEN, "big") + bytes(100))
        for command in history_writes(keys, changes):
            await client.execute_command(*command)
    stored = await client.get(keys.history(*who))
    assert len(split_history(stored)) == 40
    usage = await client.memory_usage(keys.history(*who), samples=0)
    assert usage < len(stored) * 1.3 + 100, (usage, len(stored))


async def test_a_long_history_is_appended_to_and_written_whole_by_any_other_change(
    client, key_prefix
):
    """Past APPEND_FROM bytes an append is an APPEND (its cost what is added; Redis may keep
    spare room after it); a change in the middle writes the history whole again, to its size."""
    keys = StreamKeys(f"{key_prefix}.in")
    who = ("glicko2", "blitz", "p1")
    name = keys.history(*who)
    members = [n.to_bytes(KEY_LEN, "big") + bytes([n % 251]) * 100 for n in range(0, 800, 2)]

    async def write(added=(), removed=()):
        changes = Changes()
        changes.histories[who] = MemberChanges()
        changes.histories[who].added.update(added)
        changes.histories[who].removed.update(removed)
        for command in history_writes(keys, changes):
            await client.execute_command(*command)

    for member in members:
        await write([member])
    stored = await client.get(name)
    assert len(stored) > APPEND_FROM * 2 and split_history(stored) == members
    (reply,) = await client.eval(FROM, 1, name, members[-3][:KEY_LEN])
    assert split_history(reply) == members[-3:]
    inserted = (301).to_bytes(KEY_LEN, "big") + b"late"
    await write([inserted], [members[10]])
    expected = sorted([*members[:10], *members[11:], inserted])
    stored = await client.get(name)
    assert split_history(stored) == expected
    assert await client.memory_usage(name, samples=0) < len(stored) * 1.3 + 100
