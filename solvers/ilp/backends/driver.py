"""One small adapter per MIP backend; the registered solvers are backend x formulation x (ILP or LP relaxation).

Every adapter loads the arrays of a :class:`~compbench_solvers.ilp.model.Model` (the formulations: ``joint``, the joint model
of :mod:`compbench_solvers.ilp.model`, and ``dp``, the chart's hypergraph flow of :mod:`compbench_solvers.ilp.dp_flow`).  Backends are
imported lazily inside ``_load`` (a missing backend answers ``unsupported``); OR-Tools is imported before PuLP
when both are used in one process (see ``/work/shared/notes/dependencies.md``).  One thread by default
(``threads=`` option).  Solver options: ``formulation`` (overrides the solver's own), the formulation's model
options (joint: ``flow``, ``bigram_cuts``, ``tighten``) and ``settings``, a dict of backend options merged over
the formulation's defaults (:attr:`ILPSolver.defaults`); the settings used are recorded in ``stats["settings"]``.
Every answer is decoded by the model (only from integral z / y in the joint model; the best derivation over the
positive flows in the dp model), validated with :func:`compbench.evaluate` and re-scored with the float scores; an
``optimal`` whose decoded objective falls short of the backend's objective is downgraded to ``feasible``.  The
backend gets the time left after the build minus a margin (10%, at most 1 s); ``stats["overrun"]`` records how
far the whole solve went past ``time_limit``.  Statuses:

- ``highspy`` / ``pulp+highs``: ``mip_rel_gap`` = 0; ``optimal`` only on HiGHS's kOptimal; PuLP's
  ``sol_status`` (not ``LpStatus``) is read.
- ``pulp+cbc``: CBC's ``sol_status``; no bound is reported through PuLP.
- ``ortools+scip``: RELATIVE_MIP_GAP = 0.
- ``ortools+cp-sat``: integer coefficients only.  The objective is scaled by ``s = 2^e``, the largest power of
  two with ``s * Σ|finite scores| <= 2^50``, and rounded.  Each solution's rounded objective differs from the
  exact one by at most ``(4n+1) / (2s)`` (at most 4n+1 scored terms per solution: n tokens, n arcs, n+1 bigrams,
  n sibling pairs), so the scaled optimum is within ``(4n+1) / s`` of the float optimum; it is guaranteed to be
  the float optimum when every score times s is an integer (e.g. integer or dyadic scores), otherwise only up to
  that tolerance, which is reported in ``stats["scale_tolerance"]`` and added to the bound.  (In the dp model a
  solution's hyperedges carry the same terms: a bigram per [skip], an arc + token (+ sibling) per attachment.)

LP relaxations (``lp-*``): the backend solves the model with no integer column.  The answer is ``optimal`` only
when the decoded solution reaches the LP value (then the LP proves it); otherwise ``feasible`` with the LP value
as ``bound``, with the decoded solution when it is valid (the dp model's best derivation over the support is a
rounding), without one otherwise.  ``stats["lp_integral"]`` says whether every column was integral.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time
import warnings
from typing import Any, Callable

import numpy as np

from compbench import Capabilities, InvalidSolution, Problem, Solution, Solver, SolverError, Status, evaluate
from compbench.limits import available_memory
from ..compressive.chart import max_hyperedges

from .dp_flow import build_dp_model
from .model import FLOWS, INTEGRALITY_TOLERANCE, Model, build_joint_model, model_size

FORMULATIONS: dict[str, Callable[..., Model]] = {"joint": build_joint_model, "dp": build_dp_model}
MODEL_OPTIONS = {"joint": {"flow", "bigram_cuts", "tighten"}, "dp": set()}


def check_model_options(formulation: str, options: dict[str, Any]) -> None:
    """Refuse an unknown formulation or model option (a :class:`SolverError`, answered as status ``error``)."""
    if formulation not in FORMULATIONS:
        raise SolverError(f"formulation must be one of {sorted(FORMULATIONS)}, got {formulation!r}")
    unknown = set(options) - MODEL_OPTIONS[formulation]
    if unknown:
        raise SolverError(f"unknown options {sorted(unknown)} for the {formulation} formulation")
    if options.get("flow", "single") not in FLOWS:
        raise SolverError(f"flow must be one of {FLOWS}")


def build_model(problem: Problem, formulation: str = "joint", **options: Any) -> Model:
    """The ``formulation`` model of ``problem`` (``options``: that formulation's model options)."""
    check_model_options(formulation, options)
    return FORMULATIONS[formulation](problem, **options)


@contextlib.contextmanager
def quiet_fds():
    """Send fd 1 and 2 to /dev/null while a backend runs (banners printed from C++ bypass sys.stdout)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, devnull):
            os.close(fd)


def backend_time_limit(time_limit: float | None, spent: float) -> float | None:
    """What the backend is told: the time left after ``spent`` seconds, minus 10% (at most 1 s) for its overrun."""
    if time_limit is None:
        return None
    left = max(0.0, time_limit - spent)
    return max(0.01, left - min(1.0, 0.1 * left))


class BackendLimit(SolverError):
    """The backend cannot take this model (a size-limited licence): the answer is ``unsupported``."""


BYTES_PER_NONZERO = 200  # measured order of magnitude: our arrays + a backend's copy, presolve and factorization


def model_bytes(problem: Problem, formulation: str, options: dict[str, Any]) -> int:
    """About how much memory the model of ``problem`` needs, from its size formula, before anything is built."""
    if formulation == "dp":
        nonzeros = 3 * max_hyperedges(problem.n) + 2 * problem.n
    else:  # the joint model's options are model_size's, with the same defaults
        nonzeros = model_size(problem.n, second_order=problem.second_order, **options)["nonzeros"]
    return BYTES_PER_NONZERO * nonzeros


def trivially_infeasible(model: Model) -> bool:
    """Whether a row with no entries excludes 0 (the dp model of a problem whose goal has no derivation)."""
    empty = np.diff(model.row_starts) == 0
    return bool(np.any(empty & ((model.row_lower > 0) | (model.row_upper < 0))))


class ILPSolver(Solver):
    """Shared driver: build the model, hand it to ``_run``, decode and validate."""

    exact = True
    supports = Capabilities(lengths=frozenset({"exact", "range", "free"}), single_root=True, second_order=True)
    backend = ""
    formulation = "joint"
    relax = False  # solve the LP relaxation only
    defaults: dict[str, dict[str, Any]] = {}  # backend settings per formulation

    def info(self) -> dict[str, Any]:
        return {**super().info(), "formulation": self.formulation, "relaxation": self.relax}

    @property
    def complexity(self) -> str:
        size = {"joint": "O(n^3) rows, O(n^4) nonzeros", "dp": "O(n^3) columns and nonzeros, O(n^2) rows"}
        method = "LP (polynomial)" if self.relax else "MIP (NP-hard in general)"
        return f"{method}; {self.formulation} model {size[self.formulation]}"

    def _load(self) -> Any:
        raise NotImplementedError

    def _run(self, model: Model, time_limit: float | None, threads: int,
             settings: dict[str, Any]) -> tuple[str, np.ndarray | None, float | None, dict[str, Any]]:
        """(``optimal`` | ``feasible`` | ``infeasible`` | ``timeout`` | ``error``, column values, bound, stats)."""
        raise NotImplementedError

    def _solve(self, problem: Problem, *, time_limit: float | None, all_lengths: bool, formulation: str | None = None,
               threads: int = 1, settings: dict[str, Any] | None = None, **model_options: Any) -> Solution:
        formulation = formulation or self.formulation
        check_model_options(formulation, model_options)
        try:
            self._load()
        except ImportError as exc:
            return Solution(Status.UNSUPPORTED, message=f"{self.name}: backend not installed ({exc})")
        needed, limit = model_bytes(problem, formulation, model_options), available_memory() // 4
        if needed > limit:
            return Solution(Status.UNSUPPORTED, message=(
                f"{self.name}: the {formulation} model for n = {problem.n} needs about {needed / 2**30:.1f} GiB, "
                f"more than a quarter of the memory available ({4 * limit / 2**30:.1f} GiB)"))
        start = time.perf_counter()
        model = build_model(problem, formulation, **model_options)
        if self.relax:
            model = model.relaxed()
        setup = time.perf_counter() - start
        settings = {**self.defaults.get(formulation, {}), **(settings or {})}
        stats: dict[str, Any] = {"model": model.stats(), "backend": self.backend, "threads": threads,
                                 "settings": settings}
        if trivially_infeasible(model):
            return Solution(Status.INFEASIBLE, seconds={"setup": setup, "solve": 0.0}, stats=stats)
        try:
            status, values, bound, backend_stats = self._run(model, backend_time_limit(time_limit, setup), threads,
                                                             settings)
        except BackendLimit as exc:
            return Solution(Status.UNSUPPORTED, seconds={"setup": setup}, stats=stats, message=f"{self.name}: {exc}")
        solve = time.perf_counter() - start - setup
        stats.update(backend_stats)
        if time_limit is not None:
            stats["overrun"] = max(0.0, setup + solve - time_limit)
        seconds = {"setup": setup, "solve": solve}
        if status == "infeasible":
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
            return self._relaxation_answer(status, values, heads, objective, model, bound, seconds, stats)
        if heads is None:
            if status == "optimal":
                raise SolverError("the backend claimed optimality but returned no valid integral solution")
            final = Status.TIMEOUT if status == "timeout" else Status.ERROR
            return Solution(final, bound=bound, seconds=seconds, stats=stats,
                            message=f"{self.name}: no valid integral solution ({status})")
        final = {"optimal": Status.OPTIMAL, "timeout": Status.TIMEOUT}.get(status, Status.FEASIBLE)
        model_value = float(model.cost @ values)
        if final == Status.OPTIMAL and objective < model_value - 1e-6 * (1.0 + abs(model_value)):
            final = Status.FEASIBLE
            stats["decoded_shortfall"] = model_value - objective
        if final == Status.OPTIMAL:
            bound = objective if bound is None else max(bound, objective)
        return Solution(final, heads=heads, objective=objective, bound=bound, seconds=seconds, stats=stats)

    def _relaxation_answer(self, status, values, heads, objective, model, bound, seconds, stats) -> Solution:
        if status != "optimal":
            final = Status.TIMEOUT if status == "timeout" else Status.ERROR
            return Solution(final, seconds=seconds, stats=stats, message=f"{self.name}: LP not solved ({status})")
        lp_value = float(model.cost @ values)
        stats["lp_value"] = lp_value
        stats["lp_integral"] = bool(np.all(np.abs(values - np.round(values)) <= INTEGRALITY_TOLERANCE))
        bound = lp_value if bound is None else bound
        if heads is None:
            return Solution(Status.FEASIBLE, bound=bound, seconds=seconds, stats=stats,
                            message=f"{self.name}: the LP optimum is fractional and rounds to no valid solution")
        proven = objective >= bound - 1e-7 * (1.0 + abs(bound))
        return Solution(Status.OPTIMAL if proven else Status.FEASIBLE, heads=heads, objective=objective,
                        bound=max(bound, objective) if proven else bound, seconds=seconds, stats=stats)


def load_highs(highspy: Any, model: Model, threads: int, time_limit: float | None, settings: dict[str, Any]) -> Any:
    """A ``highspy.Highs`` holding ``model`` (as a minimization of -cost), one thread, gap 0, ``settings`` applied."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", int(threads))
    h.setOptionValue("mip_rel_gap", 0.0)
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    for name, value in settings.items():
        if h.setOptionValue(name, value) != highspy.HighsStatus.kOk:
            raise SolverError(f"HiGHS refused the setting {name} = {value!r}")
    inf = highspy.kHighsInf
    h.addCols(model.num_cols, -model.cost, model.col_lower, model.col_upper, 0, np.zeros(1, dtype=np.int32),
              np.zeros(0, dtype=np.int32), np.zeros(0))
    h.addRows(model.num_rows, np.where(np.isinf(model.row_lower), -inf, model.row_lower),
              np.where(np.isinf(model.row_upper), inf, model.row_upper), len(model.row_values),
              model.row_starts[:-1].astype(np.int32), model.row_cols.astype(np.int32), model.row_values)
    integer = np.flatnonzero(model.integrality).astype(np.int32)
    if len(integer):
        h.changeColsIntegrality(len(integer), integer, np.array([highspy.HighsVarType.kInteger] * len(integer)))
    return h


