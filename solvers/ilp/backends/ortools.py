"""OR-Tools: SCIP through pywraplp, and CP-SAT.

- SCIP: RELATIVE_MIP_GAP = 0.
- CP-SAT: integer coefficients only.  The objective is scaled by ``s = 2^e``, the largest power of two with
  ``s * Σ|finite scores| <= 2^50``, and rounded.  Each solution's rounded objective differs from the exact one by
  at most ``(4n+1) / (2s)`` (at most 4n+1 scored terms per solution: n tokens, n arcs, n+1 bigrams, n sibling
  pairs), so the scaled optimum is within ``(4n+1) / s`` of the float optimum; it is guaranteed to be the float
  optimum when every score times s is an integer (e.g. integer or dyadic scores), otherwise only up to that
  tolerance, which is reported in ``stats["scale_tolerance"]`` and added to the bound; when it exceeds the agreement
  tolerance (``compbench.agreement.RTOL``, relative) the answer is ``feasible``, not a proof.  (In the dp model a
  solution's hyperedges carry the same terms: a bigram per [skip], an arc + token (+ sibling) per attachment.)
"""

from __future__ import annotations

import math

import numpy as np

from compbench import Capabilities, SolverError, Status
from compbench.agreement import RTOL

from .driver import ILPSolver, backend_answer
from .output import kept_interrupt_handler, quiet_fds


class OrtoolsScip(ILPSolver):
    key = "ortools-scip"
    backend = "ortools+scip"
    description = "on SCIP through OR-Tools' pywraplp"
    library = "ortools.linear_solver.pywraplp"

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
        return backend_answer(status == solver.OPTIMAL, status == solver.INFEASIBLE,
                              time_limit is not None and status in (solver.FEASIBLE, solver.NOT_SOLVED), values, bound,
                              stats)


class OrtoolsCpSat(ILPSolver):
    supports = Capabilities(second_order=True)  # exact over integers: every score compbench accepts
    key = "ortools-cpsat"
    backend = "ortools+cp-sat"
    description = "on OR-Tools CP-SAT (objective scaled to integers, re-scored with the float scores)"
    library = "ortools.sat.python.cp_model"

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
        with quiet_fds(), kept_interrupt_handler():
            status = solver.solve(cp)
        stats = {"scale": scale, "scale_tolerance": tolerance}
        values = None
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            values = np.array([solver.value(x) for x in xs], dtype=float)
        bound = solver.best_objective_bound / scale + tolerance if values is not None else None
        if status == cp_model.OPTIMAL and tolerance > RTOL * max(1.0, abs(solver.objective_value / scale)):
            # the rounded optimum may be another solution than the float one: a solution and a bound, no proof
            return Status.FEASIBLE, values, bound, {**stats, "unproven": "the scale tolerance exceeds the "
                                                                        "agreement tolerance"}
        return backend_answer(status == cp_model.OPTIMAL, status == cp_model.INFEASIBLE,
                              time_limit is not None and status in (cp_model.FEASIBLE, cp_model.UNKNOWN), values,
                              bound, stats)
