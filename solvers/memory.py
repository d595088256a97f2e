"""Memory guards shared by the chart-based solvers: refuse a chart that would not fit, never crash."""

from __future__ import annotations

from compbench import Solution, Status
from compbench.limits import available_memory

DEFAULT_MEMORY_FRACTION = 0.25  # of the memory available when the solver is created


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
