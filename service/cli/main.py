"""The `rating-service` command line: the parser, and one module per command family
(offline, serve, stores, data, lookup, watch, calc, bench) that adds its own subcommands.

Bad input gets one line naming the file, line and field, and exit code 2; a failed
check (`validate`, `schemas --check`) exits 1. Never a traceback for the user's input.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from service.cli import (
    backup,
    bench,
    calc,
    data,
    load,
    lookup,
    offline,
    rejected,
    serve,
    stores,
    streams,
    watch,
)
from service.cli.errors import EXIT_OK, EXIT_USAGE, UserError
from service.formats.jsonlines import FileProblem, printable
from service.runtime.settings import SettingsError


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="rating-service",
        description="Rating microservice for chess and Scrabble federations (CFC, FIDE, NASPA).",
    )
    parser.add_argument("--version", action=_Version, help="print the installed version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for family in (
        offline,
        serve,
        stores,
        data,
        load,
        streams,
        backup,
        lookup,
        watch,
        rejected,
        calc,
        bench,
    ):
        family.register(commands)
    return parser


class _Parser(argparse.ArgumentParser):
    """argparse's usage and error, the error's quoted arguments made printable (D81)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {printable(message)}\n")


class _Version(argparse.Action):
    """`--version`: the installed distribution's version (importlib.metadata), looked up only
    when asked for, so that other commands do not pay for it."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from service.runtime.metrics import version

        print(f"{parser.prog} {version()}")
        parser.exit()


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except (UserError, FileProblem, SettingsError) as exc:
        # A list's refusal: then one line per bad row (each made printable where it was found);
        # a command's own message may have more lines too (init-store: one per store).
        first, *more = str(exc).split("\n")
        for line in [f"rating-service {args.command}: {first}", *more]:
            print(printable(line), file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_OK
    except KeyboardInterrupt:
        return 130


def _quiet_stdout() -> None:
    """The reader of our standard output went away (`watch | head -1`): point the descriptor
    at devnull, so that the interpreter's last flush at exit does not fail again and print
    "Exception ignored ... BrokenPipeError" (the recipe of the Python docs, `signal` module,
    "Note on SIGPIPE")."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass  # no real descriptor (e.g. captured by a test): nothing will be flushed to a pipe


if __name__ == "__main__":
    raise SystemExit(main())
