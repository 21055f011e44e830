"""`rating-service load` (D115-D118): a mixed history (CFC, FIDE with closes, NASPA nwl +
csw, with late events, corrections, withdrawals and reopens) loaded from a file equals, key
for key, the same messages through the stream processor at the same entry ids; a load
killed mid-way and run again equals a clean load."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from service.engine.registry import default_registry
from service.formats.ratinglists import render_jsonl
from service.runtime.keys import StreamKeys
from service.runtime.onboard import Loader, read_checkpoint
from tests.integration.corrections import mixed
from tests.integration.helpers import settings_for
from tests.integration.loading import differences, dump, through_the_service, write_history

pytestmark = pytest.mark.integration


async def load(client, settings, path, start, base: int, chunk: int):
    keys = StreamKeys(settings.input_streams[0])
    loader = Loader(client, keys, settings, default_registry(), chunk, lambda line: None)
    assert await loader.begin(path, start, base)
    return await loader.run(path, lambda at: None)


CASES = ("cfc", "fide-close", "naspa")


@pytest.mark.parametrize(
    "seed, chunk, cases",
    [(11, 7, CASES), (5, 500, CASES), (8, 3, ("fide-reopen", "cfc", "naspa"))],
)
async def test_a_loaded_history_equals_the_service_key_for_key(
    client, redis_url, key_prefix, tmp_path, seed, chunk, cases
):
    m = mixed(seed=seed, cases=cases)
    path = write_history(tmp_path / "history.jsonl", m.messages)
    base = time.time_ns() // 1_000_000
    served = settings_for(redis_url, key_prefix + "a", batch_size=16)
    loaded = settings_for(redis_url, key_prefix + "b")
    await through_the_service(client, served, m.messages, m.start, base, seed)
    at = await load(client, loaded, path, m.start, base, chunk)

    assert at.finished and at.messages == len(m.messages)
    assert at.applied + at.duplicates + at.rejected == len(m.messages)
    want = await dump(client, StreamKeys(served.input_streams[0]))
    got = await dump(client, StreamKeys(loaded.input_streams[0]))
    kinds = {name.split(":", 1)[0] for name in want}
    assert {"players", "history", "timeline", "events", "entries", "results", "moves"} <= kinds
    assert differences(want, got) == []


async def test_a_load_killed_mid_way_and_run_again_equals_a_clean_load(
    client, redis_url, key_prefix, tmp_path
):
    m = mixed(seed=3, events=120, extra=80)
    path = write_history(tmp_path / "history.jsonl", m.messages)
    ratings = tmp_path / "start.jsonl"
    ratings.write_bytes(render_jsonl(m.start))
    crashed = settings_for(redis_url, key_prefix + "k")
    keys = StreamKeys(crashed.input_streams[0])
    env = dict(os.environ, REDIS_URL=redis_url, RATING_INPUT_STREAMS=keys.stream)
    command = [sys.executable, "-m", "service", "load", str(path), "--ratings", str(ratings)]
    first = subprocess.Popen([*command, "--chunk", "2"], env=env, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    at = None
    while time.monotonic() < deadline and first.poll() is None:
        at = await read_checkpoint(client, keys)
        if at is not None and at.messages >= 40:
            break
        time.sleep(0.01)
    first.send_signal(signal.SIGKILL)
    first.wait()
    assert at is not None and not at.finished, "the load ended before it was killed"
    second = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr
    assert "resuming after message" in second.stderr
    done = await read_checkpoint(client, keys)
    assert done is not None and done.finished and done.messages == len(m.messages)

    clean = settings_for(redis_url, key_prefix + "c")
    await load(client, clean, path, m.start, done.base, 500)
    want = await dump(client, StreamKeys(clean.input_streams[0]))
    assert differences(want, await dump(client, keys)) == []


async def test_a_chunk_that_fails_in_flight_stops_the_load_and_a_second_run_resumes_before_it(
    client, redis_url, key_prefix, tmp_path, monkeypatch
):
    """D141: a chunk's transaction is in flight while the next is rated; its failure is
    raised when the loader next waits for it, the store holds the chunks before it (the
    last checkpoint written), and a second run goes on from there to a clean load's store."""
    from service.runtime import onboard

    m = mixed(seed=4, cases=("fide-close", "cfc"), events=40, extra=20)
    path = write_history(tmp_path / "history.jsonl", m.messages)
    base = time.time_ns() // 1_000_000
    failing = settings_for(redis_url, key_prefix + "f")
    keys = StreamKeys(failing.input_streams[0])
    sent = []
    commit = onboard._commit

    async def third_fails(pipe):
        sent.append(len(pipe.command_stack))
        if len(sent) == 3:
            await pipe.reset()
            raise ConnectionError("the third chunk's transaction is lost")
        await commit(pipe)

    monkeypatch.setattr(onboard, "_commit", third_fails)
    with pytest.raises(ConnectionError, match="third chunk"):
        await load(client, failing, path, m.start, base, 5)
    at = await read_checkpoint(client, keys)
    assert at is not None and at.chunks == 2 and not at.finished  # the two chunks before it
    monkeypatch.setattr(onboard, "_commit", commit)
    done = await load(client, failing, path, m.start, base, 5)
    assert done.finished and done.messages == len(m.messages)

    clean = settings_for(redis_url, key_prefix + "g")
    await load(client, clean, path, m.start, base, 5)
    want = await dump(client, StreamKeys(clean.input_streams[0]))
    assert differences(want, await dump(client, keys)) == []
