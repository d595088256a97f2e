"""PuLP with its bundled CBC, and PuLP with HiGHS (the highspy API).

PuLP's ``sol_status`` is read, not ``LpStatus`` (PuLP + HiGHS at a time limit still reports "Optimal"); CBC reports
no bound through PuLP.  OR-Tools is imported before PuLP: importing pulp loads highspy, and with highspy loaded
first OR-Tools' own HiGHS breaks (pywraplp answers status 99, MathOpt's HiGHS crashes).
"""

from __future__ import annotations

import contextlib
import functools
import math
import time
import warnings

import numpy as np

from compbench import SolverError

from .driver import ILPSolver, backend_answer
from .highs import HIGHS_JOINT_MIP, apply_settings, highs_threads
from .output import quiet_fds, quiet_highs


class _PulpILP(ILPSolver):
    library = "pulp"

    def _load(self):
        with contextlib.suppress(ImportError):
            import ortools  # noqa: F401  (OR-Tools before PuLP: see the docstring)
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
        infeasible = sol == pulp.LpSolutionInfeasible or prob.status == pulp.LpStatusInfeasible
        reached = time_limit is not None and elapsed >= time_limit  # CBC stopped by its limit says infeasible
        return backend_answer(sol == pulp.LpSolutionOptimal and prob.status == pulp.LpStatusOptimal,
                              infeasible and not reached, reached, values, None, stats)


class PulpCbc(_PulpILP):
    key = "pulp-cbc"
    backend = "pulp+cbc"
    description = "through PuLP with its bundled CBC"

    def _command(self, pulp, time_limit, threads, settings):
        command = pulp.PULP_CBC_CMD(msg=False, timeLimit=time_limit, threads=threads, gapRel=0.0,
                                    options=[f"{name} {value}" for name, value in settings.items()])
        for name, value in settings.items():
            refused = _cbc_refusal(command.path, name, str(value))
            if refused:
                raise SolverError(f"CBC refused the setting {name} = {value!r} ({refused})")
        return command


@functools.cache
def _cbc_refusal(cbc: str, name: str, value: str) -> str | None:
    """CBC's complaint about ``-name value`` (read off the bundled binary, once per setting), or None when it takes
    it: PuLP passes settings on unchecked, and CBC ignored an unknown or bad one with a line no one read."""
    import subprocess

    said = subprocess.run([cbc, f"-{name}", value, "-quit"], capture_output=True, text=True, timeout=30).stdout
    lines = [line.strip() for line in said.splitlines() if line.strip()]
    bad = [line for line in lines if line.startswith(("No match for", "<Possible options")) or "illegal" in line]
    return "; ".join(bad)[:200] or None


class PulpHighs(_PulpILP):
    key = "pulp-highs"
    backend = "pulp+highs"
    description = "through PuLP with HiGHS (highspy API)"
    defaults = {"joint": HIGHS_JOINT_MIP}  # HiGHS's presolve off on the joint model, as highspy's backend has it

    def _command(self, pulp, time_limit, threads, settings):
        import highspy

        apply_settings(highspy, quiet_highs(highspy), settings)  # PuLP drops what HiGHS refuses: refused here
        return pulp.HiGHS(msg=False, timeLimit=time_limit, threads=highs_threads(highspy, threads), gapRel=0.0,
                          **settings)
