"""Speed of signature-dp and ql-subgradient (medians, m = round(0.45 n), numba compile excluded).

Usage: .venv/bin/python benchmarks/bench_signature.py [--repeats 5] [--max-n 35]

Reports signature-dp at n = 20 and n = 30 (targets 0.1 s and 1.5 s), at the lengths of Clarke & Lapata's
newswire sentences (mean about 28 tokens) next to the paper's 0.61 s per sentence, ql-subgradient's time per
iteration at n = 25 (target 5 ms), and the slope of log time vs log n for signature-dp over n = 10..max-n.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import compbench
from compbench_solvers.signature import Chart

from machine import machine_line

PAPER_SECONDS_PER_SENTENCE = 0.61  # Qian & Liu 2014, Clarke & Lapata newswire


def problem(n: int, seed: int) -> compbench.Problem:
    return compbench.generate("gaussian", n=n, seed=seed, length=round(0.45 * n))


def median_solve(solver: compbench.Solver, n: int, repeats: int, **options) -> float:
    times = []
    for seed in range(repeats):
        p = problem(n, seed)
        start = time.perf_counter()
        solution = solver.solve(p, **options)
        times.append(time.perf_counter() - start)
        assert solution.status in (compbench.Status.OPTIMAL, compbench.Status.FEASIBLE), solution.message
    return statistics.median(times)


def chart_steps(n: int) -> int:
    """Innermost steps of the PAIR and CR rules of the counted chart (span width w, split offset a)."""
    positions = n + 1
    steps = 0
    for w in range(1, positions):
        spans = positions - w
        pair = sum((a + 1) * (a + 1) * (w - a) for a in range(w))  # k1 <= a, p in s..r, k2 <= w-a-1
        cr = sum(a * (w - a + 1) ** 2 for a in range(1, w + 1))  # k1 <= a-1, k2 <= w-a, p in r..t
        steps += spans * (pair + cr)
    return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--max-n", type=int, default=35)
    args = parser.parse_args()
    print(machine_line(), flush=True)
    warm = problem(4, 0)  # compile (or load from the numba cache) outside the timings
    Chart(warm.token_scores, warm.arc_scores, warm.bigram_scores, count=True, single_root=False)
    signature = compbench.get_solver("signature-dp")
    ql = compbench.get_solver("ql-subgradient")

    print("signature-dp, median seconds per problem (m = round(0.45 n))")
    for n, target in ((20, 0.1), (30, 1.5)):
        print(f"  n = {n}: {median_solve(signature, n, args.repeats):.3f} s (target <= {target} s)")

    print(f"Clarke & Lapata newswire lengths: paper {PAPER_SECONDS_PER_SENTENCE} s/sentence at mean ~28 tokens")
    for n in (20, 28, 35):
        print(f"  n = {n}: ours {median_solve(signature, n, args.repeats):.3f} s")

    per_iteration = []
    for seed in range(args.repeats):
        solution = ql.solve(problem(25, seed), max_iterations=20)
        per_iteration.append(solution.stats["seconds_per_iteration"])
    print(f"ql-subgradient at n = 25: {1000 * statistics.median(per_iteration):.2f} ms per iteration "
          f"(target <= 5 ms)")

    sizes = list(range(10, args.max_n + 1, 5))
    medians = [median_solve(signature, n, args.repeats) for n in sizes]
    slope = np.polyfit(np.log(sizes), np.log(medians), 1)[0]
    print("signature-dp scaling: " + ", ".join(f"n={n}: {t:.4f} s" for n, t in zip(sizes, medians)))
    print(f"  slope of log time vs log n over n = {sizes[0]}..{sizes[-1]}: {slope:.2f}")
    late = np.polyfit(np.log(sizes[-3:]), np.log(medians[-3:]), 1)[0]
    step_slope = np.polyfit(np.log(sizes), np.log([chart_steps(n) for n in sizes]), 1)[0]
    print(f"  slope of the chart's step count over the same n (exactly Theta(n^6) asymptotically): {step_slope:.2f}")
    print(f"  slope over the last three sizes (n = {sizes[-3]}..{sizes[-1]}): {late:.2f}")
    # The n^6 term has a small constant (about n^6 / 360 steps per rule): it dominates only at larger n.
    large = [40, 50, 60]  # chart of about 170 MiB at n = 60
    large_medians = [median_solve(signature, n, max(1, args.repeats // 2)) for n in large]
    print("  larger n: " + ", ".join(f"n={n}: {t:.3f} s" for n, t in zip(large, large_medians)))
    slope_large = np.polyfit(np.log(large), np.log(large_medians), 1)[0]
    step_slope = np.polyfit(np.log(large), np.log([chart_steps(n) for n in large]), 1)[0]
    print(f"  slope over n = {large[0]}..{large[-1]}: {slope_large:.2f} (step count: {step_slope:.2f})")


if __name__ == "__main__":
    main()