def run_highs(highspy: Any, h: Any, is_mip: bool) -> tuple[str, np.ndarray | None, float | None, dict[str, Any]]:
    """Run a loaded ``Highs`` and read its answer as ``ILPSolver._run`` returns it."""
    h.run()
    status = h.getModelStatus()
    info = h.getInfo()
    S = highspy.HighsModelStatus
    has_solution = info.primal_solution_status == highspy.SolutionStatus.kSolutionStatusFeasible
    values = np.array(h.getSolution().col_value) if has_solution else None
    bound = -info.mip_dual_bound if is_mip and math.isfinite(info.mip_dual_bound) else None
    stats = {"nodes": int(info.mip_node_count), "gap": float(info.mip_gap)} if is_mip else {
        "simplex_iterations": int(info.simplex_iteration_count), "ipm_iterations": int(info.ipm_iteration_count)}
    if status == S.kOptimal:
        return "optimal", values, bound, stats
    if status == S.kInfeasible:
        return "infeasible", None, None, stats
    if status in (S.kTimeLimit, S.kInterrupt, S.kIterationLimit, S.kSolutionLimit):
        return "timeout", values, bound, stats
    return "error", values, bound, {**stats, "model_status": h.modelStatusToString(status)}


# HiGHS settings chosen by measurement (README, "The ILP side"; benchmarks/bench_ilp.py).  The dp model's LP is
# extremely degenerate for the dual simplex, the interior-point method solves it fast; the root sub-MIP heuristics
# and symmetry detection cost 1-2 s at n = 25 and find nothing the LP does not.  Presolve on the joint model costs
# more than it saves.
HIGHS_DP_MIP = {"mip_lp_solver": "ipm", "mip_heuristic_run_rens": False, "mip_heuristic_run_rins": False,
                "mip_heuristic_run_feasibility_jump": False, "mip_heuristic_run_root_reduced_cost": False,
                "mip_detect_symmetry": False}
