"""`rating-service serve`: run the service until SIGTERM / SIGINT."""

from __future__ import annotations

import argparse
from typing import Any

from service.cli.errors import EXIT_OK, UserError


def cmd_serve(args: argparse.Namespace) -> int:
    """serve: run the service until SIGTERM / SIGINT."""
    import asyncio

    from service.runtime.app import serve
    from service.runtime.settings import SettingsError, load_settings

    try:
        settings = load_settings(redis_url=args.redis_url, consumer=args.consumer)
    except SettingsError as exc:
        raise UserError(str(exc)) from None
    asyncio.run(serve(settings))
    return EXIT_OK


def register(commands: Any) -> None:
    """Add serve to the command line."""
    from service.runtime.settings import describe

    p = commands.add_parser(
        "serve",
        help="run the service: consume events, rate them, publish ratings",
        description="Run the rating service. Settings come from environment variables.",
        epilog=describe(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--redis-url", help="overrides RATING_REDIS_URL / REDIS_URL")
    p.add_argument("--consumer", help="overrides RATING_CONSUMER")
    p.set_defaults(func=cmd_serve)
