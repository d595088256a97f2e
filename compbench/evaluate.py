"""Validity of a solution (tree, projectivity, root, length, forbidden scores) and its objective."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .problem import Problem, Solution, expect_problem, is_finite_number, is_flag


class InvalidSolution(ValueError):
    """A solution breaks the contract (the message says which rule)."""


def tree_violation(heads: np.ndarray, single_root: bool = False) -> str | None:
    """Why ``heads`` is not a projective tree rooted at 0 over its kept tokens, or None if it is one.

    ``heads[k]`` is the head of token k or -1 when k is deleted (``heads[0]`` is ignored).
    """
    if not is_flag(single_root):
        raise TypeError(f"single_root: expected true or false, got {single_root!r}")
    heads = np.asarray(heads)
    n = len(heads) - 1 if heads.ndim == 1 else -1
    reason = _index_violation(heads, n)
    if reason:
        return reason
    kept = [k for k in range(1, n + 1) if heads[k] >= 0]
    kept_set = set(kept)
    for k in kept:
        h = int(heads[k])
        if h == k:
            return f"token {k} is its own head"
        if h != 0 and h not in kept_set:
            return f"token {k} has deleted token {h} as its head"
    # Every kept token reaches the root (no cycles): walk up at most n steps.
    for k in kept:
        node, steps = k, 0
        while node != 0:
            node = int(heads[node])
            steps += 1
            if steps > n:
                return f"token {k} is on a cycle"
    # Projectivity: for every arc (h, k), every kept j strictly between h and k descends from h.
    for k in kept:
        h = int(heads[k])
        for j in range(min(h, k) + 1, max(h, k)):
            if j in kept_set and not _descends(heads, j, h):
                return f"arc {h} -> {k} crosses kept token {j}, which does not descend from {h}"
    if single_root and kept and sum(1 for k in kept if heads[k] == 0) != 1:
        return "single_root: the root must take exactly one modifier"
    return None


def _descends(heads: np.ndarray, j: int, h: int) -> bool:
    node = j
    while node != 0:
        node = int(heads[node])
        if node == h:
            return True
    return h == 0


def objective(problem: Problem, heads: np.ndarray) -> float:
    """The objective of a solution given by ``heads`` (-inf when it uses a forbidden score): n+1 integers in
    -1..n, else :class:`InvalidSolution`; whether they form a tree is not checked (:func:`evaluate` checks it).

    >>> from compbench import generate
    >>> round(objective(generate("gaussian", n=4, seed=0, length=2), [-1, 0, -1, 1, -1]), 4)
    0.4776
    """
    heads = head_array(expect_problem(problem), heads)
    return _total(scored_terms(problem, heads), int(np.count_nonzero(heads[1:] >= 0)))


def head_array(problem: Problem, heads: Any) -> np.ndarray:
    """``heads`` as an array, after refusing what cannot index ``problem``'s scores (an :class:`InvalidSolution`):
    other than n+1 integers, or a head outside -1..n."""
    array = np.asarray(heads)
    reason = _index_violation(array, problem.n)
    if reason:
        raise InvalidSolution(reason)
    return array


def _index_violation(heads: np.ndarray, n: int) -> str | None:
    """Why ``heads`` is not n+1 integers in -1..n (n = -1: of any length), or None."""
    if heads.ndim != 1 or len(heads) < 1 or (n >= 0 and len(heads) != n + 1) or heads.dtype.kind not in "iu":
        return (f"heads must be n+1{f' = {n + 1}' if n >= 0 else ''} integers, got shape {heads.shape} of "
                f"{heads.dtype}")
    n = len(heads) - 1
    if n and not (-1 <= min(heads[1:].tolist()) and max(heads[1:].tolist()) <= n):  # lists: faster at these sizes
        k = int(np.flatnonzero((heads[1:] < -1) | (heads[1:] > n))[0]) + 1
        return f"token {k} has head {heads[k]} outside -1..{n}"
    return None


def _total(terms: list[float], kept: int) -> float:
    """The sum of :func:`scored_terms` of a solution keeping ``kept`` tokens, in one fixed order: each kept token's
    score plus its arc's, then the rest one by one."""
    total = 0.0
    for k in range(kept):
        total += terms[2 * k] + terms[2 * k + 1]
    for term in terms[2 * kept:]:
        total += term
    return float(total)


def scored_terms(problem: Problem, heads: np.ndarray) -> list[float]:
    """The scores a solution given by ``heads`` sums: each kept token's and its arc's, the bigrams of the kept
    sequence, the sibling scores."""
    n = problem.n
    heads = heads.tolist() if isinstance(heads, np.ndarray) else heads  # Python ints index faster than numpy's
    kept = [k for k in range(1, n + 1) if heads[k] >= 0]
    token, arc, bigram = problem.token_scores, problem.arc_scores, problem.bigram_scores
    terms = [x for k in kept for x in (token[k - 1], arc[heads[k], k])]
    sequence = [0, *kept, n + 1]
    terms += [bigram[a, b] for a, b in zip(sequence, sequence[1:])]
    if problem.sibling_scores is not None:
        terms += [problem.sibling_scores[h, previous, k] for h, previous, k in sibling_pairs(heads)]
    return terms


def objective_error(problem: Problem, heads: np.ndarray | None) -> float:
    """How far two float64 sums of a solution's scores can lie apart (0.0 without a solution): the slack within
    which two answers' objectives, summed by different solvers, cannot be told apart (:func:`summation_error`)."""
    return 0.0 if heads is None else summation_error(scored_terms(problem, heads))


