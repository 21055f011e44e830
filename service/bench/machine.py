"""The machine under `rating-service bench`: its cores, how busy it was, and the CPU time of
processes (Linux /proc; elsewhere the figures it cannot read are None).

A bench on a shared machine measures its neighbours too. Two signs of that, both reported:
the 1-minute load average when the bench starts (before it runs anything of its own), and the
CPU time everything else used while it ran (all CPUs' busy time in /proc/stat minus the
bench's own process and its children), as an average number of cores. The machine counts as
busy when that load average is above the number of cores, or when the others took more than
a quarter of the cores on average (a quarter of a machine that the bench's stages fill).
"""

from __future__ import annotations

import os
import resource
import time
from typing import Any

TICKS = os.sysconf("SC_CLK_TCK")
OTHERS_BUSY = 0.25  # of the cores: above this average, the others count as a busy machine


def cores() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a live process, all its threads (/proc/<pid>/stat)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def redis_cpu_seconds(client: Any) -> float:
    """The server's own CPU seconds by INFO (used_cpu_sys + used_cpu_user): every client's
    commands, not only the bench's, on a shared server."""
    info = client.info("cpu")
    return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])


def busy_seconds() -> float | None:
    """All CPUs' busy time so far (/proc/stat: user, nice, system, irq, softirq, steal)."""
    try:
        with open("/proc/stat") as stat:
            fields = stat.readline().split()
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in fields[1:9])
    return (user + nice + system + irq + softirq + steal) / TICKS


def _own_seconds() -> float:
    """CPU seconds of this process and of its children that have been waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _load() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


class Neighbours:
    """Started before the bench runs anything; `report()` once all its processes are waited for."""

    def __init__(self) -> None:
        self.cores = cores()
        self.load_at_start = _load()
        self._wall = time.monotonic()
        self._busy = busy_seconds()
        self._own = _own_seconds()

    def report(self) -> dict:
        wall = time.monotonic() - self._wall
        busy = busy_seconds()
        others = None
        if busy is not None and self._busy is not None and wall > 0:
            others = max(0.0, (busy - self._busy) - (_own_seconds() - self._own)) / wall
        warnings = []
        if self.load_at_start is not None and self.load_at_start > self.cores:
            warnings.append(
                f"the machine was busy: load average {self.load_at_start:.2f} above its {self.cores} "
                "cores when the bench started"
            )
        if others is not None and others > OTHERS_BUSY * self.cores:
            warnings.append(
                f"the machine was busy: other processes used {others:.2f} of its {self.cores} cores "
                "on average while the bench ran"
            )
        return {
            "cores": self.cores,
            "load_average_at_start": self.load_at_start,
            "load_average_at_end": _load(),
            "other_cpu_cores": others,
            "busy": bool(warnings),
            "warnings": warnings,
        }


def stderr_tail(process: Any, size: int = 2000) -> str:
    """The end of a bench process's standard error, written to a file (`log_file`, by
    benchmark._start) rather than a pipe that nobody reads while it runs."""
    log = getattr(process, "log_file", None)
    if log is None or log.closed:
        return ""
    log.seek(0)
    return log.read().decode(errors="replace")[-size:]
