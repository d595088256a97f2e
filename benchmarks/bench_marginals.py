"""Inside + outside (compbench.marginals) against the max-semiring fill of the same chart, in one run.

    .venv/bin/python benchmarks/bench_marginals.py --sizes 25 60 --instances 5

Per n, order (first / second) and length mode (free; counted with m = round(0.45 n)): the median seconds of
``compbench.log_partition`` (inside only), ``compbench.marginals`` (hyperedge listing + inside + outside), and
of the max semiring's work on the same problem: ``Chart.fill`` + backtrace at free length (hook-dp's kernel),
``resource-dp`` counted.  Compiled kernels are loaded before timing.
"""

from __future__ import annotations

import argparse
import statistics
import time

import compbench
from solvers.compressive.chart import Chart
from solvers.compressive.solvers import count_plan, load_kernels


def timed(function, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[25, 60])
    parser.add_argument("--instances", type=int, default=5)
    args = parser.parse_args()
    load_kernels()
    compbench.marginals(compbench.generate("gaussian", 4, seed=0, length=2))
    resource = compbench.get_solver("resource-dp")
    print("| n | order | length | max semiring s | log Z s | marginals s | marginals / max |")
    print("|---|---|---|---|---|---|---|")
    for n in args.sizes:
        for second_order in (False, True):
            for counted in (False, True):
                rows = {"max": [], "logz": [], "marg": []}
                for seed in range(args.instances):
                    p = compbench.generate("gaussian", n, seed=seed, length=round(0.45 * n) if counted else None,
                                           second_order=second_order)
                    if counted:
                        counting, cap = count_plan(n, *p.length_bounds())
                        rows["max"].append(timed(lambda: resource.solve(p)))
                    else:
                        rows["max"].append(timed(lambda: Chart.fill(p).heads(0)))
                    rows["logz"].append(timed(lambda: compbench.log_partition(p)))
                    rows["marg"].append(timed(lambda: compbench.marginals(p)))
                med = {k: statistics.median(v) for k, v in rows.items()}
                print(f"| {n} | {'second' if second_order else 'first'} | {'counted' if counted else 'free'} | "
                      f"{med['max']:.5f} | {med['logz']:.5f} | {med['marg']:.5f} | {med['marg'] / med['max']:.1f}x |",
                      flush=True)


if __name__ == "__main__":
    main()
