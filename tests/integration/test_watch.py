"""`rating-service watch` as a person runs it: for as long as they like on an idle stream,
ended by Ctrl-C or by the reader of its output going away (`watch | head -1`), quietly."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time

import pytest
import redis

from tests.integration.processes import ROOT

pytestmark = pytest.mark.integration

EXAMPLES = ROOT / "deploy" / "examples"
HEADING = "ottawa-fall-open-2025  cfc/regular  cfc-2009"


def ratings_updated(tmp_path, event_id: str = "ottawa-fall-open-2025") -> bytes:
    """One real ratings.updated/v1 message: the offline `rate` of the example CFC event."""
    events = tmp_path / f"{event_id}.json"
    events.write_text(
        json.dumps({**json.loads((EXAMPLES / "cfc-event.json").read_text()), "event_id": event_id})
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "service",
            "rate",
            str(events),
            "--ratings",
            str(EXAMPLES / "cfc-ratings.jsonl"),
        ],
        cwd=ROOT,
        capture_output=True,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def watch(redis_url: str, stream: str, *options: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "service",
            "watch",
            "--stream",
            stream,
            "--redis-url",
            redis_url,
            *options,
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,  # unbuffered: select() on the pipe sees every line read_line has not taken
    )


def read_line(process: subprocess.Popen, timeout: float) -> str:
    """The next line of the process's output, failing after `timeout` seconds."""
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    assert ready, f"no output within {timeout}s"
    return process.stdout.readline().decode()


def add(redis_url: str, stream: str, data: bytes) -> None:
    client = redis.Redis.from_url(redis_url)
    try:
        client.xadd(stream, {"__data__": data})
    finally:
        client.close()


def wait_reading(redis_url: str, timeout: float = 60.0) -> None:
    """Until a client of this Redis is blocked in XREAD (watch reads from "now": a message
    added before its first read is not its to print)."""
    client = redis.Redis.from_url(redis_url)
    deadline = time.monotonic() + timeout
    try:
        while not any(c.get("cmd") == "xread" for c in client.client_list()):
            assert time.monotonic() < deadline, f"watch did not read within {timeout} s"
            time.sleep(0.05)
    finally:
        client.close()


def finish(process: subprocess.Popen, timeout: float = 15) -> tuple[int, str]:
    try:
        process.wait(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    err = process.stderr.read().decode()
    process.stderr.close()
    if process.stdout:
        process.stdout.close()
    return process.returncode, err


def test_watch_outlives_an_idle_stream_then_prints_what_comes(tmp_path, redis_url, key_prefix):
    """The default read blocks 5 s, as long as redis-py's default socket timeout: watch used
    to die after 5 idle seconds with "Timeout reading". It must wait as long as it takes."""
    stream = f"{key_prefix}.ratings"
    process = watch(redis_url, stream)  # the defaults: --block-ms 5000, from now on, no --count
    try:
        time.sleep(6.5)  # more than one block and more than redis-py's 5 s default
        assert process.poll() is None, process.stderr.read().decode()
        add(redis_url, stream, ratings_updated(tmp_path))
        assert read_line(process, timeout=10).startswith(HEADING)
        assert read_line(process, timeout=5).split() == [
            "Ottawa",
            "Fall",
            "Open",
            "2025-11-01",
            "to",
            "2025-11-02",
        ]
        assert read_line(process, timeout=5).split()[:3] == ["player", "name", "old"]
        assert read_line(process, timeout=5).split()[:3] == ["100001", "Anne", "Tremblay"]
        process.send_signal(signal.SIGINT)
    finally:
        code, err = finish(process)
    assert (code, err) == (130, "")


def test_watch_into_head_ends_quietly_when_head_is_done(tmp_path, redis_url, key_prefix):
    """`watch --from-start | head -n 1`: head exits after one line while the stream is idle;
    watch notices at its next empty read and ends with 0, no traceback, no "Exception ignored"."""
    stream = f"{key_prefix}.ratings"
    add(redis_url, stream, ratings_updated(tmp_path))
    process = watch(redis_url, stream, "--from-start", "--block-ms", "500")
    head = subprocess.Popen(["head", "-n", "1"], stdin=process.stdout, stdout=subprocess.PIPE)
    process.stdout.close()  # head holds the only read end now
    process.stdout = None
    try:
        out, _ = head.communicate(timeout=15)
    finally:
        code, err = finish(process)
    assert out.decode().startswith(HEADING)
    assert (code, err) == (0, "")


def test_watch_ends_quietly_when_its_reader_left_before_a_write(tmp_path, redis_url, key_prefix):
    """The reader goes away, then a message comes: the write fails with EPIPE (BrokenPipeError);
    watch ends with 0, and nothing is printed at interpreter exit either."""
    stream = f"{key_prefix}.ratings"
    add(redis_url, stream, ratings_updated(tmp_path, "first"))
    process = watch(
        redis_url, stream, "--from-start", "--block-ms", "60000"
    )  # no idle check in time
    try:
        assert read_line(process, timeout=10).startswith("first  cfc/regular")
        process.stdout.close()
        process.stdout = None
        add(redis_url, stream, ratings_updated(tmp_path, "second"))
    finally:
        code, err = finish(process)
    assert (code, err) == (0, "")


def test_watch_ends_quietly_on_ctrl_c(tmp_path, redis_url, key_prefix):
    stream = f"{key_prefix}.ratings"
    add(redis_url, stream, ratings_updated(tmp_path))
    process = watch(redis_url, stream, "--from-start")
    try:
        assert read_line(process, timeout=10).startswith(HEADING)  # following the stream now
        time.sleep(0.5)  # blocked in its next read
        process.send_signal(signal.SIGINT)
    finally:
        code, err = finish(process)
    assert (code, err) == (130, "")


def test_watch_stops_at_once_on_sigterm(tmp_path, redis_url, key_prefix):
    """`docker stop` sends SIGTERM to watch as process 1 of the container, where a signal
    without a handler is ignored: watch must handle it and end with 0 at once."""
    stream = f"{key_prefix}.ratings"
    add(redis_url, stream, ratings_updated(tmp_path))
    process = watch(redis_url, stream, "--from-start")
    try:
        assert read_line(process, timeout=10).startswith(HEADING)
        time.sleep(0.5)  # blocked in its next read (up to 5 s)
        sent = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=5)
        assert time.monotonic() - sent < 2  # not at the end of the block
    finally:
        code, err = finish(process)
    assert (code, err) == (0, "")
