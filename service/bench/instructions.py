"""Instructions per event in the real `serve`, counted by valgrind's callgrind: a measure of the
commit path that a shared, noisy machine does not move, for comparing two versions of it (or
two settings) where wall-clock figures differ by more than the change.

The bench's private Redis (or `--redis-url`), 10,000 imported CFC players, and `python -m
service serve` run under `valgrind --tool=callgrind`. After a warm-up, the counters are zeroed
(`callgrind_control -z`), a backlog of two-player events is drained (then one of 64-player
7-round events), and the counters dumped after each: the service's user-space instructions per
event, start-up, imports and the warm-up excluded. The kernel's work (the sockets) and Redis's
are not counted. The same code, settings and workload give the same count to a fraction of a
per cent (two runs here: 859,285 and 860,341 per two-player event). Settings come from the
environment as for `serve` (e.g. RATING_BATCH_SIZE=64). About two minutes.

Run: python -m service.bench.instructions [--events N] [--swiss N] [--redis-url URL] [--json]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from redis.exceptions import RedisError

from service.bench.benchmark import redis_problem, served
from service.bench.machine import stderr_tail

START_TIMEOUT = 300.0  # imports under callgrind take a minute or more


class Unavailable(Exception):
    """valgrind (or its callgrind_control) is not on PATH."""


def totals(path: str) -> int:
    """The instruction count of a callgrind dump (its `totals:` or `summary:` line)."""
    with open(path) as dump:
        for line in dump:
            if line.startswith(("totals:", "summary:")):
                return int(line.split()[1])
    raise ValueError(f"{path}: no totals in the callgrind dump")


def _control(option: str, pid: int) -> None:
    subprocess.run(
        ["callgrind_control", option, str(pid)], check=True, capture_output=True, timeout=120
    )


def _dumped(directory: str, pid: int, after: float) -> int:
    """The newest dump of process `pid` written after `after` (callgrind writes it shortly after
    the request)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        files = [
            f
            for f in glob.glob(os.path.join(directory, f"cg.{pid}.*"))
            if os.path.getmtime(f) >= after
        ]
        if files:
            newest = max(files, key=os.path.getmtime)
            try:
                return totals(newest)
            except ValueError:  # still being written
                pass
        time.sleep(0.2)
    raise RuntimeError(f"callgrind wrote no dump for process {pid}")


def count(url: str | None, events: int, swiss: int) -> dict:
    """Instructions per two-player and per 64x7 event in a `serve` under callgrind."""
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        raise Unavailable("valgrind is not installed (Debian: apt-get install valgrind)")
    directory = tempfile.mkdtemp(prefix="callgrind-")
    launcher = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={directory}/cg.%p"]
    try:
        # stop_timeout: valgrind writes its last dump on the way out
        with served(
            url,
            10_000,
            {"RATING_HTTP_PORT": "0", "RATING_LOG_LEVEL": "WARNING"},
            launcher,
            start_timeout=START_TIMEOUT,
            stop_timeout=120,
        ) as serving:
            service = serving.service
            try:
                serving.drain(
                    [serving.work.two_player()[1] for _ in range(300)], timeout=600
                )  # warm-up
                out: dict = {
                    "settings": {
                        k: v for k, v in sorted(os.environ.items()) if k.startswith("RATING_")
                    }
                }
                for kind, make, n in (
                    ("two_player", serving.work.two_player, events),
                    ("swiss_64x7", serving.work.swiss, swiss),
                ):
                    if not n:
                        continue
                    payloads = [make()[1] for _ in range(n)]
                    _control("-z", service.pid)
                    serving.drain(payloads, timeout=3600)
                    asked = time.time() - 1
                    _control("-d", service.pid)
                    out[kind] = {
                        "events": n,
                        "instructions_per_event": _dumped(directory, service.pid, asked) / n,
                    }
                return out
            except RuntimeError as exc:
                raise RuntimeError(f"{exc}: {stderr_tail(service)}") from None
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def render(figures: dict) -> str:
    lines = [
        "instructions per event in `serve` (callgrind; user space, the service's process only)"
    ]
    if figures["settings"]:
        lines.append("  settings: " + ", ".join(f"{k}={v}" for k, v in figures["settings"].items()))
    for kind, label in (
        ("two_player", "two-player events"),
        ("swiss_64x7", "64-player 7-round events"),
    ):
        if kind in figures:
            f = figures[kind]
            lines.append(
                f"  {label:<26} {f['instructions_per_event']:>14,.0f}  ({f['events']:,} events)"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m service.bench.instructions", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--events", type=int, default=2_000, help="two-player events (default 2,000)"
    )
    parser.add_argument(
        "--swiss", type=int, default=50, help="64-player 7-round events (default 50; 0: none)"
    )
    parser.add_argument(
        "--redis-url", help="use this Redis (default: a private server on a free port)"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args(argv)
    try:
        figures = count(args.redis_url, args.events, args.swiss)
    except (Unavailable, LookupError, RuntimeError) as exc:
        print(f"python -m service.bench.instructions: {exc}", file=sys.stderr)
        return 1
    except RedisError as exc:
        print(
            f"python -m service.bench.instructions: {redis_problem(exc, args.redis_url)}",
            file=sys.stderr,
        )
        return 1
    print(json.dumps(figures) if args.json else render(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
