"""The shared driver of every ILP solver: build the model, hand it to a backend's ``_run``, decode and validate.

Every backend (one module each in this package) loads the arrays of a :class:`~compbench_solvers.ilp.model.Model`
(the formulations: :mod:`compbench_solvers.ilp.formulations`).  Backends are imported lazily inside ``_load`` (a
missing backend answers ``unsupported``); OR-Tools is imported before PuLP when both are used in one process
(:mod:`.pulp` says why).  One thread by default (``threads=`` option).  Solver options: ``formulation``
(overrides the solver's own), the formulation's model options (joint: ``flow``, ``bigram_cuts``, ``tighten``) and
``settings``, a dict of backend options merged over the formulation's defaults (:attr:`ILPSolver.defaults`); the
settings used are recorded in ``stats["settings"]``.  Every answer is decoded by the model (only from integral z / y
in the joint model; the best derivation over the positive flows in the dp model), validated with
:func:`compbench.evaluate` and re-scored with the float scores; an ``optimal`` whose decoded objective falls short of
the backend's objective is downgraded to ``feasible``.  Costs all below 1 in magnitude are multiplied by a power of
two first (:func:`cost_scale`, exact; ``stats["cost_scale"]``, in whose units the backend's own stats are), since the
backends' absolute tolerances would swallow them; the bound is scaled back.  The backend gets the time left after
the build minus a margin (10%, at most 1 s); ``stats["overrun"]`` records how far the whole solve went past
``time_limit``.  A backend's ``_run`` answers ``optimal`` only on a proof (each backend module says how it reads its
solver's status).

LP relaxations (``lp-*``): the backend solves the model with no integer column.  The answer is ``optimal`` only
when the decoded solution reaches the LP value (then the LP proves it); otherwise ``feasible`` with the LP value
as ``bound``, with the decoded solution when it is valid (the dp model's best derivation over the support is a
rounding), without one otherwise.  ``stats["lp_integral"]`` says whether every column was integral.
"""

from __future__ import annotations

import importlib
import math
import os
import time
from typing import Any, Mapping

import numpy as np

from compbench import Capabilities, InvalidSolution, Problem, Solution, Solver, SolverError, Status, evaluate
from compbench.limits import MIP_MAX_SCORE, memory_budget
from compbench.solver import MAPPING, POSITIVE_INT

from ..formulations import FORMULATIONS, check_model_options
from ..model import INTEGRALITY_TOLERANCE, Model

BYTES_PER_NONZERO = 200  # measured order of magnitude: our arrays + a backend's copy, presolve and factorization


def backend_time_limit(time_limit: float | None, spent: float) -> float | None:
    """What the backend is told: the time left after ``spent`` seconds, minus 10% (at most 1 s) for its overrun;
    None for none (``Solver.solve`` makes one beyond a year none: inf overflowed SCIP's int64 milliseconds).

    >>> backend_time_limit(None, 0.5), backend_time_limit(10.0, 2.0)
    (None, 7.2)
    """
    if time_limit is None:
        return None
    left = max(0.0, time_limit - spent)
    return max(0.01, left - min(1.0, 0.1 * left))


def cost_scale(cost: np.ndarray) -> float:
    """The power of two that brings the largest |cost| to [1, 2) when it is below 1, else 1: a floating-point MIP
    solver's absolute tolerances (HiGHS's ``mip_abs_gap`` 1e-6, its feasibility tolerances 1e-7; CBC's and SCIP's
    alike) are as large as scores near 1e-6, and it proved wrong optima there.  Multiplying by a power of two is
    exact, so the scaled model has the same optimal columns.

    >>> cost_scale(np.array([3e-7, -1e-6])), cost_scale(np.array([0.5, 4.0])), cost_scale(np.zeros(2))
    (1048576.0, 1.0, 1.0)
    >>> cost_scale(np.array([1e-310])) == 2.0 ** 1023
    True
    """
    largest = float(np.max(np.abs(cost), initial=0.0))
    if largest == 0.0 or largest >= 1.0:
        return 1.0
    return 2.0 ** min(1023, -math.floor(math.log2(largest)))  # 2^1024 overflows: subnormal costs stay small


Answer = tuple[Status, np.ndarray | None, float | None, dict[str, Any]]  # what a backend's ``_run`` returns


