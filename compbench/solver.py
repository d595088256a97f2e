"""The solver protocol: :class:`Solver`, what it supports (:class:`Capabilities`) and how it fails
(:class:`SolverError`).  :meth:`Solver.solve` turns a problem it cannot handle into an ``unsupported`` solution and
times the call; :meth:`Solver.solve_many` solves a batch.  How solvers are registered and found by name is
:mod:`compbench.registry`'s.
"""

from __future__ import annotations

import functools
import importlib.util
import numbers
import os
import pickle
import time
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping

import numpy as np

from .limits import NO_LIMIT_BEYOND
from .problem import Problem, Solution, Status, expect_problem, is_finite_number, is_flag
from .problem_batch import ProblemBatch

LENGTH_MODES = frozenset({"exact", "range", "free"})


@dataclass(frozen=True)
class Capabilities:
    """What kinds of problems a solver handles."""

    lengths: frozenset[str] = LENGTH_MODES  # subset of {"exact", "range", "free"}
    single_root: bool = True  # handles single_root=True problems (every solver handles False)
    all_lengths: bool = False  # can return the optimum for every length in one run
    second_order: bool = False  # handles sibling scores
    max_n: int | None = None  # refuses larger problems
    max_score: float | None = None  # refuses a problem with a finite score of larger magnitude
    max_score_why: str = ""  # why (what cannot certify answers beyond it)

    def reason_unsupported(self, problem: Problem, all_lengths: bool = False) -> str | None:
        largest = largest_score(problem.token_scores, problem.arc_scores, problem.bigram_scores,
                                problem.sibling_scores) if self.max_score is not None else 0.0
        return self._reason(problem.length_mode, problem.single_root, getattr(problem, "sibling_scores", None)
                            is not None, problem.n, all_lengths, largest)

    def reasons_unsupported(self, batch: ProblemBatch) -> list[str | None]:
        """:meth:`reason_unsupported` of every sentence of a batch, read from its arrays (once per length mode when
        every sentence is within ``max_n`` and ``max_score``)."""
        modes = batch.length_modes().tolist()
        largest = [0.0] * len(modes)
        if self.max_score is not None:
            largest = largest_score(batch.token_scores, batch.arc_scores, batch.bigram_scores, batch.sibling_scores,
                                    per_sentence=True).tolist()
        if (self.max_n is None or int(batch.sizes.max(initial=0)) <= self.max_n) \
                and (self.max_score is None or max(largest, default=0.0) <= self.max_score):
            reasons = {mode: self._reason(mode, batch.single_root, batch.second_order, 0, False) for mode in set(modes)}
            return [reasons[mode] for mode in modes]
        return [self._reason(mode, batch.single_root, batch.second_order, n, False, score)
                for mode, n, score in zip(modes, batch.sizes.tolist(), largest)]

    def _reason(self, mode: str, single_root: bool, second_order: bool, n: int, all_lengths: bool,
                largest: float = 0.0) -> str | None:
        if mode not in self.lengths:
            return f"{mode} length is not supported (supports: {', '.join(sorted(self.lengths))})"
        if single_root and not self.single_root:
            return "single_root problems are not supported"
        if all_lengths and not self.all_lengths:
            return "all_lengths is not supported"
        if second_order and not self.second_order:
            return "second-order (sibling) scores are not supported"
        if self.max_n is not None and n > self.max_n:
            return f"n = {n} exceeds this solver's limit of {self.max_n} tokens"
        if self.max_score is not None and largest > self.max_score:
            return (f"a score of magnitude {largest:.6g} exceeds this solver's limit of {self.max_score:g}"
                    + (f" ({self.max_score_why})" if self.max_score_why else ""))
        return None


def largest_score(*arrays: np.ndarray | None, per_sentence: bool = False) -> Any:
    """The largest magnitude of a finite score in ``arrays`` (0.0 when there is none); with ``per_sentence``, of
    each sentence of a batch's arrays (their first axis).

    >>> largest_score(np.array([1.0, -np.inf, -3.0]), None)
    3.0
    """
    def largest(array: np.ndarray) -> Any:
        magnitudes = np.where(np.isfinite(array), np.abs(array), 0.0)
        if per_sentence:
            return magnitudes.reshape(len(array), -1).max(axis=1, initial=0.0)
        return float(magnitudes.max(initial=0.0))

    result = functools.reduce(np.maximum, (largest(a) for a in arrays if a is not None))
    return result if per_sentence else float(result)


