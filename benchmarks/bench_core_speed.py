"""Kernel speed of two source trees (old and new code), timed in alternating fresh processes.

    .venv/bin/python benchmarks/bench_core_speed.py --old OLD_PKGS:OLD_TREE --new NEW_PKGS:NEW_TREE --rounds 7

``--old``/``--new`` are PYTHONPATH values (a folder holding a ``compbench_solvers`` link to the tree's ``solvers/``,
then the tree): each round starts one fresh process of the old code, then one of the new (in /tmp, so that the
current directory shadows neither), and each process times every row once: a warm-up call (compilation or cache
load), then ``calls`` calls, and reports the mean seconds per call.  The report gives each row's median over the
rounds, old and new, and new/old; a row above ``--slower`` (1.10) is rerun once (``--confirm-rounds`` rounds) to
confirm.  Rows (gaussian problems of compbench.generate, seed 0): hook-dp solve at free length, n = 25 and n = 100;
resource-dp solve n = 25, m = 11; both at n = 25 again in second order; compbench.marginals and
compbench.log_partition at n = 25, free length; compbench.solve_many of 1,024 problems n = 10, hook-dp, jobs=1.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
from pathlib import Path

from machine import fresh_process, machine_line

ROOT = Path(__file__).resolve().parent.parent

WORKER = r'''
import json, sys, time
import compbench
rows = json.loads(sys.argv[1])
g = compbench.generate
hook, resource = compbench.get_solver("hook-dp"), compbench.get_solver("resource-dp")
p25, p100, p25m = g("gaussian", 25, seed=0), g("gaussian", 100, seed=0), g("gaussian", 25, seed=0, length=11)
s25, s25m = g("gaussian", 25, seed=0, second_order=True), g("gaussian", 25, seed=0, length=11, second_order=True)
batch = [g("gaussian", 10, seed=0, index=i) for i in range(1024)]
work = {
    "hook-dp solve n=25": (lambda: hook.solve(p25), 1000),
    "hook-dp solve n=100": (lambda: hook.solve(p100), 200),
    "resource-dp solve n=25 m=11": (lambda: resource.solve(p25m), 200),
    "hook-dp solve n=25 second order": (lambda: hook.solve(s25), 1000),
    "resource-dp solve n=25 m=11 second order": (lambda: resource.solve(s25m), 200),
    "marginals n=25": (lambda: compbench.marginals(p25), 500),
    "log_partition n=25": (lambda: compbench.log_partition(p25), 1000),
    "solve_many hook-dp 1024 x n=10 jobs=1": (lambda: compbench.solve_many(batch, "hook-dp", jobs=1), 10),
}
out = {}
for name in rows:
    call, calls = work[name]
    call(); call()
    start = time.perf_counter()
    for _ in range(calls):
        call()
    out[name] = (time.perf_counter() - start) / calls
print(json.dumps(out))
'''

ROWS = ["hook-dp solve n=25", "hook-dp solve n=100", "resource-dp solve n=25 m=11", "hook-dp solve n=25 second order",
        "resource-dp solve n=25 m=11 second order", "marginals n=25",
        "log_partition n=25", "solve_many hook-dp 1024 x n=10 jobs=1"]


def one(pythonpath: str, rows: list[str]) -> dict[str, float]:
    return fresh_process(["-c", WORKER, json.dumps(rows)], dict(os.environ, PYTHONPATH=pythonpath), "/tmp")


def rounds(old: str, new: str, rows: list[str], count: int) -> dict[str, dict[str, list[float]]]:
    times = {"old": {r: [] for r in rows}, "new": {r: [] for r in rows}}
    for i in range(count):
        for side, path in (("old", old), ("new", new)):
            for row, value in one(path, rows).items():
                times[side][row].append(value)
        print(f"round {i + 1}/{count} done", file=sys.stderr, flush=True)
    return times


def table(times: dict, rows: list[str]) -> list[str]:
    lines = [f"{'row':42s} {'old median':>12s} {'new median':>12s} {'new/old':>8s}"]
    for row in rows:
        o, n = statistics.median(times["old"][row]), statistics.median(times["new"][row])
        lines.append(f"{row:42s} {o * 1e3:10.3f}ms {n * 1e3:10.3f}ms {n / o:8.3f}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--old", required=True, help="PYTHONPATH of the old code")
    parser.add_argument("--new", required=True, help="PYTHONPATH of the new code")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--confirm-rounds", type=int, default=7)
    parser.add_argument("--slower", type=float, default=1.10)
    parser.add_argument("--out", default=str(ROOT / "reports/performance/core_speed.txt"))
    args = parser.parse_args()
    command = "$ .venv/bin/python benchmarks/bench_core_speed.py " + shlex.join(sys.argv[1:])
    lines = [command, machine_line()]
    for side, path in (("old", args.old), ("new", args.new)):
        one(path, ROWS[:1])  # compile or load every cache before timing
        one(path, ROWS)
    times = rounds(args.old, args.new, ROWS, args.rounds)
    lines.append(f"{args.rounds} rounds, alternating fresh processes (old, new); each row: mean seconds per call "
                 "after a warm-up, median over rounds")
    lines += table(times, ROWS)
    slow = [r for r in ROWS if statistics.median(times["new"][r]) > args.slower * statistics.median(times["old"][r])]
    if slow:
        lines.append(f"rerun of the rows above {args.slower}x ({args.confirm_rounds} rounds):")
        lines += table(rounds(args.old, args.new, slow, args.confirm_rounds), slow)
    else:
        lines.append(f"no row above {args.slower}x")
    lines.append(machine_line("at the end"))
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
