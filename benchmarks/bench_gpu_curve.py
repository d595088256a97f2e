"""Where the GPU stands in the comparison: sentences per second against n for the DP on the GPU (cuda-dp), the same
DP on every CPU core (hook-dp) and the fastest ILP of reports/summary.csv (ilp-dp-rcfix-highs), in one run.

    python benchmarks/bench_gpu_curve.py --out "$OUT/gpu_curve.json"      # a machine with a CUDA GPU: ~2 minutes
    python benchmarks/bench_gpu_curve.py --plot reports/gpu/curve.json --figure reports/gpu/throughput
    NUMBA_ENABLE_CUDASIM=1 python benchmarks/bench_gpu_curve.py --quick   (a smoke test without a GPU)

Compressive problems with bigram scores (compbench.generate's gaussian family), free length, several roots.  Each
solver gets the same sentences as a list of problems through ``compbench.solve_many`` (cuda-dp: one launch, the
copies to the GPU and back included; hook-dp: ``jobs=None``, every core; the ILP: ``jobs=None``, one process per
core, a time limit per problem), the wall time of the whole call, the median of ``--repeats`` calls after a warm-up
call (the ILP: one call, on fewer sentences).  A solver's rate counts only optimal answers: every answer is checked
against hook-dp's (objective to 1e-9, the same tree for cuda-dp); a wrong answer stops the run, and an ILP answer
that is not optimal within its limit is reported as such and not counted as solved.  Beside cuda-dp, hook.decode
alone on the same sentences' padded numpy arrays (``decode_seconds``: the copies and the kernel; the rest of
cuda-dp's time is the Python around it: packing the problems, building the answers).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings

import numpy as np

import compbench
from compbench import Status

from machine import machine_line

TOL = 1e-9
ILP = "ilp-dp-rcfix-highs"
# numba warns when a launch has fewer blocks than the GPU has multiprocessors: not news here
warnings.filterwarnings("ignore", message=r".*will likely result in GPU under-utilization")


def timed(run, repeats: int) -> tuple[list, float]:
    """The answers of a first (warm-up) call and the median wall time of ``repeats`` more."""
    answers = run()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return answers, statistics.median(times) if times else float("nan")


def checked(reference: list, answers: list, name: str, same_tree: bool) -> int:
    """How many answers are optimal and agree with the reference (hook-dp); a disagreement ends the run."""
    solved = 0
    for k, (expected, got) in enumerate(zip(reference, answers)):
        if got.status != Status.OPTIMAL:
            continue
        if abs(got.objective - expected.objective) > TOL * max(1.0, abs(expected.objective)):
            sys.exit(f"{name}: problem {k}: objective {got.objective}, hook-dp {expected.objective}")
        if same_tree and not np.array_equal(got.heads, expected.heads):
            sys.exit(f"{name}: problem {k}: a different tree from hook-dp's")
        solved += 1
    return solved


def measure(sizes: list[int], batch: int, ilp_count: int, ilp_limit: float, repeats: int) -> dict:
    # compiled once here before any timing: each worker process of the ILP's solve_many then loads it from numba's
    # cache instead of compiling it within its first problem's time limit
    compbench.get_solver(ILP).warm_up()
    rows = []
    for n in sizes:
        problems = [compbench.generate("gaussian", n, seed=1000 * n + k) for k in range(batch)]
        reference, cpu_seconds = timed(lambda: compbench.solve_many(problems, "hook-dp", jobs=None), repeats)
        answers, gpu_seconds = timed(lambda: compbench.solve_many(problems, "cuda-dp"), repeats)
        gpu_solved = checked(reference, answers, "cuda-dp", same_tree=True)
        decode_seconds = decode_only(problems, repeats)
        sample = problems[:ilp_count]
        start = time.perf_counter()
        ilp = compbench.solve_many(sample, ILP, jobs=None, time_limit=ilp_limit)
        ilp_seconds = time.perf_counter() - start
        ilp_solved = checked(reference, ilp, ILP, same_tree=False)
        statuses = sorted({a.status.value for a in ilp})
        rows.append({"n": n, "batch": batch,
                     "cuda-dp": {"seconds": gpu_seconds, "solved": gpu_solved, "count": batch,
                                 "decode_seconds": decode_seconds},
                     "hook-dp": {"seconds": cpu_seconds, "solved": batch, "count": batch},
                     ILP: {"seconds": ilp_seconds, "solved": ilp_solved, "count": len(sample),
                           "time_limit": ilp_limit, "statuses": statuses}})
        print(f"n = {n:3d}: cuda-dp {gpu_solved / gpu_seconds:12,.0f}/s (hook.decode alone "
              f"{batch / decode_seconds:,.0f}/s)   hook-dp (all cores) "
              f"{batch / cpu_seconds:10,.0f}/s   {ILP} {ilp_solved / ilp_seconds:8,.1f}/s "
              f"({ilp_solved} of {len(sample)} optimal within {ilp_limit:g} s)", flush=True)
    return {"machine": machine_line(), "gpu": gpu_name(), "rows": rows,
            "what": "free length, several roots, gaussian problems with bigram scores; wall time of one "
                    "compbench.solve_many call per solver (median of repeats after a warm-up; ILP: one call)"}


def decode_only(problems: list, repeats: int) -> float:
    """The median seconds of hook.decode alone on the problems' padded numpy arrays (the copies and the kernel,
    no Problem read, no Solution built): what the rest of cuda-dp's solve_many costs is the difference."""
    from compbench_solvers.cuda import hook

    batch = compbench.ProblemBatch.from_problems(problems)
    given = (batch.arc_scores, batch.token_scores, batch.bigram_scores, batch.sizes, batch.min_length,
             batch.max_length, batch.single_root)
    return timed(lambda: hook.decode(*given), repeats)[1]