HIGHS_JOINT_MIP = {"presolve": "off"}


class HighsILP(ILPSolver):
    name = "ilp-highs"
    backend = "highspy"
    description = "Joint ILP (tree, bigrams, projectivity) on HiGHS through highspy, loaded from numpy arrays"
    defaults = {"joint": HIGHS_JOINT_MIP, "dp": HIGHS_DP_MIP}

    def _load(self):
        import highspy
        return highspy

    def _run(self, model, time_limit, threads, settings):
        highspy = self._load()
        answer = run_highs(highspy, load_highs(highspy, model, threads, time_limit, settings), model.is_mip)
        if answer[0] == "error" and not model.is_mip and settings.get("solver") == "ipm":
            # HiGHS's interior point with crossover can end in "Solve error" on an infeasible LP: ask the
            # simplex method instead (found by hypothesis)
            retry = {k: v for k, v in settings.items() if k != "solver"}
            status, values, bound, stats = run_highs(highspy, load_highs(highspy, model, threads, time_limit, retry),
                                                     model.is_mip)
            answer = status, values, bound, {**stats, "retried_with": "simplex (the interior point failed)"}
        return answer


class _PulpILP(ILPSolver):
    def _load(self):
        with contextlib.suppress(ImportError):
            import ortools  # noqa: F401  (OR-Tools before PuLP: see dependencies.md)
        import pulp
        return pulp

    def _command(self, pulp, time_limit, threads, settings):
        raise NotImplementedError

    def _run(self, model, time_limit, threads, settings):
        with warnings.catch_warnings():  # PuLP 3.3 announces its 4.0 API on every variable
            warnings.simplefilter("ignore", DeprecationWarning)
            return self._run_pulp(model, time_limit, threads, settings)

    def _run_pulp(self, model, time_limit, threads, settings):
        pulp = self._load()
        prob = pulp.LpProblem("compression", pulp.LpMaximize)
        xs = [pulp.LpVariable(f"x{j}", lowBound=model.col_lower[j], upBound=model.col_upper[j],
                              cat="Integer" if model.integrality[j] else "Continuous")
              for j in range(model.num_cols)]
        prob += pulp.LpAffineExpression([(xs[j], c) for j, c in enumerate(model.cost) if c != 0.0] or 0.0)
        for i, (lo, hi, cols, vals) in enumerate(model.rows()):
            expr = pulp.LpAffineExpression([(xs[c], v) for c, v in zip(cols, vals)])
            if lo == hi:
                prob += expr == lo, f"r{i}"
            else:
                if math.isfinite(lo):
                    prob += expr >= lo, f"l{i}"
                if math.isfinite(hi):
                    prob += expr <= hi, f"u{i}"
        started = time.perf_counter()
        with quiet_fds():
            prob.solve(self._command(pulp, time_limit, threads, settings))
        sol = prob.sol_status
        elapsed = time.perf_counter() - started
        values = None
        if sol in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
            values = np.array([x.varValue if x.varValue is not None else np.nan for x in xs], dtype=float)
        stats = {"pulp_status": pulp.LpStatus[prob.status], "sol_status": int(sol)}
        if sol == pulp.LpSolutionOptimal and prob.status == pulp.LpStatusOptimal:
            return "optimal", values, None, stats
        infeasible = sol == pulp.LpSolutionInfeasible or prob.status == pulp.LpStatusInfeasible
        if infeasible and (time_limit is None or elapsed < time_limit):  # CBC stopped by its limit says infeasible
            return "infeasible", None, None, stats
        if time_limit is not None:
            return "timeout", values, None, stats
        return "error", values, None, stats


