"""``hook-dp``, ``resource-dp``, ``bisection`` and ``bisection-exact``: solvers over the one compressive chart."""

from __future__ import annotations

import math
import time
from typing import Any, Callable, Generator, NamedTuple

import numpy as np

from compbench import Capabilities, Problem, ProblemBatch, Solution, Status, objective
from compbench.evaluate import objective_error
from compbench.limits import memory_budget
from compbench.solver import POSITIVE_INT, POSITIVE_NUMBER, Option

from ..memory import refuse_if_too_big
from .base import ChartSolver, answer_at, count_plan, decoded_answers, proven_answer
from .batch import PARAMS, best_count, decode, decode_one
from .chart import COUNTING, MAX_N, Chart, ChartScores, chart_bytes
from .lagrangian import Bracket, End, bonus_rounding, dual, reach, trusted_certificate
from .pruned import PrunedDP

COUNTING_NAMES = {code: name for name, code in COUNTING.items()}


def _timed_fill(problem: Problem | ChartScores, **options: Any) -> tuple[Chart, float]:
    start = time.perf_counter()
    chart = Chart.fill(problem, **options)
    return chart, time.perf_counter() - start


class HookDP(ChartSolver):
    """Free-length compression by the hook-trick chart in the max semiring: O(n^3) time, O(n^2) memory.

    >>> import compbench
    >>> p = compbench.generate("gaussian", n=8, seed=0, length=None)
    >>> compbench.get_solver("hook-dp").solve(p).status.value
    'optimal'
    """

    name = "hook-dp"
    description = "Eisner's algorithm with the hook trick (deleted words skipped by right triangles), free length"
    exact = True
    complexity = "O(n^3) time, O(n^2) memory"
    supports = Capabilities(lengths=frozenset({"free"}), second_order=True, max_n=MAX_N)
    accepted_options: dict[str, Option] = {}
    kernels = ("decode",)

    def _solve(self, problem: Problem, *, time_limit: float | None, all_lengths: bool) -> Solution:
        start = time.perf_counter()
        heads, value, _ = decode_one(problem)
        solution = proven_answer(heads, value)
        solution.stats["chart_seconds"] = time.perf_counter() - start
        return solution

    def _solve_batch(self, batch: ProblemBatch, *, time_limit: float | None, jobs: int) -> list[Solution]:
        return decoded_answers(batch, np.zeros((len(batch), PARAMS), np.int64), jobs)


class ResourceDP(ChartSolver):
    """Exact and ranged lengths by the hook-trick chart in the resource-constrained max semiring.

    Item values are vectors over the number of kept (or dropped) words, whichever is capped lower, so the time is
    O(n^3 d^2) and the memory O(n^2 d) with d = min(m, n - m) (ranges: the upper end).  ``all_lengths=True``
    counts kept words up to n and returns the optimum for every length (``by_length``).  The chart is refused
    (status ``unsupported``) when it would need more than ``memory_limit`` bytes (default: a quarter of the
    memory available at construction).  The compiled fill cannot be interrupted: ``time_limit`` is not enforced.

    >>> import compbench
    >>> p = compbench.generate("gaussian", n=8, seed=0, length=3)
    >>> s = compbench.get_solver("resource-dp").solve(p, all_lengths=True)
    >>> s.status.value, len(s.kept), len(s.by_length)
    ('optimal', 3, 9)
    """

    name = "resource-dp"
    description = "hook-trick chart in the resource-constrained max semiring (counts kept or dropped words)"
    exact = True
    complexity = "O(n^3 d^2) time, O(n^2 d) memory, d = min(m, n - m)"
    supports = Capabilities(all_lengths=True, second_order=True, max_n=MAX_N)
    accepted_options = {"memory_limit": POSITIVE_NUMBER}  # bytes
    kernels = ("decode",)  # all_lengths: ("chart",)

    def __init__(self, memory_limit: int | None = None):
        self.memory_limit = memory_budget(memory_limit)

    def _solve(self, problem: Problem, *, time_limit: float | None, all_lengths: bool,
               memory_limit: int | None = None) -> Solution:
        n = problem.n
        lo, hi = problem.length_bounds()
        counting, cap = ("kept", n) if all_lengths else count_plan(n, lo, hi)
        refused = refuse_if_too_big(self.name, n, chart_bytes(n, cap),
                                    self.memory_limit if memory_limit is None else memory_limit)
        if refused is not None:
            return refused
        if not all_lengths:
            start = time.perf_counter()
            heads, value, _ = decode_one(problem, COUNTING[counting], cap, lo, hi)
            solution = proven_answer(heads, value)
            solution.stats.update(counting=counting, cap=cap, chart_seconds=time.perf_counter() - start,
                                  chart_mib=chart_bytes(n, cap) / 2**20)
            return solution
        chart, seconds = _timed_fill(problem, counting=counting, cap=cap, tie=-1)  # kept words counted up to n
        solution = answer_at(chart, best_count(chart.goal, COUNTING[counting], n, lo, hi))
        solution.by_length = [answer_at(chart, m) for m in range(n + 1)]
        solution.stats.update(counting=counting, cap=cap, chart_seconds=seconds,
                              chart_mib=chart_bytes(n, cap) / 2**20)
        return solution

    def _solve_batch(self, batch: ProblemBatch, *, time_limit: float | None, jobs: int,
                     memory_limit: int | None = None) -> list[Solution]:
        limit = self.memory_limit if memory_limit is None else memory_limit
        answers: list[Solution | None] = [None] * len(batch)
        params = np.zeros((len(batch), PARAMS), np.int64)
        names = []
        for k, (n, lo, hi) in enumerate(zip(batch.sizes.tolist(), batch.min_length.tolist(),
                                            batch.max_length.tolist())):
            counting, cap = count_plan(n, lo, hi)
            names.append(counting)
            answers[k] = refuse_if_too_big(self.name, n, chart_bytes(n, cap), limit)
            params[k] = COUNTING[counting], cap, lo, hi
        which = [k for k, answer in enumerate(answers) if answer is None]
        for k, solution in zip(which, decoded_answers(batch, params, jobs, which)):
            cap = int(params[k, 1])
            solution.stats.update(counting=names[k], cap=cap, chart_mib=chart_bytes(int(batch.sizes[k]), cap) / 2**20)
            answers[k] = solution
        return answers  # type: ignore[return-value]


