"""The command line's bottom layer: the one-line user error, exit codes, and the Redis
connection every Redis-backed command shares. Imports nothing else of the command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from service.runtime.settings import Settings

T = TypeVar("T")

_REDIS_DEFAULT = object()  # redis-py's own socket timeout (5 s in redis 8.1)

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_TIMEOUT = 3  # `--wait`: no outcome within --timeout (the service is not running, or is behind)
REDIS_HELP = (
    "default: RATING_REDIS_URL / REDIS_URL, else redis://127.0.0.1:6379/0, else the embedded server "
    "a running `rating-service serve` wrote to RATING_DATA_DIR/redis.url"
)


class UserError(Exception):
    """A problem with the user's input: printed as one line, exit code 2."""


def cli_settings() -> Settings:
    """The settings from the environment; one that cannot be read is a user error (one line)."""
    from service.runtime.settings import SettingsError, load_settings

    try:
        return load_settings()
    except SettingsError as exc:
        raise UserError(str(exc)) from None


def redis_url(args: argparse.Namespace) -> str:
    """--redis-url; else RATING_REDIS_URL / REDIS_URL; else the default address if a Redis
    answers there; else the URL of the embedded server a running `serve` recorded in its data
    directory (said on standard error); else the default address (which then fails)."""
    resolved = getattr(args, "_resolved_redis_url", None)
    if resolved:
        return resolved
    from service.runtime.settings import check_redis_url, redis_url_configured

    if args.redis_url:
        try:
            check_redis_url(args.redis_url)
        except ValueError as exc:
            raise UserError(f"--redis-url {args.redis_url!r}: {exc}") from None
    settings = cli_settings()
    url = args.redis_url or settings.redis_url
    if not args.redis_url and not redis_url_configured():
        from service.runtime.embedded import URL_FILE, answers, running_url

        embedded = None if answers(url) else running_url(settings.data_dir)
        if embedded is not None:
            print(
                f"rating-service: no Redis at {url}: using the embedded server of `rating-service serve` at "
                f"{embedded} (from {settings.data_dir}/{URL_FILE})",
                file=sys.stderr,
            )
            url = embedded
    args._resolved_redis_url = url
    return url


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

    from redis.exceptions import RedisClusterException, RedisError

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
            hint = (
                " (no Redis configured, none there, and no `rating-service serve` runs an embedded server: "
                "start one, or give --redis-url)"
            )
        raise UserError(f"Redis at {redact(url)}: {redact_error(exc, url)}{hint}") from None
