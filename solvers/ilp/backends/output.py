"""Backends' own output kept off the terminal: banners printed from C++ bypass ``sys.stdout``."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any, Iterator


@contextlib.contextmanager
def kept_interrupt_handler() -> Iterator[None]:
    """The process's SIGINT handler as it was after the block: CP-SAT's solve sets the C-level one back to the default
    (Python still names its own), and Ctrl-C then killed compbench outright, with no cleanup and no end record."""
    import signal
    import threading

    main = threading.current_thread() is threading.main_thread()  # only the main thread may set a handler
    handler = signal.getsignal(signal.SIGINT) if main else None
    try:
        yield
    finally:
        if handler is not None:
            signal.signal(signal.SIGINT, handler)


@contextlib.contextmanager
def quiet_fds() -> Iterator[None]:
    """Send fd 1 and 2 to /dev/null while a backend runs (banners printed from C++ bypass sys.stdout)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, devnull):
            os.close(fd)


def quiet_highs(highspy: Any) -> Any:
    """A new ``highspy.Highs`` with its output off (highspy 1.16 prints a banner when a process makes its first)."""
    with quiet_fds():
        h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    return h
