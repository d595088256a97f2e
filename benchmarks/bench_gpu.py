"""compbench's GPU kernels against supar and torch-struct on the GPU and compbench's CPU kernels on every core, in one
run: plain dependency parsing (every word kept, several roots), sentences per second.

    python benchmarks/bench_gpu.py --out "$OUT/gpu_plain.txt"       # a machine with a CUDA GPU: about 4-5 minutes
    python benchmarks/bench_gpu.py --quick                          # a smoke test: batch 8, n = 10
    NUMBA_ENABLE_CUDASIM=1 python benchmarks/bench_gpu.py --quick --sizes 4 --batches 3   # no GPU: the simulator

(from the repository's root or benchmarks/; pip install -e '.[gpu]' and torch with CUDA; the peers: pip install
--no-deps supar==1.1.4 torch-struct==0.5.)
Rows per n, batch and task (MAP with its tree, log Z, arc marginals), float64 unless said:
- ``cuda (GPU in)``: compbench_solvers.cuda.eisner with the scores already on the GPU as a torch tensor (used in
  place through __cuda_array_interface__, no copy), the answers left there;
- ``cuda (numpy in)``: the same from a numpy array, the copies to the GPU and back included;
- supar (DependencyCRF) and torch-struct (DependencyCRF) with their scores already on the GPU, each in float32 and
  float64, the better of the two in the compact table (both in the full one);
- ``CPU``: compbench's CPU kernels on every core (``jobs=None``): tree_log_partition_many, tree_marginals_many and
  resource-dp at length n through solve_many (the path bench_peers.py measures), on the batch's first sentences
  when the whole batch would take more than ``--cpu-seconds`` (the rows say how many).
Every GPU call is wrapped in synchronisations; each row is the median of repeats after a first call (at most
``--repeats``, fewer past ``--row-seconds``; none when the first call alone took longer: its time is the row's).

How the run fits a short GPU lease (``--budget``): every GPU kernel the sizes need is compiled first (their times
reported one by one) while a background process compiles the CPU kernels (numba caches them in the files the main
process loads; it waits for that process only when its first CPU row is due); per size the cuda rows come first,
then supar, then the CPU (whose answers check the cuda ones: trees identical, log Z and marginals to 1e-9 relative,
on the sentences the CPU parsed; a mismatch is reported in the row and makes the exit status 1); torch-struct, far
the slowest, comes after every size, as the budget allows.  No row starts once the time used plus the row's expected
time (its time at the previous size, scaled) passes the budget: a note says which were left out.  The full and the
compact table are rewritten to ``--out`` after every size, so an interrupted run still leaves what it measured.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import pathlib
import statistics
import subprocess
import sys
import time
import warnings

import numpy as np

import compbench
from bench_peers import load_peers, peer_runs, tree_problems
from compbench.solver import cores
from compbench_solvers.cuda import runtime
from machine import machine_line

TASKS = ("MAP", "log Z", "marginals")
# The CPU kernels' warm-up, run in a process of its own at the start: the calls the CPU rows make, on 4 sentences.
CPU_WARM_UP = """
import sys
sys.path.insert(0, {folder!r})
import numpy as np, compbench
from bench_peers import tree_problems
arcs = np.random.default_rng(0).standard_normal((4, 5, 5))
compbench.get_solver("resource-dp").solve_many(tree_problems(arcs), jobs=2)
compbench.tree_log_partition_many(arcs, jobs=2)
compbench.tree_marginals_many(arcs, jobs=2)
"""


def quiet() -> None:
    """No numba performance warnings (a small launch's grid, say) nor torch-struct's UserWarning about its
    distributions' arg_constraints in the output."""
    import numba.core.errors

    categories = [numba.core.errors.NumbaPerformanceWarning]
    try:
        import numba.cuda.core.errors

        categories.append(numba.cuda.core.errors.NumbaPerformanceWarning)
    except ImportError:
        pass
    for category in categories:
        warnings.filterwarnings("ignore", category=category)
    warnings.filterwarnings("ignore", message=r".*does not define `arg_constraints`", category=UserWarning)


def measure(run, sync, repeats: int, seconds: float) -> tuple[object, float, float, int]:
    """(the first call's answer, its time (compilation included), the median of the next calls, their number):
    ``repeats`` calls, fewer when they pass ``seconds``; none when the first call took longer than ``seconds``
    (then its time is the median and the number 0)."""
    sync()
    start = time.perf_counter()
    answer = run()
    sync()
    first = time.perf_counter() - start
    if first > seconds:
        return answer, first, first, 0
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
    """'ok' when a cuda answer (on host, cut to the sentences the CPU parsed) equals the CPU kernels' (trees
    identical, values to 1e-9 relative), else what differs."""
    if task == "MAP":
        heads, scores = got
        want = np.stack([s.heads for s in reference])
        objectives = np.array([s.objective for s in reference])
        if not np.array_equal(heads, want):
            return f"MISMATCH: {int((heads != want).any(axis=1).sum())} trees differ"
        error = relative_error(scores, objectives)
        return "ok" if error <= 1e-9 else f"MISMATCH: scores {error:.1e} relative"
    if task == "log Z":
        error = relative_error(got, reference)
        return "ok" if error <= 1e-9 else f"MISMATCH: log Z {error:.1e} relative"
    log_z, arcs = got
    error_z = relative_error(log_z, [m.log_partition for m in reference])
    error_arc = relative_error(arcs, np.stack([m.arc for m in reference]))
    if error_z <= 1e-9 and error_arc <= 1e-9:
        return "ok"
    return f"MISMATCH: log Z {error_z:.1e}, marginals {error_arc:.1e} relative"


def on_host(task: str, answer, count: int):
    """A cuda answer's first ``count`` sentences as numpy arrays (what :func:`check` compares)."""
    if task == "log Z":
        return runtime.to_host(answer)[:count]
    return runtime.to_host(answer[0])[:count], runtime.to_host(answer[1])[:count]


def numba_cache_folder() -> str:
    """Where numba caches the CPU kernels (beside their sources when that folder is writable, else in
    NUMBA_CACHE_DIR or the user's cache folder): the warm-up process and this one share it."""
    from compbench_solvers.compressive import marginals

    for value in vars(marginals).values():
        path = getattr(getattr(value, "_cache", None), "_cache_path", None)  # numba's own attribute: may move
        if path:
            writable = os.access(path, os.W_OK) or os.access(os.path.dirname(path), os.W_OK)
            return f"{path} ({'writable' if writable else 'NOT writable: each process compiles its own'})"
    return "not found (numba's cache attributes moved)"


def start_cpu_warm_up() -> tuple[subprocess.Popen, float]:
    """The CPU kernels' compilation in a background process (numba's cache, shared through its files, hands them
    to this process): the process and when it started."""
    code = CPU_WARM_UP.format(folder=str(pathlib.Path(__file__).resolve().parent))
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    return process, time.perf_counter()


class Budget:
    """The run's time budget: a row starts only when the seconds used plus its expected time stay within it."""

    def __init__(self, seconds: float, began: float) -> None:
        self.seconds, self.began = seconds, began
        self.taken: dict[tuple, tuple[int, int, float]] = {}  # row key -> (n, batch, seconds it took)

    def used(self) -> float:
        return time.perf_counter() - self.began

    def expected(self, key: tuple, n: int, batch: int, power: float = 3.0) -> float:
        """The row's time at the last size it ran at, scaled by (n / that n)^power and the batch (0: never ran)."""
        if key not in self.taken:
            return 0.0
        n0, batch0, seconds = self.taken[key]
        return seconds * (n / n0) ** power * batch / batch0

    def refuses(self, key: tuple, n: int, batch: int, power: float = 3.0) -> str | None:
        """None when the row may start, else why not."""
        used, expected = self.used(), self.expected(key, n, batch, power)
        if used + expected <= self.seconds:
            return None
        return f"{used:.0f} s used of the {self.seconds:.0f} s budget, the row expected to take {expected:.0f} s"

    def record(self, key: tuple, n: int, batch: int, seconds: float) -> None:
        self.taken[key] = (n, batch, seconds)


def main() -> int:
    began = time.perf_counter()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 25, 50, 100])
    parser.add_argument("--batches", type=int, nargs="+", default=[4096, 256])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--row-seconds", type=float, default=0.8,
                        help="stop a row's repeats past this; no repeat when its first call took longer")
    parser.add_argument("--cpu-seconds", type=float, default=3.0,
                        help="the CPU rows parse the batch's first sentences when the whole batch would take longer")
    parser.add_argument("--budget", type=float, default=250.0,
                        help="seconds after which no new row is started (the run's total stays near it)")
    parser.add_argument("--quick", action="store_true", help="a smoke test: batch 8, n = 10, 2 repeats")
    parser.add_argument("--peer-device", default="cuda", help="where the peers run (cpu: to test this script)")
    parser.add_argument("--out", help="write the full and the compact table and the machine line to this file")
    args = parser.parse_args()
    if args.quick:
        args.repeats = 2
        if args.sizes == parser.get_default("sizes"):
            args.sizes = [10]
        if args.batches == parser.get_default("batches"):
            args.batches = [8]
    quiet()
    reason = runtime.unavailable()
    if reason is not None:
        print(f"bench_gpu: the GPU kernels cannot run here: {reason}", file=sys.stderr)
        return 2
    warm_up, warm_up_began = start_cpu_warm_up()
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
              f"# peers on {args.peer_device if peers else 'none'}: "
              f"{', '.join(peers) or 'not installed or no CUDA torch'}"
              f"; GPU input as {'torch tensors' if torch_gpu else 'numba device arrays'}; CPU: jobs=None "
              f"({cores(None)} cores); numba's cache of the CPU kernels: {numba_cache_folder()}"]
    for line in header:
        print(line, flush=True)

    def sync() -> None:
        if torch_gpu:
            torch.cuda.synchronize()
        cu.synchronize()

    gpu_runs = {"MAP": eisner.tree_map, "log Z": eisner.tree_log_partition, "marginals": eisner.tree_marginals}
    notes: list[str] = []  # the compilations, the warm-up, the rows left out
    for line in compile_kernels(eisner, gpu_runs, sorted(set(args.sizes)), sync):
        notes.append(line)
        print(line, flush=True)

    in_log_space = eisner.summed_in_log_space()  # the sums' sentences done in log space, from here on
    rows: list[dict] = []
    budget = Budget(args.budget, began)
    failed = False
    resource = compbench.get_solver("resource-dp")
    cpu_per_sentence: dict[str, tuple[int, float]] = {}  # task -> (n, seconds per sentence) at the last size
    references: dict[tuple[int, int], float] = {}  # (batch, n) -> the sum of cuda's log Z (checked): the peers'
    waiting = [warm_up]

    def row(batch: int, n: int, task: str, system: str, given: str, first: float, median: float, runs: int,
            verdict: str, count: int | None = None) -> dict:
        count = batch if count is None else count
        entry = {"batch": batch, "n": n, "task": task, "system": system, "input": given, "rate": count / median,
                 "median": median, "runs": runs, "first": first, "check": verdict, "count": count}
        rows.append(entry)
        return entry

    def note(line: str) -> None:
        notes.append(line)
        print(line, flush=True)

    def arcs_of(batch: int, n: int) -> np.ndarray:
        return np.random.default_rng([batch, n]).standard_normal((batch, n + 1, n + 1))

    def peer_rows(name: str, batch: int, n: int, arcs: np.ndarray, tasks=TASKS, power: float = 3.0) -> None:
        for task in tasks:
            for dtype in ("float32", "float64"):
                key = (task, name, dtype)
                refused = budget.refuses(key, n, batch, power)
                if refused:
                    note(f"# left out: {name} {task} {dtype} at n = {n}, batch {batch}: {refused}")
                    continue
                started = time.perf_counter()
                try:
                    runs_of = peer_runs(name, peers[name], arcs, args.peer_device, getattr(torch, dtype))
                    answer, first, median, runs = measure(runs_of[task], sync, args.repeats, args.row_seconds)
                except Exception as exc:  # a peer out of memory (say) is a row that says so
                    rows.append({"batch": batch, "n": n, "task": task, "system": name, "input": dtype,
                                 "failed": f"{type(exc).__name__}: {str(exc)[:80]}"})
                    if torch_gpu:
                        torch.cuda.empty_cache()
                    continue
                finally:
                    budget.record(key, n, batch, time.perf_counter() - started)
                verdict = ""
                if task == "log Z" and (batch, n) in references:  # the same model: the same log Z (as float32 allows)
                    error = relative_error(float(answer), references[(batch, n)])
                    verdict = f"log Z sum {error:.0e} relative to cuda's"
                row(batch, n, task, name, dtype, first, median, runs, verdict)

    for batch in args.batches:
        for n in args.sizes:
            arcs = arcs_of(batch, n)
            on_gpu = torch.tensor(arcs, device="cuda") if torch_gpu else cu.to_device(arcs)
            counts = {task: cpu_count(cpu_per_sentence.get(task), n, batch, args.cpu_seconds) for task in TASKS}
            pending: dict[str, list[tuple[dict, object]]] = {task: [] for task in TASKS}
            for task in TASKS:  # the cuda rows
                for given, scores in (("GPU", on_gpu), ("numpy", arcs)):
                    key = (task, f"cuda ({given} in)", "float64")
                    refused = budget.refuses(key, n, batch)
                    if refused:
                        note(f"# left out: cuda ({given} in) {task} at n = {n}, batch {batch}: {refused}")
                        continue
                    started = time.perf_counter()
                    answer, first, median, runs = measure(lambda: gpu_runs[task](scores), sync, args.repeats,
                                                          args.row_seconds)
                    entry = row(batch, n, task, f"cuda ({given} in)", "float64", first, median, runs, "not checked")
                    pending[task].append((entry, on_host(task, answer, counts[task])))
                    if task == "log Z" and given == "GPU":
                        references[(batch, n)] = float(runtime.to_host(answer).sum())
                    del answer
                    budget.record(key, n, batch, time.perf_counter() - started)
            if "supar" in peers:
                peer_rows("supar", batch, n, arcs)
            del on_gpu
            cpu_runs = {"MAP": lambda k: resource.solve_many(tree_problems(arcs[:k]), jobs=None),
                        "log Z": lambda k: compbench.tree_log_partition_many(arcs[:k]),
                        "marginals": lambda k: compbench.tree_marginals_many(arcs[:k])}
            for task in TASKS:  # the CPU rows, which check the cuda ones
                key = (task, "CPU", "float64")
                if budget.used() > budget.seconds:  # its time is bounded by --cpu-seconds: no estimate
                    note(f"# left out: CPU {task} at n = {n}, batch {batch}: {budget.used():.0f} s used of the "
                         f"{budget.seconds:.0f} s budget; its cuda rows unchecked")
                    continue
                if waiting:
                    process = waiting.pop()
                    output = process.communicate()[0].strip()
                    note(f"# the CPU kernels' warm-up (a process of its own from the start): exit status "
                         f"{process.returncode}, done {time.perf_counter() - began:.1f} s into the run "
                         f"({time.perf_counter() - warm_up_began:.1f} s after it started)"
                         + (": " + output.replace("\n", " / ")[-400:] if output else ""))
                count = counts[task]
                started = time.perf_counter()
                reference, first, median, runs = measure(lambda: cpu_runs[task](count), lambda: None, args.repeats,
                                                         args.row_seconds)
                budget.record(key, n, batch, time.perf_counter() - started)
                cpu_per_sentence[task] = (n, median / count)
                row(batch, n, task, "CPU", "float64", first, median, runs,
                    "reference" + (f" ({count} of {batch})" if count < batch else ""), count)
                for entry, answer in pending[task]:
                    entry["check"] = check(task, answer, reference)
                    if count < batch:
                        entry["check"] += f" ({count} of {batch} checked)"
                    failed |= not entry["check"].startswith("ok")
            _write(args.out, header, notes, rows, peers, began)
    if "torch-struct" in peers:  # the slowest peer last, as the budget allows (its time grows about as n^2)
        for batch in args.batches:
            for n in args.sizes:
                peer_rows("torch-struct", batch, n, arcs_of(batch, n), power=2.0)
                _write(args.out, header, notes, rows, peers, began)
    for process in waiting:
        process.kill()
        process.wait()
    note(f"# sentences the cuda sums (log Z, marginals) did in log space (scaled values out of range, or over "
         f"{eisner.REAL_WORDS} words): {eisner.summed_in_log_space() - in_log_space} (the rest in the scaled sums)")
    print()
    print("\n".join(_full_table(rows, args.batches, args.sizes, peers)))
    print()
    print("\n".join(_compact_table(rows, args.batches, args.sizes, peers)))
    print(f"# {time.perf_counter() - began:.0f} s in all; every cuda answer "
          f"{'checked: MISMATCHES above' if failed else 'checked against the CPU kernels: equal'}")
    _write(args.out, header, notes, rows, peers, began)
    return 1 if failed else 0


