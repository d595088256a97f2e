"""What the chart's solvers share: the compiled kernels loaded once (:class:`ChartSolver`), best derivations as
proven answers, and the count plan of the counted chart."""

from __future__ import annotations

import math
import time
from typing import Any, Iterable

import numpy as np

from compbench import Problem, ProblemBatch, Solution, Solver, Status
from compbench.solver import check_call, checked_problems

from .batch import _DECODE_MANY, decode, decode_one
from .chart import _DERIVES, COUNTING, FILL_MAX, FIND, ORDER_NAMES, Chart, announce_compile

_loaded: set[tuple[str, int]] = set()  # (kernels, order) loaded in this process
COMPILE_SECONDS = {1: "5-8 s", 2: "10-12 s"}  # what compiling them took: reports/performance/compile.txt


def load_kernels(kernels: tuple[str, ...] = ("decode", "chart"), orders: Iterable[int] = (1, 2)) -> float:
    """Compile (or load from numba's cache) the chart's kernels once per process: "decode" (:func:`decode_one`, the
    one compiled call per solve of ``hook-dp`` and ``resource-dp`` and per multiplier of ``bisection``) and "chart"
    (:meth:`Chart.fill` and its backtrace, called from Python by ``pruned-dp`` and by ``resource-dp``'s
    ``all_lengths``), for first- and/or second-order problems (``orders``: each order's kernels are compiled apart);
    the seconds it took.  Each is a library of its own to load (about 0.03 s warm), so a solver loads only those it
    calls."""
    wanted = [(kernel, order) for kernel in kernels for order in orders if (kernel, order) not in _loaded]
    if not wanted:
        return 0.0
    start = time.perf_counter()
    for order in sorted({order for _, order in wanted}):
        announce_compile((_DERIVES[FILL_MAX, order], _DERIVES[FIND, order], _DECODE_MANY[order]),
                         f"the hook-trick chart's {ORDER_NAMES[order]} max fill and backtrace", COMPILE_SECONDS[order])
    tiny = Problem(np.zeros(1), np.zeros((2, 2)), np.zeros((3, 3)))
    for kernel, order in wanted:
        problem = tiny if order == 1 else tiny.replace(sibling_scores=np.zeros((2, 2, 2)))
        if kernel == "decode":
            decode_one(problem, COUNTING["kept"], 1, 0, 1)
        else:
            Chart.fill(problem, counting="kept", cap=1).heads(0)
    _loaded.update(wanted)
    return time.perf_counter() - start


def orders_of(problems: Iterable[Problem] | ProblemBatch) -> set[int]:
    """The orders (1, 2) among ``problems``."""
    problems = [problems] if isinstance(problems, ProblemBatch) else problems
    return {2 if problem.second_order else 1 for problem in problems}


class ChartSolver(Solver):
    """Base of the chart's solvers: loading the compiled kernels they call (``kernels``, see :func:`load_kernels`)
    counts as set-up time."""

    kernels: tuple[str, ...] = ("decode", "chart")
    implementation = "compressive chart"  # chart.py's rules and kernels: one opinion however a solver drives them

    def solve(self, problem: Problem, time_limit: float | None = None, *, all_lengths: bool = False,
              **options: Any) -> Solution:
        check_call(problem, time_limit)
        setup = load_kernels(("chart",) if all_lengths else self.kernels, orders_of([problem]))
        solution = super().solve(problem, None if time_limit is None else max(0.0, time_limit - setup),
                                 all_lengths=all_lengths, **options)
        solution.seconds["setup"] = solution.seconds.get("setup", 0.0) + setup
        solution.seconds["total"] = solution.seconds.get("total", 0.0) + setup
        return solution

    def solve_many(self, problems: Iterable[Problem] | ProblemBatch, *, time_limit: float | None = None,
                   jobs: int | None = None, **options: Any) -> list[Solution]:
        problems = checked_problems(problems, time_limit)
        setup = load_kernels(self.kernels, orders_of(problems))  # the batch path's compiled call is decode_one's
        solutions = super().solve_many(problems, time_limit=time_limit, jobs=jobs, **options)
        if solutions and setup:  # the kernels' loading, on the first answer: its set-up and so its total
            for key in ("setup", "total"):
                solutions[0].seconds[key] = solutions[0].seconds.get(key, 0.0) + setup
        return solutions


def proven_answer(heads: np.ndarray, value: float) -> Solution:
    """A best derivation as a proven answer, ``infeasible`` when there is none (value -inf)."""
    if value == -math.inf:
        return Solution(Status.INFEASIBLE, bound=-math.inf)
    return Solution(Status.OPTIMAL, heads, value, bound=value)


def answer_at(chart: Chart, index: int) -> Solution:
    """The chart's best derivation at count ``index`` as a proven answer (``infeasible`` when there is none)."""
    value = float(chart.goal[index])
    if value == -math.inf:
        return Solution(Status.INFEASIBLE, bound=-math.inf)
    return Solution(Status.OPTIMAL, chart.heads(index), value, bound=value)


def decoded_answers(batch: ProblemBatch, params: np.ndarray, jobs: int,
                    which: list[int] | None = None) -> list[Solution]:
    """The best derivations of a batch's sentences ``which`` lists (None: all) as proven answers, in that order
    (:func:`decode`; ``params``: counting, cap, lo, hi per sentence of the batch), each part's built as soon as it
    is decoded."""
    start = time.perf_counter()
    answers: list[Solution | None] = [None] * len(batch)
    sizes = batch.sizes

    def answer(part: np.ndarray, heads: np.ndarray, out: np.ndarray) -> None:
        for k, n, value in zip(part.tolist(), sizes[part].tolist(), out[part, 1].tolist()):
            answers[k] = proven_answer(heads[k, :n + 1], value)

    decode(batch, params, jobs=jobs, which=which, each=answer)
    solutions = answers if which is None else [answers[k] for k in which]
    share = (time.perf_counter() - start) / max(1, len(solutions))
    for solution in solutions:
        solution.stats["chart_seconds"] = share
    return solutions  # type: ignore[return-value]


def count_plan(n: int, lo: int, hi: int) -> tuple[str, int]:
    """What the resource chart counts, and up to which cap, for lo <= |K| <= hi: the cheaper of kept (cap hi)
    and dropped (cap n - lo) words; nothing when every length is allowed.

    >>> count_plan(25, 11, 11), count_plan(25, 20, 20), count_plan(25, 0, 25)
    (('kept', 11), ('dropped', 5), ('none', 0))
    """
    if lo == 0 and hi == n:
        return "none", 0
    return ("kept", hi) if hi <= n - lo else ("dropped", n - lo)