class Relaxed(NamedTuple):
    """The optimum of a relaxed (free-length) chart at a kept bonus lambda: its value (lambda per kept word
    included), kept words and heads, and the seconds the chart took."""

    value: float
    kept: int
    heads: np.ndarray
    seconds: float


class Bisection(ChartSolver):
    """Lagrangian relaxation of the length: add lambda to every kept word, solve ``hook-dp``, bisect on lambda.

    The relaxation, its dual and the bracket are :mod:`.lagrangian`'s.  The bracket opens at lambda = 0 and
    +-(2B + 1) (:func:`.lagrangian.reach`), which also proves infeasibility when even the far end misses the length.
    A range lo..hi is targeted at lo from below (lambda > 0) or hi from above (lambda < 0); lambda = 0 certifies any
    count inside.  At each lambda the chart breaks ties towards fewer kept words, then, when that count is below
    the target, towards more words; a count equal to the target is a certificate (status ``optimal``, ``bound`` =
    the dual value = the objective).

    Each step tries the lambda where the two bracket ends' lines cross before it bisects (a midpoint step follows
    any crossing step that does not halve the bracket).  The search stops at a duality gap: the relaxed optimum at
    a crossing lies on the lines (:meth:`.lagrangian.Bracket.on_lines`), or a target lies strictly between the two
    tie-broken counts at one lambda.  Otherwise it stops when the bracket is
    narrower than the score resolution (the rounding error of a sum of the scores), after ``max_iterations``, or
    at the time limit (``timeout``), and answers ``feasible`` without a solution, with the best dual bound.
    ``stats``: iterations (lambdas tried), charts filled, certificate, final lambda.

    >>> import compbench
    >>> p = compbench.generate("gaussian", n=8, seed=0, length=3)
    >>> s = compbench.get_solver("bisection").solve(p)
    >>> s.status.value in ("optimal", "feasible"), s.stats["certificate"] == (s.status.value == "optimal")
    (True, True)
    """

    name = "bisection"
    description = "Lagrangian relaxation of the length, bisection on the multiplier over hook-dp (certified or bound)"
    exact = False
    complexity = "O(n^3) per iteration, O(log(B / resolution)) iterations"
    supports = Capabilities(second_order=True, max_n=MAX_N)
    accepted_options = {"max_iterations": POSITIVE_INT}
    kernels = ("decode",)

    def __init__(self, max_iterations: int = 200):
        self.max_iterations = int(max_iterations)

    def _solve(self, problem: Problem, *, time_limit: float | None, all_lengths: bool,
               max_iterations: int | None = None) -> Solution:
        start = time.perf_counter()
        search = self._search(problem, time_limit, max_iterations, lambda: time.perf_counter() - start)
        request = next(search)
        while True:
            t0 = time.perf_counter()
            heads, value, kept = decode_one(problem, tie=request[1], kept_bonus=request[0])
            try:
                request = search.send(Relaxed(value, kept, heads, time.perf_counter() - t0))
            except StopIteration as stop:
                return stop.value

    def _solve_batch(self, batch: ProblemBatch, *, time_limit: float | None, jobs: int,
                     max_iterations: int | None = None) -> list[Solution]:
        """Every sentence's search in rounds: each round decodes the charts the searches ask for in one compiled
        batch per tie-break (:func:`decode` of the batch's arrays, on ``jobs`` threads), so the per-chart Python is
        paid once per round.  A sentence's time is its share of the rounds it took part in; the searches read the
        sentence's scores (the score bound, the certificate's objective) as a :class:`Problem` (``batch[k]``)."""
        K = len(batch)
        spent = np.zeros(K)
        searches = [self._search(batch[k], time_limit, max_iterations, lambda k=k: float(spent[k])) for k in range(K)]
        requests = {k: next(search) for k, search in enumerate(searches)}
        answers: list[Solution | None] = [None] * K
        free = np.zeros((K, PARAMS), np.int64)  # every chart free: no counts
        sizes = batch.sizes.tolist()
        while requests:
            for tie in (-1, 1):
                which = [k for k, (_, t) in requests.items() if t == tie]
                if not which:
                    continue
                bonus = np.zeros(K)
                bonus[which] = [requests[k][0] for k in which]
                t0 = time.perf_counter()
                heads, out = decode(batch, free, bonus, tie, jobs, np.array(which, np.int64))
                share = (time.perf_counter() - t0) / len(which)
                for k in which:
                    spent[k] += share
                    try:
                        requests[k] = searches[k].send(Relaxed(float(out[k, 1]), int(out[k, 2]),
                                                               heads[k, :sizes[k] + 1], share))
                    except StopIteration as stop:
                        answers[k] = stop.value
                        del requests[k]
        return answers  # type: ignore[return-value]

    def _search(self, problem: Problem, time_limit: float | None, max_iterations: int | None,
                elapsed: Callable[[], float]) -> Generator[tuple[float, int], Relaxed, Solution]:
        """The search for one problem: yields each chart it needs as (lambda, tie), is sent the :class:`Relaxed`
        optimum, returns the answer; ``elapsed()``: the seconds this problem has taken (the time limit's clock)."""
        limit = self.max_iterations if max_iterations is None else int(max_iterations)
        n = problem.n
        lo, hi = problem.length_bounds()
        stats: dict[str, Any] = {"iterations": 0, "charts": 0, "certificate": False}
        chart_seconds = 0.0

        def relaxed(lam: float, tie: int) -> Generator[tuple[float, int], Relaxed, Relaxed]:
            nonlocal chart_seconds
            chart = yield lam, tie
            chart_seconds += chart.seconds
            stats["charts"] += 1
            return chart

        def finish(solution: Solution, lam: float) -> Solution:
            stats.update(final_lambda=lam, chart_seconds=chart_seconds)
            solution.stats.update(stats)
            return solution

        def certified(chart: Relaxed, lam: float) -> Solution:
            value = objective(problem, chart.heads)
            if not trusted_certificate(n, lam, value, objective_error(problem, chart.heads), chart.kept):
                return finish(Solution(Status.FEASIBLE, chart.heads, value, bound=value + bonus_rounding(n, lam),
                                       message=f"{self.name}: no certificate: at lambda = {lam!r} float64 decides "
                                               f"the relaxed optimum only to {bonus_rounding(n, lam):.2g}"), lam)
            stats["certificate"] = True
            return finish(Solution(Status.OPTIMAL, chart.heads, value, bound=value), lam)

        # lambda = 0: the unconstrained optimum, with the fewest and the most kept words among its ties
        fewest = yield from relaxed(0.0, -1)
        stats["iterations"] = 1
        if fewest.value == -math.inf:  # no compression of any length
            return finish(Solution(Status.INFEASIBLE, bound=-math.inf), 0.0)
        if lo <= fewest.kept <= hi:
            return certified(fewest, 0.0)
        upward = fewest.kept < lo  # too few words at lambda = 0: raise lambda towards lo, else lower it to hi
        target = lo if upward else hi
        near = fewest
        if upward:
            near = yield from relaxed(0.0, +1)
            if lo <= near.kept <= hi:
                return certified(near, 0.0)
        bound = fewest.value  # the dual at lambda = 0
        if upward and near.kept > hi:  # the tie-broken counts at lambda = 0 jump over the whole range: a duality gap
            return finish(Solution(Status.FEASIBLE, bound=bound, message=(
                f"{self.name}: no certificate: lambda = 0 is a breakpoint that jumps over the length")), 0.0)
        far_lambda = reach(problem) if upward else -reach(problem)
        resolution = 8.0 * (4 * n + 2) * np.finfo(float).eps * max(abs(far_lambda), 1.0)
        far = yield from relaxed(far_lambda, +1 if upward else -1)  # the most (fewest) words any solution keeps
        stats["iterations"] += 1
        if (upward and far.kept < lo) or (not upward and far.kept > hi):  # no solution reaches the length
            return finish(Solution(Status.INFEASIBLE, bound=-math.inf), far_lambda)
        if far.kept == target:
            return certified(far, far_lambda)
        bound = min(bound, dual(far.value, far_lambda, lo, hi))
        bracket = Bracket(target, End(0.0, near.kept, near.value),
                          End(far_lambda, far.kept, far.value - far_lambda * far.kept))
        reason = "bracket narrower than the score resolution"
        lam, midpoint_next = 0.0, False
        while bracket.width >= resolution:
            if stats["iterations"] >= limit:
                reason = f"iteration limit {limit}"
                break
            if time_limit is not None and elapsed() > time_limit:
                return finish(Solution(Status.TIMEOUT, bound=bound, message=(
                    f"{self.name}: time limit after {stats['iterations']} iterations, no certificate")), lam)
            width = bracket.width
            crossing = None if midpoint_next else bracket.crossing()
            lam = 0.5 * (bracket.below.lam + bracket.above.lam) if crossing is None else crossing
            stats["iterations"] += 1
            chart = yield from relaxed(lam, -1)
            bound = min(bound, dual(chart.value, lam, lo, hi))
            if chart.kept == target:
                return certified(chart, lam)
            on_lines = crossing is not None and bracket.on_lines(chart.value, lam)
            jumps_over = False  # the tie-broken counts at lambda lie on both sides of the target
            if chart.kept < target:
                chart = yield from relaxed(lam, +1)
                if chart.kept == target:
                    return certified(chart, lam)
                jumps_over = chart.kept > target
            if jumps_over or on_lines:  # a duality gap
                reason = f"lambda = {lam!r} is a breakpoint that jumps over the length (a duality gap)"
                break
            bracket.narrow(End(lam, chart.kept, chart.value - lam * chart.kept))
            midpoint_next = crossing is not None and bracket.width > 0.5 * width
        return finish(Solution(Status.FEASIBLE, bound=bound, message=(
            f"{self.name}: no certificate after {stats['iterations']} iterations ({reason})")), lam)


