"""`rating-service bench`: run service/bench and print its report (a table, or --json)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

import msgspec
from redis.exceptions import RedisError

from service.bench import benchmark
from service.cli.errors import UserError


def cmd_bench(args: argparse.Namespace) -> int:
    progress = (
        (lambda step: print(f"bench: {step}...", file=sys.stderr))
        if not args.json
        else (lambda _: None)
    )
    try:
        if args.scale:
            from service.bench.scale import STAGES, render_scale, run_scale

            stages = tuple(args.stages.split(",")) if args.stages else STAGES
            unknown = [s for s in stages if s not in STAGES]
            if unknown:
                raise UserError(
                    f"--stages {args.stages}: no stage {unknown[0]!r} ({', '.join(STAGES)})"
                )
            report = run_scale(args.redis_url, args.quick, progress, stages)
            rendered: Callable[[dict], str] = render_scale
        elif args.sizing:
            from service.bench.sizing import render_sizing, run_sizing

            report = run_sizing(args.redis_url, args.quick, progress)
            rendered = render_sizing
        elif args.cascade:
            report = benchmark.run_cascade(args.redis_url, args.quick, progress)
            rendered = benchmark.render_cascade
        elif args.profile:
            from service.bench.profile import render_profile

            report = benchmark.bench_profile(args.redis_url, args.quick, progress)
            rendered = render_profile
        else:
            report = benchmark.run(args.redis_url, args.quick, progress)
            rendered = benchmark.render
    except LookupError as exc:
        raise UserError(str(exc)) from None
    except RedisError as exc:
        raise UserError(benchmark.redis_problem(exc, args.redis_url)) from None
    if args.json:
        sys.stdout.write(msgspec.json.encode(report).decode() + "\n")
    else:
        print(rendered(report))
    return 0


def register(commands: Any) -> None:
    """Add `bench` to the CLI's subcommands."""
    p = commands.add_parser(
        "bench",
        help="measure the engines, the service, its ceiling, scale-out with replicas, and memory",
        description=benchmark.__doc__.split("\n\n")[0] if benchmark.__doc__ else None,
    )
    p.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    p.add_argument(
        "--redis-url",
        help="use this Redis (keys under a fresh bench-<hex> prefix, removed after); "
        "default: a private embedded server (no persistence) on a free port",
    )
    p.add_argument(
        "--profile",
        action="store_true",
        help="only the profile of the commit path: where a two-player and a 64x7 event's time goes, "
        "stage by stage (decode, read, rate, encode, write, report, the rest), in the real service",
    )
    p.add_argument(
        "--sizing",
        action="store_true",
        help="only the sizing figures: Redis bytes per stored item and per player-event by event size "
        "and system (on each private server binary there is), the service's peak RSS steady and "
        "through corrections' cascades (docs/operations/sizing.md)",
    )
    p.add_argument(
        "--scale",
        action="store_true",
        help="only the stages at scale (minutes, not part of the other runs): `bulk`, the import and "
        "export of a FIDE-like list of 1,000,000 players, their time and peak RSS (100,000 with "
        "--quick); `close`, a FIDE close "
        "of 1,000,000 players, its time, Redis's longest block and serve's peak RSS (20,000 with "
        "--quick); `load`, a synthetic FIDE history among 200,000 players bulk-loaded by `rating-service "
        "load` at 6 and 30 monthly periods (1 and 2 with --quick), time, peak RSS, events/s, and the "
        "decade (107,143 events, 15M games) extrapolated",
    )
    p.add_argument(
        "--stages",
        metavar="LIST",
        help="with --scale: the stages to run, comma-separated (default: bulk,close,load)",
    )
    p.add_argument(
        "--cascade",
        action="store_true",
        help="only the date-order stage: the archive's bytes and the correction of the first event "
        "of a 20,000-player pool with 10,000 events (2,000 and 1,000 with --quick): seconds, "
        "revisions, the service's CPU and RSS, Redis's CPU, commands and bytes",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="smaller runs (about a minute and a half; 100,000 records for memory)",
    )
    p.set_defaults(func=cmd_bench)
