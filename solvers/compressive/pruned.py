"""``pruned-dp``: exact lengths by the counted chart, filled only where a Lagrangian bound lets an optimum pass.

The bound.  Write k for a derivation's kept words and f for its score.  For any multiplier l, the free-length chart
filled with the kept bonus l (``hook-dp``'s chart, every kept word scoring l more) holds for each item (x i j) the
best inside value In_l(x i j) = max (f_in + l k_in) over the item's derivations, and its max-semiring outside pass
(:meth:`Chart.best_outside`: the same rules run in reverse with max) the best completion Out_l(x i j) =
max (f_out + l k_out) over the ways of completing the item into a derivation of the goal.  Hence for every
derivation of the item with k_in kept words and every completion with k_out:

    f_in  <= In_l(x i j)  - l k_in      for every l            (a max is at least any of its terms)
    f_out <= Out_u(x i j) - u k_out     for every u

A solution through (x i j) at count c (the counted chart's count: c = k_in when it counts kept words, c = w - k_in
when it counts dropped ones, w the words the item spans) keeps K = k_in + k_out words with lo <= K <= hi, so

    f = f_in + f_out <= UB(x i j, c) = min_l (In_l - l k_in) + min_u (Out_u + u k_in - u K_u)

with K_u = lo for u >= 0 and hi for u < 0 (the worst K in the range for that sign).  This holds for *any*
multipliers, optimal or not: exactness does not depend on the search below.  UB is concave in c (a sum of minima of
affine functions), so the counts of an item with UB >= F form one interval, its window.  If F <= OPT, every item and
count on an optimal derivation has UB >= f(optimum) = OPT >= F, so filling the counted chart only over the windows
(and dropping, once an item is filled, every count whose exact inside value V + min_u (Out_u + ...) is below F: the
same bound with the exact inside) keeps every optimal derivation, and the chart's goal is OPT again; every
derivation the restricted chart holds is a real solution, so it never exceeds OPT.

The floor F.  A value F is *safe* when F <= OPT.  The restricted chart's best value v is a real solution, so
v >= F proves F <= v <= OPT, and with F <= OPT the chart is exact: the answer is proven whatever F was.  So F may be
a guess: the dual bound minus half the best multiplier (``guess``; measured duality gaps are 0.05-0.2 of it on the
generated kinds, with a median of 0.4 on Google sentences), or the best feasible value the search saw (a relaxed
optimum inside a length range) when that is higher.  When the guess fails, the chart is filled again: with
F = v when it found a solution v < F (a real solution's value, so safe), else with the best feasible value seen,
else with a guess 4 times further below the dual (a fill that finds nothing is cheap: its windows are narrow),
and after 4 fills with F = -inf (no pruning beyond items that have no derivation or no completion), so an
infeasible length comes out ``infeasible`` from that last fill.  Floating point: an item is dropped only when its
computed bound is below F - tol, tol = 1e-9 (1 + B + |l|max n) with B the scores' bound (:func:`score_bound`), far
above the rounding of the sums, so an optimum is never pruned by rounding; ties are kept (UB = F passes).

The multipliers.  A few secant steps on the dual g(l) = In_l(goal) - l K (its slope is the kept count of the
relaxed optimum minus K; the search is :mod:`.lagrangian`'s): l = 0, then a step from the scores' scale, grown
until the kept count crosses the target, then the crossings of the bracket ends' lines, until one lies on them (the
dual's minimum: :meth:`.lagrangian.Bracket.on_lines`).  A relaxed optimum that keeps an allowed number of words
with a zero duality gap certifies itself (as ``bisection``) and no counted chart is filled.  The outside pass runs
at the best multiplier found; every multiplier tried tightens the inside part of the bound, which is what makes the
windows narrow (a tent over the counts peaking near the count the item has under the best multiplier).

When the count vectors are short (few words kept or few dropped, as in most real sentences) the whole counted chart
costs less than the search and the bound: below ``full_below`` of :func:`counted_cost` (the counted chart's
work over the free chart's) ``pruned-dp`` fills it whole, as ``resource-dp`` does (``pruned_share`` 0).

``stats``: counted_cost (its upper bound (cap + 1)^2 / 2 when that is already below ``full_below``), charts
(free-length fills), outside passes, certificate, counted fills (1, or 2 after a failed guess),
floor, lambdas, count entries of the counted chart (items x counts), how many the pruning kept, pruned_share.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from compbench import Capabilities, Problem, ProblemBatch, Solution, Status, objective
from compbench.evaluate import objective_error
from compbench.limits import memory_budget
from compbench.solver import NUMBER, POSITIVE_NUMBER

from ..jit import njit
from ..memory import refuse_if_too_big
from .base import ChartSolver, answer_at, count_plan, decoded_answers, proven_answer
from .batch import PARAMS, best_count, decode_one
from .chart import (BOX, COUNTING, DROPPED, ITEMS, KEPT, LTRI, MAX_N, NEG, RTRI, SKIP, Chart, ChartScores, Pruning,
                    chart_bytes)
from .lagrangian import Bracket, End, dual, reach, score_bound, trusted_certificate


@njit(cache=True)
def _upper(ia, ib, oa, ob, c):
    """min_l (ia[l] + ib[l] c) + min_u (oa[u] + ob[u] c): the bound UB at count c."""
    inner = np.inf
    for l in range(len(ia)):
        inner = min(inner, ia[l] + ib[l] * c)
    outer = np.inf
    for u in range(len(oa)):
        outer = min(outer, oa[u] + ob[u] * c)
    return inner + outer


@njit(cache=True)
def _windows(inside, lams, outside, mus, counting, cap, lo, hi, floor, window, bound, slope):
    """Each item's window of counts with UB >= floor (empty: lo > hi) into ``window``, and the outside part of the
    bound as affine functions of the count (bound[u, x, i, j] + slope[u] c) for the fill's trimming; returns the
    number of count entries of the chart and of the windows."""
    L, U = len(lams), len(mus)
    N = inside.shape[2]
    ia, ib, oa, ob = np.empty(L), np.empty(L), np.empty(U), np.empty(U)
    for u in range(U):  # k_in = c (kept) or w - c (dropped): the slope in c of u k_in
        slope[u] = mus[u] if counting == KEPT else -mus[u]
    total = 0
    kept = 0
    for x in range(ITEMS):
        for i in range(N):
            for j in range(i, N):
                w = j - i - (1 if x == BOX else 0)  # the words (x i j) accounts for, kept or dropped
                window[x, i, j, 0], window[x, i, j, 1] = 1, 0
                if x == LTRI and i == j:  # the axiom (ltri j j), the semiring's one of the unary rules
                    window[x, i, j, 0], window[x, i, j, 1] = 0, 0
                    continue
                if w < 0 or (i == j and x != RTRI and x != SKIP):  # only (rtri j j) and (skip j j) on the diagonal
                    continue
                top = min(cap, w)
                total += top + 1
                low = 0
                if x == SKIP or (x == RTRI and i == j):  # the axioms' one count (kept words: none)
                    low = 0 if counting == KEPT else w
                    top = low
                    if low > cap:
                        continue
                finite = True
                for l in range(L):
                    v = inside[l, x, i, j]
                    if v == NEG:
                        finite = False
                    ia[l] = v if counting == KEPT else v - lams[l] * w
                    ib[l] = -lams[l] if counting == KEPT else lams[l]
                for u in range(U):
                    v = outside[u, x, i, j]
                    if v == NEG:
                        finite = False
                    k = lo if mus[u] >= 0 else hi
                    oa[u] = v - mus[u] * k + (0.0 if counting == KEPT else mus[u] * w)
                    ob[u] = slope[u]
                    bound[u, x, i, j] = oa[u]
                if not finite:
                    for u in range(U):
                        bound[u, x, i, j] = NEG
                    continue
                if inside[0, x, i, j] + outside[0, x, i, j] - mus[0] * (lo if mus[0] >= 0 else hi) < floor:
                    continue  # UB at every count is at most the bound of multiplier mus[0] = lams[0] alone
                a, b = low, top  # the peak of the concave UB over low..top
                while a < b:
                    mid = (a + b) // 2
                    if _upper(ia, ib, oa, ob, mid + 1) > _upper(ia, ib, oa, ob, mid):
                        a = mid + 1
                    else:
                        b = mid
                if _upper(ia, ib, oa, ob, a) < floor:
                    continue
                first, last = a, a
                while first > low and _upper(ia, ib, oa, ob, first - 1) >= floor:
                    first -= 1
                while last < top and _upper(ia, ib, oa, ob, last + 1) >= floor:
                    last += 1
                window[x, i, j, 0], window[x, i, j, 1] = first, last
                kept += last - first + 1
    return total, kept


def counted_cost(n: int, cap: int) -> float:
    """The counted chart's work relative to the free chart's, as the rules' loop counts predict: a span of width w
    has w splits, each a convolution of two count vectors of at most min(w, cap) + 1 entries (about half of their
    product is kept under the cap); the free chart does one step per split.

    >>> round(counted_cost(26, 9)), round(counted_cost(100, 45))
    (44, 821)
    """
    w = np.arange(1, n + 1, dtype=np.float64)
    spans = (n - w + 1) * w
    return float((spans * (np.minimum(w, cap) + 1) ** 2 / 2).sum() / max(spans.sum(), 1.0))


def _entries_left(window: np.ndarray) -> int:
    widths = window[..., 1] - window[..., 0] + 1
    return int(widths[widths > 0].sum())


class PrunedDP(ChartSolver):
    """Exact and ranged lengths by the counted chart restricted by a Lagrangian bound (see the module docstring
    for the bound and why it is valid); free length is ``hook-dp``'s chart.  Memory as ``resource-dp`` (the
    counted chart is allocated whole; refused above ``memory_limit``).

    >>> import compbench
    >>> p = compbench.generate("gaussian", n=12, seed=0, length=5)
    >>> s = compbench.get_solver("pruned-dp").solve(p)
    >>> s.status.value, len(s.kept), s.objective == compbench.get_solver("resource-dp").solve(p).objective
    ('optimal', 5, True)
    """

    name = "pruned-dp"
    description = "counted hook-trick chart filled only over the counts a Lagrangian upper bound lets pass (exact)"
    exact = True
    complexity = "O(n^3 d^2) worst case (as resource-dp), O(n^3) per multiplier tried"
    supports = Capabilities(second_order=True, max_n=MAX_N)
    accepted_options = {"memory_limit": POSITIVE_NUMBER, "floor": NUMBER}

    def __init__(self, memory_limit: int | None = None, max_charts: int = 5, outside_passes: int = 1,
                 guess: float = 0.5, full_below: float = 120.0):
        self.memory_limit = memory_budget(memory_limit)
        # the whole counted chart (resource-dp's) when counted_cost is below this: the search, the outside pass and
        # the windows cost about 7 free charts, and the counted chart runs about counted_cost / 8 free charts
        # (measured on Google sentences and generated ones, n = 12..200: benchmarks/bench_pruned.py)
        self.full_below = float(full_below)
        self.guess = float(guess)  # the first floor: the dual bound minus this many best multipliers
        self.max_charts = int(max_charts)
        self.outside_passes = int(outside_passes)

    def _plan(self, n: int, lo: int, hi: int, memory_limit: int | None, floor: float | None
              ) -> tuple[Solution | tuple[int, int, int, int] | None, dict[str, Any]]:
        """How a problem of n tokens and lengths lo..hi is solved, and the stats that says so: a refusal (too big),
        the arguments of ``resource-dp``'s one compiled call (:func:`decode_one`: counting, cap, lo, hi) when the free
        chart is exact or the whole counted chart is cheaper than the search and the bound, else None (the pruned
        fill)."""
        counting, cap = count_plan(n, lo, hi)
        stats: dict[str, Any] = {"charts": 0, "outside_passes": 0, "certificate": False, "counted_fills": 0,
                                 "counting": counting, "cap": cap}
        if counting == "none":  # every length allowed: the free chart is exact (hook-dp's one compiled call)
            stats["charts"] = 1
            return (COUNTING[counting], 0, lo, hi), stats
        refused = refuse_if_too_big(self.name, n, chart_bytes(n, cap),
                                    self.memory_limit if memory_limit is None else memory_limit)
        if refused is not None:
            return refused, stats
        # counted_cost <= (cap + 1)^2 / 2: the common short vectors skip computing it (a solve is ~0.1 ms at n = 15)
        cost = (cap + 1) ** 2 / 2 if (cap + 1) ** 2 / 2 < self.full_below else counted_cost(n, cap)
        stats["counted_cost"] = cost
        if cost < self.full_below and floor is None:  # a small count vector: the whole chart is cheaper
            stats.update(counted_fills=1, floor=-math.inf, count_entries=0, entries_kept=0, pruned_share=0.0)
            return (COUNTING[counting], cap, lo, hi), stats
        return None, stats

    def _solve_batch(self, batch: ProblemBatch, *, time_limit: float | None, jobs: int,
                     memory_limit: int | None = None, floor: float | None = None) -> list[Solution]:
        """The sentences :meth:`_plan` solves by one compiled call go through the compiled batch (:func:`decode` of
        the batch's arrays, on ``jobs`` threads; each one's seconds are its share), the others through
        :meth:`_prune` one at a time."""
        answers: list[Solution | None] = [None] * len(batch)
        params = np.zeros((len(batch), PARAMS), np.int64)
        direct = {}
        for k, (n, lo, hi) in enumerate(zip(batch.sizes.tolist(), batch.min_length.tolist(),
                                            batch.max_length.tolist())):
            plan, stats = self._plan(n, lo, hi, memory_limit, floor)
            if plan is None:
                answers[k] = self._prune(batch[k], stats, floor)
            elif isinstance(plan, Solution):
                plan.stats.update(stats, total_seconds=0.0)
                answers[k] = plan
            else:
                params[k] = plan
                direct[k] = stats
        for k, solution in zip(direct, decoded_answers(batch, params, jobs, list(direct))):
            stats = direct[k]
            share = solution.stats["chart_seconds"]
            solution.stats.update(stats, total_seconds=share)
            if stats["counting"] != "none":
                solution.stats["counted_seconds"] = share
            answers[k] = solution
        return answers  # type: ignore[return-value]

    def _solve(self, problem: Problem, *, time_limit: float | None, all_lengths: bool,
               memory_limit: int | None = None, floor: float | None = None) -> Solution:
        start = time.perf_counter()
        plan, stats = self._plan(problem.n, *problem.length_bounds(), memory_limit, floor)
        if plan is None:
            return self._prune(problem, stats, floor)
        if not isinstance(plan, Solution):  # one compiled call (hook-dp's or resource-dp's)
            t0 = time.perf_counter()
            heads, value, _ = decode_one(problem, *plan)
            if stats["counting"] != "none":
                stats["counted_seconds"] = time.perf_counter() - t0
            plan = proven_answer(heads, value)
        plan.stats.update(stats, total_seconds=time.perf_counter() - start)
        return plan

    def _prune(self, problem: Problem, stats: dict[str, Any], floor: float | None) -> Solution:
        """The pruned path (the module docstring): the multiplier search, the bound, the counted chart over the
        windows; ``stats`` from :meth:`_plan`."""
        start = time.perf_counter()
        seconds: dict[str, float] = {}

        def done(solution: Solution) -> Solution:
            seconds["total_seconds"] = time.perf_counter() - start
            solution.stats.update(stats, **seconds)
            return solution

        n = problem.n
        lo, hi = problem.length_bounds()
        counting, cap = stats["counting"], stats["cap"]

        def answer(chart: Chart) -> Solution:
            return answer_at(chart, best_count(chart.goal, COUNTING[counting], n, lo, hi))

        scores = ChartScores.of(problem)  # once: only the kept bonus changes from one multiplier to the next
        tried: list[tuple[float, Chart]] = []

        primal = -math.inf  # the best feasible value among the relaxed optima (inside a length range)

        def relaxed(lam: float) -> Chart:
            nonlocal primal
            chart = Chart.fill(scores, kept_bonus=lam, tie=-1)
            stats["charts"] += 1
            tried.append((lam, chart))
            if lo <= chart.kept[0] <= hi:
                primal = max(primal, float(chart.goal[0]) - lam * int(chart.kept[0]))
            return chart

        def certified(chart: Chart, lam: float) -> Solution | None:
            """The certificate's answer; None when float64 does not settle the relaxed optimum at ``lam`` (the
            counted chart then decides)."""
            heads = chart.heads(0)
            value = objective(problem, heads)
            if not trusted_certificate(n, lam, value, objective_error(problem, heads), int(chart.kept[0])):
                return None
            stats.update(certificate=True, count_entries=0, entries_kept=0, pruned_share=1.0)
            return done(Solution(Status.OPTIMAL, heads, value, bound=value))

        # -- the multiplier search ---------------------------------------------------------------------------
        t0 = time.perf_counter()
        first = relaxed(0.0)
        if first.goal[0] == -math.inf:  # no compression of any length
            stats.update(count_entries=0, entries_kept=0, pruned_share=1.0)
            return done(Solution(Status.INFEASIBLE, bound=-math.inf))
        k0 = int(first.kept[0])
        if lo <= k0 <= hi:
            return certified(first, 0.0)  # no bonus, nothing for it to round
        upward = k0 < lo
        target = lo if upward else hi
        sign = 1.0 if upward else -1.0

        def end_of(lam: float, chart: Chart) -> End:
            k = int(chart.kept[0])
            return End(lam, k, float(chart.goal[0]) - lam * k)

        near = end_of(0.0, first)
        far = None
        finite = [s[np.isfinite(s)] for s in (problem.arc_scores, problem.bigram_scores, problem.token_scores)]
        step = max([float(np.median(np.abs(f))) for f in finite if f.size] + [1e-3]) or 1.0
        far_lambda = reach(problem)
        while stats["charts"] < self.max_charts:
            lam = sign * min(step, far_lambda)
            chart = relaxed(lam)
            end = end_of(lam, chart)
            if end.kept == target:
                found = certified(chart, lam)
                if found is not None:
                    return found
                break  # a certificate float64 cannot settle: no bracket; the counted chart decides (its windows'
                # tolerance, 1e-9 (1 + B + |lambda| n), is far above that rounding)
            if (end.kept > target) == upward:
                far = end
                break
            near = end
            if step >= far_lambda:
                break
            step *= 4.0
        bracket = None if far is None else Bracket(target, near, far)
        while bracket is not None and stats["charts"] < self.max_charts:
            lam = bracket.crossing()
            if lam is None:
                break
            chart = relaxed(lam)
            end = end_of(lam, chart)
            if end.kept == target:
                found = certified(chart, lam)
                if found is not None:
                    return found
                break
            on_lines = bracket.on_lines(float(chart.goal[0]), lam)
            bracket.narrow(end)
            if on_lines:  # the ends are adjacent vertices of the hull: lam is the dual's minimum
                break
        seconds["search_seconds"] = time.perf_counter() - t0

        # -- the bound -------------------------------------------------------------------------------------------
        t0 = time.perf_counter()

        def bound_of(item: tuple[float, Chart]) -> float:
            lam, chart = item
            return dual(float(chart.goal[0]), lam, lo, hi)

        ranked = sorted(tried, key=bound_of)
        best_dual = bound_of(ranked[0])
        outer = ranked[:max(1, self.outside_passes)]
        lams = np.array([lam for lam, _ in ranked])  # the outside passes' multipliers first (_windows' pre-test)
        inside = np.stack([chart._cells.V[..., 0] for _, chart in ranked])
        mus = np.array([lam for lam, _ in outer])
        outside = np.stack([chart.best_outside()[..., 0] for _, chart in outer])
        stats["outside_passes"] = len(outer)
        scale = score_bound(problem) + float(np.abs(lams).max()) * n
        tol = 1e-9 * (1.0 + scale)
        guessed = floor is None
        gap = self.guess * (abs(ranked[0][0]) or step)  # the guess's distance below the dual bound
        if guessed:  # half a multiplier below the dual bound, or a feasible value seen (see the module docstring)
            floor = max(best_dual - gap, primal)
        stats.update(lambdas=[float(v) for v in lams], dual_bound=best_dual)
        seconds["bound_seconds"] = time.perf_counter() - t0

        # -- the counted chart over the windows ------------------------------------------------------------------
        t0 = time.perf_counter()
        N = n + 1
        safe = guessed and primal >= floor  # the floor is a real solution's value (<= OPT): one fill is exact
        while True:
            window = np.zeros((ITEMS, N, N, 2))
            window[..., 0] = 1  # empty unless _windows opens it
            bound = np.empty((len(mus), ITEMS, N, N))
            slope = np.empty(len(mus))
            total, kept = _windows(inside, lams, outside, mus, KEPT if counting == "kept" else DROPPED, cap,
                                   lo, hi, floor - tol, window, bound, slope)
            chart = Chart.fill(scores, counting=counting, cap=cap, tie=-1,
                               pruning=Pruning(window, bound, slope, floor - tol))
            stats["counted_fills"] += 1
            value = float(chart.goal[best_count(chart.goal, COUNTING[counting], n, lo, hi)])
            if value >= floor or safe or floor == -math.inf:  # (safe: v < F only by the rounding tol absorbs)
                break
            if value > -math.inf or primal > -math.inf:  # a real solution's value: safe
                floor, safe = max(value, primal), True
            elif guessed and stats["counted_fills"] < 4:  # nothing: guess lower (a fill that finds nothing is cheap)
                gap *= 4.0
                floor = best_dual - gap
            else:
                floor = -math.inf
        seconds["counted_seconds"] = time.perf_counter() - t0
        left = _entries_left(window)
        stats.update(floor=float(floor), count_entries=int(total), entries_in_windows=int(kept),
                     entries_kept=left, pruned_share=1.0 - left / total if total else 1.0)
        return done(answer(chart))
