"""Where the scaled chart answers log Z, and what the rest costs: per generator, n and temperature, in one run.

    .venv/bin/python benchmarks/bench_scaled_range.py --sizes 25 50 100 200 --temperatures 1 3 10 --instances 4

The scaled chart keeps an answer only when its underflow rules prove that nothing it lost matters (chart.py, the
comment above ``SAFE``); the batch kernel applies the first two (nothing underflowed; a bound from the numbers of
operations and solutions), the one-at-a-time scaled chart a third (a bound from the max chart's outside values), and
the log-space engine answers what all refuse.  Per row (free length, first order, a generator's sentences with every
score times the temperature): how many sentences each engine answered, and the median ms a sentence of
``compbench.log_partition_many`` over them (jobs=1).  Every answer is checked against the log-space engine to 1e-9.
"""

from __future__ import annotations

import argparse
import statistics
import time

import compbench
from compbench_solvers.compressive.chart import ScaledChart
from compbench_solvers.compressive.marginals import _batched, _log_space_inside, scaled_log_partition
from compbench_solvers.compressive.base import load_kernels

from machine import machine_line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[25, 50, 100, 200])
    parser.add_argument("--temperatures", type=float, nargs="+", default=[1.0, 3.0, 10.0])
    parser.add_argument("--generators", nargs="+", default=["gaussian", "distance"])
    parser.add_argument("--instances", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(machine_line(), flush=True)
    load_kernels()
    ScaledChart.fill(compbench.generate("gaussian", 4, seed=0))
    print("| generator | n | temperature | batch kernel (two rules) | scaled chart (third rule) | log space | "
          "ms a sentence |")
    print("|---|---|---|---|---|---|---|")
    for generator in args.generators:
        for n in args.sizes:
            for temperature in args.temperatures:
                problems = []
                for seed in range(args.instances):
                    p = compbench.generate(generator, n, seed=seed)
                    problems.append(p.replace(token_scores=p.token_scores * temperature,
                                              arc_scores=p.arc_scores * temperature,
                                              bigram_scores=p.bigram_scores * temperature))
                batch = compbench.ProblemBatch.from_problems(problems)
                _, kept, *_ = _batched(batch, False, 1)
                third = sum(scaled_log_partition(p) is not None for p, ok in zip(problems, kept) if not ok)
                log_z = compbench.log_partition_many(batch, jobs=1)
                for p, got in zip(problems, log_z):
                    expected = _log_space_inside(p)[4]
                    assert abs(got - expected) <= 1e-9 * max(1.0, abs(expected)), (generator, n, temperature)
                times = []
                for _ in range(args.repeats):
                    start = time.perf_counter()
                    compbench.log_partition_many(batch, jobs=1)
                    times.append(time.perf_counter() - start)
                ms = 1000 * statistics.median(times) / len(problems)
                print(f"| {generator} | {n} | {temperature:g} | {int(kept.sum())} | {third} | "
                      f"{len(problems) - int(kept.sum()) - third} | {ms:.3g} |", flush=True)
    print("\nevery answer agreed with the log-space engine's to 1e-9 relative")


if __name__ == "__main__":
    main()