def backend_answer(optimal: bool, infeasible: bool, stopped: bool, values: np.ndarray | None, bound: float | None,
                   stats: dict[str, Any], **error_stats: Any) -> Answer:
    """``_run``'s answer from what the backend said, in this order: proven ``optimal``, proven ``infeasible`` (no
    values, no bound), ``stopped`` by a limit (``timeout``), else ``error`` (with ``error_stats`` added)."""
    if optimal:
        return Status.OPTIMAL, values, bound, stats
    if infeasible:
        return Status.INFEASIBLE, None, None, stats
    if stopped:
        return Status.TIMEOUT, values, bound, stats
    return Status.ERROR, values, bound, {**stats, **error_stats}


class BackendLimit(SolverError):
    """The backend cannot take this model (a size-limited licence): the answer is ``unsupported``."""


def trivially_infeasible(model: Model) -> bool:
    """Whether a row with no entries excludes 0 (the dp model of a problem whose goal has no derivation)."""
    empty = np.diff(model.row_starts) == 0
    return bool(np.any(empty & ((model.row_lower > 0) | (model.row_upper < 0))))


class ILPSolver(Solver):
    """Shared driver: build the model, hand it to ``_run``, decode and validate."""

    exact = True
    supports = Capabilities(second_order=True, max_score=MIP_MAX_SCORE,
                            max_score_why="a floating-point MIP's tolerances cannot certify optima at larger scores; "
                                          "see compbench.limits")
    key = ""  # the backend in solver names: ilp-{formulation infix}{key}, lp-{formulation}-{key}
    backend = ""  # the backend in stats
    library = ""  # the module it is reached through
    description = ""  # how the backend is reached: "on HiGHS through highspy"
    formulations: frozenset[str] | None = None  # the formulations it serves (None: every one)
    formulation = "joint"
    relax = False  # solve the LP relaxation only
    defaults: dict[str, dict[str, Any]] = {}  # backend settings per formulation
    lp_defaults: dict[str, dict[str, Any]] | None = None  # ... for the LP relaxations (None: no lp-* solvers)

    install = "pip install --force-reinstall compbench (the open backends are among its dependencies)"

    @property
    def requires(self) -> tuple[str, ...]:
        return (self.library.partition(".")[0],)

    def info(self) -> dict[str, Any]:
        return {**super().info(), "formulation": self.formulation, "relaxation": self.relax}

    def export(self, problem: Problem, path: str | os.PathLike) -> tuple[float, float]:
        """Write this solver's model of ``problem`` (its formulation and model options) to ``path``, an ``.mps`` or
        ``.lp`` file with named rows and columns, as a minimization; return ``(objective_scale, objective_offset)``:
        the problem's objective is ``objective_scale * (the file's objective value) + objective_offset``."""
        from ..export import write_model

        options = {key: value for key, value in self.options.items() if key not in ("threads", "settings")}
        formulation = options.pop("formulation", self.formulation)
        record = check_model_options(formulation, options)
        too_big = self._too_big(problem, formulation, record, options)
        if too_big:
            raise ValueError(too_big)
        model = record.build(problem, **options)
        scale = cost_scale(model.cost)
        write_model((model.relaxed() if self.relax else model).scaled(scale), path, minimize=True)
        return -1.0 / scale, 0.0

    @staticmethod
    def _too_big(problem: Problem, formulation: str, record: Any, options: dict[str, Any]) -> str | None:
        """Why the model would not fit in memory (estimated from its size formula before anything is built: a
        quarter of the memory available), or None."""
        needed, limit = BYTES_PER_NONZERO * record.nonzeros(problem, options), memory_budget()
        if needed <= limit:
            return None
        return (f"the {formulation} model for n = {problem.n} needs about {needed / 2**30:.1f} GiB, more than a "
                f"quarter of the memory available ({4 * limit / 2**30:.1f} GiB)")

    @property
    def complexity(self) -> str:
        method = "LP (polynomial)" if self.relax else "MIP (NP-hard in general)"
        return f"{method}; {self.formulation} model {FORMULATIONS[self.formulation].complexity}"

    def _load(self) -> Any:
        """The backend's library, imported now (an ImportError when it is not installed)."""
        return importlib.import_module(self.library)

    def check_options(self, options: Mapping[str, Any]) -> None:
        """Refuse an unknown formulation, a model option it does not take or a value it does not, ``threads`` other
        than a positive integer and ``settings`` other than a dict (the backend judges each setting when it runs)."""
        model_options = {key: value for key, value in options.items() if key not in ("formulation", "threads",
                                                                                     "settings")}
        check_model_options(options.get("formulation") or self.formulation, model_options)
        for name, option in (("threads", POSITIVE_INT), ("settings", MAPPING)):
            if name in options and not option.accepts(options[name]):
                raise SolverError(f"{name} must be {option.values}, got {options[name]!r}")

    def _run(self, model: Model, time_limit: float | None, threads: int, settings: dict[str, Any]) -> Answer:
        """(``optimal`` | ``feasible`` | ``infeasible`` | ``timeout`` | ``error``, column values, bound, stats)."""
        raise NotImplementedError

    def _solve(self, problem: Problem, *, time_limit: float | None, all_lengths: bool, formulation: str | None = None,
               threads: int = 1, settings: dict[str, Any] | None = None, **model_options: Any) -> Solution:
        formulation = formulation or self.formulation
        record = FORMULATIONS[formulation]  # checked by check_options
        start = time.perf_counter()  # the backend's import counts as set-up, within the time limit
        try:
            self._load()
        except ImportError as exc:
            return Solution(Status.UNSUPPORTED, message=f"{self.name}: backend not installed ({exc}): {self.install}")
        too_big = self._too_big(problem, formulation, record, model_options)
        if too_big:
            return Solution(Status.UNSUPPORTED, message=f"{self.name}: {too_big}")
        model = record.build(problem, **model_options)
        if self.relax:
            model = model.relaxed()
        scale = cost_scale(model.cost)
        model = model.scaled(scale)  # the backend sees scaled costs; its values and bound are scaled back below
        setup = time.perf_counter() - start
        settings = {**self.defaults.get(formulation, {}), **(settings or {})}
        stats: dict[str, Any] = {"model": model.stats(), "backend": self.backend, "threads": threads,
                                 "settings": settings, **({"cost_scale": scale} if scale != 1.0 else {})}
        if trivially_infeasible(model):
            return Solution(Status.INFEASIBLE, seconds={"setup": setup, "solve": 0.0}, stats=stats)
        try:
            status, values, bound, backend_stats = self._run(model, backend_time_limit(time_limit, setup), threads,
                                                             settings)
        except BackendLimit as exc:
            return Solution(Status.UNSUPPORTED, seconds={"setup": setup}, stats=stats, message=f"{self.name}: {exc}")
        solve = time.perf_counter() - start - setup
        bound = None if bound is None else bound / scale
        stats.update(backend_stats)
        if time_limit is not None:
            stats["overrun"] = max(0.0, setup + solve - time_limit)
        seconds = {"setup": setup, "solve": solve}
        if status == Status.INFEASIBLE:
            return Solution(Status.INFEASIBLE, seconds=seconds, stats=stats)
        heads = None if values is None else model.decode(values)
        objective = None
        if heads is not None:
            try:
                objective = evaluate(problem, Solution(Status.FEASIBLE, heads=heads))
            except InvalidSolution as exc:
                stats["rejected"] = str(exc)
                heads = None
        if self.relax:
            return self._relaxation_answer(status, values, heads, objective, model, scale, bound, seconds, stats)
        if heads is None:
            if status == Status.OPTIMAL:
                raise SolverError("the backend claimed optimality but returned no valid integral solution")
            return Solution(status, bound=bound, seconds=seconds, stats=stats,
                            message=f"{self.name}: no valid integral solution ({status})")
        final = status if status in (Status.OPTIMAL, Status.TIMEOUT) else Status.FEASIBLE
        model_value = float(model.cost @ values) / scale
        if final == Status.OPTIMAL and objective < model_value - 1e-6 * (1.0 / scale + abs(model_value)):
            final = Status.FEASIBLE
            stats["decoded_shortfall"] = model_value - objective
        if final == Status.OPTIMAL:
            bound = objective if bound is None else max(bound, objective)
        return Solution(final, heads=heads, objective=objective, bound=bound, seconds=seconds, stats=stats)

    def _relaxation_answer(self, status, values, heads, objective, model, scale, bound, seconds, stats) -> Solution:
        if status != Status.OPTIMAL:
            return Solution(status, seconds=seconds, stats=stats, message=f"{self.name}: LP not solved ({status})")
        lp_value = float(model.cost @ values) / scale
        stats["lp_value"] = lp_value
        stats["lp_integral"] = bool(np.all(np.abs(values - np.round(values)) <= INTEGRALITY_TOLERANCE))
        bound = lp_value if bound is None else bound
        if heads is None:
            return Solution(Status.FEASIBLE, bound=bound, seconds=seconds, stats=stats,
                            message=f"{self.name}: the LP optimum is fractional and rounds to no valid solution")
        proven = objective >= bound - 1e-7 * (1.0 / scale + abs(bound))  # the tolerance of the scaled costs
        return Solution(Status.OPTIMAL if proven else Status.FEASIBLE, heads=heads, objective=objective,
                        bound=max(bound, objective) if proven else bound, seconds=seconds, stats=stats)