class SolverError(RuntimeError):
    """A solver could not produce an answer for a reason it can name (reported as status ``error``)."""


@dataclass(frozen=True)
class Option:
    """The values a solve option takes: what they are, in words, and the test of one.

    >>> POSITIVE_INT.accepts(3), POSITIVE_INT.accepts(True), POSITIVE_INT.accepts(2.5)
    (True, False, False)
    """

    values: str  # "a positive integer"
    accepts: Callable[[Any], bool]


NUMBER = Option("a number", lambda value: isinstance(value, numbers.Real) and not is_flag(value)
                and value == value)  # not NaN; infinite allowed
POSITIVE_NUMBER = Option("a finite positive number", lambda value: is_finite_number(value) and value > 0)
POSITIVE_INT = Option("a positive integer", lambda value: isinstance(value, numbers.Integral) and not is_flag(value)
                      and value > 0)
ANY_VALUE = Option("any value", lambda value: True)
BOOLEAN = Option("true or false", lambda value: isinstance(value, bool))
MAPPING = Option("a dict (key.name=value)", lambda value: isinstance(value, dict))


def one_of(*values: Any) -> Option:
    """An option that takes one of ``values``."""
    return Option(f"one of {', '.join(map(str, values))}",
                  lambda value: any(type(value) is type(allowed) and value == allowed for allowed in values))


