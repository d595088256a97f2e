"""compbench's GPU kernels against supar and torch-struct on the GPU and compbench's CPU kernels on every core, in one
run: plain dependency parsing (every word kept, several roots), sentences per second.

    python benchmarks/bench_gpu.py --out "$OUT/gpu_plain.txt"       # a machine with a CUDA GPU: about 5 minutes
    python benchmarks/bench_gpu.py --quick                          # a smoke test: batch 8, n = 10
    NUMBA_ENABLE_CUDASIM=1 python benchmarks/bench_gpu.py --quick --sizes 4 --batches 3   # no GPU: the simulator

(pip install -e '.[gpu]' and torch with CUDA; the peers: pip install --no-deps supar==1.1.4 torch-struct==0.5.)
Rows per n, batch and task (MAP with its tree, log Z, arc marginals), float64 unless said:
- ``cuda (GPU in)``: compbench_solvers.cuda.eisner with the scores already on the GPU as a torch tensor (used in
  place through __cuda_array_interface__, no copy), the answers left there;
- ``cuda (numpy in)``: the same from a numpy array, the copies to the GPU and back included;
- supar (DependencyCRF) and torch-struct (DependencyCRF) with their scores already on the GPU, each in float32 and
  float64, the better of the two in the compact table (both in the full one);
- ``CPU``: compbench's CPU kernels on every core (``jobs=None``): tree_log_partition_many, tree_marginals_many and
  resource-dp at length n through solve_many (the path bench_peers.py measures).
Every GPU call is wrapped in synchronisations; each row is the median of repeats after a first call (which compiles:
its time is reported separately, per kernel).  Before any timing counts, every cuda answer is checked against the
CPU kernels' (trees identical, log Z and marginals to 1e-9 relative); a mismatch is reported in the row and makes
the exit status 1.  A time budget (``--budget``) stops starting new sizes, so the whole run fits a short GPU lease;
the full table is rewritten to ``--out`` after every size, so an interrupted run still leaves what it measured.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import statistics
import sys
import time

import numpy as np

import compbench
from bench_peers import load_peers, peer_runs, tree_problems
from compbench.solver import cores
from compbench_solvers.cuda import runtime
from machine import machine_line

TASKS = ("MAP", "log Z", "marginals")


def host(array) -> np.ndarray:
    """A result as a numpy array, wherever it lives."""
    if hasattr(array, "detach"):
        return array.detach().cpu().numpy()
    if hasattr(array, "copy_to_host"):
        return array.copy_to_host()
    return np.asarray(array)


def measure(run, sync, repeats: int, seconds: float) -> tuple[object, float, float, int]:
    """(the first call's answer, its time (compilation included), the median of the next calls, their number):
    ``repeats`` calls, fewer when they pass ``seconds`` (at least one)."""
    sync()
    start = time.perf_counter()
    answer = run()
    sync()
    first = time.perf_counter() - start
    times: list[float] = []
    while not times or (len(times) < repeats and sum(times) < seconds):
        sync()
        start = time.perf_counter()
        run()
        sync()
        times.append(time.perf_counter() - start)
    return answer, first, statistics.median(times), len(times)


def relative_error(got: np.ndarray, want: np.ndarray, floor: float = 1e-12) -> float:
    """The largest |got - want| / max(|want|, floor) (inf where one is infinite and the other not)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    same = (got == want)
    with np.errstate(invalid="ignore"):
        error = np.where(same, 0.0, np.abs(got - want) / np.maximum(np.abs(want), floor))
    return float(np.nan_to_num(error, nan=np.inf).max(initial=0.0))


def check(task: str, got, reference) -> str:
    """'ok' when a cuda answer equals the CPU kernels' (trees identical, values to 1e-9 relative), else what differs."""
    if task == "MAP":
        heads, scores = host(got[0]), host(got[1])
        want = np.stack([s.heads for s in reference])
        objectives = np.array([s.objective for s in reference])
        if not np.array_equal(heads, want):
            return f"MISMATCH: {int((heads != want).any(axis=1).sum())} trees differ"
        error = relative_error(scores, objectives)
        return "ok" if error <= 1e-9 else f"MISMATCH: scores {error:.1e} relative"
    if task == "log Z":
        error = relative_error(host(got), reference)
        return "ok" if error <= 1e-9 else f"MISMATCH: log Z {error:.1e} relative"
    log_z, arcs = host(got[0]), host(got[1])
    error_z = relative_error(log_z, [m.log_partition for m in reference])
    error_arc = relative_error(arcs, np.stack([m.arc for m in reference]))
    if error_z <= 1e-9 and error_arc <= 1e-9:
        return "ok"
    return f"MISMATCH: log Z {error_z:.1e}, marginals {error_arc:.1e} relative"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 25, 50, 100])
    parser.add_argument("--batches", type=int, nargs="+", default=[4096, 256])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--row-seconds", type=float, default=1.5, help="stop a row's repeats past this")
    parser.add_argument("--budget", type=float, default=300.0,
                        help="seconds after which no new size is started (the run's total stays near it)")
    parser.add_argument("--quick", action="store_true", help="a smoke test: batch 8, n = 10, 2 repeats")
    parser.add_argument("--peer-device", default="cuda", help="where the peers run (cpu: to test this script)")
    parser.add_argument("--out", help="write the full table and the machine line to this file")
    args = parser.parse_args()
    if args.quick:
        args.repeats = 2
        if args.sizes == parser.get_default("sizes"):
            args.sizes = [10]
        if args.batches == parser.get_default("batches"):
            args.batches = [8]
    began = time.perf_counter()
    reason = runtime.unavailable()
    if reason is not None:
        print(f"bench_gpu: the GPU kernels cannot run here: {reason}", file=sys.stderr)
        return 2
    from compbench_solvers.cuda import eisner

    cu = runtime.cuda()
    peers = load_peers()
    try:
        import torch
    except ImportError:
        torch = None
    torch_gpu = torch is not None and torch.cuda.is_available()
    if args.peer_device == "cuda" and not torch_gpu:
        peers = {}
    if runtime.simulated():
        gpu = "numba's CUDA simulator (no GPU: times mean nothing)"
    else:
        gpu = cu.get_current_device().name
        gpu = gpu.decode() if isinstance(gpu, bytes) else gpu
    versions = ", ".join(f"{name} {importlib.metadata.version(name)}" for name in
                         ("numpy", "numba", "numba-cuda", "torch", "supar", "torch-struct")
                         if _installed(name))
    header = [machine_line(), f"# GPU: {gpu}; {versions}",
              f"# peers on {args.peer_device if peers else 'none'}: {', '.join(peers) or 'not installed or no CUDA torch'}"
              f"; GPU input as {'torch tensors' if torch_gpu else 'numba device arrays'}; CPU: jobs=None "
              f"({cores(None)} cores)"]
    for line in header:
        print(line, flush=True)

    def sync() -> None:
        if torch_gpu:
            torch.cuda.synchronize()
        cu.synchronize()

    full = ["| n | batch | task | system | input | sentences/s | median s | runs | first call s | check |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    compact: list[str] = []
    failed = False
    resource = compbench.get_solver("resource-dp")
    rng = np.random.default_rng(0)
    last = 0.0
    for batch in args.batches:
        for n in args.sizes:
            elapsed = time.perf_counter() - began
            if elapsed + last > args.budget:
                note = f"# stopped before n = {n}, batch {batch}: {elapsed:.0f} s used of the {args.budget:.0f} s budget"
                print(note, flush=True)
                full.append(note)
                break
            started = time.perf_counter()
            arcs = rng.standard_normal((batch, n + 1, n + 1))
            on_gpu = torch.tensor(arcs, device="cuda") if torch_gpu else cu.to_device(arcs)
            rates: dict[tuple[str, str], float] = {}

            def row(task: str, system: str, given: str, first: float, median: float, runs: int, verdict: str) -> None:
                rates[(task, system)] = max(rates.get((task, system), 0.0), batch / median)
                full.append(f"| {n} | {batch} | {task} | {system} | {given} | {batch / median:,.0f} | {median:.4g} | "
                            f"{runs} | {first:.3g} | {verdict} |")

            cpu_runs = {"MAP": lambda: resource.solve_many(tree_problems(arcs), jobs=None),
                        "log Z": lambda: compbench.tree_log_partition_many(arcs),
                        "marginals": lambda: compbench.tree_marginals_many(arcs)}
            gpu_runs = {"MAP": eisner.tree_map, "log Z": eisner.tree_log_partition, "marginals": eisner.tree_marginals}
            for task in TASKS:
                reference, first, median, runs = measure(cpu_runs[task], lambda: None, args.repeats, args.row_seconds)
                row(task, "CPU", "float64", first, median, runs, "reference")
                for given, scores in (("GPU", on_gpu), ("numpy", arcs)):
                    answer, first, median, runs = measure(lambda: gpu_runs[task](scores), sync, args.repeats,
                                                          args.row_seconds)
                    verdict = check(task, answer, reference)
                    failed |= verdict != "ok"
                    row(task, f"cuda ({given} in)", "float64", first, median, runs, verdict)
                    if given == "GPU":
                        print(f"# compile + first call, cuda {task} at n = {n}, batch {batch}: {first:.2f} s "
                              f"(a call: {median:.4f} s)", flush=True)
                for name, crf in peers.items():
                    for dtype in ("float32", "float64"):
                        try:
                            runs_of = peer_runs(name, crf, arcs, args.peer_device, getattr(torch, dtype))
                            answer, first, median, runs = measure(runs_of[task], sync, args.repeats, args.row_seconds)
                        except Exception as exc:  # a peer out of memory (say) is a row that says so
                            full.append(f"| {n} | {batch} | {task} | {name} | {dtype} | failed: "
                                        f"{type(exc).__name__}: {str(exc)[:80]} | | | | |")
                            if torch_gpu:
                                torch.cuda.empty_cache()
                            continue
                        verdict = ""
                        if task == "log Z":  # the same model: the same log Z (as its float32 allows)
                            verdict = f"log Z sum {relative_error(float(answer), reference.sum()):.0e} relative"
                        row(task, name, dtype, first, median, runs, verdict)
                systems = ["cuda (GPU in)", "cuda (numpy in)", *peers, "CPU"]
                cells = [f"{rates[(task, name)]:,.0f}" if (task, name) in rates else "-" for name in systems]
                cuda_rate, supar = rates[(task, "cuda (GPU in)")], rates.get((task, "supar"))
                ratio = f"{cuda_rate / supar:.1f}x" if supar else "-"
                compact.append(f"| {n} | {batch} | {task} | " + " | ".join(cells) + f" | {ratio} |")
            del on_gpu
            last = time.perf_counter() - started
            _write(args.out, header, full, compact, peers, began)
    print()
    print("\n".join(full))
    print()
    print("\n".join(_compact_table(compact, peers)))
    print(f"# {time.perf_counter() - began:.0f} s in all; every cuda answer "
          f"{'checked: MISMATCHES above' if failed else 'equal to the CPU kernels'}")
    _write(args.out, header, full, compact, peers, began)
    return 1 if failed else 0


def _installed(name: str) -> bool:
    try:
        importlib.metadata.version(name)
        return True
    except importlib.metadata.PackageNotFoundError:
        return False


def _compact_table(compact: list[str], peers: dict) -> list[str]:
    """Sentences per second, the peers' better of float32 and float64; the last column: cuda (GPU in) / supar."""
    systems = ["cuda (GPU in)", "cuda (numpy in)", *peers, "CPU, every core"]
    return ["| n | batch | task | " + " | ".join(systems) + " | cuda / supar |",
            "|---|---|---|" + "---|" * (len(systems) + 1), *compact]


def _write(path: str | None, header: list[str], full: list[str], compact: list[str], peers: dict,
           began: float) -> None:
    if path is None:
        return
    with open(path, "w") as out:
        out.write("\n".join([*header, "", *full, "", *_compact_table(compact, peers),
                             f"# {time.perf_counter() - began:.0f} s so far", ""]))


if __name__ == "__main__":
    sys.exit(main())