def compile_kernels(eisner, gpu_runs: dict, sizes: list[int], sync) -> list[str]:
    """Compile every kernel the sizes need (one sentence of each size, each task: a compiled version per task, place
    of its charts (shared memory or global) and threads a block); a line per compilation with its time."""
    lines: list[str] = []
    done: set = set()
    for n in sizes:
        for task in TASKS:
            charts = 4 if task == "marginals" else 2
            version = (task, tuple(map(bool, eisner.placement(n + 1, charts))), eisner.threads_for(n + 1))
            if version in done:
                continue
            done.add(version)
            start = time.perf_counter()
            gpu_runs[task](np.zeros((1, n + 1, n + 1)))
            sync()
            inside, outside = version[1]
            where = f"inside charts {'in shared memory' if inside else 'global'}"
            if charts == 4:
                where += f", outside charts {'in shared memory' if outside else 'global'}"
            lines.append(f"# compiled cuda {task} for n = {n} ({where}, {eisner.threads_for(n + 1)} threads a "
                         f"block): {time.perf_counter() - start:.2f} s")
    return lines


def cpu_count(last: tuple[int, float] | None, n: int, batch: int, seconds: float) -> int:
    """How many of the batch's sentences the CPU row parses: all, unless the seconds per sentence at the last size
    (scaled by n^3) say they would take more than ``seconds``; at least 256 (or the batch)."""
    if last is None:
        return batch
    n0, per_sentence = last
    expected = per_sentence * (n / n0) ** 3
    return min(batch, max(256, int(seconds / max(expected, 1e-12))))


