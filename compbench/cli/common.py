"""What every command module shares: usage errors, output paths, atomic writes, solver loading, memory options,
choices read when first needed.

Every module of :mod:`compbench.cli` imports this one; it imports none of them, and nothing that imports numpy.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence, TypeVar

if TYPE_CHECKING:
    from ..problem import Problem, Solution

DEFAULT_SOLVER = "resource-dp"
INSTANCE_SUFFIXES = (".json", ".jsonl", ".npz")  # the instance file types compbench.io reads and writes
T = TypeVar("T")


class UsageError(Exception):
    """Bad input from the user: reported in one line, exit status 2."""


class Later(Sequence):
    """The choices ``module.name`` of an option, imported when argparse first reads them (to check a value or show
    a command's help), so that building the parsers imports no module that needs numpy.  Give the option a
    ``metavar`` (else argparse reads the choices to make one) and name ``%(choices)s`` in its help."""

    def __init__(self, module: str, name: str):
        self.module, self.name, self._choices = module, name, None

    def _get(self) -> Sequence:
        if self._choices is None:
            self._choices = tuple(getattr(importlib.import_module(self.module), self.name))
        return self._choices

    def __getitem__(self, index):
        return self._get()[index]

    def __len__(self) -> int:
        return len(self._get())

    def __contains__(self, value: object) -> bool:
        return value in self._get()

    def __iter__(self):
        return iter(self._get())


def output_path(path: str | os.PathLike, *, force: bool = True, what: str = "output",
                suffixes: tuple[str, ...] = (), replaces: Callable[[Path], bool] | None = None) -> Path:
    """Check an output path before any work starts: its name must end with one of ``suffixes`` (when given), its
    directory is created, an existing file is refused unless ``force``, or, with ``replaces``, unless it is a file
    of the kind written or empty (``replaces(path)``: a model over a model, never over an instance file); a path
    that cannot be written is a :class:`UsageError`."""
    out = Path(path)
    if suffixes and not out.name.lower().endswith(suffixes):
        raise UsageError(f"{out}: unknown file type for the {what} (expected {', '.join(suffixes)})")
    if out.exists() and out.is_dir():
        raise UsageError(f"{out}: is a directory, expected a file for the {what}")
    if out.exists() and not force:
        raise UsageError(f"{out} exists (pass --force to overwrite it)")
    if out.exists() and replaces is not None and out.stat().st_size and not replaces(out):  # empty: nothing to lose
        raise UsageError(f"{out} exists and holds no {what}: it is left as it is (choose another path)")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{out}: cannot create its directory ({exc.strerror})") from None
    if not os.access(out.parent, os.W_OK):
        raise UsageError(f"{out}: its directory is not writable")
    return out


def model_info(path: Path) -> dict[str, Any] | None:
    """The ``info`` object of a model file compbench wrote (an ``.npz`` with an ``info`` member), or None."""
    import json

    import numpy as np

    from ..io import DAMAGED_ARCHIVE

    try:
        with np.load(path) as data:  # an archive's members are read when asked for: only ``info``
            info = json.loads(str(data["info"]))
    except DAMAGED_ARCHIVE:
        return None
    return info if isinstance(info, dict) else None


def output_directory(path: str | os.PathLike, what: str = "output") -> Path:
    """Check an output directory before any work starts: created if missing; an existing file, or a directory that
    cannot be written, is a :class:`UsageError`."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out}: is a file, expected a directory for the {what}")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{out}: cannot create the directory ({exc.strerror})") from None
    if not os.access(out, os.W_OK):
        raise UsageError(f"{out}: the directory is not writable")
    return out


def number_in(kind: type, low: float, high: float = math.inf, *, open_low: bool = False) -> Callable[[str], Any]:
    """An argparse type: an ``int`` or ``float`` (finite) in ``low..high`` (above ``low`` with ``open_low``).

    >>> number_in(int, 0)("7"), number_in(float, 0, 1)("0.5"), number_in(float, 0, open_low=True)("1e-9")
    (7, 0.5, 1e-09)
    """
    what = "an integer" if kind is int else "a number"
    span = (f"> {low:g}" if open_low else f">= {low:g}") if high == math.inf else f"in {low:g}..{high:g}"
    if open_low and high != math.inf:
        span = f"in ({low:g}, {high:g}]"

    def parse(value: str) -> Any:
        try:
            number = kind(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what} {span}, got {value!r}") from None
        if not (math.isfinite(number) and (low < number if open_low else low <= number) and number <= high):
            raise argparse.ArgumentTypeError(f"must be {what} {span}, got {value}")
        return number

    parse.__name__ = kind.__name__  # argparse names the type in its messages
    return parse


MAX_SECONDS = 1e6  # about 11.6 days: beyond it the waits' timers overflow (leave the limit out for none)


