"""``brute-force``: the oracle.  Enumerates every kept set, parses each one exactly.

For each kept set K allowed by the length condition (in increasing size, then lexicographic order) it adds the
token and bigram scores of K to the best projective tree over K, found by Eisner's algorithm written as a plain
memoized recursion over the kept sequence.  Its tests check it against a second, independent enumeration of
every head assignment.  Time O(2^n n^3): it refuses n > MAX_N.
"""

from __future__ import annotations

import itertools
import math
import time
from functools import lru_cache
from typing import Any

import numpy as np

from compbench import Capabilities, Problem, Solution, Solver, Status

MAX_N = 12
NEG_INF = -math.inf


def best_tree(arc: np.ndarray, words: tuple[int, ...], single_root: bool) -> tuple[float, dict[int, int]]:
    """The best projective tree over ``words`` (kept tokens, increasing) rooted at 0: (score, {token: head}).

    Eisner's items over the sequence ``w = (0, *words)``: ``complete(s, t, right)`` is a subtree of w[s] covering
    w[s..t]; ``complete(s, t, left)`` a subtree of w[t] covering w[s..t]; ``incomplete`` adds the arc between
    w[s] and w[t].  ``single_root``: the root takes exactly one modifier w[j], whose subtree covers everything.
    """
    w = (0, *words)
    k = len(words)

    @lru_cache(maxsize=None)
    def complete(s: int, t: int, right: bool) -> tuple[float, tuple[tuple[int, int], ...]]:
        if s == t:
            return 0.0, ()
        best: tuple[float, tuple] = (NEG_INF, ())
        for r in (range(s + 1, t + 1) if right else range(s, t)):
            left_part = incomplete(s, r, True) if right else complete(s, r, False)
            right_part = complete(r, t, True) if right else incomplete(r, t, False)
            score = left_part[0] + right_part[0]
            if score > best[0]:
                best = (score, left_part[1] + right_part[1])
        return best

    @lru_cache(maxsize=None)
    def incomplete(s: int, t: int, right: bool) -> tuple[float, tuple[tuple[int, int], ...]]:
        head, mod = (w[s], w[t]) if right else (w[t], w[s])
        arc_score = arc[head, mod]
        best: tuple[float, tuple] = (NEG_INF, ())
        if arc_score == NEG_INF:
            return best
        for r in range(s, t):
            a, b = complete(s, r, True), complete(r + 1, t, False)
            score = a[0] + b[0] + arc_score
            if score > best[0]:
                best = (score, a[1] + b[1] + ((mod, head),))
        return best

    if k == 0:
        return 0.0, {}
    if not single_root:
        score, arcs = complete(0, k, True)
    else:
        score, arcs = NEG_INF, ()
        for j in range(1, k + 1):
            a, b = complete(1, j, False), complete(j, k, True)
            candidate = arc[0, w[j]] + a[0] + b[0]
            if candidate > score:
                score, arcs = candidate, a[1] + b[1] + ((w[j], 0),)
    return float(score), dict(arcs)


def kept_sets(n: int, lo: int, hi: int):
    """Every kept set with lo..hi tokens, by size, then lexicographically."""
    for size in range(lo, hi + 1):
        yield from itertools.combinations(range(1, n + 1), size)


class BruteForce(Solver):
    name = "brute-force"
    description = f"Enumerates every kept set and parses each with Eisner's algorithm (the oracle; n <= {MAX_N})"
    exact = True
    complexity = "O(2^n n^3)"
    supports = Capabilities(all_lengths=True, max_n=MAX_N)

    def _solve(self, problem: Problem, *, time_limit: float | None, all_lengths: bool, **options: Any) -> Solution:
        n = problem.n
        deadline = None if time_limit is None else time.perf_counter() + time_limit
        lo, hi = (0, n) if all_lengths else problem.length_bounds()
        token, bigram = problem.token_scores, problem.bigram_scores
        best = [(NEG_INF, None)] * (n + 1)  # per size: (objective, {token: head})
        timed_out = False
        enumerated = 0
        for words in kept_sets(n, lo, hi):
            if deadline is not None and enumerated % 16 == 0 and time.perf_counter() > deadline:
                timed_out = True
                break
            enumerated += 1
            sequence = (0, *words, n + 1)
            chain = sum(bigram[a, b] for a, b in zip(sequence, sequence[1:])) + sum(token[k - 1] for k in words)
            if chain == NEG_INF:
                continue
            tree_score, tree = best_tree(problem.arc_scores, words, problem.single_root)
            total = chain + tree_score
            if total > best[len(words)][0]:
                best[len(words)] = (total, tree)

        def as_solution(entries) -> Solution:
            value, tree = max(entries, key=lambda e: e[0], default=(NEG_INF, None))
            if tree is None:
                return Solution(Status.TIMEOUT if timed_out else Status.INFEASIBLE)
            heads = np.full(n + 1, -1, dtype=np.int64)
            for k, h in tree.items():
                heads[k] = h
            return Solution(Status.TIMEOUT if timed_out else Status.OPTIMAL, heads, value,
                            bound=None if timed_out else value)

        lo_p, hi_p = problem.length_bounds()
        # max() keeps the first of equal entries, i.e. the smallest size: ties go to fewer words.
        solution = as_solution(best[lo_p:hi_p + 1])
        solution.stats["kept_sets"] = enumerated
        if all_lengths:
            solution.by_length = [as_solution([best[m]]) for m in range(n + 1)]
        return solution

