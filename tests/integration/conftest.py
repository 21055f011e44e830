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


@pytest.fixture(autouse=True)
def new_stores_get_their_record(monkeypatch):
    """Every test's store is new: the commands it runs in this process create the stores'
    records (RATING_CREATE_STORE; test_store_identity.py tests the records, with it false)."""
    monkeypatch.setenv("RATING_CREATE_STORE", "true")
