"""Inside + outside (compbench.marginals) against the max-semiring fill of the same chart, in one run.

    .venv/bin/python benchmarks/bench_marginals.py --sizes 25 60 --instances 5

Per n, order (first / second) and length mode (free; counted with m = round(0.45 n)): the median seconds of the max
semiring's work on the same problem (``Chart.fill`` + backtrace at free length, hook-dp's kernel; ``resource-dp``
counted), of ``compbench.log_partition`` (inside), of the scaled chart's inside (``ScaledChart.fill``: scores to
probabilities and the inside kernel) and outside (``ScaledChart.outside``) alone, of ``compbench.marginals`` (scores
to probabilities, inside, outside, and the posteriors summed into the problem's layouts) and of the log-space engine
it falls back to.  Compiled kernels are loaded before timing.  Then what one term of a split loop costs in each
semiring's arithmetic (``--terms``): max-plus, log-sum-exp (online and in two passes), sum of products: why the
scaled chart sums in probability space.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np
from numba import njit

import compbench
from compbench_solvers.compressive.chart import Chart, ScaledChart
from compbench_solvers.compressive.marginals import _goal_counts, log_space_marginals, scaled_marginals
from compbench_solvers.compressive.base import load_kernels

from machine import machine_line


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
    parser.add_argument("--terms", type=int, default=1000, help="length of the split loop timed per semiring")
    args = parser.parse_args()
    print(machine_line(), flush=True)
    load_kernels()
    for second_order in (False, True):
        p = compbench.generate("gaussian", 4, seed=0, length=2, second_order=second_order)
        scaled_marginals(p), log_space_marginals(p)
    resource = compbench.get_solver("resource-dp")
    print("| n | order | length | max semiring ms | log Z ms | inside + outside ms | marginals ms | "
          "log-space engine ms | inside + outside / max | marginals / max |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in args.sizes:
        for second_order in (False, True):
            for counted in (False, True):
                rows: dict[str, list[float]] = {"max": [], "logz": [], "kernels": [], "marg": [], "log": []}
                for seed in range(args.instances):
                    p = compbench.generate("gaussian", n, seed=seed, length=round(0.45 * n) if counted else None,
                                           second_order=second_order)
                    if counted:
                        rows["max"].append(timed(lambda: resource.solve(p)))
                    else:
                        rows["max"].append(timed(lambda: Chart.fill(p).heads(0)))
                    counting, cap, goal = _goal_counts(p.n, *p.length_bounds())
                    chart = ScaledChart.fill(p, counting=counting, cap=cap)
                    inside = timed(lambda: ScaledChart.fill(p, counting=counting, cap=cap))
                    rows["kernels"].append(inside + timed(lambda: chart.outside(goal)))
                    rows["logz"].append(timed(lambda: compbench.log_partition(p)))
                    rows["marg"].append(timed(lambda: compbench.marginals(p)))
                    rows["log"].append(timed(lambda: log_space_marginals(p), 1))
                med = {k: 1e3 * statistics.median(v) for k, v in rows.items()}
                print(f"| {n} | {'second' if second_order else 'first'} | {'counted' if counted else 'free'} | "
                      f"{med['max']:.3g} | {med['logz']:.3g} | {med['kernels']:.3g} | {med['marg']:.3g} | "
                      f"{med['log']:.3g} | {med['kernels'] / med['max']:.1f}x | {med['marg'] / med['max']:.1f}x |",
                      flush=True)
    per_term(args.terms)


@njit
def max_plus(a, b):
    best = -np.inf
    for k in range(a.shape[0]):
        best = max(best, a[k] + b[k])
    return best


@njit
def log_sum_exp_online(a, b):
    top, total = -np.inf, 0.0
    for k in range(a.shape[0]):
        v = a[k] + b[k]
        if v > top:
            total, top = total * math.exp(top - v) + 1.0, v
        else:
            total += math.exp(v - top)
    return top + math.log(total)


@njit
def log_sum_exp_two_passes(a, b):
    top = -np.inf
    for k in range(a.shape[0]):
        top = max(top, a[k] + b[k])
    total = 0.0
    for k in range(a.shape[0]):
        total += math.exp(a[k] + b[k] - top)
    return top + math.log(total)


@njit
def sum_of_products(a, b):
    total = 0.0
    for k in range(a.shape[0]):
        total += a[k] * b[k]
    return total


def per_term(terms: int) -> None:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(terms), rng.standard_normal(terms)
    repeats = 10_000_000 // terms
    costs = []
    for function in (max_plus, log_sum_exp_online, log_sum_exp_two_passes, sum_of_products):
        function(a, b)
        start = time.perf_counter()
        for _ in range(repeats):
            function(a, b)
        costs.append(f"{function.__name__} {(time.perf_counter() - start) / (repeats * terms) * 1e9:.2f} ns")
    print(f"\none term of a {terms}-term split loop: " + ", ".join(costs))


if __name__ == "__main__":
    main()
