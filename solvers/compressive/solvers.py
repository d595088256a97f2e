"""``hook-dp``, ``resource-dp``, ``bisection`` and ``bisection-exact``: solvers over the one compressive chart."""

from __future__ import annotations

import math
import time
from typing import Any, Callable, Generator, Iterable, NamedTuple

import numpy as np

from compbench import Capabilities, Problem, Solution, Solver, Status, objective
from compbench.limits import memory_budget

from ..memory import refuse_if_too_big
from .batch import PARAMS, Packed, _decode_many, decode_many, decode_one
from .chart import COUNTING, MAX_N, Chart, ChartScores, _backtrace, _fill, announce_compile, chart_bytes

COUNTING_NAMES = {code: name for name, code in COUNTING.items()}


def _solution_at(chart: Chart, index: int) -> Solution:
    """The chart's best derivation at count ``index`` as a proven answer (``infeasible`` when there is none)."""
    value = float(chart.goal[index])
    if value == -math.inf:
        return Solution(Status.INFEASIBLE, bound=-math.inf)
    return Solution(Status.OPTIMAL, chart.heads(index), value, bound=value)


def _timed_fill(problem: Problem | ChartScores, **options: Any) -> tuple[Chart, float]:
    start = time.perf_counter()
    chart = Chart.fill(problem, **options)
    return chart, time.perf_counter() - start


_loaded: set[str] = set()


def load_kernels(kernels: tuple[str, ...] = ("decode", "chart")) -> float:
    """Compile (or load from numba's cache) the chart's kernels once per process: "decode" (:func:`decode_one`, the
    one compiled call per solve of ``hook-dp`` and ``resource-dp`` and per multiplier of ``bisection``) and "chart"
    (:meth:`Chart.fill` and its backtrace, called from Python by ``pruned-dp`` and by ``resource-dp``'s
    ``all_lengths``), first and second order; the seconds it took.  Each is a library of its own to load
    (about 0.03 s warm), so a solver loads only those it calls."""
    wanted = [kernel for kernel in kernels if kernel not in _loaded]
    if not wanted:
        return 0.0
    start = time.perf_counter()
    announce_compile((_fill, _backtrace, _decode_many), "the hook-trick chart kernels", "20 s")
    tiny = Problem(np.zeros(1), np.zeros((2, 2)), np.zeros((3, 3)))
    for problem in (tiny, tiny.replace(sibling_scores=np.zeros((2, 2, 2)))):
        if "decode" in wanted:
            decode_one(problem, COUNTING["kept"], 1, 0, 1)
        if "chart" in wanted:
            Chart.fill(problem, counting="kept", cap=1).heads(0)
    _loaded.update(wanted)
    return time.perf_counter() - start


class ChartSolver(Solver):
    """Base of the chart's solvers: loading the compiled kernels they call (``kernels``, see :func:`load_kernels`)
    counts as set-up time."""

    kernels: tuple[str, ...] = ("decode", "chart")

    def solve(self, problem: Problem, time_limit: float | None = None, *, all_lengths: bool = False,
              **options: Any) -> Solution:
        setup = load_kernels(("chart",) if all_lengths else self.kernels)
        solution = super().solve(problem, None if time_limit is None else max(0.0, time_limit - setup),
                                 all_lengths=all_lengths, **options)
        solution.seconds["setup"] = solution.seconds.get("setup", 0.0) + setup
        solution.seconds["total"] = solution.seconds.get("total", 0.0) + setup
        return solution

    def solve_many(self, problems: Iterable[Problem], *, time_limit: float | None = None, jobs: int | None = None,
                   **options: Any) -> list[Solution]:
        setup = load_kernels(self.kernels)
        if type(self)._solve_batch is not Solver._solve_batch:
            announce_compile((_decode_many,), "the chart's batch kernel", "5 s")
        solutions = super().solve_many(problems, time_limit=time_limit, jobs=jobs, **options)
        if solutions and setup:
            solutions[0].seconds["setup"] = solutions[0].seconds.get("setup", 0.0) + setup
        return solutions


def _answer(heads: np.ndarray, value: float) -> Solution:
    """A best derivation as a proven answer, ``infeasible`` when there is none (value -inf)."""
    if value == -math.inf:
        return Solution(Status.INFEASIBLE, bound=-math.inf)
    return Solution(Status.OPTIMAL, heads, value, bound=value)