def largest_objective_error(problem: Problem) -> float:
    """An upper bound of :func:`objective_error` over every solution of ``problem``: a tree sums k <= 4n + 1 scores
    (token, arc, bigram and sibling ones), none larger in magnitude than the sum of all its finite scores."""
    arrays = [problem.token_scores, problem.arc_scores, problem.bigram_scores]
    arrays += [] if problem.sibling_scores is None else [problem.sibling_scores]
    return _sum_error(4 * problem.n + 1, sum(float(np.abs(a[np.isfinite(a)]).sum()) for a in arrays))


def summation_error(terms: list[float]) -> float:
    """How far two float64 sums of ``terms`` in different orders can lie apart: ``2 (k - 1) u Σ|x|`` for k terms and
    the unit roundoff u = 2^-53 (each sum is within ``(k - 1) u Σ|x|`` of the exact one, Higham, *Accuracy and
    Stability of Numerical Algorithms*, 2002, §4.2).  Below 1e-12 for scores under 100 and n under 100; it matters
    where large scores cancel.

    >>> summation_error([3e10, -3e10, 1.5]) > 1e-6
    True
    """
    return _sum_error(len(terms), float(sum(abs(x) for x in terms)))


def _sum_error(count: int, magnitude: float) -> float:
    """``2 (k - 1) u Σ|x|`` for ``count`` = k terms of total ``magnitude`` Σ|x| (:func:`summation_error`)."""
    return 2.0 * max(count - 1, 0) * 2.0 ** -53 * magnitude


def score_tolerance(error: float, rtol: float) -> float:
    """The absolute tolerance within which two objectives agree: ``rtol``, shrunk with scores all far below 1 (by
    their scale, read off the float64 ``error`` of their sums, :func:`summation_error`: 2 (k - 1) u Σ|x|), as the
    ILP solvers scale such costs up; ``rtol`` itself where no error is known (a record of an older version).  An
    optimum near 0 of scores near 1 keeps a MIP backend's tolerance of 1e-9; optima of scores near 1e-10 that are
    4x apart do not agree.

    >>> score_tolerance(summation_error([1.0, -1.0, 1e-12]), 1e-9), score_tolerance(0.0, 1e-9)
    (1e-09, 1e-09)
    >>> score_tolerance(summation_error([1e-10, 2e-10, 3e-10]), 1e-9) < 1e-17
    True
    """
    return rtol * min(1.0, error / (2.0 * 2.0 ** -53)) if error > 0 else rtol


def sibling_pairs(heads: np.ndarray) -> list[tuple[int, int, int]]:
    """The (h, s, k) triples that second-order scores: each head's modifiers on each side, moving outward from
    the head, with s the previous one (s = h for the first).

    >>> sibling_pairs(np.array([-1, 2, 0, 2, 2]))
    [(0, 0, 2), (2, 2, 3), (2, 3, 4), (2, 2, 1)]
    """
    n = len(heads) - 1
    kept = [k for k in range(1, n + 1) if heads[k] >= 0]
    triples = []
    for h in (0, *kept):
        modifiers = [k for k in kept if heads[k] == h]
        for side in ([k for k in modifiers if k > h], [k for k in reversed(modifiers) if k < h]):
            triples += [(h, previous, k) for previous, k in zip((h, *side), side)]
    return triples


def evaluate(problem: Problem, solution: Solution | np.ndarray, rtol: float = 1e-9) -> float:
    """Check a solution against the contract and return its objective recomputed from the scores.

    Raises :class:`InvalidSolution` when the heads do not form a projective tree over the kept tokens, when the
    root or length condition fails, when a forbidden (-inf) score is used, or when the solution reports an
    objective that differs from the recomputed one (relative tolerance ``rtol``, or more than two float64 sums of its
    terms can differ: :func:`summation_error`).

    >>> from compbench import generate
    >>> p = generate("gaussian", n=4, seed=0, length=2)
    >>> import numpy as np
    >>> round(evaluate(p, np.array([-1, 0, -1, 1, -1])), 4)
    0.4776
    """
    expect_problem(problem)
    if not (is_finite_number(rtol) and 0 <= rtol < 1):
        raise ValueError(f"rtol: expected a number in [0, 1), got {rtol!r}")
    if isinstance(solution, Solution):
        if solution.heads is None:
            raise InvalidSolution(f"status {solution.status.value} carries no solution")
        heads = solution.heads
        reported = solution.objective
    else:
        heads, reported = solution, None
    heads = head_array(problem, heads)
    reason = tree_violation(heads, problem.single_root)
    if reason:
        raise InvalidSolution(reason)
    kept = int((heads[1:] >= 0).sum())
    lo, hi = problem.length_bounds()
    if not lo <= kept <= hi:
        raise InvalidSolution(f"keeps {kept} tokens; the length condition is {lo}..{hi}")
    terms = scored_terms(problem, heads)
    value = _total(terms, kept)
    if value == -math.inf:
        raise InvalidSolution("uses a forbidden (-inf) token, arc or bigram score")
    error = summation_error(terms)
    if reported is not None and not math.isclose(reported, value, rel_tol=rtol, abs_tol=score_tolerance(error, rtol)) \
            and not abs(reported - value) <= error:
        raise InvalidSolution(f"reported objective {reported!r} differs from the recomputed {value!r}")
    return value
