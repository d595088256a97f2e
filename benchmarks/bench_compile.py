"""Compile time of every kernel group: the first call of each, compilation included, in a fresh process with an
empty numba cache (its own NUMBA_CACHE_DIR), and end to end the first ``compbench solve`` and ``compbench warm-up``.

    .venv/bin/python benchmarks/bench_compile.py --out reports/performance/compile.txt

Each group runs in its own process with a new empty NUMBA_CACHE_DIR, so each figure includes every kernel that
group needs (groups share kernels: decode's fill and backtrace are part of pruned-dp's).  "first" is the first call
(compile + run), "second" the same call again (run only); the import of compbench and numba is timed apart.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import fresh_process, machine_line

ROOT = Path(__file__).resolve().parent.parent

WORKER = r'''
import json, sys, time
start = time.perf_counter()
import numpy as np, numba, compbench
from compbench import generate
import compbench_solvers.compressive, compbench_solvers.signature
imported = time.perf_counter() - start
group = sys.argv[1]
p = generate("gaussian", 8, seed=1, length=4)
free = generate("gaussian", 8, seed=1)
if group == "decode first order (hook-dp solve)":
    call = lambda: compbench.get_solver("hook-dp").solve(free)
elif group == "decode second order (hook-dp solve)":
    q = generate("gaussian", 8, seed=1, second_order=True)
    call = lambda: compbench.get_solver("hook-dp").solve(q)
elif group == "hyperedge listing (hypergraph)":
    from compbench_solvers.compressive.chart import hypergraph
    call = lambda: hypergraph(free)
elif group == "resource-dp solve (counted chart)":
    call = lambda: compbench.get_solver("resource-dp").solve(p)
elif group == "pruned-dp solve (pruned chart fill and backtrace)":
    call = lambda: compbench.get_solver("pruned-dp").solve(p)
elif group == "resource-dp all_lengths":
    call = lambda: compbench.get_solver("resource-dp").solve(p, all_lengths=True)
elif group == "marginals first order":
    call = lambda: compbench.marginals(p)
elif group == "marginals second order":
    q = generate("gaussian", 8, seed=1, length=4, second_order=True)
    call = lambda: compbench.marginals(q)
elif group == "tree_marginals_many":
    arcs = np.random.default_rng(0).normal(size=(4, 9, 9))
    call = lambda: compbench.tree_marginals_many(arcs, jobs=1)
elif group == "signature-dp solve":
    call = lambda: compbench.get_solver("signature-dp").solve(p)
t = time.perf_counter(); call(); first = time.perf_counter() - t
t = time.perf_counter(); call(); second = time.perf_counter() - t
print(json.dumps({"import": imported, "first": first, "second": second}))
'''

GROUPS = ["decode first order (hook-dp solve)", "decode second order (hook-dp solve)",
          "resource-dp solve (counted chart)", "pruned-dp solve (pruned chart fill and backtrace)",
          "resource-dp all_lengths", "marginals first order", "marginals second order",
          "hyperedge listing (hypergraph)", "tree_marginals_many", "signature-dp solve"]


def fresh_env(cache: str) -> dict[str, str]:
    return dict(os.environ, NUMBA_CACHE_DIR=cache)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(ROOT / "reports/performance/compile.txt"))
    parser.add_argument("--groups", default=";".join(GROUPS), help="semicolon-separated subset of the groups")
    args = parser.parse_args()
    lines = ["$ .venv/bin/python benchmarks/bench_compile.py " + shlex.join(sys.argv[1:]), machine_line()]
    lines.append("fresh process, empty NUMBA_CACHE_DIR per group; seconds: first call (compile + run), second call "
                 "(run), import of compbench + numba apart")
    for group in args.groups.split(";"):
        with tempfile.TemporaryDirectory() as cache:
            r = fresh_process(["-c", WORKER, group], fresh_env(cache), ROOT)
        lines.append(f"compile {group}: {r['first']:.1f} s first call, {r['second']:.4f} s second, "
                     f"import {r['import']:.1f} s")
        print(lines[-1], flush=True)
    for name, command in (("compbench solve instances/ex1.json", ["solve", "instances/ex1.json"]),
                          ("compbench warm-up", ["warm-up"])):
        with tempfile.TemporaryDirectory() as cache:
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "compbench", *command], env=fresh_env(cache), cwd=ROOT,
                                  capture_output=True, text=True)
            seconds = time.perf_counter() - start
        if done.returncode != 0:
            sys.exit(done.stderr[-3000:])
        stated = re.findall(r"warm-up: .*? in [\d.]+ s", done.stdout + done.stderr)
        lines.append(f"end to end {name}: {seconds:.1f} s wall, empty cache" + (f" ({stated[-1]})" if stated else ""))
        print(lines[-1], flush=True)
    lines.append(machine_line("at the end"))
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
