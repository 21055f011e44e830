"""`rating-service calc expected|change|performance|norm`: argparse registration and the
glue from arguments to the calculators and their reports. Bad input: one line, exit 2."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from schemas.common import POOLS, SYSTEMS
from service.calculators import games as inputs
from service.calculators import glicko2 as g2
from service.calculators import report
from service.calculators.change import FideK, cfc_change, fide_change, naspa_change
from service.calculators.expected import expected_score
from service.calculators.norm import norm_report
from service.calculators.performance import (
    cfc_performance,
    fide_performance,
    naspa_performance,
)
from service.calculators.plot import render
from service.cli.errors import EXIT_OK, EXIT_USAGE, UserError
from service.formats.jsonlines import printable


class _OneLineParser(argparse.ArgumentParser):
    """argparse errors as one line (`rating-service calc TOOL: ...`) and exit 2."""

    def error(self, message: str) -> NoReturn:
        print(printable(f"{self.prog}: {message}"), file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def _checked(parse: Callable, *args: object, **kwargs: object):
    try:
        return parse(*args, **kwargs)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def _date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date YYYY-MM-DD") from None


def _print(args: argparse.Namespace, text: str, data: dict) -> None:
    print(json.dumps(data, ensure_ascii=False) if args.json else text)


def _fide_options(args: argparse.Namespace) -> tuple[dt.date, str]:
    if args.pool not in POOLS["fide"]:
        raise UserError(
            f"--pool {args.pool!r} is not a fide pool (one of {', '.join(POOLS['fide'])})"
        )
    return args.date or dt.date.today(), args.pool


def _glicko2_only(args: argparse.Namespace, *names: str) -> None:
    """Glicko-2's options given for another system: one line naming the first."""
    if args.system == "glicko2":
        return
    for name in names:
        if getattr(args, name.lstrip("-").replace("-", "_"), None) is not None:
            raise UserError(f"{name} is a Glicko-2 input; {args.system} has no RD or volatility")


def cmd_expected(args: argparse.Namespace) -> int:
    """expected: the table value beside the continuous curve (and --plot FILE.svg);
    Glicko-2: step 3's E with the opponent's RD."""
    _glicko2_only(args, "--rd", "--opponent-rd")
    if args.system == "glicko2":
        return _glicko2_expected(args)
    rating = _checked(inputs.rating, args.rating, "--rating")
    opponent = _checked(inputs.rating, args.opponent, "--opponent")
    start, pool = _fide_options(args)
    result = expected_score(args.system, rating, opponent, start, pool)
    text, data = report.expected_text(result), report.expected_json(result)
    if args.plot:
        try:
            Path(args.plot).write_text(
                render(args.system, abs(result.difference)), encoding="utf-8"
            )
        except OSError as exc:
            raise UserError(f"{args.plot}: cannot write: {exc.strerror or exc}") from None
        text += f"\nplot: {args.plot}"
        data["plot"] = args.plot
    _print(args, text, data)
    return EXIT_OK


def _glicko2_expected(args: argparse.Namespace) -> int:
    if args.plot:
        raise UserError("--plot draws a table over its curve: glicko2 has no table")
    if args.opponent_rd is None:
        raise UserError("glicko2's expected score needs the opponent's RD: give --opponent-rd")
    result = g2.glicko2_expected(
        _checked(g2.rating, args.rating, "--rating"),
        _checked(g2.rd, args.rd or "350", "--rd"),
        _checked(g2.rating, args.opponent, "--opponent"),
        _checked(g2.rd, args.opponent_rd, "--opponent-rd"),
    )
    _print(args, g2.expected_text(result), g2.expected_json(result))
    return EXIT_OK


def _glicko2_change(args: argparse.Namespace) -> int:
    if args.rd is None:
        raise UserError("glicko2's rating change needs your RD: give --rd")
    result = g2.glicko2_change(
        _checked(g2.rating, args.rating, "--rating"),
        _checked(g2.rd, args.rd, "--rd"),
        _checked(g2.games, args.game),
        _checked(g2.volatility, args.volatility or "0.06"),
        _checked(g2.tau, args.tau or "0.5"),
    )
    _print(args, g2.change_text(result), g2.change_json(result))
    return EXIT_OK


def cmd_change(args: argparse.Namespace) -> int:
    """change: per-game and total change, official-style and a sequential projection."""
    _glicko2_only(args, "--rd", "--volatility", "--tau")
    fide_k_inputs = ("--k", "--birth-year", "--ever-2300", "--ever-2400")
    if args.system == "glicko2":
        named = [n for n in fide_k_inputs if getattr(args, n[2:].replace("-", "_"))]
        if named:
            raise UserError(f"{named[0]} is a FIDE K input (8.3.3); glicko2 has no K")
        return _glicko2_change(args)
    rating = _checked(inputs.rating, args.rating, "--rating")
    played = _checked(inputs.games, args.game)
    if args.system != "fide":
        fide_only = [
            name
            for name, value in (
                ("--k", args.k),
                ("--birth-year", args.birth_year),
                ("--ever-2300", args.ever_2300),
                ("--ever-2400", args.ever_2400),
            )
            if value
        ]
        if fide_only:
            raise UserError(
                f"{fide_only[0]} is a FIDE K input (8.3.3); {args.system} fixes its own K"
            )
    if args.system == "fide":
        if args.k is not None and args.k <= 0:
            raise UserError(f"--k {args.k}: K must be positive")
        start, pool = _fide_options(args)
        given = FideK(args.k, args.games_before, args.birth_year, args.ever_2300, args.ever_2400)
        result = fide_change(rating, played, given, start, pool)
    elif args.system == "cfc":
        result = cfc_change(rating, played)
    else:
        result = naspa_change(rating, played, args.games_before)
    _print(args, report.change_text(result), report.change_json(result))
    return EXIT_OK


