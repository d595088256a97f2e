"""What a long command is doing, on stderr: a bar where the work is countable, a stage line where it is not.

Every command reports through :func:`bar` and :func:`stage` only, and never on stdout (what a pipe reads):

- on a terminal, a bar is a tqdm bar (count, rate, time left), redrawn in place and cleared when it ends;
- elsewhere (a log file, CI, a pipe), a bar that is still running after :data:`LOG_DELAY` seconds prints whole lines:
  its first one then, one at most every :data:`LOG_INTERVAL` seconds, and its last one when it ends; work that ends
  sooner prints nothing;
- a stage line (``compbench: reading the corpus ...``) is printed, as one line anywhere, once the stage has lasted
  :data:`STAGE_DELAY` seconds (the next stage, a bar or the command's end comes first: a quick stage, or an error
  refused at once, shows none).

``compbench --quiet`` silences both: it sets :data:`QUIET` in the environment, so that the processes a command
starts (solve workers, the steps of ``accuracy-report``) are quiet too.  Library functions take a ``progress``
argument (an iterable wrapper such as :func:`bar`) and show nothing without it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
import time
from typing import Any, Iterable, Iterator

QUIET = "COMPBENCH_QUIET"  # set (to anything but "" or "0"): no bars and no stage lines
STAGE_DELAY = 0.5  # seconds a stage runs before its line shows
LOG_DELAY = 2.0  # seconds before a bar shows when stderr is not a terminal
LOG_INTERVAL = 30.0  # seconds between its lines there
LOG_FORMAT = "{desc}: {n_fmt}/{total_fmt} ({percentage:.0f}%) [{elapsed}<{remaining}, {rate_fmt}{postfix}]"


def quiet() -> bool:
    return os.environ.get(QUIET, "") not in ("", "0")


@contextlib.contextmanager
def quieted(on: bool = True) -> Iterator[None]:
    """Within this block, :func:`quiet` is ``on`` (for this process and the ones it starts)."""
    saved = os.environ.get(QUIET)
    os.environ[QUIET] = "1" if on else "0"
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(QUIET, None)
        else:
            os.environ[QUIET] = saved


class _Lines:
    """A file for tqdm off a terminal: its redraws become whole lines, the first at once, then one at most every
    :data:`LOG_INTERVAL` seconds, and the last one when the bar ends (tqdm then writes a newline)."""

    def __init__(self, stream: Any):
        self.stream, self.pending, self.printed = stream, "", None

    def write(self, text: str) -> None:
        line = text.replace("\r", "").replace("\x1b[A", "").strip()
        if line:
            self.pending = line
            if self.printed is None or time.monotonic() - self.printed >= LOG_INTERVAL:
                self._emit()
        elif "\n" in text and self.pending:
            self._emit()

    def _emit(self) -> None:
        self.stream.write(self.pending + "\n")
        self.stream.flush()
        self.pending, self.printed = "", time.monotonic()

    def flush(self) -> None:
        self.stream.flush()


def bar(iterable: Iterable | None = None, desc: str = "", *, total: int | None = None, unit: str = "it",
        show: bool | None = None, **options: Any):
    """A tqdm bar on stderr over ``iterable`` (or updated by hand, ``total`` steps), as the module docstring says;
    ``show`` False (or --quiet) hides it.  Use it as tqdm: iterate, or ``update``/``set_postfix_str``/``close``."""
    from tqdm import tqdm

    end_stage()
    if show is False or quiet():
        return tqdm(iterable, total=total, disable=True)
    if sys.stderr.isatty():
        return tqdm(iterable, desc=desc, total=total, unit=unit, file=sys.stderr, leave=False, dynamic_ncols=True,
                    **options)
    return _logged_bar()(iterable, desc=desc, total=total, unit=unit, file=_Lines(sys.stderr), leave=True,
                delay=LOG_DELAY, mininterval=LOG_DELAY, position=0,
                bar_format=LOG_FORMAT if total is not None or _has_len(iterable) else None, **options)


@functools.cache
def _logged_bar() -> Any:
    """tqdm off a terminal, whose postfix (the solver at work) waits for the bar's next line: tqdm's default drew
    the bar at once, and a quick command printed the progress line it must not.  (On a terminal the postfix shows at
    once: it names the solver at work.)"""
    from tqdm import tqdm

    class Bar(tqdm):
        def set_postfix_str(self, s: str = "", refresh: bool = False) -> None:
            super().set_postfix_str(s, refresh=refresh)

    return Bar


def _has_len(iterable: Any) -> bool:
    try:
        len(iterable)
    except TypeError:
        return False
    return True


@contextlib.contextmanager
def printing() -> Iterator[None]:
    """Within this block a command prints its output (stdout or stderr) as usual: the bars on the terminal are
    cleared before it and redrawn after it, below what it printed."""
    tqdm = sys.modules.get("tqdm")
    if tqdm is None or not getattr(tqdm.tqdm, "_instances", None):
        yield
        return
    with tqdm.tqdm.external_write_mode():
        yield
        sys.stdout.flush()
        sys.stderr.flush()


def echo(line: str, file: Any = None) -> None:
    """Print ``line`` (to stdout by default) without breaking the bars (see :func:`printing`): a command's output
    or log line while a bar runs.  Not silenced by --quiet."""
    with printing():
        print(line, file=sys.stdout if file is None else file, flush=True)


def log(line: str) -> None:
    """:func:`echo` on stderr: a command's log lines (an epoch's scores, a stage's time), kept with --quiet."""
    echo(line, sys.stderr)


_stage: list[threading.Timer] = []  # the stage whose line is still to come


def stage(text: str) -> None:
    """Say on stderr what a command is now doing that has no count (``compbench: reading ...``), once it has lasted
    :data:`STAGE_DELAY` seconds; silenced by --quiet."""
    end_stage()
    if quiet():
        return
    timer = threading.Timer(STAGE_DELAY, echo, (f"compbench: {text}", sys.stderr))
    timer.daemon = True
    _stage.append(timer)
    timer.start()


def end_stage() -> None:
    """The current stage is over: its line, if not shown yet, never will be."""
    while _stage:
        _stage.pop().cancel()