class Solver:
    """Base class of every solver.

    Subclasses set the class attributes and implement :meth:`_solve`.

    >>> import compbench
    >>> s = compbench.get_solver("brute-force")
    >>> p = compbench.generate("gaussian", n=5, seed=1, length=2)
    >>> s.solve(p).status.value
    'optimal'
    """

    name: str = ""
    # solve options fixed by a NAME[key=value] spec (see get_solver, which gives each solver its own); the class's
    # is read-only, never one dict shared by every solver built without a spec
    options: Mapping[str, Any] = MappingProxyType({})
    # the solve options it takes and their values, any other refused; None: every option reaches _solve
    accepted_options: Mapping[str, Option] | None = None
    description: str = ""
    exact: bool = True  # its "optimal" claims are proofs
    # True: what it takes on and whether it proves are said by each answer, not declared (an exec: program answers
    # unsupported or feasible itself): the conformance kit then holds it to its claims, not to its declarations
    claims_per_answer: bool = False
    # the code that computes its answers when other solvers share it (e.g. "compressive chart": the chart's kernels
    # that resource-dp, hook-dp, pruned-dp and the bisections call): one implementation is one opinion, and answers
    # of one opinion that agree compare nothing (compbench.registry.opinion); None: the solver's own name
    implementation: str | None = None
    complexity: str = ""
    supports: Capabilities = Capabilities()
    requires: tuple[str, ...] = ()  # modules it imports that may be missing (a MIP backend's Python package)
    install: str = ""  # the command that installs them, named when they are missing
    batch_by_size: bool = True  # solve_many splits a list's batches by size (False: one per root mode and order)

    def unavailable(self) -> str | None:
        """Why this solver cannot run here (a required module is not installed, with the command that installs
        it), or None when it can."""
        return _missing_modules(self.requires, self.install)

    def solve(self, problem: Problem, time_limit: float | None = None, *, all_lengths: bool = False,
              **options: Any) -> Solution:
        """Solve ``problem`` (time limit in seconds, None = no limit, as is one beyond a year).

        With ``all_lengths=True`` the solution also carries ``by_length[m]`` for m = 0..n.
        """
        check_call(problem, time_limit)
        if not is_flag(all_lengths):
            raise TypeError(f"all_lengths: expected true or false, got {all_lengths!r}")
        reason = self.unavailable() or self.supports.reason_unsupported(problem, all_lengths)
        if reason is not None:
            return Solution(Status.UNSUPPORTED, message=f"{self.name}: {reason}")
        options = {**self.options, **options}
        time_limit = no_limit_beyond_a_year(time_limit)
        start = time.perf_counter()
        try:
            self.check_options(options)
            solution = self._solve(problem, time_limit=time_limit, all_lengths=all_lengths, **options)
        except SolverError as exc:
            solution = Solution(Status.ERROR, message=f"{self.name}: {exc}")
        except Exception as exc:  # a faulty solver is an error answer, never a crash of the caller
            solution = Solution(Status.ERROR, message=f"{self.name} raised {type(exc).__name__}: {exc}")
        except SystemExit as exc:  # sys.exit in a plug-in ends its answer, not the caller
            solution = Solution(Status.ERROR, message=f"{self.name} called sys.exit({exc.code!r})")
        solution = self._checked_answer(solution, problem, all_lengths)
        total = time.perf_counter() - start
        solution.seconds.setdefault("setup", 0.0)
        solution.seconds.setdefault("solve", max(0.0, total - solution.seconds["setup"]))
        solution.seconds["total"] = total
        return solution

    def _solve(self, problem: Problem, *, time_limit: float | None, all_lengths: bool, **options: Any) -> Solution:
        raise NotImplementedError

    def _checked_answer(self, solution: Any, problem: Problem, all_lengths: bool) -> Solution:
        """``solution`` when it is an answer the caller can read, else an ``error`` answer saying why: a
        :class:`Solution`, with ``all_lengths`` a curve of n + 1 of them; its messages made text that prints (a lone
        surrogate becomes ``?``)."""
        if not isinstance(solution, Solution):
            return Solution(Status.ERROR, message=f"{self.name} returned {type(solution).__name__}, not a "
                                                  "compbench.Solution")
        curve = solution.by_length
        if all_lengths and solution.status not in (Status.ERROR, Status.UNSUPPORTED) and not (
                isinstance(curve, (list, tuple)) and len(curve) == problem.n + 1
                and all(isinstance(s, Solution) for s in curve)):
            kind = f"{len(curve)} entries" if isinstance(curve, (list, tuple)) else type(curve).__name__
            return Solution(Status.ERROR, message=f"{self.name} returned a curve (by_length) of {kind}, not "
                                                  f"{problem.n + 1} compbench.Solution (one per length 0..n)")
        for answer in (solution, *(curve if all_lengths else ())):
            answer.message = str(answer.message).encode("utf-8", "replace").decode("utf-8")
        return solution

    def check_options(self, options: Mapping[str, Any]) -> None:
        """Refuse an option outside :attr:`accepted_options` or a value it does not take (a :class:`SolverError`:
        :meth:`solve` answers it as status ``error``, :func:`~compbench.registry.get_solver` refuses the name).

        >>> import compbench
        >>> compbench.get_solver("bisection").check_options({"max_iterations": 0})
        Traceback (most recent call last):
        ...
        compbench.solver.SolverError: max_iterations must be a positive integer, got 0
        """
        accepted = self.accepted_options
        if accepted is None:
            names = getattr(self, "option_names", None)  # the names-only declaration of earlier plug-ins
            if names is None:
                return
            accepted = {name: ANY_VALUE for name in names}
        unknown = [name for name in options if name not in accepted]
        if unknown:
            takes = ", ".join(sorted(accepted)) or "none"
            raise SolverError(f"unknown options: {', '.join(unknown)} (takes: {takes})")
        for name, value in options.items():
            if not accepted[name].accepts(value):
                raise SolverError(f"{name} must be {accepted[name].values}, got {value!r}")

    def solve_many(self, problems: Iterable[Problem] | ProblemBatch, *, time_limit: float | None = None,
                   jobs: int | None = None, **options: Any) -> list[Solution]:
        """Solve every problem of a list or a :class:`ProblemBatch` (``time_limit`` per problem), answers in order:
        the same answers as one :meth:`solve` per problem, over ``jobs`` workers (None: every core, :func:`cores`).
        This default loops over :meth:`solve` (a batch's sentences as problems), in ``jobs`` processes when more
        than one; a solver with a compiled batch path overrides :meth:`_solve_batch` instead (``jobs`` threads),
        which reads a batch's arrays as they are and a list laid out as batches (:meth:`ProblemBatch.grouped`).

        >>> import compbench
        >>> ps = [compbench.generate("gaussian", n=6, seed=s) for s in range(3)]
        >>> [s.status.value for s in compbench.get_solver("hook-dp").solve_many(ps)]
        ['optimal', 'optimal', 'optimal']
        """
        batched = type(self)._solve_batch is not Solver._solve_batch
        problems = checked_problems(problems, time_limit)
        time_limit = no_limit_beyond_a_year(time_limit)
        jobs = cores(jobs)
        if isinstance(problems, ProblemBatch):
            if batched:
                return self._solve_checked(problems, time_limit, jobs, options)
            problems = problems.problems()
        if len(problems) == 1:  # solve's own path: a batch of one costs more than one call (twice at n = 25)
            return [self.solve(problems[0], time_limit, **options)]
        if not batched:
            workers = min(jobs, len(problems))
            if workers > 1:
                return _solve_in_processes(self, problems, time_limit, workers, options)
            return [self.solve(problem, time_limit, **options) for problem in problems]
        return ProblemBatch.in_order(ProblemBatch.grouped(problems, by_size=self.batch_by_size),
                                     lambda batch: self._solve_checked(batch, time_limit, jobs, options))

    def _solve_batch(self, batch: ProblemBatch, *, time_limit: float | None, jobs: int,
                     **options: Any) -> list[Solution]:
        """Answers for a batch whose sentences this solver supports, in order (a compiled batch path); its
        ``seconds`` are filled by :meth:`solve_many`.  Not implemented: :meth:`solve_many` loops over :meth:`solve`."""
        raise NotImplementedError

    def _solve_checked(self, batch: ProblemBatch, time_limit: float | None, jobs: int,
                       options: dict[str, Any]) -> list[Solution]:
        """:meth:`_solve_batch` with what :meth:`solve` adds paid once per batch: availability, each sentence's
        capabilities (unsupported answers in place), the options, the timing (the batch's seconds shared equally).
        Each answer of the batch records its size in ``stats["batch"]``.  A batch that raises (an unknown option,
        a refusal) is solved one problem at a time, so that each gets its own answer, and each such answer says why
        in ``stats["batch_fallback"]``."""
        reason = self.unavailable()
        reasons = [reason] * len(batch) if reason is not None else self.supports.reasons_unsupported(batch)
        answers: list[Solution | None] = [None] * len(batch)
        supported = []
        for k, why in enumerate(reasons):
            if why is not None:
                answers[k] = Solution(Status.UNSUPPORTED, message=f"{self.name}: {why}")
            else:
                supported.append(k)
        if not supported:
            return answers  # type: ignore[return-value]
        part = batch if len(supported) == len(batch) else batch.take(supported)
        merged = {**self.options, **options}
        start = time.perf_counter()
        try:
            self.check_options(merged)
            solved = self._solve_batch(part, time_limit=time_limit, jobs=jobs, **merged)
        except Exception as exc:
            for k in supported:
                answers[k] = self.solve(batch[k], time_limit, **options)
                answers[k].stats["batch_fallback"] = f"{type(exc).__name__}: {exc}"
            return answers  # type: ignore[return-value]
        share = (time.perf_counter() - start) / len(supported)
        for k, solution in zip(supported, solved):
            solution.stats["batch"] = len(supported)
            seconds = solution.seconds
            seconds.setdefault("setup", 0.0)
            seconds.setdefault("solve", share)
            seconds["total"] = share
            answers[k] = solution
        return answers  # type: ignore[return-value]

    def warm_up(self) -> float:
        """Solve a tiny problem of every kind this solver supports (imports, compilation, caches); the seconds."""
        from .generate import generate

        start = time.perf_counter()
        caps = self.supports
        for second_order in sorted({False, caps.second_order}):
            length = 2 if "exact" in caps.lengths else None
            self.solve(generate("gaussian", 4, seed=0, length=length, second_order=second_order), time_limit=60.0)
        return time.perf_counter() - start

    def info(self) -> dict[str, Any]:
        caps = self.supports
        return {
            "name": self.name,
            "description": self.description,
            "exact": self.exact,
            "complexity": self.complexity,
            "lengths": sorted(caps.lengths),
            "single_root": caps.single_root,
            "all_lengths": caps.all_lengths,
            "second_order": caps.second_order,
            "max_n": caps.max_n,
            "max_score": caps.max_score,
            "unavailable": self.unavailable(),
        }

