"""Running a command's work on a Redis client: `run_redis(args, work)` connects to the Redis
of `redis_url(args)` (standalone or a Redis Cluster, service/runtime/connection.py), runs
`work(client)` and closes it; a connection failure is a one-line user error."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from service.cli.errors import UserError
from service.cli.settings import redis_url

T = TypeVar("T")

_REDIS_DEFAULT = object()  # redis-py's own socket timeout (5 s in redis 8.1)


def run_redis(
    args: argparse.Namespace,
    work: Callable[[Any], Awaitable[T]],
    *,
    socket_timeout: object = _REDIS_DEFAULT,
) -> T:
    """Run `work(client)` against the Redis of --redis-url, standalone or a Redis Cluster
    (service/runtime/connection.py); a connection failure is one line.

    `socket_timeout` (seconds, None for none) replaces redis-py's default for a command whose
    reads block on purpose for longer than that (`watch`'s XREAD BLOCK); a
    `?socket_timeout=` in the URL still wins. A BrokenPipeError is our standard output
    closed by its reader (`watch | head -1`), not Redis (redis-py wraps socket errors in
    its own ConnectionError): it goes up to `main`, which ends quietly."""
    import asyncio

    from redis.exceptions import OutOfMemoryError, RedisClusterException, RedisError

    from service.runtime.connection import connect

    options = {} if socket_timeout is _REDIS_DEFAULT else {"socket_timeout": socket_timeout}

    async def main() -> T:
        client = await connect(
            redis_url(args), **options
        )  # standalone or cluster (runtime/connection.py)
        try:
            return await work(client)
        finally:
            await client.aclose()

    try:
        return asyncio.run(main())
    except BrokenPipeError:
        raise
    except (RedisError, RedisClusterException, OSError) as exc:
        from service.runtime.settings import (
            DEFAULT_REDIS_URL,
            redact,
            redact_error,
            redis_url_configured,
        )

        url = redis_url(args)
        hint = ""
        if url == DEFAULT_REDIS_URL and not args.redis_url and not redis_url_configured():
            hint = no_embedded_server_hint()
        if isinstance(exc, OutOfMemoryError):
            hint = (
                " (Redis is full: maxmemory reached under noeviction; nothing was written;"
                " docs/operations/sizing.md)"
            )
        raise UserError(f"Redis at {redact(url)}: {redact_error(exc, url)}{hint}") from None


def no_embedded_server_hint() -> str:
    """Why the default address was tried, and the three ways out: a `serve` started with
    `--data-dir DIR` is found with RATING_DATA_DIR=DIR (docs/operations/embedded.md)."""
    from service.cli.settings import cli_settings

    data_dir = cli_settings().data_dir
    return (
        " (no Redis configured, none there, and no `rating-service serve` runs an embedded "
        f"server on RATING_DATA_DIR {data_dir}: start one, give --redis-url, or, for a serve "
        "started with --data-dir DIR, give RATING_DATA_DIR=DIR)"
    )
