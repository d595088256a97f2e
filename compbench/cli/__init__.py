"""The ``compbench`` command line.

Each group of subcommands lives in a module of this package with a ``register(subparsers)`` function that adds its
parsers and sets ``func`` (called with the parsed arguments, returns the exit status); :mod:`compbench.cli.common`
holds what they share.  Bad input raises :class:`~compbench.cli.common.UsageError` (or an InstanceError/ProblemError),
which becomes a one-line message on stderr and exit status 2.

Building the parsers imports no command's work: a command module imports what its commands need inside them, so
that ``compbench --help`` (and every command's start) does without numpy and numba.  ``--quiet``, before or after
the command, silences the progress bars and stage lines (:mod:`compbench.progress`).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
import threading
from typing import NoReturn, Sequence

from .common import UsageError

# Modules that add subcommands (each has register(subparsers)).
COMMAND_MODULES = ("compbench.cli.solve", "compbench.cli.harness", "compbench.cli.export",
                   "compbench.cli.compression", "compbench.cli.parser", "compbench.cli.accuracy_report")

QUIET_HELP = "no progress bars or stage lines on stderr (results and errors are still printed)"
DESCRIPTION = ("Exact solvers for sentence compression as compressive dependency parsing, side by side: solve instance "
               "files, cross-check and benchmark the solvers, plot and report, train and evaluate on real corpora.")


class ArgumentParser(argparse.ArgumentParser):
    """Bad arguments are refused in one line (exit 2), as every other bad input; ``--help`` shows the usage."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = ArgumentParser(prog="compbench", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"compbench {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    _add_quiet(parser, default=False)
    return parser


def _add_quiet(parser: argparse.ArgumentParser, default: object) -> None:
    """--quiet on ``parser`` and on every (sub)command below it; below the top it leaves a --quiet given before the
    command alone (its default is SUPPRESS)."""
    parser.add_argument("--quiet", action="store_true", default=default, help=QUIET_HELP)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in dict.fromkeys(action.choices.values()):
                _add_quiet(command, argparse.SUPPRESS)


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM ends a command as Ctrl-C does: finished results kept, workers and temporary files cleaned up."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: a second one must not cut the clean-up short
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    from ..progress import end_stage, quieted

    parser = build_parser()
    args = parser.parse_args(argv)
    from ..io import InstanceError
    from ..problem import ProblemError

    in_main_thread = threading.current_thread() is threading.main_thread()
    saved = signal.signal(signal.SIGTERM, _interrupt) if in_main_thread else None
    try:
        with quieted() if args.quiet else contextlib.nullcontext():
            return args.func(args)
    except (UsageError, InstanceError, ProblemError) as exc:
        print(f"compbench: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        resume = ""
        if getattr(args, "out", None) and getattr(args, "resume", None) is not None:
            resume = (f"; finished results are kept in {args.out}: run the same command with --resume to continue"
                      if args.command == "bench" else "; run the same command with --resume to continue its sweep")
        print(f"compbench: interrupted{resume}", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `compbench solvers --json | head`: the reader left, end quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    finally:
        end_stage()
        if in_main_thread:
            signal.signal(signal.SIGTERM, saved)


if __name__ == "__main__":
    sys.exit(main())
