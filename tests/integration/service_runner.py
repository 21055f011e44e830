"""Runs the service as its own process for the crash, replica and shutdown tests:
`python -m tests.integration.service_runner counting|default`, settings from the
environment exactly as `rating-service serve` reads them."""

from __future__ import annotations

import asyncio
import sys

from service.engine.registry import default_registry
from service.runtime.app import ServiceFailed, serve
from service.runtime.settings import load_settings
from tests.engines import counting_registry

if __name__ == "__main__":
    registry = counting_registry() if sys.argv[1:] == ["counting"] else default_registry()
    try:
        asyncio.run(serve(load_settings(), registry))
    except ServiceFailed as exc:  # as `rating-service serve` does
        print(f"rating-service serve: {exc}", file=sys.stderr)
        sys.exit(1)
