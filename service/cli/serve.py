"""`rating-service serve`: run the service until SIGTERM / SIGINT; with no Redis configured
and none answering on the default address, on an embedded server of its own.

Exit codes: 0 after SIGTERM / SIGINT (at any stage, start-up included); 1 when the service
cannot run and retrying would not help (the HTTP port is taken, Redis refuses a command it
needs at start-up, a subscriber stopped for good), with one line saying why; 2 for a setting
that cannot be used, or an embedded server that cannot start. A Redis that does not answer
yet is waited for.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from service.cli.errors import EXIT_FAILED, EXIT_OK, UserError


def cmd_serve(args: argparse.Namespace) -> int:
    """serve: run the service until SIGTERM / SIGINT."""
    import signal

    # Until the service's own handlers are in place, remember a SIGTERM instead of dying of it.
    early: list[int] = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda number, frame: early.append(number))

    import asyncio

    from service.runtime.app import ServiceFailed, serve
    from service.runtime.embedded import EmbeddedError, redis_for_serve
    from service.runtime.settings import (
        SettingsError,
        check_redis_url,
        load_settings,
        redact,
        redis_url_configured,
    )

    if args.redis_url:
        try:
            check_redis_url(args.redis_url)
        except ValueError as exc:
            raise UserError(f"--redis-url {redact(args.redis_url)!r}: {exc}") from None
    try:
        settings = load_settings(
            redis_url=args.redis_url, consumer=args.consumer, data_dir=args.data_dir
        )
    except SettingsError as exc:
        raise UserError(str(exc)) from None
    configured = bool(args.redis_url) or redis_url_configured()
    try:
        with redis_for_serve(settings, configured) as settings:
            asyncio.run(serve(settings, signalled=early))
    except EmbeddedError as exc:
        raise UserError(str(exc)) from None
    except ServiceFailed as exc:
        print(f"rating-service serve: {exc}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def register(commands: Any) -> None:
    """Add serve to the command line."""
    from service.runtime.settings import describe

    p = commands.add_parser(
        "serve",
        help="run the service: consume events, rate them, publish ratings",
        description="Run the rating service. Settings come from environment variables. With no Redis "
        "configured (--redis-url, RATING_REDIS_URL, REDIS_URL) and none answering on "
        "redis://127.0.0.1:6379/0, it starts an embedded Redis-compatible server on 127.0.0.1 "
        "(AOF in the data directory), logs its URL, writes it to DATA_DIR/redis.url, and stops "
        "it when the service stops.",
        epilog=describe(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--redis-url", help="overrides RATING_REDIS_URL / REDIS_URL")
    p.add_argument("--consumer", help="overrides RATING_CONSUMER")
    p.add_argument("--data-dir", help="overrides RATING_DATA_DIR: the embedded server's data")
    p.set_defaults(func=cmd_serve)