def positive_seconds(value: str) -> float:
    """An argparse type for a time limit: a number of seconds in (0, 1e6] (:data:`MAX_SECONDS`)."""
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {value!r}") from None
    if not 0 < seconds <= MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"must be a number of seconds in (0, {MAX_SECONDS:g}], got {value} (leave "
                                         "a time limit out for none)")
    return seconds


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send everything written to file descriptor 1 (C libraries' banners included) to stderr for a while."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def load_solver(name: str):
    from ..registry import get_solver

    try:
        return get_solver(name)
    except KeyError as exc:
        raise UsageError(exc.args[0]) from None
    except Exception as exc:  # a plug-in that cannot be imported or built: one line naming it
        raise UsageError(f"solver {name!r} cannot be loaded ({type(exc).__name__}: {exc})"[:500]) from None


def length_decoder(name: str, command: str):
    """:func:`load_solver` for a command that decodes compressions of a given length (``train``, ``evaluate``): a
    solver that cannot run here, or takes no exact length, is refused before any work (every decode would fail:
    a model chosen on a dev F1 of 0, a table of zeros)."""
    solver = load_solver(name)
    reason = solver.unavailable()
    if reason is None and "exact" not in solver.supports.lengths:
        reason = f"it takes no exact length (lengths: {', '.join(sorted(solver.supports.lengths))})"
    if reason is not None:
        raise UsageError(f"{command}: solver {name} cannot decode compressions of a given length here: {reason}")
    return solver


def run_solver(solver, problem: Problem, time_limit: float | None = None, all_lengths: bool = False) -> Solution:
    """Solve with backend noise kept off stdout."""
    with stdout_to_stderr():
        return solver.solve(problem, time_limit=time_limit, all_lengths=all_lengths)


def add_memory_limit_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--memory-limit", type=int, metavar="MIB",
                        help="address space per solve in MiB; an allocation beyond it fails and the solve ends in "
                             "'error' (default: physical memory divided by --jobs)")


MAX_MEMORY_MIB = 2 ** 30  # a PiB: beyond it the address-space limit overflows the kernel's C long


def user_memory_limit(args: argparse.Namespace) -> int | None:
    """The memory limit per solve in MiB the user gave (checked), or None."""
    if args.memory_limit is not None and not 64 <= args.memory_limit <= MAX_MEMORY_MIB:
        raise UsageError(f"--memory-limit must be 64..{MAX_MEMORY_MIB} MiB, got {args.memory_limit}")
    return args.memory_limit


def solve_memory_limit(args: argparse.Namespace) -> int:
    """The memory limit per solve in MiB: the user's, or the machine's memory shared by the concurrent solves."""
    return user_memory_limit(args) or shared_memory_limit(getattr(args, "jobs", 1))


def shared_memory_limit(jobs: int) -> int:
    """The machine's memory shared by ``jobs`` concurrent solves, in MiB, refused below 64 MiB (every solve would
    fail to allocate)."""
    from ..limits import default_memory_limit

    shared = default_memory_limit(jobs)
    if shared < 64:
        raise UsageError(f"--jobs {jobs} leaves {shared} MiB of memory to each solve, below 64 MiB: run fewer jobs "
                         "or give --memory-limit")
    return shared


def run_solver_with_hard_limit(worker, name: str, problem: Problem, time_limit: float | None,
                               memory_limit: int | None = None) -> Solution:
    """Solve in ``worker`` (a :class:`~compbench.harness.worker.SolveProcess`), killed if it runs past the time
    limit plus the grace period (None: no limit), as ``compbench bench`` does; its address space capped at
    ``memory_limit`` MiB; a worker that dies under the solve (even with exit status 0) is an ``error`` answer."""
    from ..harness.sweep import problem_reference
    from ..harness.worker import Task
    from ..problem import Solution, Status
    from ..records import record_solution

    result = worker.run(Task(name, problem_reference(problem), time_limit, memory_limit))
    try:
        return record_solution(result, problem.n)
    except (ValueError, TypeError) as exc:  # a tree that cannot be read (heads for n + 2 tokens): no answer
        return Solution(Status.ERROR, message=f"{name}: its answer cannot be read ({exc})"[:300])


@contextlib.contextmanager
def keeping_finished_epochs(model: Any, out: Path) -> Iterator[None]:
    """Ctrl-C or SIGTERM during a training's epochs after one finished, or in what follows them (a parser's arc
    labeler, the final write): the best epoch so far is written to ``out`` (whole, ``info["interrupted"]`` saying
    when), then the command ends as interrupted (exit status 130)."""
    from ..files import atomic_output

    try:
        yield
    except KeyboardInterrupt as stop:
        if "chosen_epoch" not in model.info:  # no epoch finished: nothing to keep
            raise
        when = model.info.setdefault("interrupted", f"after its {len(model.info['history'])} epochs")
        with atomic_output(out) as partial:
            model.save(partial)
        print(f"compbench: interrupted {when}: wrote {out} with epoch {model.info['chosen_epoch']}, the best on "
              f"dev (its info says it was interrupted)", file=sys.stderr)
        raise stop


def read_model(load: Callable[[str], T], path: str, what: str) -> T:
    """``load(path)``; a file it cannot read is refused in one line naming it: an outdated model as such, anything
    else as not a ``what`` file."""
    from ..io import DAMAGED_ARCHIVE
    from ..learning.tagger import OutdatedModelError

    try:
        return load(path)
    except OutdatedModelError as exc:
        raise UsageError(f"{path}: {exc}") from None
    except DAMAGED_ARCHIVE as exc:
        raise UsageError(f"{path}: not a {what} file ({exc})") from None
