"""service/runtime/connection.py without a server: which errors are a cluster client's
connection race (said as a ConnectionError), and which keys share a slot."""

from __future__ import annotations

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from service.runtime.connection import _Race, is_connection_race, same_slot


def _raised_in(filename: str) -> AttributeError:
    """An AttributeError raised by code that lives in `filename`."""
    scope: dict = {}
    exec(compile("def send(writer):\n    writer.writelines([])\n", filename, "exec"), scope)
    try:
        scope["send"](None)
    except AttributeError as exc:
        return exc
    raise AssertionError("no error")


def test_an_attribute_error_inside_redis_py_is_a_connection_race_and_said_as_a_connection_error():
    race = _raised_in("/venv/lib/python3.11/site-packages/redis/asyncio/connection.py")
    assert is_connection_race(race)
    with pytest.raises(RedisConnectionError, match="connection closed under the command"):
        with _Race():
            raise race


def test_an_attribute_error_of_our_own_stays_what_it_is():
    ours = _raised_in("/work/service/runtime/processor.py")
    assert not is_connection_race(ours) and not is_connection_race(ValueError("x"))
    with pytest.raises(AttributeError):
        with _Race():
            raise ours


def test_keys_of_one_hash_tag_share_a_slot():
    assert same_slot(
        "{fide.standard}:events.finished", "{fide.standard}:ratings.updated", "fide.standard"
    )
    assert not same_slot("events.finished", "ratings.updated")
