"""Child processes: kill one with its process group and every descendant (the harness's workers, exec solvers)."""

from __future__ import annotations

import os
import signal

import psutil


def kill_process_tree(pid: int) -> None:
    """Kill process ``pid``, its process group and every descendant: the group takes a backend's children (CBC
    under PuLP) and grandchildren that double-fork; the descendants, collected before the kill breaks the tree,
    take those that left the group (``setsid``)."""
    try:
        for child in psutil.Process(pid).children(recursive=True):  # first: pid may be this process
            try:
                child.kill()
            except psutil.Error:
                pass
    except psutil.Error:
        pass
    finally:
        kill_group(pid)


def kill_group(pgid: int) -> None:
    """SIGKILL process group ``pgid``; a group that is gone (or not ours) is left alone."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
