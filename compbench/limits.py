"""What the toolkit accepts: the range of scores and the memory an input may claim.

Scores: every finite score must satisfy |score| <= MAX_SCORE (1e12).  A solution sums at most 4n + 1 scores
(n tokens, n arcs, n + 1 bigrams, n sibling scores), so with n <= 32,000 tokens every objective, every partial
sum of a chart and every ILP objective stays below 2e17, far from overflow, in every solver and backend.  Larger
scores are refused when a problem is built (``ProblemError`` naming the field and the index).
"""

from __future__ import annotations

import os

MAX_SCORE = 1e12


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
