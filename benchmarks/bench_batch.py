"""Batch throughput over a ``compbench.ProblemBatch`` against a list of ``Problem`` objects (issue 38's goals).

    .venv/bin/python benchmarks/bench_batch.py --baseline /tmp/oldbatchpkgs:/tmp/old-batch

Sentences per second of ``hook-dp`` (free length, MAP) and of ``log_partition_many`` (log Z) over B sentences of n
tokens (``gaussian``, seeds 0..B-1), each timed as one call from its input to its answers (a list of ``Solution``,
an array of log Z): over the ``ProblemBatch`` (built once from the problems, not timed) and over the same sentences
as a list of problems, with ``jobs`` = 1 and 2.  ``--baseline PYTHONPATH``: the list rows again with the code that
PYTHONPATH imports (e.g. a worktree of the main branch), in a child process started each round.  Every row is the
median of ``--repeats`` rounds, the rows alternated within a round (this machine is shared).  Also timed: one
``hook-dp`` solve at n = 25 (the single-problem path, median of 1000 calls in a fresh process each round, for this
code and the baseline's), the batch's compiled decoding alone (``decode``: the kernel calls, no ``Solution`` built)
with ``jobs`` = 1 and 2, and the machine's own ceiling for ``jobs`` = 2: a numba loop that releases the GIL, the
same work on 1 and on 2 threads (2 x the work per second of two threads over one thread's), and the decode kernel's
own: two threads decoding the same 512 sentences 8 times over into arrays of their own.  Writes
reports/performance/batch.txt.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

import numba
import numpy as np

import compbench
from machine import fresh_process, machine_line


def rate(function, count: int) -> float:
    start = time.perf_counter()
    function()
    return count / (time.perf_counter() - start)


def list_rates(size: int, n: int) -> dict[str, float]:
    """One round of the list rows (what the baseline's child process runs)."""
    problems = [compbench.generate("gaussian", n, seed=seed) for seed in range(size)]
    solver = compbench.get_solver("hook-dp")
    solver.solve_many(problems[:8], jobs=2)
    compbench.log_partition_many(problems[:8], jobs=2)
    out = {}
    for jobs in (1, 2):
        out[f"map list jobs={jobs}"] = rate(lambda: solver.solve_many(problems, jobs=jobs), size)
        out[f"logz list jobs={jobs}"] = rate(lambda: compbench.log_partition_many(problems, jobs=jobs), size)
    return out


def single_seconds() -> float:
    """The median of 1000 ``hook-dp`` solves of one problem at n = 25 (what the children run, each in a fresh
    process for the code it imports: a long-lived process's timing here drifts between two levels)."""
    solver = compbench.get_solver("hook-dp")
    one = compbench.generate("gaussian", 25, seed=0)
    solver.solve(one)
    calls = []
    for _ in range(1000):
        start = time.perf_counter()
        solver.solve(one)
        calls.append(time.perf_counter() - start)
    return statistics.median(calls)


def child(path: str | None, *options: str) -> dict[str, float]:
    """What this script prints with ``options`` in a fresh process importing the code on ``path`` (None: this
    process's)."""
    return fresh_process([__file__, *options], dict(os.environ) if path is None else {**os.environ, "PYTHONPATH": path})


@numba.njit(nogil=True, cache=True)
def _spin(steps: int) -> float:
    x = 1.0
    for _ in range(steps):
        x = (x * 1.0000001 + 0.3) % 1000.0
    return x


def two_threads_gain(work: Callable[[], object]) -> float:
    """Work per second on two threads over one thread's, for ``work`` (run once first, untimed)."""
    work()
    one = rate(work, 1)
    with ThreadPoolExecutor(2) as pool:
        two = rate(lambda: list(pool.map(lambda _: work(), range(2))), 2)
    return two / one


def thread_ceiling(steps: int = 50_000_000) -> float:
    """:func:`two_threads_gain` of a loop that releases the GIL."""
    return two_threads_gain(lambda: _spin(steps))


def kernel_ceiling(batch: compbench.ProblemBatch, sentences: int = 512, times: int = 8) -> float:
    """Work per second on two threads over one thread's, for the decode kernel itself: each thread decodes the same
    ``sentences`` of the batch ``times`` over (they stay in cache) into work and output arrays of its own (no part
    scheduling, no answers built)."""
    from compbench_solvers.compressive.batch import ITEMS, OUT, PARAMS, _decode_many, _new_work

    part = batch.take(list(range(min(sentences, len(batch)))))
    width, N = part.max_n + 1, int(part.sizes.max()) + 1
    arrays = (part.token_scores, part.arc_scores, part.bigram_scores, part.sibling_scores, part.sizes,
              part.single_root, np.zeros((len(part), PARAMS), np.int64), np.zeros(len(part)), np.int64(-1))
    order = np.tile(np.arange(len(part)), times)

    return two_threads_gain(lambda: _decode_many(*arrays, *_new_work(ITEMS * N * N, N),
                                                 np.full(len(part) * width, -1, np.int64), np.zeros((len(part), OUT)),
                                                 order))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--n", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--baseline", metavar="PYTHONPATH", help="time the list rows with this code as well")
    parser.add_argument("--child", choices=("list", "single"), help=argparse.SUPPRESS)  # what a child process runs
    parser.add_argument("--out", default="reports/performance/batch.txt")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(list_rates(args.size, args.n) if args.child == "list" else {"single": single_seconds()}))
        return
    from compbench_solvers.compressive.batch import decode

    lines = [f"$ .venv/bin/python benchmarks/bench_batch.py {' '.join(sys.argv[1:])}".rstrip(), machine_line()]
    solver = compbench.get_solver("hook-dp")
    problems = [compbench.generate("gaussian", args.n, seed=seed) for seed in range(args.size)]
    batch = compbench.ProblemBatch.from_problems(problems)
    solver.solve_many(batch, jobs=2)
    compbench.log_partition_many(batch, jobs=2)
    rows: dict[str, list[float]] = {}
    ceilings, kernel_ceilings = [], []
    free = np.zeros((len(batch), 4), np.int64)
    for _ in range(args.repeats):
        for jobs in (1, 2):
            rows.setdefault(f"decode kernel alone jobs={jobs}", []).append(rate(lambda: decode(batch, free, jobs=jobs),
                                                                                args.size))
            rows.setdefault(f"map batch jobs={jobs}", []).append(rate(lambda: solver.solve_many(batch, jobs=jobs),
                                                                       args.size))
            rows.setdefault(f"logz batch jobs={jobs}", []).append(
                rate(lambda: compbench.log_partition_many(batch, jobs=jobs), args.size))
        for name, value in list_rates(args.size, args.n).items():
            rows.setdefault(name, []).append(value)
        rows.setdefault("single", []).append(child(None, "--child", "single")["single"])
        if args.baseline:
            found = {**child(args.baseline, "--child", "list", "--size", str(args.size), "--n", str(args.n)),
                     **child(args.baseline, "--child", "single")}
            for name, value in found.items():
                rows.setdefault(f"{name} (baseline)", []).append(value)
        ceilings.append(thread_ceiling())
        kernel_ceilings.append(kernel_ceiling(batch))
    median = {name: statistics.median(values) for name, values in rows.items()}
    lines.append(f"# {args.size} sentences, n = {args.n} (gaussian, free length); sentences per second, median of "
                 f"{args.repeats} rounds; baseline: {args.baseline or 'none'}")
    for name in sorted(median):
        if name.startswith("single"):
            lines.append(f"hook-dp solve, n = 25{name[6:]:21s}{median[name] * 1e6:10.1f} us (median of 1000 calls)")
        else:
            lines.append(f"{name:42s}{median[name]:10.0f} /s")
    for task in ("decode kernel alone", "map", "logz"):
        rows_of = "decode kernel alone" if task == "decode kernel alone" else f"{task} batch"
        lines.append(f"{task}: jobs=2 / jobs=1{'':{24 - len(task)}s}"
                     f"{median[f'{rows_of} jobs=2'] / median[f'{rows_of} jobs=1']:8.2f}x")
        if args.baseline and task != "decode kernel alone":
            for jobs in (1, 2):
                ratio = median[f"{task} batch jobs={jobs}"] / median[f"{task} list jobs={jobs} (baseline)"]
                lines.append(f"{task}: batch / baseline list, jobs={jobs}         {ratio:8.2f}x")
    lines.append(f"this machine's ceiling for jobs=2 (a GIL-free numba loop, 2 threads / 1)  "
                 f"{statistics.median(ceilings):.2f}x")
    lines.append(f"the decode kernel's own ceiling (2 threads / 1, private arrays, a cached batch)  "
                 f"{statistics.median(kernel_ceilings):.2f}x")
    lines.append(machine_line("at the end"))
    text = "\n".join(lines) + "\n"
    Path(args.out).write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
