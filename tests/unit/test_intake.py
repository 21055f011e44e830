"""service/runtime/intake.py and its task's watchdog in app.py, without Redis: the queue's
order, merging and shutdown. (The commits themselves: tests/integration/test_processor.py.)"""

from __future__ import annotations

import asyncio

from service.runtime.app import _intake_ended
from service.runtime.intake import Intake
from service.runtime.leases import LeaseLost
from service.runtime.processor import Entry


def entry(entry_id: str) -> Entry:
    return Entry(entry_id, {}, None, None, None, None)


class Recorder:
    """Stands in for the StreamProcessor: records what it is asked to commit."""

    stream = "s"

    def __init__(self, fail_with: BaseException | None = None):
        self.calls: list[tuple[tuple[str, ...], list[list[str]]]] = []
        self.fail_with = fail_with
        self.gate = asyncio.Event()
        self.gate.set()

    def decode_batch(self, ids, bodies):
        return [entry(i) for i in ids]

    async def handle(self, *ids, runs=None):
        await self.gate.wait()
        self.calls.append((ids, [[e.id for e in run] for run in runs or []]))
        if self.fail_with is not None:
            raise self.fail_with


def intake_for(processor, stopping, lost=None) -> Intake:
    return Intake(processor, stopping, away=(ConnectionError,), reachable=lambda: None, unreachable=lambda exc: None,
                  lost=lost or (lambda stream: None))  # type: ignore[arg-type]


async def test_batches_that_wait_are_committed_together_in_stream_order():
    stopping = asyncio.Event()
    processor = Recorder()
    intake = intake_for(processor, stopping)
    processor.gate.clear()  # the first commit waits for Redis
    worker = asyncio.create_task(intake.run())
    await intake.put(["1-0", "1-1"], [{}, {}])
    await asyncio.sleep(0)
    await intake.put(["3-0"], [{}])
    await intake.put(["2-0"], None)  # reclaimed: no bodies
    processor.gate.set()
    await asyncio.sleep(0.01)
    stopping.set()
    await worker
    assert processor.calls == [(("1-0", "1-1"), [["1-0", "1-1"]]), (("3-0", "2-0"), [["3-0"]])]


async def test_a_full_queue_holds_the_subscriber_until_shutdown():
    stopping = asyncio.Event()
    intake = intake_for(Recorder(), stopping)  # no task takes from the queue
    await intake.put(["1-0"], [{}])
    await intake.put(["2-0"], [{}])
    waiting = asyncio.create_task(intake.put(["3-0"], [{}]))
    await asyncio.sleep(0.01)
    assert not waiting.done()
    stopping.set()
    await asyncio.wait_for(waiting, 1)
    assert intake.queue.qsize() == 2  # the third batch stays pending in Redis, not queued


async def test_a_lost_lease_or_a_failing_batch_does_not_stop_the_commits():
    stopping = asyncio.Event()
    lost: list[str] = []
    processor = Recorder(fail_with=LeaseLost("s"))
    intake = intake_for(processor, stopping, lost=lost.append)
    worker = asyncio.create_task(intake.run())
    await intake.put(["1-0"], [{}])
    await asyncio.sleep(0.01)
    processor.fail_with = ValueError("an entry that fails")
    await intake.put(["2-0"], [{}])
    await asyncio.sleep(0.01)
    processor.fail_with = None
    await intake.put(["3-0"], [{}])
    await asyncio.sleep(0.01)
    stopping.set()
    await worker
    assert lost == ["s"] and [ids for ids, _ in processor.calls] == [("1-0",), ("2-0",), ("3-0",)]


class App:
    def __init__(self):
        self.exits = 0

    def exit(self):
        self.exits += 1


async def test_an_intake_task_that_ends_before_shutdown_stops_the_service():
    async def broken():
        raise RuntimeError("a bug")

    stopping, app = asyncio.Event(), App()
    task = asyncio.create_task(broken())
    await asyncio.gather(task, return_exceptions=True)
    _intake_ended(task, "s", stopping, app)  # type: ignore[arg-type]
    assert app.exits == 1
    stopping.set()
    _intake_ended(task, "s", stopping, app)  # type: ignore[arg-type]
    assert app.exits == 1  # at shutdown it is expected
