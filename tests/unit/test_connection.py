"""service/runtime/connection.py without a server: which errors are a cluster client's
connection race (said as a ConnectionError), and which keys share a slot."""

from __future__ import annotations

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisClusterException

from service.runtime.connection import _Race, is_cluster_away, is_connection_race, same_slot


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


def test_a_cluster_with_no_node_answering_is_said_as_a_connection_error():
    """redis-py's "Redis Cluster cannot be connected" (its only known node down: the URL's,
    while it fails over) is Redis away, as a refused connection is; the start-up waits for it
    (the fault campaign's round 8005 found a replica exiting on it)."""
    try:
        try:
            raise RedisConnectionError("Error 111 connecting to 127.0.0.1:48731.")
        except RedisConnectionError as exc:
            raise RedisClusterException(
                f"Redis Cluster cannot be connected. Please provide at least one reachable node: {exc}"
            ) from exc
    except RedisClusterException as exc:
        away = exc
    assert is_cluster_away(away)
    with pytest.raises(RedisConnectionError, match="cannot be connected"):
        with _Race():
            raise away
    other = RedisClusterException("a Redis Cluster has database 0 only")
    assert not is_cluster_away(other)
    with pytest.raises(RedisClusterException):
        with _Race():
            raise other
