"""service/runtime/packing.py: hiredis packs exactly the bytes redis-py's asyncio connection packs."""

from __future__ import annotations

import pytest
import redis.asyncio as aioredis
from hypothesis import given
from hypothesis import strategies as st
from redis.asyncio.connection import Connection, SSLConnection, UnixDomainSocketConnection
from redis.exceptions import DataError

from service.runtime.packing import HiredisPacking, packed_class, use_hiredis_packing

PLAIN = Connection()
PACKED = packed_class(Connection)()

argument = st.one_of(
    st.binary(max_size=80),
    st.text(max_size=40),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
)


@given(
    st.sampled_from(["SET", "HSET", "XADD", "EVAL", b"ZADD", "CONFIG GET", b"CLIENT SETNAME"]),
    st.lists(argument, max_size=12),
)
def test_same_bytes_as_redis_py(name, arguments):
    command = (name, *arguments)
    assert b"".join(PACKED.pack_command(*command)) == b"".join(PLAIN.pack_command(*command))


@given(st.lists(st.lists(argument, min_size=1, max_size=6), max_size=8))
def test_pipelines_same_bytes(commands):
    commands = [("HSET", *c) for c in commands]
    assert b"".join(PACKED.pack_commands(commands)) == b"".join(PLAIN.pack_commands(commands))


def test_what_hiredis_does_not_take_is_packed_by_redis_py():
    view = memoryview(b"a large value")
    assert b"".join(PACKED.pack_command("SET", "k", view)) == b"".join(
        PLAIN.pack_command("SET", "k", view)
    )
    for bad in (True, None, [1]):
        with pytest.raises(DataError):
            PACKED.pack_command("SET", "k", bad)


def test_every_kind_of_connection_of_a_url_gets_it():
    for url, kind in (
        ("redis://127.0.0.1:6379/0", Connection),
        ("rediss://127.0.0.1:6379/0", SSLConnection),
        ("unix:///tmp/redis.sock", UnixDomainSocketConnection),
    ):
        client = use_hiredis_packing(aioredis.Redis.from_url(url))
        cls = client.connection_pool.connection_class
        assert issubclass(cls, HiredisPacking) and issubclass(cls, kind), url
        assert packed_class(cls) is cls  # once


def test_a_client_with_another_encoding_is_left_alone():
    client = use_hiredis_packing(
        aioredis.Redis.from_url("redis://127.0.0.1:6379/0", encoding="latin-1")
    )
    assert client.connection_pool.connection_class is Connection


def test_a_command_with_very_many_arguments_is_packed_by_redis_py_in_pieces():
    from service.runtime.packing import LARGE_COMMAND

    command = ("HSET", "k", *[f"field-{i}" for i in range(LARGE_COMMAND)])
    pieces = PACKED.pack_command(*command)
    assert len(pieces) > 1  # redis-py's pieces of at most 6 kB, not one buffer
    assert b"".join(pieces) == b"".join(PLAIN.pack_command(*command))


def test_a_cascades_history_lines_go_in_commands_hiredis_packs():
    """A commit's history lines are written by scripts of at most LARGE_COMMAND arguments,
    so that hiredis packs them (store.LINES_PER_SCRIPT)."""
    from service.rating.ledger import Changes
    from service.runtime.keys import StreamKeys
    from service.runtime.packing import LARGE_COMMAND
    from service.runtime.store import LINES_PER_SCRIPT, read_model_writes

    changes = Changes()
    for n in range(2 * LINES_PER_SCRIPT + 1):
        changes.entries[("cfc", "regular", f"p{n}")] = {"e1": b"line", "e2": b"line"}
    scripts = [
        command
        for command in read_model_writes(StreamKeys("s"), changes, None)
        if command[0] == "EVAL" and "HSET" in command[1]
    ]
    assert len(scripts) == 5  # 4 * LINES_PER_SCRIPT + 2 lines
    assert all(len(command) <= LARGE_COMMAND for command in scripts)
    assert sum(command[2] for command in scripts) == 4 * LINES_PER_SCRIPT + 2


def test_a_large_argument_is_sent_as_it_is():
    """A message of more than LARGE_ARGUMENT bytes is one of redis-py's pieces, the very
    object, not copied into a buffer (D139); the bytes on the wire are the same."""
    from service.runtime.packing import LARGE_ARGUMENT

    message = b"{" + b"x" * LARGE_ARGUMENT + b"}"
    pieces = PACKED.pack_command("XADD", "out", "*", "__data__", message)
    assert any(piece is message for piece in pieces)
    assert b"".join(pieces) == b"".join(PLAIN.pack_command("XADD", "out", "*", "__data__", message))
    small = b"{" + b"x" * 100 + b"}"
    assert len(PACKED.pack_command("XADD", "out", "*", "__data__", small)) == 1  # hiredis's
