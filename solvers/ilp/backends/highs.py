"""HiGHS through highspy, loaded from the model's numpy arrays.

``mip_rel_gap`` = 0 (HiGHS reports optimal when it stops on the gap); ``optimal`` only on HiGHS's kOptimal.  The
settings per formulation were chosen by measurement (README, "The ILP side"; ``benchmarks/bench_ilp.py``).  This
backend also solves the LP relaxations (``lp-joint-highs``, ``lp-dp-highs``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from compbench import SolverError, Status

from ..model import Model
from .driver import Answer, ILPSolver, backend_answer
from .output import quiet_highs


_SCHEDULER: list[int] = []  # the thread count HiGHS's global scheduler runs with in this process, once started


def highs_threads(highspy: Any, threads: int) -> int:
    """``threads`` for a HiGHS run (highspy's or PuLP's), its process-wide scheduler reset first when it was started
    with another count: HiGHS refused the run otherwise ('global scheduler has already been initialized to use 1
    threads'), and every solve with threads=2 after one with 1 (or back) was an error."""
    threads = int(threads)
    if _SCHEDULER and _SCHEDULER[0] != threads:
        highspy.Highs.resetGlobalScheduler(True)
    _SCHEDULER[:] = [threads]
    return threads


def apply_settings(highspy: Any, h: Any, settings: dict[str, Any]) -> None:
    """``settings`` set on the ``Highs`` ``h``; one HiGHS refuses (an unknown name, a bad value) is a SolverError."""
    for name, value in settings.items():
        if h.setOptionValue(name, value) != highspy.HighsStatus.kOk:
            raise SolverError(f"HiGHS refused the setting {name} = {value!r}")


def load_highs(highspy: Any, model: Model, threads: int, time_limit: float | None, settings: dict[str, Any]) -> Any:
    """A ``highspy.Highs`` holding ``model`` (as a minimization of -cost), one thread, gap 0, ``settings`` applied."""
    h = quiet_highs(highspy)
    h.setOptionValue("threads", highs_threads(highspy, threads))
    h.setOptionValue("mip_rel_gap", 0.0)
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    apply_settings(highspy, h, settings)
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


def run_highs(highspy: Any, h: Any, is_mip: bool) -> Answer:
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
    return backend_answer(status == S.kOptimal, status == S.kInfeasible,
                          status in (S.kTimeLimit, S.kInterrupt, S.kIterationLimit, S.kSolutionLimit), values, bound,
                          stats, model_status=h.modelStatusToString(status))


# HiGHS settings chosen by measurement (README, "The ILP side"; benchmarks/bench_ilp.py).  The dp model's LP is
# extremely degenerate for the dual simplex, the interior-point method solves it fast; the root sub-MIP heuristics
# and symmetry detection cost 1-2 s at n = 25 and find nothing the LP does not.  Presolve on the joint model costs
# more than it saves, and on some instances it is wrong: it reports a worse solution optimal (hypothesis found one at
# n = 5, tests/test_ilp.py's test_highs_presolve_on_the_joint_model_stays_off), through highspy and PuLP alike.
HIGHS_DP_MIP = {"mip_lp_solver": "ipm", "mip_heuristic_run_rens": False, "mip_heuristic_run_rins": False,
                "mip_heuristic_run_feasibility_jump": False, "mip_heuristic_run_root_reduced_cost": False,
                "mip_detect_symmetry": False}
HIGHS_JOINT_MIP = {"presolve": "off"}


class Highs(ILPSolver):
    key = "highs"
    backend = "highspy"
    description = "on HiGHS through highspy, loaded from numpy arrays"
    defaults = {"joint": HIGHS_JOINT_MIP, "dp": HIGHS_DP_MIP}
    lp_defaults = {"joint": {}, "dp": {"solver": "ipm"}}  # the dp LP by interior point, with crossover: a vertex
    library = "highspy"
    def _run(self, model, time_limit, threads, settings):
        highspy = self._load()
        answer = run_highs(highspy, load_highs(highspy, model, threads, time_limit, settings), model.is_mip)
        if answer[0] == Status.ERROR and not model.is_mip and settings.get("solver") == "ipm":
            # HiGHS's interior point with crossover can end in "Solve error" on an infeasible LP: ask the
            # simplex method instead (found by hypothesis)
            retry = {k: v for k, v in settings.items() if k != "solver"}
            status, values, bound, stats = run_highs(highspy, load_highs(highspy, model, threads, time_limit, retry),
                                                     model.is_mip)
            answer = status, values, bound, {**stats, "retried_with": "simplex (the interior point failed)"}
        return answer
