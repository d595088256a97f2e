"""One small adapter per MIP backend, each a registered solver; all load :func:`solvers.ilp.model.build_model`.

Backends are imported lazily inside ``_load`` (a missing backend answers ``unsupported``); OR-Tools is imported
before PuLP when both are used in one process (see ``/work/shared/notes/dependencies.md``).  One thread by default
(``threads=`` option).  Every answer is decoded from z / y only after checking that they are integral, validated
with :func:`compbench.evaluate` and re-scored with the float scores.  Statuses:

- ``ilp-highs`` / ``ilp-pulp-highs``: ``mip_rel_gap`` = 0; ``optimal`` only on HiGHS's kOptimal; PuLP's
  ``sol_status`` (not ``LpStatus``) is read.
- ``ilp-pulp-cbc``: CBC's ``sol_status``; no bound is reported through PuLP.
- ``ilp-ortools-scip``: RELATIVE_MIP_GAP = 0.
- ``ilp-ortools-cpsat``: integer coefficients only.  The objective is scaled by ``s = 2^e``, the largest power of
  two with ``s * Σ|finite scores| <= 2^50``, and rounded.  Each solution's rounded objective differs from the
  exact one by at most ``(4n+1) / (2s)`` (at most 4n+1 scored terms per solution: n tokens, n arcs, n+1 bigrams,
  n sibling pairs), so the scaled optimum is within ``(4n+1) / s`` of the float optimum; it is guaranteed to be
  the float optimum when every score times s is an integer (e.g. integer or dyadic scores), otherwise only up to
  that tolerance, which is reported in ``stats["scale_tolerance"]`` and added to the bound.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time
import warnings
from typing import Any

import numpy as np

from compbench import Capabilities, InvalidSolution, Problem, Solution, Solver, SolverError, Status, evaluate

from .model import FLOWS, Model, build_model

INTEGRALITY_TOLERANCE = 1e-5


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


def decode(problem: Problem, model: Model, values: np.ndarray) -> np.ndarray | None:
    """Heads from a column vector, or None when z / y are not integral or do not form a head assignment."""
    n = problem.n
    z = values[model.z_index[1:]]
    heads = np.full(n + 1, -1, dtype=np.int64)
    if n == 0:
        return heads
    y_cols = model.y_index[:, 1:]
    y = np.where(y_cols >= 0, values[np.maximum(y_cols, 0)], 0.0)
    for block in (z, y):
        if np.any(np.abs(block - np.round(block)) > INTEGRALITY_TOLERANCE):
            return None
    z, y = np.round(z).astype(int), np.round(y).astype(int)
    for k in range(1, n + 1):
        chosen = np.flatnonzero(y[:, k - 1])
        if z[k - 1] == 1:
            if len(chosen) != 1:
                return None
            heads[k] = chosen[0]
        elif len(chosen):
            return None
    return heads


class ILPSolver(Solver):
    """Shared driver: build the model, hand it to ``_run``, decode and validate."""

    exact = True
    complexity = "NP-hard in general (MIP); model O(n^3) rows, O(n^4) nonzeros"
    supports = Capabilities(lengths=frozenset({"exact", "range", "free"}), single_root=True, second_order=True)
    backend = ""

    def _load(self) -> Any:
        raise NotImplementedError

    def _run(self, model: Model, time_limit: float | None, threads: int) -> tuple[str, np.ndarray | None,
                                                                                  float | None, dict[str, Any]]:
        """(``optimal`` | ``feasible`` | ``infeasible`` | ``timeout`` | ``error``, column values, bound, stats)."""
        raise NotImplementedError

    def _solve(self, problem: Problem, *, time_limit: float | None, all_lengths: bool, flow: str = "single",
               bigram_cuts: bool = False, threads: int = 1, **options: Any) -> Solution:
        if options:
            raise SolverError(f"unknown options {sorted(options)}")
        if flow not in FLOWS:
            raise SolverError(f"flow must be one of {FLOWS}")
        try:
            self._load()
        except ImportError as exc:
            return Solution(Status.UNSUPPORTED, message=f"{self.name}: backend not installed ({exc})")
        start = time.perf_counter()
        model = build_model(problem, flow=flow, bigram_cuts=bigram_cuts)
        setup = time.perf_counter() - start
        status, values, bound, stats = self._run(model, time_limit, threads)
        solve = time.perf_counter() - start - setup
        stats = {"model": model.stats(), "backend": self.backend, "threads": threads, **stats}
        seconds = {"setup": setup, "solve": solve}
        if status == "infeasible":
            return Solution(Status.INFEASIBLE, seconds=seconds, stats=stats)
        heads = None if values is None else decode(problem, model, values)
        objective = None
        if heads is not None:
            try:
                objective = evaluate(problem, Solution(Status.FEASIBLE, heads=heads))
            except InvalidSolution as exc:
                stats["rejected"] = str(exc)
                heads = None
        if heads is None:
            if status == "optimal":
                raise SolverError("the backend claimed optimality but returned no valid integral solution")
            final = Status.TIMEOUT if status == "timeout" else Status.ERROR
            return Solution(final, bound=bound, seconds=seconds, stats=stats,
                            message=f"{self.name}: no valid integral solution ({status})")
        final = {"optimal": Status.OPTIMAL, "timeout": Status.TIMEOUT}.get(status, Status.FEASIBLE)
        if final == Status.OPTIMAL:
            bound = objective if bound is None else max(bound, objective)
        return Solution(final, heads=heads, objective=objective, bound=bound, seconds=seconds, stats=stats)


class HighsILP(ILPSolver):
    name = "ilp-highs"
    backend = "highspy"
    description = "Joint ILP (tree, bigrams, projectivity) on HiGHS through highspy, loaded from numpy arrays"

    def _load(self):
        import highspy
        return highspy

    def _run(self, model, time_limit, threads):
        highspy = self._load()
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", int(threads))
        h.setOptionValue("mip_rel_gap", 0.0)
        if time_limit is not None:
            h.setOptionValue("time_limit", float(time_limit))
        inf = highspy.kHighsInf
        col_upper = model.col_upper.copy()
        h.addCols(model.num_cols, -model.cost, model.col_lower, col_upper, 0, np.zeros(1, dtype=np.int32),
                  np.zeros(0, dtype=np.int32), np.zeros(0))
        h.addRows(model.num_rows, np.where(np.isinf(model.row_lower), -inf, model.row_lower),
                  np.where(np.isinf(model.row_upper), inf, model.row_upper), len(model.row_values),
                  model.row_starts[:-1].astype(np.int32), model.row_cols.astype(np.int32), model.row_values)
        integer = np.flatnonzero(model.integrality).astype(np.int32)
        h.changeColsIntegrality(len(integer), integer,
                                np.array([highspy.HighsVarType.kInteger] * len(integer)))
        h.run()
        status = h.getModelStatus()
        info = h.getInfo()
        S = highspy.HighsModelStatus
        has_solution = info.primal_solution_status == highspy.SolutionStatus.kSolutionStatusFeasible
        values = np.array(h.getSolution().col_value) if has_solution else None
        bound = -info.mip_dual_bound if math.isfinite(info.mip_dual_bound) else None
        stats = {"nodes": int(info.mip_node_count), "gap": float(info.mip_gap)}
        if status == S.kOptimal:
            return "optimal", values, bound, stats
        if status == S.kInfeasible:
            return "infeasible", None, None, stats
        if status in (S.kTimeLimit, S.kInterrupt, S.kIterationLimit, S.kSolutionLimit):
            return "timeout", values, bound, stats
        return "error", values, bound, {**stats, "model_status": h.modelStatusToString(status)}


class _PulpILP(ILPSolver):
    def _load(self):
        with contextlib.suppress(ImportError):
            import ortools  # noqa: F401  (OR-Tools before PuLP: see dependencies.md)
        import pulp
        return pulp

    def _command(self, pulp, time_limit, threads):
        raise NotImplementedError

    def _run(self, model, time_limit, threads):
        with warnings.catch_warnings():  # PuLP 3.3 announces its 4.0 API on every variable
            warnings.simplefilter("ignore", DeprecationWarning)
            return self._run_pulp(model, time_limit, threads)

    def _run_pulp(self, model, time_limit, threads):
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
        with quiet_fds():
            prob.solve(self._command(pulp, time_limit, threads))
        sol = prob.sol_status
        values = None
        if sol in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
            values = np.array([x.varValue if x.varValue is not None else np.nan for x in xs], dtype=float)
        stats = {"pulp_status": pulp.LpStatus[prob.status], "sol_status": int(sol)}
        if sol == pulp.LpSolutionOptimal and prob.status == pulp.LpStatusOptimal:
            return "optimal", values, None, stats
        if sol == pulp.LpSolutionInfeasible or prob.status == pulp.LpStatusInfeasible:
            return "infeasible", None, None, stats
        if time_limit is not None:
            return "timeout", values, None, stats
        return "error", values, None, stats


class PulpCbcILP(_PulpILP):
    name = "ilp-pulp-cbc"
    backend = "pulp+cbc"
    description = "Joint ILP through PuLP with its bundled CBC"

    def _command(self, pulp, time_limit, threads):
        return pulp.PULP_CBC_CMD(msg=False, timeLimit=time_limit, threads=threads, gapRel=0.0)


class PulpHighsILP(_PulpILP):
    name = "ilp-pulp-highs"
    backend = "pulp+highs"
    description = "Joint ILP through PuLP with HiGHS (highspy API)"

    def _command(self, pulp, time_limit, threads):
        return pulp.HiGHS(msg=False, timeLimit=time_limit, threads=threads, gapRel=0.0)


class OrtoolsScipILP(ILPSolver):
    name = "ilp-ortools-scip"
    backend = "ortools+scip"
    description = "Joint ILP on SCIP through OR-Tools' pywraplp"

    def _load(self):
        from ortools.linear_solver import pywraplp
        return pywraplp

    def _run(self, model, time_limit, threads):
        pywraplp = self._load()
        solver = pywraplp.Solver.CreateSolver("SCIP")
        if solver is None:
            raise SolverError("OR-Tools was built without SCIP")
        solver.SetNumThreads(int(threads))
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

    def _run(self, model, time_limit, threads):
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
        n = len(model.z_index) - 1
        tolerance = 0.0 if exact_scale else (4 * n + 1) / scale
        cp.maximize(sum(int(c) * xs[j] for j, c in enumerate(scaled) if c != 0))
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = int(threads)
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
