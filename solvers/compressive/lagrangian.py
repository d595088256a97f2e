"""The Lagrangian relaxation of the length, one search shared by ``bisection`` (so ``bisection-exact``) and
``pruned-dp``.

Adding a bonus lambda to every kept word relaxes the length: the free-length chart's optimum at lambda (the relaxed
optimum) maximizes f + lambda k over all derivations, f the score and k the kept words, and its kept count grows
with lambda.  For a length range lo..hi the dual g(lambda) = (relaxed value) - lambda K, with K = lo for
lambda >= 0 and hi below (:func:`dual`), bounds every allowed solution from above, for any lambda; a relaxed optimum
that keeps an allowed number of words is optimal for them (a certificate).  Every objective lies in [-B, B]
(:func:`score_bound`), so beyond |lambda| = 2B + 1 (:func:`reach`) the relaxed optimum keeps the most (or fewest)
words any solution can.

The search aims at one count m (lo from below, hi from above) and keeps a :class:`Bracket`: two multipliers whose
relaxed optima keep fewer and more words than m, each seen as the line f + lambda (k - m).  Where the two lines
cross, the relaxed optimum either finds a new vertex of the concave hull of the optimum-per-length curve (it beats
the lines and replaces an end), or lies on the lines: then the ends are adjacent hull vertices, m lies strictly
between them (a duality gap: no lambda certifies it), and the crossing is the dual's minimum.  How the bracket is
found and what a caller does with it is the caller's: ``bisection`` opens it at +-(2B + 1) and bisects when a
crossing does not halve it, until a certificate or the score resolution; ``pruned-dp`` grows a step from the scores'
scale and takes a few crossings, for the bound its pruning needs.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from compbench import Problem
from compbench.agreement import RTOL

# A relaxed optimum at a crossing "lies on the lines" when it beats them by at most this, relative to the dual's
# size: far above the rounding of a sum of the scores (about (4n + 2) eps), far below a real step of the hull.
TOLERANCE = 1e-9


def score_bound(problem: Problem) -> float:
    """B with |objective| <= B for every solution: n tokens, n arcs, n+1 bigrams (and n sibling scores) at most."""
    def largest(scores: np.ndarray | None) -> float:
        if scores is None:
            return 0.0
        finite = np.abs(scores[np.isfinite(scores)])
        return float(finite.max()) if finite.size else 0.0

    n = problem.n
    return (n * largest(problem.token_scores) + n * largest(problem.arc_scores)
            + (n + 1) * largest(problem.bigram_scores) + n * largest(problem.sibling_scores))


def bonus_rounding(n: int, lam: float) -> float:
    """How far float64 may take the relaxed optimum at ``lam`` from the true one: the bonus adds up to |lambda| (n+1)
    to the chart's sums, and each of (4n + 2) additions rounds by at most 2^-53 of it, on both sides of a comparison
    (counted here at 2^-52 each: twice that, a margin).  A certificate holds in float64 only when this stays within
    the agreement tolerance of its objective (:func:`trusted_certificate`)."""
    return 2.0 * (4 * n + 2) * float(np.finfo(float).eps) * abs(lam) * (n + 1)


def trusted_certificate(n: int, lam: float, value: float, error: float, kept: int) -> bool:
    """Is a relaxed optimum at ``lam`` that keeps ``kept`` (an allowed number of) words a certificate in float64:
    its bonus rounding (:func:`bonus_rounding`) within RTOL of its ``value`` and the tree's own float64 ``error``
    (:func:`compbench.evaluate.objective_error`)?  Keeping nothing needs no proof: the empty compression is the only
    solution of 0 words.  At the far end, |lambda| = 2B + 1 with one score near 1e12, ``bisection`` had certified a
    tree 0.02 short of the optimum.

    >>> trusted_certificate(6, 3.0, -49.4, 0.0, 6), trusted_certificate(6, 2.6e13, -49.4, 0.0, 6)
    (True, False)
    >>> trusted_certificate(6, -2.6e13, -4.1, 0.0, 0)
    True
    """
    return kept == 0 or bonus_rounding(n, lam) <= RTOL * max(1.0, abs(value)) + error


def reach(problem: Problem) -> float:
    """2B + 1: beyond this |lambda| the relaxed optimum keeps the most (lambda > 0) or fewest words any solution
    keeps, which also proves infeasibility when even that misses the length."""
    return 2.0 * score_bound(problem) + 1.0


def dual(value: float, lam: float, lo: int, hi: int) -> float:
    """The dual bound g(lambda) from the relaxed optimum's ``value`` at ``lam``: an upper bound on every solution
    that keeps lo..hi words."""
    return value - lam * (lo if lam >= 0 else hi)


class End(NamedTuple):
    """A multiplier tried, the kept count of its relaxed optimum and that optimum's objective (its value less the
    bonus): the line objective + lambda (kept - m) of the dual."""

    lam: float
    kept: int
    objective: float


class Bracket:
    """Two ends whose relaxed optima keep fewer (``below``) and more (``above``) words than ``target``."""

    def __init__(self, target: int, a: End, b: End):
        self.target = target
        self.below, self.above = sorted((a, b))

    @property
    def width(self) -> float:
        return self.above.lam - self.below.lam

    def crossing(self) -> float | None:
        """The lambda where the ends' lines cross (the dual's breakpoint when the ends are adjacent hull vertices),
        or None when rounding put it outside the bracket."""
        lam = (self.below.objective - self.above.objective) / (self.above.kept - self.below.kept)
        return lam if self.below.lam < lam < self.above.lam else None

    def on_lines(self, value: float, lam: float) -> bool:
        """Whether the relaxed optimum's ``value`` at the crossing ``lam`` does not beat the ends' lines (within
        :data:`TOLERANCE`): the ends are adjacent hull vertices, the target lies strictly between them (a duality
        gap), and ``lam`` is the dual's minimum."""
        line = self.below.objective + lam * (self.below.kept - self.target)
        return value - lam * self.target <= line + TOLERANCE * (1.0 + abs(line))

    def narrow(self, end: End) -> None:
        """Replace the end on ``end``'s side of the target (its kept count is not the target)."""
        if end.kept < self.target:
            self.below = end
        else:
            self.above = end