def _decoded(problems: list[Problem], params: list[tuple[int, ...]], jobs: int) -> list[Solution]:
    """A batch's best derivations (:func:`decode_many`; ``params``: counting, cap, lo, hi per problem) as proven
    answers."""
    start = time.perf_counter()
    rows = np.array([(0, *row) for row in params], np.int64).reshape(-1, PARAMS)
    heads, offsets, out = decode_many(problems, rows, jobs=jobs)
    share = (time.perf_counter() - start) / max(1, len(problems))
    solutions = []
    ends = offsets[:, 3].tolist()
    for k, value in enumerate(out[:, 1].tolist()):
        solution = _answer(heads[ends[k]:ends[k + 1]], value)
        solution.stats["chart_seconds"] = share
        solutions.append(solution)
    return solutions


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
    kernels = ("decode",)

    def _solve(self, problem: Problem, *, time_limit: float | None, all_lengths: bool, **options: Any) -> Solution:
        if options:
            raise TypeError(f"unknown options: {', '.join(options)}")
        start = time.perf_counter()
        heads, value, _ = decode_one(problem)
        solution = _answer(heads, value)
        solution.stats["chart_seconds"] = time.perf_counter() - start
        return solution

    def _solve_batch(self, problems: list[Problem], *, time_limit: float | None, jobs: int,
                     **options: Any) -> list[Solution]:
        if options:
            raise TypeError(f"unknown options: {', '.join(options)}")
        return _decoded(problems, [(0, 0, 0, 0)] * len(problems), jobs)


def count_plan(n: int, lo: int, hi: int) -> tuple[str, int]:
    """What the resource chart counts, and up to which cap, for lo <= |K| <= hi: the cheaper of kept (cap hi)
    and dropped (cap n - lo) words; nothing when every length is allowed.

    >>> count_plan(25, 11, 11), count_plan(25, 20, 20), count_plan(25, 0, 25)
    (('kept', 11), ('dropped', 5), ('none', 0))
    """
    if lo == 0 and hi == n:
        return "none", 0
    return ("kept", hi) if hi <= n - lo else ("dropped", n - lo)


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
    kernels = ("decode",)  # all_lengths: ("chart",)

    def __init__(self, memory_limit: int | None = None):
        self.memory_limit = memory_budget(memory_limit)

    def _solve(self, problem: Problem, *, time_limit: float | None, all_lengths: bool,
               memory_limit: int | None = None, **options: Any) -> Solution:
        if options:
            raise TypeError(f"unknown options: {', '.join(options)}")
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
            solution = _answer(heads, value)
            solution.stats.update(counting=counting, cap=cap, chart_seconds=time.perf_counter() - start,
                                  chart_mib=chart_bytes(n, cap) / 2**20)
            return solution
        chart, seconds = _timed_fill(problem, counting=counting, cap=cap, tie=-1)

        def index(m: int) -> int:  # the chart's count for m kept words
            return m if counting == "kept" else n - m

        if counting == "none":
            solution = _solution_at(chart, 0)
        else:  # the best allowed length; the fewest kept words among equal optima
            best = max(range(lo, hi + 1), key=lambda m: (chart.goal[index(m)], -m))
            solution = _solution_at(chart, index(best))
        if all_lengths:
            solution.by_length = [_solution_at(chart, m) for m in range(n + 1)]
        solution.stats.update(counting=counting, cap=cap, chart_seconds=seconds,
                              chart_mib=chart_bytes(n, cap) / 2**20)
        return solution

    def _solve_batch(self, problems: list[Problem], *, time_limit: float | None, jobs: int,
                     memory_limit: int | None = None, **options: Any) -> list[Solution]:
        if options:
            raise TypeError(f"unknown options: {', '.join(options)}")
        limit = self.memory_limit if memory_limit is None else memory_limit
        answers: list[Solution | None] = [None] * len(problems)
        plans = []
        for k, problem in enumerate(problems):
            n = problem.n
            lo, hi = problem.length_bounds()
            counting, cap = count_plan(n, lo, hi)
            answers[k] = refuse_if_too_big(self.name, n, chart_bytes(n, cap), limit)
            if answers[k] is None:
                plans.append((k, (COUNTING[counting], cap, lo, hi)))
        if plans:
            index = [k for k, _ in plans]
            for (k, (code, cap, _, _)), solution in zip(plans, _decoded([problems[k] for k in index],
                                                                        [plan for _, plan in plans], jobs)):
                solution.stats.update(counting=COUNTING_NAMES[code], cap=cap,
                                      chart_mib=chart_bytes(problems[k].n, cap) / 2**20)
                answers[k] = solution
        return answers  # type: ignore[return-value]


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


