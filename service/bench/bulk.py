"""`rating-service bench --scale`'s bulk stages (issue 32): a FIDE-like rating list of
`players` rows written to a temporary file, then `rating-service import` of it into a new
store and `rating-service export` of the pool, each in a process of its own, measured from
outside: wall time, user and system CPU and peak RSS (`wait4`'s rusage), and Redis's CPU
over the command.

The list (`write_fide_list`) is deterministic (`random.Random(seed)`): FIDE's own column
names for a standard list (`ID Number`, `Name`, `Fed`, `Sex`, `Tit`, `WTit`, `SRtng`,
`SGm`, `B-day`) and a `games` column (the career games K needs, F7), ASCII names
`Surname, Forename` from a few hundred of each, 2 % titled, 4 % women's titles, 8 %
unrated. Read with `--system fide --pool standard` as a federation's download is.
"""

from __future__ import annotations

import csv
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis

from service.bench.machine import redis_cpu_seconds

FIDE_HEADER = ("ID Number", "Name", "Fed", "Sex", "Tit", "WTit", "SRtng", "SGm", "games", "B-day")
_SYLLABLES = (
    "an", "ber", "cal", "dor", "en", "fa", "gor", "hal", "is", "jan", "ka", "lev", "mar", "nov",
    "ol", "pe", "ra", "sen", "tor", "ul", "va", "wen", "yo", "zin", "ski", "son", "ov", "ez",
)  # fmt: skip
_FEDERATIONS = (
    "IND", "RUS", "GER", "ESP", "FRA", "USA", "ITA", "POL", "IRI", "TUR", "ARG", "BRA", "CZE",
    "NED", "ENG", "SRB", "HUN", "UKR", "COL", "PER", "CHN", "MEX", "SWE", "BEL", "AUT", "SUI",
)  # fmt: skip
_TITLES = ("GM", "IM", "FM", "CM")
_WOMEN_TITLES = ("WGM", "WIM", "WFM", "WCM")


def _names(rng: random.Random, count: int, parts: int) -> list[str]:
    """`count` distinct-ish capitalised words of `parts` syllables."""
    return [
        "".join(rng.choice(_SYLLABLES) for _ in range(parts)).capitalize() for _ in range(count)
    ]


def write_fide_list(path: str | Path, players: int, seed: int = 32) -> int:
    """A FIDE-like standard list of `players` rows (the module's docstring) at `path`;
    its size in bytes. Ids `1000001`... in order."""
    rng = random.Random(seed)
    surnames = _names(rng, 800, 3) + _names(rng, 400, 2)
    forenames = _names(rng, 300, 2)
    with open(path, "w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(FIDE_HEADER)
        for n in range(players):
            woman = rng.random() < 0.12
            rated = rng.random() >= 0.08
            rating = max(1001, min(2850, int(rng.gauss(1650, 300)))) if rated else 0
            title = rng.choice(_TITLES) if rated and rating > 2200 and rng.random() < 0.4 else ""
            women = rng.choice(_WOMEN_TITLES) if woman and rated and rng.random() < 0.3 else ""
            games = rng.randint(30, 900) if rated else 0
            writer.writerow(
                (
                    1_000_001 + n,
                    f"{rng.choice(surnames)}, {rng.choice(forenames)}",
                    rng.choice(_FEDERATIONS),
                    "F" if woman else "M",
                    title,
                    women,
                    rating or "",
                    rng.randint(0, 12) if rated else 0,
                    games if rated else "",
                    rng.randint(1940, 2018) if rng.random() < 0.9 else "0000",
                )
            )
        return out.tell()


def run_measured(args: list[str], env: dict[str, str], client: redis.Redis) -> dict[str, Any]:
    """Run `python args` (standard output to /dev/null) and measure it: wall seconds, user
    and system CPU seconds, peak RSS (MB, the rusage's ru_maxrss), Redis's CPU seconds over
    it. RuntimeError with its standard error's last lines if it fails."""
    log = tempfile.TemporaryFile()
    cpu0 = redis_cpu_seconds(client)
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, *args], env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=log
    )
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    cpu1 = redis_cpu_seconds(client)
    log.seek(0)
    err = log.read().decode(errors="replace").strip().splitlines()[-5:]
    log.close()
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited {process.returncode}: {' | '.join(err)}")
    return {
        "seconds": seconds,
        "user_seconds": usage.ru_utime,
        "system_seconds": usage.ru_stime,
        "peak_rss_mb": usage.ru_maxrss / 1024,
        "redis_cpu_seconds": cpu1 - cpu0,
    }


