"""``signature-dp`` (Qian & Liu 2014, exact) and ``ql-subgradient`` (their Lagrangian relaxation)."""

from __future__ import annotations

import math
import time

import numpy as np

from compbench import Capabilities, Problem, Solution, Solver, Status, objective
from compbench.evaluate import objective_error
from compbench.limits import memory_budget
from compbench.solver import POSITIVE_INT, POSITIVE_NUMBER

from ..compressive.batch import best_count
from ..compressive.chart import DROPPED
from ..compressive.lagrangian import bonus_rounding, trusted_certificate
from ..memory import refuse_if_too_big
from .chart import Chart, chart_bytes

def _timed_chart(problem: Problem, token: np.ndarray, count: bool) -> tuple[Chart, float]:
    start = time.perf_counter()
    chart = Chart(token, problem.arc_scores, problem.bigram_scores, count=count, single_root=problem.single_root)
    return chart, time.perf_counter() - start


class SignatureDP(Solver):
    """Qian & Liu (2014)'s exact DP: Eisner spans with signatures (deleted count k, rightmost kept word p).

    One chart gives the optimum for every length.  The chart is refused (status ``unsupported``) when it would
    need more than ``memory_limit`` bytes (default: a quarter of the memory available at construction).  The
    compiled fill cannot be interrupted, so ``time_limit`` is not enforced (n = 60 takes well under a second).

    >>> import compbench
    >>> p = compbench.generate("gaussian", n=6, seed=0, length=3)
    >>> compbench.get_solver("signature-dp").solve(p).status.value
    'optimal'
    """

    name = "signature-dp"
    description = "Qian & Liu (2014) signature DP: projective tree with virtual arcs for deleted words (exact)"
    exact = True
    complexity = "O(n^6) time, O(n^4) memory"
    supports = Capabilities(all_lengths=True)
    accepted_options = {"memory_limit": POSITIVE_NUMBER}  # bytes

    def __init__(self, memory_limit: int | None = None):
        self.memory_limit = memory_budget(memory_limit)

    def _solve(self, problem: Problem, *, time_limit: float | None, all_lengths: bool,
               memory_limit: int | None = None) -> Solution:
        n = problem.n
        refused = refuse_if_too_big(self.name, n, chart_bytes(n, True),
                                    self.memory_limit if memory_limit is None else memory_limit)
        if refused is not None:
            return refused
        chart, fill_seconds = _timed_chart(problem, problem.token_scores, count=True)

        def at_length(m: int) -> Solution:
            k = n - m
            if chart.goal[k] == -math.inf:
                return Solution(Status.INFEASIBLE)
            heads = chart.heads(k)
            value = objective(problem, heads)
            return Solution(Status.OPTIMAL, heads, value, bound=value)

        lo, hi = problem.length_bounds()
        # the goal counts dropped words: the best allowed length, the fewest kept words among equal optima
        solution = at_length(n - best_count(chart.goal, DROPPED, n, lo, hi))
        if all_lengths:
            solution.by_length = [at_length(m) for m in range(n + 1)]
        solution.stats["chart_seconds"] = fill_seconds
        solution.stats["chart_mib"] = chart_bytes(n, True) / 2**20
        return solution


class QLSubgradient(Solver):
    """Qian & Liu (2014)'s approximation: the chart without the count signature, length relaxed by lambda.

    Each iteration maximizes ``f(z) + lambda * (sum z - m)`` (an upper bound on the optimum) and updates
    ``lambda += alpha * (m - sum z)`` with ``alpha = step / (1 + number of times the dual went up)``
    (Rush et al. 2010).  ``optimal`` only when the relaxed optimum keeps exactly m words (a certificate) and float64
    settles it at that lambda (:func:`compbench_solvers.compressive.lagrangian.trusted_certificate`; else
    ``feasible`` with that tree); otherwise ``feasible`` without a solution, carrying the best bound.

    >>> import compbench
    >>> p = compbench.generate("gaussian", n=6, seed=0, length=3)
    >>> compbench.get_solver("ql-subgradient").solve(p, max_iterations=50).status.value in ("optimal", "feasible")
    True
    """

    name = "ql-subgradient"
    description = "Qian & Liu (2014) Lagrangian relaxation of the length, subgradient steps (certified or bound)"
    exact = False
    complexity = "O(n^4) time per iteration, O(n^3) memory"
    supports = Capabilities(lengths=frozenset({"exact", "free"}))
    accepted_options = {"max_iterations": POSITIVE_INT, "step": POSITIVE_NUMBER}

    def __init__(self, max_iterations: int = 100, step: float | None = None, memory_limit: int | None = None):
        self.max_iterations = int(max_iterations)
        self.step = step
        self.memory_limit = memory_budget(memory_limit)

    def _solve(self, problem: Problem, *, time_limit: float | None, all_lengths: bool,
               max_iterations: int | None = None, step: float | None = None) -> Solution:
        n = problem.n
        refused = refuse_if_too_big(self.name, n, chart_bytes(n, False), self.memory_limit)
        if refused is not None:
            return refused
        iterations_allowed = self.max_iterations if max_iterations is None else int(max_iterations)
        scale = self.step if step is None else step
        if scale is None:  # default: the typical size of one score
            finite = np.concatenate([a[np.isfinite(a)].ravel() for a in
                                     (problem.token_scores, problem.arc_scores, problem.bigram_scores)])
            scale = float(np.mean(np.abs(finite))) if finite.size and np.any(finite) else 1.0
        deadline = None if time_limit is None else time.perf_counter() + time_limit
        m = problem.length.min if problem.length is not None else None
        lam, best_bound, previous_dual, increases = 0.0, math.inf, math.inf, 0
        iterations, converged, timed_out, chart_seconds = 0, False, False, 0.0
        solution = None
        while iterations < max(1, iterations_allowed):
            if deadline is not None and iterations > 0 and time.perf_counter() > deadline:
                timed_out = True
                break
            chart, seconds = _timed_chart(problem, problem.token_scores + lam, count=False)
            chart_seconds += seconds
            iterations += 1
            relaxed = float(chart.goal[0])
            if relaxed == -math.inf:  # no compression of any length exists
                solution = Solution(Status.INFEASIBLE, bound=-math.inf)
                converged = True
                break
            heads = chart.heads(0)
            kept = int((heads[1:] >= 0).sum())
            dual = relaxed - lam * (m if m is not None else kept)
            best_bound = min(best_bound, dual)
            if m is None or kept == m:  # certificate: the relaxed optimum satisfies the length
                value = objective(problem, heads)
                solution = Solution(Status.OPTIMAL, heads, value, bound=value)
                if not trusted_certificate(n, lam, value, objective_error(problem, heads), kept):  # float64 cannot
                    # say; the dual at such a lambda is no bound either (its cancellation put it below the value)
                    solution = Solution(Status.FEASIBLE, heads, value, bound=value + bonus_rounding(n, lam), message=(
                        f"{self.name}: no certificate: at lambda = {lam!r} float64 decides the relaxed optimum only "
                        f"to {bonus_rounding(n, lam):.2g}"))
                converged = True
                break
            if dual > previous_dual:
                increases += 1
            previous_dual = dual
            lam += scale / (1 + increases) * (m - kept)
        if solution is None:
            solution = Solution(Status.TIMEOUT if timed_out else Status.FEASIBLE, bound=best_bound,
                                message=f"{self.name}: no certificate after {iterations} iterations")
        solution.stats.update(iterations=iterations, converged=converged, final_lambda=lam,
                              seconds_per_iteration=chart_seconds / iterations)
        return solution