class BisectionExact(ChartSolver):
    """``bisection`` first; when it finds no certificate, ``pruned-dp`` (always a proven answer).

    >>> import compbench
    >>> p = compbench.generate("integer-ties", n=8, seed=0, length=3)
    >>> compbench.get_solver("bisection-exact").solve(p).status.value
    'optimal'
    """

    name = "bisection-exact"
    description = "bisection, falling back to pruned-dp when the Lagrangian relaxation gives no certificate"
    exact = True
    complexity = "O(n^3 log(B / resolution)), else O(n^3 d^2)"
    supports = Capabilities(second_order=True, max_n=MAX_N)
    accepted_options = Bisection.accepted_options  # passed on to bisection

    def __init__(self, max_iterations: int = 200, memory_limit: int | None = None):
        self.bisection = Bisection(max_iterations)
        self.resource = PrunedDP(memory_limit)

    def _solve(self, problem: Problem, *, time_limit: float | None, all_lengths: bool, **options: Any) -> Solution:
        first = self.bisection.solve(problem, time_limit, **options)
        return self._combine([first], lambda rest: [self.resource.solve(problem)])[0]

    def _solve_batch(self, batch: ProblemBatch, *, time_limit: float | None, jobs: int,
                     **options: Any) -> list[Solution]:
        """``bisection``'s batch, then ``pruned-dp``'s batch for the sentences it left without a certificate."""
        answers = self.bisection.solve_many(batch, time_limit=time_limit, jobs=jobs, **options)
        return self._combine(answers, lambda rest: self.resource.solve_many(batch.take(rest), jobs=jobs))

    @staticmethod
    def _combine(answers: list[Solution], exact: Callable[[list[int]], list[Solution]]) -> list[Solution]:
        """``bisection``'s answers, those without a certificate replaced by ``exact(their positions)``."""
        rest = [k for k, first in enumerate(answers) if first.status not in (Status.OPTIMAL, Status.INFEASIBLE)]
        for k, answer in zip(rest, exact(rest) if rest else []):
            answer.stats.update({f"bisection_{key}": v for key, v in answers[k].stats.items() if key != "batch"},
                                certificate=False, fallback=True)
            answers[k] = answer
        for answer in answers:
            answer.stats.setdefault("fallback", False)
            answer.stats.pop("batch", None)  # a part's batch (solve_many records this solver's own)
            answer.seconds.clear()  # this solver's seconds (solve and solve_many fill them), not a part's
        return answers