class PulpCbcILP(_PulpILP):
    name = "ilp-pulp-cbc"
    backend = "pulp+cbc"
    description = "Joint ILP through PuLP with its bundled CBC"

    def _command(self, pulp, time_limit, threads, settings):
        return pulp.PULP_CBC_CMD(msg=False, timeLimit=time_limit, threads=threads, gapRel=0.0,
                                 options=[f"{name} {value}" for name, value in settings.items()])


class PulpHighsILP(_PulpILP):
    name = "ilp-pulp-highs"
    backend = "pulp+highs"
    description = "Joint ILP through PuLP with HiGHS (highspy API)"

    def _command(self, pulp, time_limit, threads, settings):
        return pulp.HiGHS(msg=False, timeLimit=time_limit, threads=threads, gapRel=0.0, **settings)


class OrtoolsScipILP(ILPSolver):
    name = "ilp-ortools-scip"
    backend = "ortools+scip"
    description = "Joint ILP on SCIP through OR-Tools' pywraplp"

    def _load(self):
        from ortools.linear_solver import pywraplp
        return pywraplp

    def _run(self, model, time_limit, threads, settings):
        pywraplp = self._load()
        solver = pywraplp.Solver.CreateSolver("SCIP")
        if solver is None:
            raise SolverError("OR-Tools was built without SCIP")
        solver.SetNumThreads(int(threads))
        if settings and not solver.SetSolverSpecificParametersAsString(
                "".join(f"{name} = {value}\n" for name, value in settings.items())):
            raise SolverError(f"SCIP refused the settings {settings}")
        if time_limit is not None:
            solver.SetTimeLimit(max(1, int(time_limit * 1000)))
        inf = solver.infinity()
        xs = [solver.IntVar(model.col_lower[j], model.col_upper[j], f"x{j}") if model.integrality[j]
              else solver.NumVar(model.col_lower[j], model.col_upper[j], f"x{j}") for j in range(model.num_cols)]
        for lo, hi, cols, vals in model.rows():
            row = solver.Constraint(lo if math.isfinite(lo) else -inf, hi if math.isfinite(hi) else inf)
            for c, v in zip(cols, vals):
                row.SetCoefficient(xs[c], float(v))
        objective = solver.Objective()
        for j, c in enumerate(model.cost):
            if c != 0.0:
                objective.SetCoefficient(xs[j], float(c))
        objective.SetMaximization()
        params = pywraplp.MPSolverParameters()
        params.SetDoubleParam(params.RELATIVE_MIP_GAP, 0.0)
        with quiet_fds():
            status = solver.Solve(params)
        values = None
        if status in (solver.OPTIMAL, solver.FEASIBLE):
            values = np.array([x.solution_value() for x in xs])
        bound = objective.BestBound() if status in (solver.OPTIMAL, solver.FEASIBLE) else None
        stats = {"nodes": int(solver.nodes())}
        if status == solver.OPTIMAL:
            return "optimal", values, bound, stats
        if status == solver.INFEASIBLE:
            return "infeasible", None, None, stats
        if time_limit is not None and status in (solver.FEASIBLE, solver.NOT_SOLVED):
            return "timeout", values, bound, stats
        return "error", values, bound, stats


