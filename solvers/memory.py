"""Memory guards shared by the chart-based solvers: refuse a chart that would not fit, never crash."""

from __future__ import annotations

from compbench import Solution, Status


def refuse_if_too_big(name: str, n: int, needed: int, memory_limit: int) -> Solution | None:
    """An ``unsupported`` answer when a chart of ``needed`` bytes exceeds ``memory_limit``, else None."""
    if needed <= memory_limit:
        return None
    return Solution(Status.UNSUPPORTED, message=(
        f"{name}: the chart for n = {n} needs {needed / 2**20:.0f} MiB, above the memory limit of "
        f"{memory_limit / 2**20:.0f} MiB (pass memory_limit=... in bytes to raise it)"))
