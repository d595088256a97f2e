"""Median build and solve time of the joint ILP per backend and formulation, with the root LP-relaxation gap.

    .venv/bin/python benchmarks/bench_ilp.py --sizes 10 15 20 25 30 --instances 5

Instances: ``compbench.generate("distance", n, seed, length=round(0.45 n))`` (closest to real scores).  The LP
gap is computed with HiGHS on the same arrays with integrality dropped: (LP - ILP optimum) / |ILP optimum|.
One thread per backend.  Solves that hit ``--time-limit`` are counted at the limit and marked.
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np

import compbench
from solvers.ilp.model import build_model

FORMULATIONS = {"single": {"flow": "single"}, "single+cuts": {"flow": "single", "bigram_cuts": True},
                "multi": {"flow": "multi"}}
BACKENDS = ["ilp-highs", "ilp-pulp-highs", "ilp-pulp-cbc", "ilp-ortools-scip", "ilp-ortools-cpsat"]


def lp_value(problem, options) -> float:
    import highspy

    model = build_model(problem, **options)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    inf = highspy.kHighsInf
    h.addCols(model.num_cols, -model.cost, model.col_lower, model.col_upper, 0, np.zeros(1, dtype=np.int32),
              np.zeros(0, dtype=np.int32), np.zeros(0))
    h.addRows(model.num_rows, np.where(np.isinf(model.row_lower), -inf, model.row_lower),
              np.where(np.isinf(model.row_upper), inf, model.row_upper), len(model.row_values),
              model.row_starts[:-1].astype(np.int32), model.row_cols.astype(np.int32), model.row_values)
    h.run()
    return -h.getInfo().objective_function_value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 15, 20, 25, 30])
    parser.add_argument("--instances", type=int, default=5)
    parser.add_argument("--backends", nargs="+", default=BACKENDS)
    parser.add_argument("--formulations", nargs="+", default=list(FORMULATIONS))
    parser.add_argument("--time-limit", type=float, default=10.0)
    args = parser.parse_args()
    print("| backend | formulation | n | m | vars | rows | nnz | build s | solve s | LP gap % | optimal |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for formulation in args.formulations:
        options = FORMULATIONS[formulation]
        for n in args.sizes:
            m = round(0.45 * n)
            problems = [compbench.generate("distance", n=n, seed=s, length=m) for s in range(args.instances)]
            gaps = []
            for name in args.backends:
                solver = compbench.get_solver(name)
                builds, solves, proven = [], [], 0
                for i, p in enumerate(problems):
                    sol = solver.solve(p, time_limit=args.time_limit, **options)
                    builds.append(sol.seconds["setup"])
                    solves.append(sol.seconds["solve"])
                    proven += sol.status == compbench.Status.OPTIMAL
                    if name == args.backends[0] and sol.status == compbench.Status.OPTIMAL and len(gaps) <= i:
                        gaps.append(100 * (lp_value(p, options) - sol.objective) / abs(sol.objective))
                size = sol.stats.get("model", {})
                gap = f"{statistics.median(gaps):.2f}" if gaps else "-"
                print(f"| {name} | {formulation} | {n} | {m} | {size.get('variables')} | {size.get('constraints')} "
                      f"| {size.get('nonzeros')} | {statistics.median(builds):.3f} | {statistics.median(solves):.3f} "
                      f"| {gap} | {proven}/{len(problems)} |", flush=True)


if __name__ == "__main__":
    main()