class OrtoolsCpSatILP(ILPSolver):
    name = "ilp-ortools-cpsat"
    backend = "ortools+cp-sat"
    description = "Joint ILP on OR-Tools CP-SAT (objective scaled to integers, re-scored with the float scores)"

    def _load(self):
        from ortools.sat.python import cp_model
        return cp_model

    def _run(self, model, time_limit, threads, settings):
        cp_model = self._load()
        cp = cp_model.CpModel()
        upper = np.where(model.integrality, model.col_upper, np.ceil(model.col_upper)).astype(np.int64)
        xs = [cp.new_int_var(int(model.col_lower[j]), int(upper[j]), f"x{j}") for j in range(model.num_cols)]
        for lo, hi, cols, vals in model.rows():
            if not np.all(vals == np.round(vals)):
                raise SolverError("CP-SAT needs integer constraint coefficients")
            expr = sum(int(v) * xs[c] for c, v in zip(cols, vals))
            if math.isfinite(lo) and lo == hi:
                cp.add(expr == int(lo))
            else:
                if math.isfinite(lo):
                    cp.add(expr >= int(math.ceil(lo)))
                if math.isfinite(hi):
                    cp.add(expr <= int(math.floor(hi)))
        total = float(np.abs(model.cost).sum())
        scale = 2.0 ** math.floor(math.log2(2.0 ** 50 / total)) if total > 0 else 1.0
        scaled = np.round(model.cost * scale).astype(np.int64)
        exact_scale = bool(np.all(scaled == model.cost * scale))
        n = model.n
        tolerance = 0.0 if exact_scale else (4 * n + 1) / scale
        cp.maximize(sum(int(c) * xs[j] for j, c in enumerate(scaled) if c != 0))
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = int(threads)
        for name, value in settings.items():
            setattr(solver.parameters, name, value)
        if time_limit is not None:
            solver.parameters.max_time_in_seconds = float(time_limit)
        with quiet_fds():
            status = solver.solve(cp)
        stats = {"scale": scale, "scale_tolerance": tolerance}
        values = None
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            values = np.array([solver.value(x) for x in xs], dtype=float)
        bound = solver.best_objective_bound / scale + tolerance if values is not None else None
        if status == cp_model.OPTIMAL:
            return "optimal", values, bound, stats
        if status == cp_model.INFEASIBLE:
            return "infeasible", None, None, stats
        if time_limit is not None and status in (cp_model.FEASIBLE, cp_model.UNKNOWN):
            return "timeout", values, bound, stats
        return "error", values, bound, stats