def _installed(name: str) -> bool:
    try:
        importlib.metadata.version(name)
        return True
    except importlib.metadata.PackageNotFoundError:
        return False


SYSTEM_ORDER = ("CPU", "cuda (GPU in)", "cuda (numpy in)", "supar", "torch-struct")


def _full_table(rows: list[dict], batches: list[int], sizes: list[int], peers: dict) -> list[str]:
    lines = ["| n | batch | task | system | input | sentences/s | median s | runs | first call s | check |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    order = {(batch, n): k for k, (batch, n) in enumerate((b, n) for b in batches for n in sizes)}
    for entry in sorted(rows, key=lambda e: (order[(e["batch"], e["n"])], TASKS.index(e["task"]),
                                             SYSTEM_ORDER.index(e["system"]), e["input"])):
        if "failed" in entry:
            lines.append(f"| {entry['n']} | {entry['batch']} | {entry['task']} | {entry['system']} | "
                         f"{entry['input']} | failed: {entry['failed']} | | | | |")
            continue
        runs = entry["runs"] or "0 (the first call's time)"
        lines.append(f"| {entry['n']} | {entry['batch']} | {entry['task']} | {entry['system']} | {entry['input']} | "
                     f"{entry['rate']:,.0f} | {entry['median']:.4g} | {runs} | {entry['first']:.3g} | "
                     f"{entry['check']} |")
    return lines


def _compact_table(rows: list[dict], batches: list[int], sizes: list[int], peers: dict) -> list[str]:
    """Sentences per second, the peers' better of float32 and float64; cuda (GPU in) / supar and / CPU, and the
    goals: at batch 4,096 cuda at least 10x supar, at smaller batches cuda ahead of the CPU on every core."""
    systems = ["cuda (GPU in)", "cuda (numpy in)", *peers, "CPU"]
    lines = ["| n | batch | task | " + " | ".join(systems[:-1]) + " | CPU, every core | cuda / supar | cuda / CPU | "
             "goal |", "|---|---|---|" + "---|" * (len(systems) + 3)]
    for batch in batches:
        for n in sizes:
            for task in TASKS:
                rates: dict[str, float] = {}
                for entry in rows:
                    if (entry["batch"], entry["n"], entry["task"]) == (batch, n, task) and "rate" in entry:
                        rates[entry["system"]] = max(rates.get(entry["system"], 0.0), entry["rate"])
                if not rates:
                    continue
                cells = [f"{rates[name]:,.0f}" if name in rates else "-" for name in systems]
                cuda, supar, cpu = rates.get("cuda (GPU in)"), rates.get("supar"), rates.get("CPU")
                by_supar = f"{cuda / supar:.1f}x" if cuda and supar else "-"
                by_cpu = f"{cuda / cpu:.1f}x" if cuda and cpu else "-"
                if batch >= 4096:
                    goal = ("met" if cuda / supar >= 10 else "NOT met") + ": >= 10x supar" if cuda and supar else "-"
                else:
                    goal = ("met" if cuda > cpu else "NOT met") + ": ahead of the CPU" if cuda and cpu else "-"
                lines.append(f"| {n} | {batch} | {task} | " + " | ".join(cells) + f" | {by_supar} | {by_cpu} | "
                             f"{goal} |")
    return lines


def _write(path: str | None, header: list[str], notes: list[str], rows: list[dict], peers: dict,
           began: float) -> None:
    if path is None:
        return
    batches = list(dict.fromkeys(entry["batch"] for entry in rows))
    sizes = list(dict.fromkeys(entry["n"] for entry in rows))
    with open(path, "w") as out:
        out.write("\n".join([*header, *notes, "", *_full_table(rows, batches, sizes, peers), "",
                             *_compact_table(rows, batches, sizes, peers),
                             f"# {time.perf_counter() - began:.0f} s so far", ""]))


if __name__ == "__main__":
    sys.exit(main())
