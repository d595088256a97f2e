"""Start-up: a warm ``compbench solve`` and ``compbench --help`` against what numpy and numba cost by themselves.

    .venv/bin/python benchmarks/bench_startup.py --repeats 15

Each row is a fresh process (wall clock, the rows alternated so the machine's load hits them alike; medians):
``import numpy, numba``; the same exiting as the ``compbench`` program does, without the garbage collector's
shutdown passes (``gc.freeze()``, :func:`compbench.cli.run`); numba's floor, a process that imports them and calls
one tiny function from numba's cache (numba fills its typing and target registries before it loads a cached
kernel); the same function defined with ``compbench_solvers.jit.njit``, which loads it without them; ``compbench
--help``; ``compbench solve instances/ex1.json`` (resource-dp, its kernels from the cache: run once before the
timing).  Ratios are to the first row, and to the second (the baseline exiting as the ``compbench`` program does).
The processes run without PYTHONDONTWRITEBYTECODE (set in some sandboxes): an installed compbench has its bytecode
cached, and compiling its modules from source every time added about 0.05 s to each compbench row.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import machine_line

ROOT = Path(__file__).resolve().parent.parent
FLOOR = """
from {module} import njit
@njit(cache=True)
def one(x):
    return x + 1
one(1)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    compbench = str(Path(sys.executable).with_name("compbench"))
    with tempfile.TemporaryDirectory() as scratch:
        floor, ours = Path(scratch, "floor.py"), Path(scratch, "ours.py")
        floor.write_text(FLOOR.format(module="numba"))
        ours.write_text(FLOOR.format(module="compbench_solvers.jit"))
        rows = {
            "python -c 'import numpy, numba'": [sys.executable, "-c", "import numpy, numba"],
            "the same, exiting as compbench does (gc.freeze)": [sys.executable, "-c", "import numpy, numba, gc; "
                                                                 "gc.freeze()"],
            "numba's floor: one cached function called": [sys.executable, str(floor)],
            "the same with compbench_solvers.jit.njit": [sys.executable, str(ours)],
            "compbench --help": [compbench, "--help"],
            "compbench solve instances/ex1.json": [compbench, "solve", str(ROOT / "instances" / "ex1.json")],
        }
        # a user's warm start: Python's bytecode cache as well as numba's
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        for command in rows.values():  # fill the caches (numba's, Python's, the OS's) before timing
            subprocess.run(command, check=True, capture_output=True, env=env)
        times: dict[str, list[float]] = {name: [] for name in rows}
        for _ in range(args.repeats):
            for name, command in rows.items():
                start = time.perf_counter()
                subprocess.run(command, check=True, capture_output=True, env=env)
                times[name].append(time.perf_counter() - start)
    print(machine_line("at the end"))
    print(f"fresh processes, median of {args.repeats}, rows alternated")
    print("| what | seconds | x import numpy, numba | x the same, frozen at exit |")
    print("|---|---|---|---|")
    base, frozen = (statistics.median(values) for values in list(times.values())[:2])
    for name, values in times.items():
        seconds = statistics.median(values)
        print(f"| {name} | {seconds:.3f} | {seconds / base:.2f} | {seconds / frozen:.2f} |")


if __name__ == "__main__":
    main()