class GurobiILP(ILPSolver):
    """Gurobi through gurobipy (the ``gurobi`` extra).  The licence bundled with gurobipy is size-limited (2,000
    variables and 2,000 constraints): a larger model is answered ``unsupported`` with Gurobi's reason."""

    name = "ilp-gurobi"
    backend = "gurobipy"
    description = "Joint ILP on Gurobi through gurobipy (the size-limited licence of the package index, or yours)"

    def _load(self):
        import gurobipy
        return gurobipy

    def _run(self, model, time_limit, threads, settings):
        gp = self._load()
        try:
            with quiet_fds():
                env = gp.Env(empty=True)
                env.setParam("OutputFlag", 0)
                env.start()
                m = gp.Model(env=env)
            m.Params.Threads = int(threads)
            m.Params.MIPGap = 0.0
            if time_limit is not None:
                m.Params.TimeLimit = float(time_limit)
            for name, value in settings.items():
                m.setParam(name, value)
            x = m.addMVar(model.num_cols, lb=model.col_lower, ub=model.col_upper, obj=model.cost,
                          vtype=np.where(model.integrality, gp.GRB.INTEGER, gp.GRB.CONTINUOUS))
            m.ModelSense = gp.GRB.MAXIMIZE
            xs = x.tolist()
            for lo, hi, cols, vals in model.rows():
                expr = gp.LinExpr(vals.tolist(), [xs[c] for c in cols])
                if lo == hi:
                    m.addLConstr(expr, gp.GRB.EQUAL, float(lo))
                else:
                    if math.isfinite(lo):
                        m.addLConstr(expr, gp.GRB.GREATER_EQUAL, float(lo))
                    if math.isfinite(hi):
                        m.addLConstr(expr, gp.GRB.LESS_EQUAL, float(hi))
            m.optimize()
        except gp.GurobiError as exc:
            if exc.errno == gp.GRB.Error.SIZE_LIMIT_EXCEEDED:
                raise BackendLimit(f"Gurobi's licence: {exc} ({model.num_cols} variables)") from None
            raise SolverError(f"Gurobi: {exc}") from None
        G = gp.GRB
        is_mip = model.is_mip
        values = np.array(x.X) if m.SolCount > 0 else None
        bound = float(m.ObjBound) if is_mip and m.SolCount > 0 else None
        stats = {"nodes": int(m.NodeCount), "gap": float(m.MIPGap) if is_mip and m.SolCount else None} if is_mip \
            else {"simplex_iterations": int(m.IterCount)}
        if m.Status == G.OPTIMAL:
            return "optimal", values, bound, stats
        if m.Status in (G.INFEASIBLE, G.INF_OR_UNBD):
            return "infeasible", None, None, stats
        if m.Status in (G.TIME_LIMIT, G.INTERRUPTED, G.NODE_LIMIT, G.ITERATION_LIMIT, G.SOLUTION_LIMIT):
            return "timeout", values, bound, stats
        return "error", values, bound, {**stats, "gurobi_status": int(m.Status)}


