"""``brute-force``: the oracle.  Enumerates every kept set, parses each one exactly.

For each kept set K allowed by the length condition (in increasing size, then lexicographic order) it adds the
token and bigram scores of K to the best projective tree over K, found by (second-order) Eisner's algorithm written
as a plain memoized recursion over the kept sequence.  Its tests check it against a second, independent enumeration of
every head assignment.  Time O(2^n n^3): it refuses n > MAX_N.
"""

from __future__ import annotations

import itertools
import math
import time
from functools import lru_cache

import numpy as np

from compbench import Capabilities, Option, Problem, Solution, Solver, Status

MAX_N = 12
NEG_INF = -math.inf


def best_tree(problem: Problem, words: tuple[int, ...]) -> tuple[float, dict[int, int]]:
    """The best projective tree over ``words`` (kept tokens, increasing) rooted at 0: (score, {token: head}).

    Second-order Eisner (McDonald & Pereira 2006) written as a plain memoized recursion over the kept sequence
    ``w = (0, *words)``; with no sibling scores it is exactly first-order Eisner.  ``complete(s, t, right)`` is a
    subtree of w[s] covering w[s..t] (``left``: of w[t]); ``incomplete(s, t, ·)`` adds the arc between w[s] and
    w[t] plus that head's closer modifiers on the same side; ``box(s, t)`` holds two adjacent siblings' facing
    halves.  ``single_root``: the root takes exactly one modifier w[j], whose subtree covers everything.
    """
    arc, sibling = problem.arc_scores, problem.sibling_scores
    w = (0, *words)
    k = len(words)

    def sib(h: int, s: int, m: int) -> float:
        return 0.0 if sibling is None else sibling[w[h], w[s], w[m]]

    @lru_cache(maxsize=None)
    def complete(s: int, t: int, right: bool) -> tuple[float, tuple[tuple[int, int], ...]]:
        if s == t:
            return 0.0, ()
        if right:  # the outermost modifier r of w[s], then r's own right half
            splits = ((incomplete(s, r, True), complete(r, t, True)) for r in range(s + 1, t + 1))
        else:
            splits = ((complete(s, r, False), incomplete(r, t, False)) for r in range(s, t))
        return _best(splits)

    @lru_cache(maxsize=None)
    def incomplete(s: int, t: int, right: bool) -> tuple[float, tuple[tuple[int, int], ...]]:
        head, mod = (s, t) if right else (t, s)
        arc_score = arc[w[head], w[mod]]
        if arc_score == NEG_INF:
            return NEG_INF, ()
        if right:  # first modifier (sibling = head), or the previous modifier r of w[s] and the box (r, t)
            first = (complete(s + 1, t, False), (sib(s, s, t), ()))
            later = ((incomplete(s, r, True), box(r, t), (sib(s, r, t), ())) for r in range(s + 1, t))
        else:
            first = (complete(s, t - 1, True), (sib(t, t, s), ()))
            later = ((box(s, r), incomplete(r, t, False), (sib(t, r, s), ())) for r in range(s + 1, t))
        score, arcs = _best(itertools.chain([first], later))
        return score + arc_score, arcs + ((w[mod], w[head]),)

    @lru_cache(maxsize=None)
    def box(s: int, t: int) -> tuple[float, tuple[tuple[int, int], ...]]:
        return _best((complete(s, u, True), complete(u + 1, t, False)) for u in range(s, t))

    if k == 0:
        return 0.0, {}
    if not problem.single_root:
        score, arcs = complete(0, k, True)
    else:
        score, arcs = _best((complete(1, j, False), complete(j, k, True),
                             (arc[0, w[j]] + sib(0, 0, j), ((w[j], 0),))) for j in range(1, k + 1))
    return float(score), dict(arcs)


def _best(candidates) -> tuple[float, tuple[tuple[int, int], ...]]:
    """The highest sum of (score, arcs) parts over the candidates; the first one wins ties."""
    best: tuple[float, tuple] = (NEG_INF, ())
    for parts in candidates:
        score = sum(part[0] for part in parts)
        if score > best[0]:
            best = (score, tuple(itertools.chain.from_iterable(part[1] for part in parts)))
    return best


def kept_sets(n: int, lo: int, hi: int):
    """Every kept set with lo..hi tokens, by size, then lexicographically."""
    for size in range(lo, hi + 1):
        yield from itertools.combinations(range(1, n + 1), size)


class BruteForce(Solver):
    name = "brute-force"
    description = f"Enumerates every kept set and parses each with Eisner's algorithm (the oracle; n <= {MAX_N})"
    exact = True
    complexity = "O(2^n n^3)"
    supports = Capabilities(all_lengths=True, second_order=True, max_n=MAX_N)
    accepted_options: dict[str, Option] = {}

    def _solve(self, problem: Problem, *, time_limit: float | None, all_lengths: bool) -> Solution:
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
            tree_score, tree = best_tree(problem, words)
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

