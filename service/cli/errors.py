"""The command line's bottom layer: the one-line user error, exit codes, and the Redis
connection every Redis-backed command shares. Imports nothing else of the command line."""

from __future__ import annotations

import argparse
from typing import Callable

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
REDIS_HELP = "default: RATING_REDIS_URL / REDIS_URL, else redis://127.0.0.1:6379/0"


class UserError(Exception):
    """A problem with the user's input: printed as one line, exit code 2."""


def redis_url(args: argparse.Namespace) -> str:
    from service.runtime.settings import load_settings

    return args.redis_url or load_settings().redis_url


def run_redis(args: argparse.Namespace, work: Callable) -> object:
    """Run `work(client)` against the Redis of --redis-url; a connection failure is one line."""
    import asyncio

    import redis.asyncio as aioredis
    from redis.exceptions import RedisError

    async def main() -> object:
        client = aioredis.Redis.from_url(redis_url(args))
        try:
            return await work(client)
        finally:
            await client.aclose()

    try:
        return asyncio.run(main())
    except (RedisError, OSError) as exc:
        from service.runtime.settings import redact, redact_error

        url = redis_url(args)
        raise UserError(f"Redis at {redact(url)}: {redact_error(exc, url)}") from None