def cmd_performance(args: argparse.Namespace) -> int:
    """performance: FIDE Ra + dp, CFC 714a, NASPA's newcomer iteration."""
    if args.system == "glicko2":
        raise UserError(
            "glicko2 has no performance rating (Glickman's paper defines none); see calc change"
        )
    played = _checked(inputs.games, args.game)
    if args.rating is not None and args.system != "fide":
        raise UserError(
            f"--rating is for FIDE's 'own rating + dp' reference; {args.system} does not use it"
        )
    own = _checked(inputs.rating, args.rating, "--rating") if args.rating is not None else None
    if args.system == "fide":
        result = fide_performance(played, own)
    elif args.system == "cfc":
        result = cfc_performance(played)
    else:
        result = naspa_performance(played)
    _print(args, report.performance_text(result), report.performance_json(result))
    return EXIT_OK


def cmd_norm(args: argparse.Namespace) -> int:
    """norm: the FIDE title benchmarks met, floors applied, and why each failed."""
    played = _checked(inputs.games, args.game, allow_unrated=True, allow_title=True)
    result = norm_report(played)
    _print(args, report.norm_text(result), report.norm_json(result))
    return EXIT_OK


def _glicko2_options(p: argparse.ArgumentParser, change: bool) -> None:
    """Glicko-2's inputs of `expected` and `change` (service/calculators/glicko2.py)."""
    if not change:
        p.add_argument("--rd", help="Glicko-2: your RD (default 350), for the opponent's E")
        p.add_argument("--opponent-rd", help="Glicko-2: the opponent's RD (required)")
        return
    p.add_argument("--rd", help="Glicko-2: your RD (required); games as OPP/RD:SCORE")
    p.add_argument("--volatility", help="Glicko-2: your volatility (default 0.06)")
    p.add_argument("--tau", help="Glicko-2: the system constant tau (default 0.5)")


def register(commands: argparse._SubParsersAction) -> None:
    """Add `calc` and its four tools to the command line."""
    calc = commands.add_parser(
        "calc",
        help="calculators: expected score, rating change, performance, norm check",
        description="The calculators of the FIDE methodology and their CFC / NASPA twins, "
        "and Glicko-2's expected score and rating change, computed by the service's own engines.",
    )
    # `calc` itself is made by the top-level parser's class: give it the one-line error too.
    calc.error = _OneLineParser.error.__get__(calc)
    tools = calc.add_subparsers(
        dest="tool", metavar="TOOL", required=True, parser_class=_OneLineParser
    )

    def common(p: argparse.ArgumentParser, system: bool = True) -> None:
        if system:
            p.add_argument("--system", required=True, choices=SYSTEMS)
        p.add_argument("--json", action="store_true", help="one JSON object instead of tables")

    def fide_rule_date(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--date", type=_date, help="FIDE: the event's start date, for 8.3.1 (default: today)"
        )
        p.add_argument(
            "--pool", default="standard", help="FIDE: standard (default), rapid or blitz (8.3.1)"
        )

    game_help = "OPP:SCORE, the opponent's rating and your score (1, 0.5, 0); repeat per game"

    p = tools.add_parser("expected", help="table value beside the continuous curve")
    common(p)
    p.add_argument("--rating", required=True, help="your rating")
    p.add_argument("--opponent", required=True, help="the opponent's rating")
    p.add_argument(
        "--plot", metavar="FILE.svg", help="draw the table over the curve for D = 0..800"
    )
    _glicko2_options(p, change=False)
    fide_rule_date(p)
    p.set_defaults(func=cmd_expected)

    p = tools.add_parser(
        "change", help="rating change: official-style total and a sequential projection"
    )
    common(p)
    p.add_argument("--rating", required=True, help="your rating")
    p.add_argument("--game", action="append", default=[], metavar="OPP:SCORE", help=game_help)
    p.add_argument(
        "--k", type=int, help="FIDE: K outright (else derived, 8.3.3; the 700 cap applies)"
    )
    p.add_argument(
        "--games-before",
        type=int,
        default=30,
        metavar="N",
        help="FIDE: rated games before (default 30); NASPA: career games (default 30)",
    )
    p.add_argument("--birth-year", type=int, help="FIDE: for the junior K 40")
    p.add_argument("--ever-2300", action="store_true", help="FIDE: has been published 2300+")
    p.add_argument("--ever-2400", action="store_true", help="FIDE: has been published 2400+ (K 10)")
    _glicko2_options(p, change=True)
    fide_rule_date(p)
    p.set_defaults(func=cmd_change)

    p = tools.add_parser("performance", help="performance rating")
    common(p)
    p.add_argument("--game", action="append", default=[], metavar="OPP:SCORE", help=game_help)
    p.add_argument("--rating", help="FIDE: your rating, for the 'own rating + dp' reference")
    p.set_defaults(func=cmd_performance)

    p = tools.add_parser("norm", help="FIDE title norm benchmarks (GM, IM, WGM, WIM)")
    common(p, system=False)
    p.add_argument(
        "--game",
        action="append",
        default=[],
        metavar="OPP:SCORE:TITLE",
        help="opponent's rating (or 'unrated'), your score, the opponent's title (optional)",
    )
    p.set_defaults(func=cmd_norm)
