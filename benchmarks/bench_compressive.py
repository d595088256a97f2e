"""Speed of the hook-trick chart's solvers: hook-dp, resource-dp, bisection (medians, m = round(0.45 n)).

Usage: .venv/bin/python benchmarks/bench_compressive.py [--repeats 30] [--quick]

Every number is a median over ``--repeats`` random gaussian instances per size, measured after warm-up, with
numba's compile time measured separately in fresh processes.  "kernel" is the compiled chart (fill + backtrace
to heads); "solve" is the whole ``Solver.solve`` call (capability check, wrapper, Solution).  Reports:
hook-dp at n = 25 and 100 (targets 0.05 ms, 3 ms); resource-dp at n = 25 (m = 11) and 50 (targets 1 ms, 15 ms);
bisection at n = 25 (target 1 ms, all iterations) with its certificate rate on the gaussian and integer-ties
kinds; the slope of log time vs log n for hook-dp over n = 40..160 (target 2.7-3.3); second order vs first order
at n = 25..50 (target within 2x); long sentences (n = 200).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import compbench
from compbench_solvers.compressive import Chart, count_plan
from compbench_solvers.compressive.base import load_kernels

from machine import machine_line

COMPILE_PROBE = "import time; t = time.perf_counter(); from compbench_solvers.compressive.base import load_kernels; " \
                "load_kernels(); print(time.perf_counter() - t)"


def compile_seconds() -> tuple[float, float]:
    """Seconds to import and compile the kernels in a fresh process with an empty numba cache, then cached."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        runs = [float(subprocess.run([sys.executable, "-c", COMPILE_PROBE], env=env, check=True,
                                     capture_output=True, text=True).stdout) for _ in range(2)]
    return runs[0], runs[1]


def problems(n: int, repeats: int, kind: str = "gaussian", second_order: bool = False, ratio: float = 0.45):
    return [compbench.generate(kind, n, seed=1, index=i, length=round(ratio * n), second_order=second_order)
            for i in range(repeats)]


def timed(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def kernel_call(problem: compbench.Problem, counting: str = "none", cap: int = 0):
    def run():
        chart = Chart.fill(problem, counting=counting, cap=cap, tie=-1)
        chart.heads(int(np.argmax(chart.goal)))
    return run


def median_ms(times: list[float]) -> float:
    return 1000 * statistics.median(times)


def hook_dp(n: int, repeats: int) -> tuple[float, float]:
    solver = compbench.get_solver("hook-dp")
    kernel, solve = [], []
    for p in problems(n, repeats):
        free = p.replace(length=None)
        kernel.append(timed(kernel_call(free)))
        solve.append(timed(lambda: solver.solve(free)))
    return median_ms(kernel), median_ms(solve)


def resource_dp(n: int, repeats: int) -> tuple[float, float]:
    solver = compbench.get_solver("resource-dp")
    kernel, solve = [], []
    for p in problems(n, repeats):
        kernel.append(timed(kernel_call(p, *count_plan(n, *p.length_bounds()))))
        solve.append(timed(lambda: solver.solve(p)))
    return median_ms(kernel), median_ms(solve)


def bisection(n: int, repeats: int, kind: str) -> dict:
    solver = compbench.get_solver("bisection")
    times, iterations, certified = [], [], 0
    for p in problems(n, repeats, kind=kind):
        start = time.perf_counter()
        solution = solver.solve(p)
        times.append(time.perf_counter() - start)
        iterations.append(solution.stats["iterations"])
        certified += solution.stats["certificate"]
    return {"ms": median_ms(times), "iterations": statistics.median(iterations), "rate": certified / repeats}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="fewer sizes (a smoke run)")
    args = parser.parse_args()
    print(machine_line(), flush=True)
    r = args.repeats

    cold, cached = compile_seconds()
    print(f"numba: import + compile in a fresh process {cold:.1f} s; from the cache {cached:.2f} s")
    load_kernels()
    for n in (25, 50):  # warm the caches of this process
        hook_dp(n, 3)
        resource_dp(n, 3)

    print("\nhook-dp (free length), median ms: kernel (fill + heads) / whole solve()")
    for n, target in ((25, 0.05), (100, 3.0)):
        kernel, solve = hook_dp(n, r)
        print(f"  n = {n:>3}: {kernel:.4f} / {solve:.4f} ms   (target <= {target} ms)")

    print("\nresource-dp (exact m = round(0.45 n)), median ms: kernel / solve()")
    for n, target in ((25, 1.0), (50, 15.0)):
        kernel, solve = resource_dp(n, r)
        print(f"  n = {n:>3}, m = {round(0.45 * n)}: {kernel:.3f} / {solve:.3f} ms   (target <= {target} ms)")

    print("\nbisection at n = 25 (m = 11): median ms for all iterations, median iterations, certificate rate")
    for kind in ("gaussian", "integer-ties"):
        b = bisection(25, max(r, 100), kind)
        print(f"  {kind:<13} {b['ms']:.3f} ms   {b['iterations']:.0f} iterations   "
              f"certificate {100 * b['rate']:.0f}%   (target <= 1 ms)")

    sizes = [40, 60, 80, 100] if args.quick else [40, 60, 80, 100, 120, 140, 160]
    medians = [hook_dp(n, max(5, r // 3))[0] for n in sizes]
    slope = np.polyfit(np.log(sizes), np.log(medians), 1)[0]
    print("\nhook-dp scaling (kernel): " + ", ".join(f"n={n}: {t:.3f} ms" for n, t in zip(sizes, medians)))
    print(f"  slope of log time vs log n over n = {sizes[0]}..{sizes[-1]}: {slope:.2f}   (target 2.7-3.3)")

    print("\nsecond order vs first order (same instances, interleaved), median kernel ms")
    for n in (25, 35, 50):
        first_hook, second_hook, first_res, second_res = [], [], [], []
        for p in problems(n, max(5, r // 2), second_order=True):
            m = p.length.min
            plain = p.replace(sibling_scores=None)
            first_hook.append(timed(kernel_call(plain.replace(length=None))))
            second_hook.append(timed(kernel_call(p.replace(length=None))))
            first_res.append(timed(kernel_call(plain, "kept", m)))
            second_res.append(timed(kernel_call(p, "kept", m)))
        h1, h2, r1, r2 = (median_ms(t) for t in (first_hook, second_hook, first_res, second_res))
        print(f"  n = {n}: hook-dp {h1:.3f} -> {h2:.3f} ms ({h2 / h1:.2f}x); "
              f"resource-dp {r1:.2f} -> {r2:.2f} ms ({r2 / r1:.2f}x)   (target <= 2x)")

    print("\nlong sentences (n = 200), median ms of solve()")
    long = [compbench.generate("distance", 200, seed=2, index=i) for i in range(3)]
    hook = median_ms([timed(lambda: compbench.get_solver("hook-dp").solve(p)) for p in long])
    print(f"  hook-dp {hook:.1f} ms")
    for m in (5, 10, 190):
        res = median_ms([timed(lambda: compbench.get_solver("resource-dp").solve(p.replace(length=m))) for p in long])
        print(f"  resource-dp m = {m} (d = {min(m, 200 - m)}): {res:.1f} ms")


if __name__ == "__main__":
    main()