# The hypergraph flow formulation on every backend, and the LP relaxations: the same adapters under another name.

def _variant(base: type[ILPSolver], name: str, description: str, **attributes: Any) -> type[ILPSolver]:
    """``base`` registered under ``name`` with another formulation, relaxation or defaults."""
    cls = type(base.__name__, (base,), {"name": name, "description": description, **attributes})
    cls.__module__, cls.__qualname__ = __name__, name
    return cls


DP = "The chart's hypergraph flow as an ILP"
HighsDPILP = _variant(HighsILP, "ilp-dp-highs", f"{DP} (z integer) on HiGHS through highspy", formulation="dp")
PulpCbcDPILP = _variant(PulpCbcILP, "ilp-dp-pulp-cbc", f"{DP} through PuLP with its bundled CBC", formulation="dp")
PulpHighsDPILP = _variant(PulpHighsILP, "ilp-dp-pulp-highs", f"{DP} through PuLP with HiGHS", formulation="dp")
OrtoolsScipDPILP = _variant(OrtoolsScipILP, "ilp-dp-ortools-scip", f"{DP} on SCIP through OR-Tools",
                            formulation="dp")
OrtoolsCpSatDPILP = _variant(OrtoolsCpSatILP, "ilp-dp-ortools-cpsat", f"{DP} on CP-SAT (every hyperedge a 0/1 "
                             "variable, objective scaled)", formulation="dp")
GurobiDPILP = _variant(GurobiILP, "ilp-dp-gurobi", f"{DP} on Gurobi (size-limited licence: small n only)",
                       formulation="dp")
HIGHS_LP = {"joint": {}, "dp": {"solver": "ipm"}}  # the dp LP by interior point, with crossover: a vertex
HighsJointLP = _variant(HighsILP, "lp-joint-highs", "LP relaxation of the joint ILP on HiGHS: optimal only when the "
                        "LP optimum is an integral solution", relax=True, exact=False, defaults=HIGHS_LP)
