"""The command line's settings: the service's settings from the environment, and which Redis
a Redis-backed command talks to (`--redis-url`, the environment, the default address, or a
running `serve`'s embedded server)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from service.cli.errors import UserError

if TYPE_CHECKING:
    from service.runtime.settings import Settings

REDIS_HELP = (
    "default: RATING_REDIS_URL / REDIS_URL, else redis://127.0.0.1:6379/0, else the embedded server "
    "a running `rating-service serve` wrote to RATING_DATA_DIR/redis.url"
)


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
    from service.runtime.settings import check_redis_url, redact, redis_url_configured

    if args.redis_url:
        try:
            check_redis_url(args.redis_url)
        except ValueError as exc:
            raise UserError(f"--redis-url {redact(args.redis_url)!r}: {exc}") from None
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
