"""What the toolkit accepts: the range of scores and the memory an input may claim; how far past its time limit a solve
may run.

Scores: every finite score must satisfy |score| <= MAX_SCORE (1e12).  A solution sums at most 4n + 1 scores
(n tokens, n arcs, n + 1 bigrams, n sibling scores), so with n <= 32,000 tokens every objective, every partial
sum of a chart and every ILP objective stays below 2e17, far from overflow, in every solver and backend.  Larger
scores are refused when a problem is built (``ProblemError`` naming the field and the index).
"""

from __future__ import annotations

import numbers
import os
import resource

MAX_SCORE = 1e12
# A floating-point MIP or LP solver (HiGHS, SCIP, CBC, Gurobi) proves optimality only to its tolerances, which are
# relative to the model's largest cost: with scores near 1e12, solutions 1 apart look equal to it.  The backends
# refuse larger scores (unsupported, with this reason); CP-SAT, exact over integers, does not.  Measured (SCIP's first
# wrong optimum at 1e9): benchmarks/bench_score_range.py, reports/ilp/score-range.md.
MIP_MAX_SCORE = 1e6
NO_LIMIT_BEYOND = 365 * 24 * 3600.0  # seconds: a longer time limit (inf included) is none, for every solver
GRACE_SECONDS = 1.0  # beyond the time limit before a solve's child is killed: every limit is held within a second
WARMUP_SECONDS = 120.0  # limit for the first (warm-up) solve of a solver in a fresh child
CERTIFY_SECONDS = 600.0  # limit per method and instance of compbench certify
MIN_EFFECT = 1.25  # compare calls a solver faster or slower only beyond this time ratio (and beyond the noise)
MIN_TIMED_INSTANCES = 5  # and only over this many instances at least (one instance's bootstrap interval is a point)


def physical_memory() -> int:
    """Bytes of physical memory."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def default_memory_limit(jobs: int) -> int:
    """The memory limit of one solve in MiB when the user gives none: physical memory shared by the solves that run
    at the same time, so that together they cannot exhaust the machine."""
    return physical_memory() // (1 << 20) // max(1, jobs)


def memory_budget(memory_limit: int | None = None, share: float = 0.25) -> int:
    """Bytes a solver may give one data structure (a chart): ``memory_limit`` when given, else ``share`` of the memory
    available now (:func:`available_memory`, which already respects a solve's :func:`default_memory_limit` or
    ``--memory-limit``).  A given ``memory_limit`` other than a positive number of bytes is a ValueError naming it."""
    if memory_limit is None:
        return int(available_memory() * share)
    if not isinstance(memory_limit, numbers.Real) or isinstance(memory_limit, bool) or not memory_limit > 0 \
            or memory_limit == float("inf"):
        raise ValueError(f"memory_limit: expected None or a positive number of bytes, got {memory_limit!r}")
    return int(memory_limit)


def proc_field(path: str, field: str) -> int | None:
    """A ``field: N kB`` line of a /proc file in bytes, or None."""
    try:
        with open(path) as lines:
            for line in lines:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def available_memory() -> int:
    """Bytes of memory available now to this process: the machine's MemAvailable (else its physical memory), and
    no more than what its address-space limit (a solve's ``--memory-limit``) leaves."""
    available = proc_field("/proc/meminfo", "MemAvailable") or physical_memory()
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        available = min(available, max(0, soft - (proc_field("/proc/self/status", "VmSize") or 0)))
    return available