HighsDPLP = _variant(HighsDPILP, "lp-dp-highs", "LP relaxation of the hypergraph flow on HiGHS (the Lagrangian bound "
                     "of the length); optimal when the best derivation over its support reaches the LP value",
                     relax=True, exact=False, defaults=HIGHS_LP)


class HighsReducedCostDPILP(HighsDPILP):
    """The hypergraph flow ILP on HiGHS after root reduced-cost fixing, with the LP's duals only.

    1. Solve the LP relaxation (interior point, no crossover: :attr:`lp_settings`) and take its row duals y.
    2. UB = :meth:`Model.dual_bound` (y): a valid bound for any y; d = the reduced costs.
    3. Keep the columns with -d_j <= delta, fix the others at 0, and solve that MIP to optimality: its optimum v.
       If v >= UB - delta it is optimal for the whole model (a better solution would use only kept columns).
       Otherwise set delta = UB - v and solve once more: now every solution worth more than v uses only kept
       columns, so that optimum is proven.  An infeasible restriction quadruples delta (up to every column).
    delta starts at 0.5% of |UB| (the LP gap of this model is 0-1.1% at n = 25).  The DP is never consulted: the
    method only uses the solver's LP.  ``stats``: lp_bound, lp_seconds, rounds, kept_columns, delta.
    """

    name = "ilp-dp-rcfix-highs"
    description = ("The hypergraph flow ILP on HiGHS after root reduced-cost fixing (LP duals drop the columns that "
                   "cannot be in a better solution)")
    lp_settings = {"solver": "ipm", "run_crossover": "off", "presolve": "off"}
    first_delta = 0.005

    def _run(self, model, time_limit, threads, settings):
        highspy = self._load()
        start = time.perf_counter()

        def left() -> float | None:
            return None if time_limit is None else max(0.01, time_limit - (time.perf_counter() - start))

        lp = load_highs(highspy, model.relaxed(), threads, left(), self.lp_settings)
        status, _, _, lp_stats = run_highs(highspy, lp, False)
        stats: dict[str, Any] = {"lp_settings": self.lp_settings, "lp_seconds": time.perf_counter() - start,
                                 "lp_ipm_iterations": lp_stats.get("ipm_iterations"), "rounds": 0}
        if status == "infeasible":
            return "infeasible", None, None, stats
        if status == "timeout":
            return "timeout", None, None, {**stats, "lp_status": status}
        # any duals give a valid bound (weak duality): use them whatever the status (an IPM without crossover
        # after presolve reports "Unknown" for a solved LP); without duals, fix nothing (the whole MIP decides)
        if lp.getSolution().dual_valid:
            # HiGHS minimizes -cost: the duals of the maximization are the negated row duals
            bound, reduced = model.dual_bound(-np.array(lp.getSolution().row_dual))
        else:
            bound, reduced = math.inf, np.zeros(model.num_cols)
            stats["lp_status"] = status
        stats["lp_bound"] = bound if math.isfinite(bound) else None
        slack = 1e-9 * (1.0 + abs(bound)) if math.isfinite(bound) else 0.0
        delta = max(self.first_delta * abs(bound), 1e-6) if math.isfinite(bound) else math.inf
        while True:
            keep = -reduced <= delta + slack
            stats["rounds"] += 1
            stats.update(kept_columns=int(keep.sum()), delta=delta)
            restricted = model.restricted(keep)
            status, values, _, mip_stats = run_highs(
                highspy, load_highs(highspy, restricted, threads, left(), settings), True)
            stats["nodes"] = stats.get("nodes", 0) + mip_stats["nodes"]
            if status == "infeasible":
                if keep.all():
                    return "infeasible", None, None, stats
                delta *= 4.0
                continue
            full = None
            if values is not None:
                full = np.zeros(model.num_cols)
                full[keep] = values
            if status != "optimal":
                return status, full, bound if math.isfinite(bound) else None, stats
            value = float(model.cost @ full)
            if value >= bound - delta - slack or keep.all():
                return "optimal", full, value, stats
            delta = bound - value
