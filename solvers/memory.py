"""Memory guards shared by the chart-based solvers: refuse a chart that would not fit, never crash."""

from __future__ import annotations

import os

from compbench import Solution, Status

DEFAULT_MEMORY_FRACTION = 0.25  # of the memory available when the solver is created


def available_memory() -> int:
    """Bytes of memory available now (MemAvailable on Linux, else total physical memory)."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def default_memory_limit(memory_limit: int | None = None) -> int:
    """``memory_limit`` in bytes, or by default a quarter of the memory available now."""
    return int(available_memory() * DEFAULT_MEMORY_FRACTION) if memory_limit is None else int(memory_limit)


def refuse_if_too_big(name: str, n: int, needed: int, memory_limit: int) -> Solution | None:
    """An ``unsupported`` answer when a chart of ``needed`` bytes exceeds ``memory_limit``, else None."""
    if needed <= memory_limit:
        return None
    return Solution(Status.UNSUPPORTED, message=(
        f"{name}: the chart for n = {n} needs {needed / 2**20:.0f} MiB, above the memory limit of "
        f"{memory_limit / 2**20:.0f} MiB (pass memory_limit=... in bytes to raise it)"))
