"""The fault campaign (docs/operations/faults.md, D95-D97):

    python -m tests.campaign [--seed N] [--faults N] [--round-faults N] [--report FILE]

Rounds of tests/campaign/rounds.py on a private Redis (AOF, fsync always) until `--faults`
faults are injected; prints each round's line and the totals, writes the report (Markdown)
to `--report`, and exits 1 if any invariant was violated. Round k's seed is `seed * 1000 + k`:
`--only-round SEED` runs that one round again (its workload and its faults' kinds, lengths
and intervals are the seed's; where each fault lands in the service's work is the
machine's timing).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections import Counter
from pathlib import Path

from tests.campaign.cluster import ClusterSite
from tests.campaign.rounds import RoundReport, StandaloneSite, run_round

SITES = {"standalone": StandaloneSite, "cluster": ClusterSite}


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.campaign", description=__doc__)
    parser.add_argument("--seed", type=int, default=1, help="the campaign's seed (default 1)")
    parser.add_argument("--faults", type=int, default=100, help="faults in all (default 100)")
    parser.add_argument(
        "--round-faults", type=int, default=60, help="least faults per round (default 60)"
    )
    parser.add_argument(
        "--sites",
        default="standalone,cluster",
        help="where the rounds run, in turn (default standalone,cluster)",
    )
    parser.add_argument("--only-round", type=int, help="run only the round of this seed")
    parser.add_argument("--report", type=Path, help="write the report (Markdown) here")
    parser.add_argument(
        "--logs", type=Path, default=Path("campaign-logs"), help="a violating round's logs"
    )
    parser.add_argument("--keep-logs", action="store_true", help="every round's logs")
    return parser.parse_args(argv)


def line(r: RoundReport) -> str:
    state = "ok" if not r.violations else f"{len(r.violations)} VIOLATION(S)"
    return (
        f"round {r.seed} ({r.site}): {r.messages} messages, {sum(r.faults.values())} faults, "
        f"{r.outputs_under_faults}/{r.outputs} outputs under faults, "
        f"{r.read} read ({r.published_again} again), "
        f"{r.seconds:.0f} s (checks {r.settle_seconds:.0f} s), {'/'.join(r.cases)}: {state}"
    )


def render(args: argparse.Namespace, rounds: list[RoundReport], seconds: float) -> str:
    faults: dict[str, Counter[str]] = {}
    for r in rounds:
        faults.setdefault(r.site, Counter()).update(r.faults)
    violations = [(r.seed, v) for r in rounds for v in r.violations]
    command = f"python -m tests.campaign --seed {args.seed} --faults {args.faults}"
    if args.round_faults != 60:
        command += f" --round-faults {args.round_faults}"
    if args.sites != "standalone,cluster":
        command += f" --sites {args.sites}"
    if args.only_round is not None:
        command = f"python -m tests.campaign --only-round {args.only_round}"
    total = sum(sum(c.values()) for c in faults.values())
    out = [
        f"command: `{command}`",
        "",
        f"- rounds: {len(rounds)}, messages published: {sum(r.messages for r in rounds):,}",
        f"- faults injected: {total:,}",
        f"- ratings.updated published while faults were in force: "
        f"{sum(r.outputs_under_faults for r in rounds):,} of {sum(r.outputs for r in rounds):,}",
        f"- messages a subscriber read while the faults went on: {sum(r.read for r in rounds):,}; "
        f"of them lost with a commit and published again, equal: "
        f"{sum(r.published_again for r in rounds):,}",
        f"- violations: {len(violations)}",
        f"- faults the harness could not inject: {sum(len(r.harness) for r in rounds)}",
        f"- time: {seconds / 60:.1f} min",
        "",
        "| where | fault | injected |",
        "|---|---|---:|",
    ]
    for name, counts in faults.items():
        out += [f"| {name} | {kind} | {counts[kind]:,} |" for kind in SITES[name].weights]
    if violations:
        out += ["", "Violations:", ""]
        out += [f"- round {seed}: {text.splitlines()[0][:300]}" for seed, text in violations]
    return "\n".join(out) + "\n"


async def campaign(args: argparse.Namespace) -> list[RoundReport]:
    names = args.sites.split(",")
    unknown = [n for n in names if n not in SITES]
    if unknown:
        raise SystemExit(f"--sites: unknown {', '.join(unknown)} (of {', '.join(SITES)})")
    sites = {name: SITES[name]() for name in dict.fromkeys(names)}
    rounds: list[RoundReport] = []
    try:
        for site in sites.values():
            await site.start()
        k = 0
        while sum(sum(r.faults.values()) for r in rounds) < args.faults:
            seed = args.seed * 1000 + k if args.only_round is None else args.only_round
            site = sites[names[seed % len(names)]]
            k += 1
            report = await run_round(site, seed, args.round_faults, args.logs, args.keep_logs)
            rounds.append(report)
            print(line(report), flush=True)
            for violation in report.violations:
                print(f"  {violation[:2000]}", flush=True)
            for problem in report.harness:
                print(f"  (harness) {problem[:300]}", flush=True)
            if args.only_round is not None:
                break
    finally:
        for site in sites.values():
            site.stop()
    return rounds


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    started = time.monotonic()
    rounds = asyncio.run(campaign(args))
    text = render(args, rounds, time.monotonic() - started)
    print(text)
    if args.report:
        args.report.write_text(text)
    return 1 if any(r.violations for r in rounds) else 0


if __name__ == "__main__":
    sys.exit(main())
