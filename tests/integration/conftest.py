"""Fixtures the integration tests share."""

from __future__ import annotations

import pytest
import redis.asyncio as aioredis


@pytest.fixture
async def client(redis_url):
    """An asyncio client of the test's Redis, closed after the test."""
    client = aioredis.Redis.from_url(redis_url)
    yield client
    await client.aclose()
