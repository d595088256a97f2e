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
import errno
import gc
import importlib
import os
import signal
import sys
import threading
from typing import NoReturn, Sequence

from .common import UsageError

# Modules that add subcommands (each has register(subparsers)).
COMMAND_MODULES = ("compbench.cli.solve", "compbench.cli.harness", "compbench.cli.compare", "compbench.cli.certify",
                   "compbench.cli.export", "compbench.cli.compression", "compbench.cli.parser",
                   "compbench.cli.accuracy_report")

QUIET_HELP = "no progress bars or stage lines on stderr (results and errors are still printed)"
DESCRIPTION = ("Exact solvers for sentence compression as compressive dependency parsing, side by side: solve instance "
               "files, cross-check and benchmark the solvers, plot and report, train and evaluate on real corpora.")


class ArgumentParser(argparse.ArgumentParser):
    """Bad arguments are refused in one line (exit 2), as every other bad input; ``--help`` shows the usage."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with ``command``, only the command modules up to the one that adds it (building
    every command's parser with argparse is a noticeable part of a warm ``compbench solve``)."""
    from .. import __version__

    parser = ArgumentParser(prog="compbench", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"compbench {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
        if command in subparsers.choices:
            break
    _add_quiet(parser, default=False)
    return parser


def _has_results(path: str) -> bool:
    """Whether the run file ``path`` holds a result record (what an interrupted bench can say it kept)."""
    from ..harness.runfiles import read_records

    try:
        return any(r.get("type") == "result" for r in read_records(path))
    except (OSError, UnicodeDecodeError):
        return False


def _command(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names when only ``--quiet`` comes before it; else None (top-level help, the version, or
    no command: those need every command's parser)."""
    for token in argv:
        if token != "--quiet":
            return None if token.startswith("-") else token
    return None


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


# The errors of a write that the file system refused: one line naming the file, exit status 2.
WRITE_ERRORS = (errno.ENOSPC, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM, errno.EDQUOT, errno.ENOENT,
                errno.EEXIST, errno.ENOTDIR, errno.EISDIR)  # the last three: an output folder where a file is


def main(argv: Sequence[str] | None = None) -> int:
    from ..progress import end_stage, quieted

    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_command(argv))
    args = parser.parse_args(argv)
    from ..corpora.readers import CorpusError
    from ..io import InstanceError
    from ..problem import ProblemError

    in_main_thread = threading.current_thread() is threading.main_thread()
    saved = signal.signal(signal.SIGTERM, _interrupt) if in_main_thread else None
    try:
        if getattr(args, "out", None) == "" or getattr(args, "json_out", None) == "":
            raise UsageError("--out: an empty path (it would write into the current folder)")
        with quieted() if args.quiet else contextlib.nullcontext():
            return args.func(args)
    except (UsageError, InstanceError, ProblemError, CorpusError) as exc:
        print(f"compbench: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError as exc:  # a size beyond this machine (bench --sizes 99999999), before any solve ran
        print("compbench: error: not enough memory for what was asked (a size or count too large for this machine?)"
              + (f": {exc}" if str(exc) else ""), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        resume = ""
        if getattr(args, "out", None) and getattr(args, "resume", None) is not None:
            resume = (f"; finished results are kept in {args.out}: run the same command with --resume to continue"
                      if args.command == "bench" else "; run the same command with --resume to continue its sweep")
            if args.command == "bench" and not _has_results(args.out):
                resume = f"; no result was recorded yet in {args.out}"
        print(f"compbench: interrupted{resume}", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `compbench solvers --json | head`: the reader left, end quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except OSError as exc:  # a write that failed (a full disk, a file-size limit, a read-only or deleted folder)
        if exc.errno not in WRITE_ERRORS:
            raise
        where = exc.filename or "an output file"
        print(f"compbench: error: {where}: cannot write it ({exc.strerror or exc})", file=sys.stderr)
        return 2
    finally:
        end_stage()
        if in_main_thread:
            signal.signal(signal.SIGTERM, saved)



def run() -> NoReturn:
    """The ``compbench`` program: :func:`main`, then exit without the garbage collector's passes over the heap.
    The process ends there, and CPython's shutdown collections over the objects numpy and numba create are a sixth
    of ``python -c "import numpy, numba"`` (reports/performance/startup.txt); frozen objects are left to the
    operating system.  Not in :func:`main`, which tests and programs call in their own process."""
    status = main()
    gc.freeze()
    sys.exit(status)