class Relaxed(NamedTuple):
    """The optimum of a relaxed (free-length) chart at a kept bonus lambda: its value (lambda per kept word
    included), kept words and heads, and the seconds the chart took."""

    value: float
    kept: int
    heads: np.ndarray
    seconds: float


class Bisection(ChartSolver):
    """Lagrangian relaxation of the length: add lambda to every kept word, solve ``hook-dp``, bisect on lambda.

    The kept count of the relaxed optimum grows with lambda.  The bracket comes from the scores: every objective
    lies in [-B, B] (:func:`score_bound`), so beyond |lambda| = 2B + 1 the relaxed optimum keeps the most (or
    fewest) words any solution can, which also proves infeasibility when even that misses the length.  A range
    lo..hi is targeted at lo from below (lambda > 0) or hi from above (lambda < 0); lambda = 0 certifies any
    count inside.  At each lambda the chart breaks ties towards fewer kept words, then, when that count is below
    the target, towards more words; a count equal to the target is a certificate (status ``optimal``, ``bound`` =
    the dual value = the objective).

    Each step tries the lambda where the two bracket ends' lines f + lambda (|K| - m) cross before it bisects
    (a midpoint step follows any crossing step that does not halve the bracket).  At the crossing the relaxed
    optimum either finds a new vertex of the concave hull of the optimum-per-length curve (the bracket shrinks),
    or equals the lines' value: then the ends are adjacent hull vertices, the target lies strictly between them
    (a duality gap: no lambda certifies it), and the crossing is the dual's minimum.  A target strictly between
    the two tie-broken counts at one lambda is such a gap too.  Otherwise the search stops when the bracket is
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
    kernels = ("decode",)

    def __init__(self, max_iterations: int = 200):
        self.max_iterations = int(max_iterations)

    def _solve(self, problem: Problem, *, time_limit: float | None, all_lengths: bool,
               max_iterations: int | None = None, **options: Any) -> Solution:
        if options:
            raise TypeError(f"unknown options: {', '.join(options)}")
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

    def _solve_batch(self, problems: list[Problem], *, time_limit: float | None, jobs: int,
                     max_iterations: int | None = None, **options: Any) -> list[Solution]:
        """Every problem's search in rounds: each round decodes the charts the searches ask for in one compiled
        batch per tie-break (:class:`Packed`, on ``jobs`` threads), so the per-chart Python is paid once per round.
        A problem's time is its share of the rounds it took part in."""
        if options:
            raise TypeError(f"unknown options: {', '.join(options)}")
        batch = Packed(problems)
        K = len(problems)
        spent = np.zeros(K)
        searches = [self._search(p, time_limit, max_iterations, lambda k=k: float(spent[k]))
                    for k, p in enumerate(problems)]
        requests = {k: next(search) for k, search in enumerate(searches)}
        answers: list[Solution | None] = [None] * K
        free = np.zeros((K, PARAMS), np.int64)  # every chart free: no counts
        while requests:
            for tie in (-1, 1):
                which = [k for k, (_, t) in requests.items() if t == tie]
                if not which:
                    continue
                bonus = np.zeros(K)
                bonus[which] = [requests[k][0] for k in which]
                t0 = time.perf_counter()
                heads, out = batch.decode(free, bonus, tie, jobs, np.array(which, np.int64))
                share = (time.perf_counter() - t0) / len(which)
                for k in which:
                    spent[k] += share
                    try:
                        requests[k] = searches[k].send(Relaxed(float(out[k, 1]), int(out[k, 2]),
                                                               batch.heads(heads, k), share))
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
        reach = 2.0 * score_bound(problem) + 1.0
        resolution = 8.0 * (4 * n + 2) * np.finfo(float).eps * max(reach, 1.0)
        far_lambda = reach if upward else -reach
        far = yield from relaxed(far_lambda, +1 if upward else -1)  # the most (fewest) words any solution keeps
        stats["iterations"] += 1
        if (upward and far.kept < lo) or (not upward and far.kept > hi):  # no solution reaches the length
            return finish(Solution(Status.INFEASIBLE, bound=-math.inf), far_lambda)
        if far.kept == target:
            return certified(far, far_lambda)
        bound = min(bound, far.value - far_lambda * target)
        # The bracket's ends as (lambda, kept, objective): kept(below) < target < kept(above).
        ends = [(0.0, near.kept, near.value), (far_lambda, far.kept, far.value - far_lambda * far.kept)]
        below, above = sorted(ends)
        reason = "bracket narrower than the score resolution"
        lam, midpoint_next = 0.0, False
        while above[0] - below[0] >= resolution:
            if stats["iterations"] >= limit:
                reason = f"iteration limit {limit}"
                break
            if time_limit is not None and elapsed() > time_limit:
                return finish(Solution(Status.TIMEOUT, bound=bound, message=(
                    f"{self.name}: time limit after {stats['iterations']} iterations, no certificate")), lam)
            width = above[0] - below[0]
            # where the two ends' lines f + lambda (kept - target) cross: the breakpoint if they are adjacent
            crossing = (below[2] - above[2]) / (above[1] - below[1])
            at_crossing = not midpoint_next and below[0] < crossing < above[0]
            lam = crossing if at_crossing else 0.5 * (below[0] + above[0])
            stats["iterations"] += 1
            chart = yield from relaxed(lam, -1)
            dual = chart.value - lam * target
            bound = min(bound, dual)
            if chart.kept == target:
                return certified(chart, lam)
            jumps_over = False  # the tie-broken counts at lambda lie on both sides of the target
            if chart.kept < target:
                chart = yield from relaxed(lam, +1)
                if chart.kept == target:
                    return certified(chart, lam)
                jumps_over = chart.kept > target
            # at the crossing, nothing beats both ends' lines: they are adjacent vertices of the hull of the optimum
            # per length, the target lies strictly between them, and this is the dual's minimum
            line = below[2] + lam * (below[1] - target)
            on_lines = at_crossing and dual <= line + 1e-9 * (1.0 + abs(line))
            if jumps_over or on_lines:  # a duality gap
                reason = f"lambda = {lam!r} is a breakpoint that jumps over the length (a duality gap)"
                break
            end = (lam, chart.kept, chart.value - lam * chart.kept)
            if end[1] < target:
                below = end
            else:
                above = end
            midpoint_next = at_crossing and above[0] - below[0] > 0.5 * width
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

    def __init__(self, max_iterations: int = 200, memory_limit: int | None = None):
        from .pruned import PrunedDP  # pruned.py builds on this module

        self.bisection = Bisection(max_iterations)
        self.resource = PrunedDP(memory_limit)

    def _solve(self, problem: Problem, *, time_limit: float | None, all_lengths: bool, **options: Any) -> Solution:
        return self._solve_batch([problem], time_limit=time_limit, jobs=1, **options)[0]

    def _solve_batch(self, problems: list[Problem], *, time_limit: float | None, jobs: int,
                     **options: Any) -> list[Solution]:
        """``bisection``'s batch, then ``pruned-dp``'s batch for the problems it left without a certificate."""
        answers = self.bisection.solve_many(problems, time_limit=time_limit, jobs=jobs, **options)
        rest = [k for k, first in enumerate(answers) if first.status not in (Status.OPTIMAL, Status.INFEASIBLE)]
        exact = self.resource.solve_many([problems[k] for k in rest], jobs=jobs) if rest else []
        for k, answer in zip(rest, exact):
            answer.stats.update({f"bisection_{key}": v for key, v in answers[k].stats.items()}, certificate=False,
                                fallback=True)
            answers[k] = answer
        for answer in answers:
            answer.stats.setdefault("fallback", False)
            answer.seconds.clear()  # this solver's seconds (solve and solve_many fill them), not a part's
        return answers