def bench_bulk(
    url: str, prefix: str, players: int, progress: Callable[[str], None], runs: int = 1
) -> dict[str, Any]:
    """The `import` and `export` stages: the list written once, then `runs` times an
    import into a new store (stream `<prefix>.bulk<n>`) and an export of it; the figures
    of each run, and their medians."""
    client = redis.Redis.from_url(url)
    try:
        with tempfile.TemporaryDirectory(prefix="rating-bulk-") as folder:
            listed = Path(folder) / "fide-standard.csv"
            progress(f"scale: writing a FIDE-like list of {players:,} players")
            size = write_fide_list(listed, players)
            imports, exports = [], []
            for run in range(runs):
                env = {
                    "RATING_REDIS_URL": url,
                    "RATING_INPUT_STREAMS": f"{prefix}.bulk{run}",
                    "RATING_CREATE_STORE": "true",
                }
                where = ["--stream", f"{prefix}.bulk{run}"]
                progress(f"scale: importing {players:,} players (run {run + 1} of {runs})")
                command = ["import", str(listed), "--system", "fide", "--pool", "standard"]
                imports.append(run_measured(["-m", "service", *command, *where], env, client))
                progress(f"scale: exporting {players:,} players (run {run + 1} of {runs})")
                out = Path(folder) / f"export{run}.jsonl"
                command = ["export", "--system", "fide", "--pool", "standard", "--out", str(out)]
                exports.append(run_measured(["-m", "service", *command, *where], env, client))
                exports[-1]["bytes"] = out.stat().st_size
                out.unlink()
                drop_keys(client, f"{prefix}.bulk{run}")
    finally:
        drop_keys(client, prefix)
        client.close()
    imported, exported = _medians(imports), _medians(exports)
    return {
        "players": players,
        "list_bytes": size,
        "runs": runs,
        "import_seconds": imported["seconds"],
        "import_peak_rss_mb": imported["peak_rss_mb"],
        "export_seconds": exported["seconds"],
        "export_peak_rss_mb": exported["peak_rss_mb"],
        "import": imported,
        "export": exported,
        "import_runs": imports,
        "export_runs": exports,
    }


def render_bulk(b: dict[str, Any]) -> list[str]:
    """The stages' lines of the human table."""
    lines = [
        f"a FIDE-like list of {b['players']:,} players ({b['list_bytes'] / 1e6:.1f} MB of CSV),"
        f" medians of {b['runs']} run(s)",
    ]
    for stage in ("import", "export"):
        m = b[stage]
        lines.append(
            f"  {stage:<6} {m['seconds']:8.1f} s wall, {m['user_seconds']:.1f} s user CPU"
            f" (+ Redis {m['redis_cpu_seconds']:.1f} s), peak RSS {m['peak_rss_mb']:.0f} MB"
        )
    return lines


def drop_keys(client: redis.Redis, prefix: str) -> None:
    """The keys holding `prefix`, unlinked (freed in the background)."""
    batch = []
    for key in client.scan_iter(match=f"*{prefix}*", count=1_000):
        batch.append(key)
        if len(batch) == 500:
            client.unlink(*batch)
            batch = []
    if batch:
        client.unlink(*batch)
    deadline = time.monotonic() + 60  # the next stage's Redis CPU without this freeing
    while time.monotonic() < deadline:
        if not int(client.info("memory").get("lazyfree_pending_objects", 0)):
            break
        time.sleep(0.1)


def _medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure's median over the runs."""
    return {key: sorted(run[key] for run in runs)[len(runs) // 2] for key in runs[0]}