def check_call(problem: Any, time_limit: Any) -> None:
    """Refuse what a caller passes to :meth:`Solver.solve` that is not a problem or a time limit (None or a number
    >= 0): a TypeError or ValueError naming it, before any solver runs."""
    expect_problem(problem)
    _check_time_limit(time_limit)


def no_limit_beyond_a_year(time_limit: float | None) -> float | None:
    """A checked time limit as solvers get it: one beyond :data:`~compbench.limits.NO_LIMIT_BEYOND`, inf included,
    is none (no solver's clock, nor select, takes inf)."""
    return None if time_limit is not None and time_limit > NO_LIMIT_BEYOND else time_limit


def _check_time_limit(time_limit: Any) -> None:
    if time_limit is not None and not (NUMBER.accepts(time_limit) and time_limit >= 0):  # infinite: no limit
        raise ValueError(f"time_limit: expected None or seconds >= 0, got {time_limit!r}")


def checked_problems(problems: Iterable[Problem] | ProblemBatch, time_limit: Any) -> list[Problem] | ProblemBatch:
    """A batch as it is, any other problems as a list, after :func:`check_call` of each and of the time limit."""
    _check_time_limit(time_limit)
    if isinstance(problems, ProblemBatch):
        return problems
    return [expect_problem(problem, f"problems[{k}]") for k, problem in enumerate(problems)]