def gpu_name() -> str:
    try:
        import torch

        return torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none (numba's CUDA simulator)"
    except ImportError:
        return "unknown (torch not installed)"


def plot(data: dict, figure: str) -> None:
    """Sentences per second (optimal answers per wall second) against n, one line per solver, log scale; the ILP's
    points say how many of its problems were solved, a size where none was is a hollow marker on the lower edge."""
    from pathlib import Path

    from compbench.harness.styles import new_figure, save_figure

    fig, (ax,) = new_figure(f"Free-length compression, batch {data['rows'][0]['batch']:,}: {data['gpu']}")
    rows = data["rows"]
    sizes = [row["n"] for row in rows]
    decode = [row for row in rows if "decode_seconds" in row["cuda-dp"]]
    if decode:
        ax.plot([row["n"] for row in decode], [row["batch"] / row["cuda-dp"]["decode_seconds"] for row in decode],
                marker="o", linestyle="--", color="C0", alpha=0.6,
                label="cuda-dp's kernels alone (hook.decode on arrays)")
    for name, label, marker, colour in (("cuda-dp", "cuda-dp (GPU, through solve_many)", "o", "C0"),
                                        ("hook-dp", "hook-dp (every CPU core)", "s", "C1")):
        ax.plot(sizes, [row[name]["solved"] / row[name]["seconds"] for row in rows], marker=marker, color=colour,
                label=label)
    ilp = [(row["n"], row[ILP]["solved"] / row[ILP]["seconds"], row[ILP]) for row in rows]
    solved = [(n, rate) for n, rate, _ in ilp if rate > 0]
    ax.plot([n for n, _ in solved], [rate for _, rate in solved], marker="^", color="C2",
            label=f"{ILP} (every CPU core; time limit {rows[0][ILP]['time_limit']:g} s)")
    bottom = min(rate for _, rate in solved) / 10 if solved else 0.1
    for n, rate, info in ilp:
        ax.annotate(f"{info['solved']} of {info['count']}", (n, rate if rate > 0 else bottom),
                    textcoords="offset points", xytext=(6, 4), fontsize=8, color="C2")
        if rate == 0:
            ax.plot([n], [bottom], marker="^", markerfacecolor="none", color="C2", linestyle="none")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(bottom=bottom / 2)
    ax.set_xticks(sizes, [str(n) for n in sizes])
    ax.set_xlabel("n (tokens)")
    ax.set_ylabel("sentences per second (optimal answers)")
    ax.legend(fontsize=8)
    ax.text(0.0, -0.16, data["machine"].lstrip("# ") + "; hollow: no ILP answer optimal within the limit",
            transform=ax.transAxes, fontsize=7)
    save_figure(fig, Path(figure).parent, Path(figure).stem)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 25, 50, 100])
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--ilp-count", type=int, default=32, help="ILP problems per n (the first of the batch)")
    parser.add_argument("--ilp-limit", type=float, default=20.0, help="the ILP's time limit per problem, seconds")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="n = 5, batch 4, 2 ILP problems")
    parser.add_argument("--out", help="write the measurements here (JSON)")
    parser.add_argument("--plot", help="draw the figure from this JSON instead of measuring")
    parser.add_argument("--figure", help="the figure's path without its extension (with --plot): .png and .svg")
    args = parser.parse_args()
    if args.plot:
        plot(json.loads(open(args.plot).read()), args.figure)
        return
    if args.quick:
        args.sizes, args.batch, args.ilp_count, args.repeats = [5], 4, 2, 1
    print(machine_line(), flush=True)
    data = measure(args.sizes, args.batch, args.ilp_count, args.ilp_limit, args.repeats)
    if args.out:
        with open(args.out, "w") as out:
            json.dump(data, out, indent=1)


if __name__ == "__main__":
    main()
