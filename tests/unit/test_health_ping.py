"""Health.redis_answers (service/runtime/health.py) stopped while its PING is in flight: the
task ends cancelled and leaves no error behind. (A CI run's SIGTERM during FastStream's
start-up logged "Task exception was never retrieved" with a ConnectionError traceback: on
Python 3.11 `asyncio.wait_for` ran the PING in a task of its own, and when the shutdown's
cancellation met the connection closing, that task's error was never retrieved.)"""

from __future__ import annotations

import asyncio
import gc

from service.runtime.health import Health
from service.runtime.metrics import Metrics


class ClosingUnderPing:
    """A client whose PING is answered never; cancelled, it fails as redis-py does when its
    connection is closed under the read (ConnectionError, not CancelledError)."""

    def __init__(self) -> None:
        self.pinging = asyncio.Event()

    async def ping(self) -> bool:
        self.pinging.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            raise ConnectionError("Connection closed by server.") from None
        return True


class AnswersAfter:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    async def ping(self) -> bool:
        await asyncio.sleep(self.seconds)
        return True


async def test_a_ping_cut_by_a_shutdown_ends_cancelled_and_leaves_no_error():
    loop = asyncio.get_running_loop()
    unretrieved: list[dict] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _, context: unretrieved.append(context))
    try:
        client = ClosingUnderPing()
        health = Health(client, Metrics())
        asking = asyncio.create_task(health.redis_answers())
        await client.pinging.wait()
        asking.cancel()
        await asyncio.gather(asking, return_exceptions=True)
        for _ in range(3):  # let any task left behind finish
            await asyncio.sleep(0)
        assert asking.cancelled()
        del asking  # its CancelledError's frames would keep a task left behind alive
        gc.collect()
        assert [c["message"] for c in unretrieved] == []
    finally:
        loop.set_exception_handler(previous)


async def test_a_ping_that_does_not_answer_in_time_is_a_problem_not_a_stop(monkeypatch):
    monkeypatch.setattr("service.runtime.health.PING_TIMEOUT", 0.01)
    health = Health(AnswersAfter(5), Metrics())
    assert await health.redis_answers() == "TimeoutError"
    assert await Health(AnswersAfter(0), Metrics()).redis_answers() is None
