"""Gurobi through gurobipy (the ``gurobi`` extra).

The licence bundled with gurobipy is size-limited (2,000 variables and 2,000 constraints): a larger model is
answered ``unsupported`` with Gurobi's reason.  MIPGap = 0.
"""

from __future__ import annotations

import math

import numpy as np

from compbench import SolverError

from .driver import BackendLimit, ILPSolver, backend_answer
from .output import quiet_fds


class Gurobi(ILPSolver):
    key = "gurobi"
    backend = "gurobipy"
    description = "on Gurobi through gurobipy (the size-limited licence of the package index: small n only, or yours)"
    library = "gurobipy"
    install = "pip install 'compbench[gurobi]'"

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
        return backend_answer(m.Status == G.OPTIMAL, m.Status in (G.INFEASIBLE, G.INF_OR_UNBD),
                              m.Status in (G.TIME_LIMIT, G.INTERRUPTED, G.NODE_LIMIT, G.ITERATION_LIMIT,
                                           G.SOLUTION_LIMIT), values, bound, stats, gurobi_status=int(m.Status))