def cores(jobs: int | None = None) -> int:
    """The workers ``jobs`` asks for: None means every core this process may run on."""
    if jobs is not None:
        if not POSITIVE_INT.accepts(jobs):
            raise ValueError(f"jobs: expected None or an integer >= 1, got {jobs!r}")
        return int(jobs)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)

def _solve_chunk(solver: Solver, problems: list[Problem], time_limit: float | None,
                 options: dict[str, Any]) -> list[Solution]:
    return [solver.solve(problem, time_limit, **options) for problem in problems]


def _solve_in_processes(solver: Solver, problems: list[Problem], time_limit: float | None, jobs: int,
                        options: dict[str, Any]) -> list[Solution]:
    """The default batch over ``jobs`` processes, in contiguous chunks (answers in order).  A solver (or options)
    that cannot be pickled is a TypeError that says so, never a quiet serial run.  A problem on which a worker
    process dies (a solver crashing its process) is an ``error`` answer, the others solved as usual."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    try:
        pickle.dumps((solver, options))
    except Exception as exc:
        raise TypeError(f"{solver.name or type(solver).__name__} cannot be sent to worker processes "
                        f"({type(exc).__name__}: {exc}); pass jobs=1 to solve in this process") from exc
    bounds = [round(len(problems) * w / jobs) for w in range(jobs + 1)]
    chunks = [problems[a:b] for a, b in zip(bounds, bounds[1:])]
    answers: list[Solution] = []
    with ProcessPoolExecutor(jobs) as pool:
        futures = [pool.submit(_solve_chunk, solver, chunk, time_limit, options) for chunk in chunks]
        for chunk, future in zip(chunks, futures):
            try:
                answers += future.result()
            except BrokenProcessPool:  # a worker died (a crash in the solver's own code): every unfinished chunk
                answers += _solve_isolating(solver, chunk, time_limit, options)
    return answers


def _solve_isolating(solver: Solver, problems: list[Problem], time_limit: float | None,
                     options: dict[str, Any]) -> list[Solution]:
    """``problems`` in a process of their own, after a worker died; when this one dies too, each half in turn, down
    to the problem it dies on, whose answer is ``error`` (a crash costs about 2 log2(len) processes, not one per
    problem)."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    with ProcessPoolExecutor(1) as pool:
        try:
            return pool.submit(_solve_chunk, solver, problems, time_limit, options).result()
        except BrokenProcessPool:
            pass
    if len(problems) == 1:
        return [Solution(Status.ERROR, seconds={"setup": 0.0, "solve": 0.0, "total": 0.0},
                         message=f"{solver.name}: the process solving it died (a crash in the solver's own code)")]
    half = len(problems) // 2
    return (_solve_isolating(solver, problems[:half], time_limit, options)
            + _solve_isolating(solver, problems[half:], time_limit, options))


@functools.cache
def _missing_modules(modules: tuple[str, ...], install: str) -> str | None:
    missing = [module for module in modules if importlib.util.find_spec(module) is None]
    if not missing:
        return None
    return f"needs {', '.join(missing)}: {install or 'pip install ' + ' '.join(missing)}"
