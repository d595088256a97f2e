"""Per-call overhead of ``Solver.solve`` against the compiled kernel, and batch throughput of ``solve_many``.

    .venv/bin/python benchmarks/bench_overhead.py --n 25 --repeats 3000 --batch 2000

Part 1, one problem of n tokens (``hook-dp``, free length), medians of ``--repeats`` calls alternated in one process:
the kernel alone (``_fill_max`` + ``_backtrace`` on prepared records), ``decode_one`` (the one compiled call that
``hook-dp`` makes: scores laid out, chart filled and backtraced), ``Chart.fill`` + backtrace, ``Solver.solve``,
and what surrounds them (building the ``Problem``, the capability check, the
``Solution``).  Overhead = solve - kernel: the next regression shows here.

Part 2, ``--batch`` problems with n drawn from 20..30: problems per second of one ``solve`` per problem and of
``solve_many`` with 1 and 2 threads (medians of 5 runs, alternated).

Part 3, with ``--instances FILE`` (e.g. the Google test split at the gold length, from ``compbench
build-instances``): the seconds of decoding the whole set with the exact solvers of counted lengths ``resource-dp``,
``pruned-dp`` and ``bisection-exact``, and with ``bisection`` (certificates for part of the set only), one ``solve``
per problem and ``solve_many`` with 1 and 2 threads (medians of 3 runs, alternated).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import compbench
from compbench_solvers.compressive import chart as C
from compbench_solvers.compressive.batch import decode_one
from compbench_solvers.compressive.base import load_kernels

from machine import machine_line


def medians(functions: dict, repeats: int) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in functions}
    for _ in range(repeats):
        for name, function in functions.items():  # alternated: the machine's load hits every row alike
            start = time.perf_counter()
            function()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=25)
    parser.add_argument("--repeats", type=int, default=3000)
    parser.add_argument("--batch", type=int, default=2000)
    parser.add_argument("--instances", metavar="FILE", help="an instance set to decode at its lengths (part 3)")
    args = parser.parse_args()
    print(machine_line(), flush=True)
    load_kernels()
    solver = compbench.get_solver("hook-dp")
    p = compbench.generate("gaussian", args.n, seed=0)
    decode_one(p)
    chart = C.Chart.fill(p, tie=-1)
    cells, inputs = chart._cells, chart._scores
    heads, stack = np.full(p.n + 1, -1), np.empty((8 * (p.n + 2), 4), np.int64)

    def kernel() -> None:
        C._fill_max(cells, inputs)
        C._backtrace(cells, inputs, 0, heads, stack)

    rows = medians({
        "kernel (_fill + _backtrace)": kernel,
        "decode_one (one compiled call)": lambda: decode_one(p),
        "Chart.fill + heads": lambda: C.Chart.fill(p, tie=-1).heads(0),
        "Solver.solve": lambda: solver.solve(p),
        "Problem(...) (validation)": lambda: compbench.Problem(p.token_scores, p.arc_scores, p.bigram_scores),
        "capability check": lambda: solver.supports.reason_unsupported(p),
        "Solution(...)": lambda: compbench.Solution(compbench.Status.OPTIMAL, heads, 1.0, bound=1.0),
    }, args.repeats)
    kernel_us = rows["kernel (_fill + _backtrace)"] * 1e6
    print(f"one problem, n = {args.n}, hook-dp, median of {args.repeats} calls")
    print("| what | µs | over the kernel µs |")
    print("|---|---|---|")
    for name, seconds in rows.items():
        over = f"{seconds * 1e6 - kernel_us:.1f}" if name in ("decode_one (one compiled call)", "Chart.fill + heads",
                                                             "Solver.solve") else ""
        print(f"| {name} | {seconds * 1e6:.1f} | {over} |")

    rng = np.random.default_rng(0)
    batch = [compbench.generate("gaussian", int(rng.integers(20, 31)), seed=seed) for seed in range(args.batch)]
    runs = batch_medians(solver, batch, 5)
    print()
    print(f"{args.batch} problems, n 20..30, hook-dp (free length), median of 5 runs")
    print("| how | seconds | problems per second |")
    print("|---|---|---|")
    for name, seconds in runs.items():
        print(f"| {name} | {seconds:.3f} | {args.batch / seconds:,.0f} |")
    if args.instances:
        problems = list(compbench.read_instances(args.instances))
        names = ("resource-dp", "pruned-dp", "bisection-exact", "bisection")
        runs = {name: batch_medians(compbench.get_solver(name), problems, 3) for name in names}
        sizes = [q.n for q in problems]
        print()
        print(f"{len(problems)} instances of {args.instances.rsplit('/', 1)[-1]} (n {min(sizes)}..{max(sizes)}, mean "
              f"{np.mean(sizes):.1f}) at their lengths, seconds of decoding, median of 3 runs")
        print(f"| how | {' | '.join(names)} |")
        print("|---|" + "---|" * len(names))
        for how in runs[names[0]]:
            print(f"| {how} | {' | '.join(f'{runs[name][how]:.3f}' for name in names)} |")


def batch_medians(solver, problems: list, repeats: int) -> dict[str, float]:
    """Median seconds of one solve per problem and of solve_many with one and two threads (after a warm batch)."""
    solver.solve_many(problems[:4], jobs=2)
    return medians({
        "one solve per problem": lambda: [solver.solve(q) for q in problems],
        "solve_many, jobs=1": lambda: solver.solve_many(problems, jobs=1),
        "solve_many, jobs=2": lambda: solver.solve_many(problems, jobs=2),
    }, repeats)


if __name__ == "__main__":
    main()
