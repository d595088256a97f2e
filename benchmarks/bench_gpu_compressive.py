"""Compressive parsing on the GPU (cuda-dp, device="cuda") against compbench's CPU kernels on every core.

    python benchmarks/bench_gpu_compressive.py --google .gpu-data/google-test.npz --out gpu_compressive.md
    NUMBA_ENABLE_CUDASIM=1 python benchmarks/bench_gpu_compressive.py --quick     (a smoke test without a GPU)

In one run, sentences per second (the median of ``--repeats`` timed runs after a warm-up call; numba's JIT compile
time is the first call's and reported on its own): random Gaussian problems with bigram scores, n = 25, batch 4,096
and 256 — free length with the scores already on the GPU (torch tensors through __cuda_array_interface__, no copy;
numba device arrays where torch has no GPU) and from numpy (the transfers timed), a fixed length m = 11, log Z and
marginals — and Google's test split at its gold lengths, decoded from numpy in one hook.decode call on one padded
batch (what cuda-dp's solve_many does with a ProblemBatch: the decoder copies the sentences in chunks by size, each
at its own width, on streams of their own, so the padding is not copied and the chunks overlap).  Beside
each row compbench's CPU kernels on every core (``jobs=None``: hook-dp / resource-dp through compbench.solve_many,
compbench.log_partition_many, compbench.marginals_many).  Before anything is timed every GPU answer is checked
against the CPU's: objectives equal to 1e-9 (they are bit-identical by construction), trees identical; log Z and
marginals to 1e-9 relative.

Google's scores come from a learned model and are not in the repository: ``--make-google DIR --model MODEL`` builds
the .npz once from the corpus (``compbench train --corpus google ...``), packed per sentence (scores only, no text).
The script imports no MIP backend.
"""

from __future__ import annotations

import argparse
import contextlib
import pathlib
import statistics
import sys
import time
import warnings
from typing import Any, Callable, Iterator

import numpy as np

import compbench
from compbench import ProblemBatch
from compbench.solver import cores
from compbench_solvers.cuda.runtime import to_host

from machine import machine_line

TOL = 1e-9
# numba warns when a launch has fewer blocks than the GPU has multiprocessors (the few long sentences): not news here
warnings.filterwarnings("ignore", message=r".*will likely result in GPU under-utilization")


def gaussian_batch(count: int, n: int, length: int | None, seed: int) -> ProblemBatch:
    """``count`` random problems of n tokens with token, arc and bigram scores (compbench.generate's gaussian
    family), as one padded batch."""
    return ProblemBatch.from_problems([compbench.generate("gaussian", n, seed=seed + k, length=length)
                                       for k in range(count)])


def median_seconds(run: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def on_gpu(array: np.ndarray) -> tuple[Any, Callable[[], None], str]:
    """The array on the GPU, a function that waits for the GPU, and what holds it (torch, else numba)."""
    try:
        import torch

        if torch.cuda.is_available():
            return torch.from_numpy(np.ascontiguousarray(array)).cuda(), torch.cuda.synchronize, "torch"
    except ImportError:
        pass
    from numba import cuda

    return cuda.to_device(np.ascontiguousarray(array)), cuda.synchronize, "numba"


def check_decode(problems: list, heads: np.ndarray, value: np.ndarray, label: str, repeats: int) -> tuple[float, str]:
    """Every answer against the CPU kernels (hook-dp / resource-dp on every core, the first call the warm-up); the
    CPU's median time and its solver."""
    name = "resource-dp" if any(p.length is not None for p in problems) else "hook-dp"
    cpu = compbench.solve_many(problems, name, jobs=None)
    seconds = median_seconds(lambda: compbench.solve_many(problems, name, jobs=None), repeats)
    for b, (p, s) in enumerate(zip(problems, cpu)):
        expected = s.objective if s.objective is not None else -np.inf
        if not (value[b] == expected or abs(value[b] - expected) <= TOL * max(1.0, abs(expected))):
            raise SystemExit(f"{label}: sentence {b}: objective {value[b]} on the GPU, {expected} by {name}")
        if s.heads is not None and not np.array_equal(heads[b, :p.n + 1], s.heads):
            raise SystemExit(f"{label}: sentence {b}: a different tree from {name}'s")
    return seconds, name


def check_same(got: tuple, expected: tuple, label: str) -> None:
    """A GPU run (the scores on the GPU, or under an experiment switch: BLOCK_GROUP, PINNED_STAGING, REGISTER_CAP)
    gives the answers (heads, objective) of the default run from numpy, which the CPU's checked."""
    if not all(np.array_equal(to_host(a), to_host(b)) for a, b in zip(got, expected, strict=True)):
        raise SystemExit(f"{label}: the answers differ from the default setting's")


@contextlib.contextmanager
def setting(module: Any, name: str, value: Any) -> Iterator[None]:
    """``module.name`` (an experiment switch) set to ``value`` while the block runs, its default back after it."""
    default = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, default)


def check_inference(problems: list, got: tuple, label: str, repeats: int) -> float:
    """log Z (one array in ``got``) or the marginals against the CPU's on every core; the CPU's median time."""
    if len(got) == 1:
        expected_z = compbench.log_partition_many(problems, jobs=None)
        seconds = median_seconds(lambda: compbench.log_partition_many(problems, jobs=None), repeats)
        np.testing.assert_allclose(to_host(got[0]), expected_z, rtol=TOL, err_msg=label)
        return seconds
    cpu = compbench.marginals_many(problems, jobs=None)
    seconds = median_seconds(lambda: compbench.marginals_many(problems, jobs=None), repeats)
    log_z, token, arc, bigram = (to_host(a) for a in got)
    for b, (p, m) in enumerate(zip(problems, cpu)):
        n = p.n
        np.testing.assert_allclose(log_z[b], m.log_partition, rtol=TOL, err_msg=label)
        np.testing.assert_allclose(token[b, :n], m.token, rtol=TOL, atol=1e-12, err_msg=label)
        np.testing.assert_allclose(arc[b, :n + 1, :n + 1], m.arc, rtol=TOL, atol=1e-12, err_msg=label)
        np.testing.assert_allclose(bigram[b, :n + 2, :n + 2], m.bigram, rtol=TOL, atol=1e-12, err_msg=label)
    return seconds


class Table:
    def __init__(self) -> None:
        self.rows: list[list[str]] = []

    def add(self, task: str, n: str, batch: int, source: str, gpu_seconds: float, cpu_seconds: float | None,
            count: int, note: str = "") -> None:
        gpu = batch / gpu_seconds
        cpu = count / cpu_seconds if cpu_seconds else None
        row = [task, n, f"{batch:,}", source, f"{gpu:,.0f}", f"{gpu_seconds * 1e3:.2f}",
               f"{cpu:,.0f}" if cpu else "", f"{gpu / cpu:.1f}x" if cpu else "", note]
        self.rows.append(row)
        print("| " + " | ".join(row) + " |", flush=True)

    HEADER = ["task", "n", "batch", "scores", "GPU sent/s", "GPU ms/batch", "CPU sent/s (all cores)", "GPU/CPU", "note"]

    def markdown(self) -> str:
        lines = ["| " + " | ".join(self.HEADER) + " |", "|" + "---|" * len(self.HEADER)]
        return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in self.rows])


def padded(data: dict) -> tuple:
    """The packed Google arrays as one padded numpy batch (the layout hook.decode reads), at the gold lengths."""
    sizes = data["sizes"]
    B, width = len(sizes), int(sizes.max())
    arc = np.full((B, width + 1, width + 1), -np.inf)
    token = np.full((B, width), -np.inf)
    bigram = np.full((B, width + 2, width + 2), -np.inf)
    for k in range(B):
        n = int(sizes[k])
        arc[k, :n + 1, :n + 1] = data["arc"][data["arc_offsets"][k]:data["arc_offsets"][k + 1]].reshape(n + 1, n + 1)
        token[k, :n] = data["token"][data["token_offsets"][k]:data["token_offsets"][k + 1]]
        bigram[k, :n + 2, :n + 2] = data["bigram"][
            data["bigram_offsets"][k]:data["bigram_offsets"][k + 1]].reshape(n + 2, n + 2)
    lengths = data["lengths"]
    return arc, token, bigram, sizes.copy(), lengths.copy(), lengths.copy()


def make_google(directory: str, model_path: str, out: str) -> None:
    """The Google test split's problems at their gold lengths (the first gold of each aligned sentence) under a
    trained model, packed per sentence into ``out``."""
    from compbench.compression.model import CompressionModel
    from compbench.corpora import read_corpus, split_corpus

    model = CompressionModel.load(model_path)
    test = [s for s in split_corpus(read_corpus("google", directory))["test"] if s.aligned]
    problems = [model.problem(s, len(s.golds[0])) for s in test]
    packed = {name: np.concatenate([getattr(p, f"{name}_scores").reshape(-1) for p in problems])
              for name in ("token", "arc", "bigram")}
    for name, size in (("token", lambda n: n), ("arc", lambda n: (n + 1) ** 2), ("bigram", lambda n: (n + 2) ** 2)):
        packed[f"{name}_offsets"] = np.concatenate([[0], np.cumsum([size(p.n) for p in problems])])
    np.savez_compressed(out, **packed, sizes=np.array([p.n for p in problems]),
                        lengths=np.array([p.length.min for p in problems]),
                        model=np.array(pathlib.Path(model_path).name))
    print(f"wrote {out}: {len(problems)} sentences of Google's test split at their gold lengths, n up to "
          f"{max(p.n for p in problems)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tiny smoke test (runs in numba's CUDA simulator)")
    parser.add_argument("--n", type=int, default=25)
    parser.add_argument("--length", type=int, default=11, help="the fixed length m")
    parser.add_argument("--batches", type=int, nargs="+", default=[4096, 256])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--cpu-repeats", type=int, default=3)
    parser.add_argument("--google", help="the .npz --make-google wrote (Google's test split at gold lengths)")
    parser.add_argument("--make-google", metavar="DIR", help="build --google from the corpus directory DIR")
    parser.add_argument("--model", help="the trained model for --make-google")
    parser.add_argument("--out", help="write the full table and the machine line here (markdown)")
    args = parser.parse_args()
    if args.make_google:
        make_google(args.make_google, args.model, args.google)
        return
    if args.quick:
        args.n, args.length, args.batches, args.repeats, args.cpu_repeats = 5, 2, [6], 2, 1

    from compbench_solvers.cuda import hook, runtime

    reason = runtime.unavailable()
    if reason is not None:
        raise SystemExit(f"no GPU path here: {reason}")
    from numba import cuda

    machine = machine_line()
    device = "numba's CUDA simulator" if runtime.simulated() else cuda.get_current_device().name
    device = device.decode() if isinstance(device, bytes) else device
    print(machine, flush=True)
    print(f"# GPU: {device}; CPU kernels on {cores(None)} cores; float64; sentences per second, "
          f"median of {args.repeats} after a warm-up", flush=True)
    table = Table()
    print("| " + " | ".join(Table.HEADER) + " |\n|" + "---|" * len(Table.HEADER), flush=True)
    compile_seconds: dict[str, float] = {}

    def first_call(name: str, run: Callable[[], Any]) -> Any:
        """The first call of a kernel (its JIT compile) timed on its own."""
        start = time.perf_counter()
        out = run()
        if name not in compile_seconds:
            compile_seconds[name] = time.perf_counter() - start
        return out

    n, m = args.n, args.length
    for count in args.batches:
        for length, task in ((None, "MAP, free length"), (m, f"MAP, m = {m}")):
            batch = gaussian_batch(count, n, length, seed=1000 * count + (length or 0))
            given = hook.batch_arguments(batch)
            heads, value = first_call(f"decode ({'free' if length is None else 'counted'})",
                                      lambda: hook.decode(*given))
            cpu, name = check_decode(batch.problems(), heads, value, f"{task}, batch {count}", args.cpu_repeats)
            gpu_arrays = [on_gpu(a) for a in given[:3]]
            wait, holder = gpu_arrays[0][1], gpu_arrays[0][2]
            on_device = (*(a for a, _, _ in gpu_arrays), *given[3:])
            hook.decode(*on_device)
            wait()
            def decoded_on_gpu() -> tuple:
                answer = hook.decode(*on_device)
                wait()
                return answer

            from_gpu = (decoded_on_gpu, f"on the GPU ({holder})")
            from_numpy = (lambda: hook.decode(*given), "numpy (copies timed)")
            # the default, then each experiment switch (its answers checked against the default's first)
            for (run, source), switch, what in (
                    (from_gpu, None, ""),
                    (from_gpu, (hook, "BLOCK_GROUP", 32), ", up to 32 threads a unit"),  # as teams do
                    (from_gpu, (runtime, "REGISTER_CAP", True), ", registers capped"),  # where they limit blocks
                    (from_numpy, None, ""),
                    (from_numpy, (hook, "PINNED_STAGING", False), ", no pinned staging")):  # the driver stages
                with setting(*switch) if switch else contextlib.nullcontext():
                    check_same(run(), (heads, value), f"{task}{what}")
                    seconds = median_seconds(run, args.repeats)
                table.add(task, str(n), count, source + what, seconds, cpu, count, f"CPU: {name}")
        batch = gaussian_batch(count, n, None, seed=7 + count)
        given = hook.batch_arguments(batch)
        gpu_arrays = [on_gpu(a) for a in given[:3]]
        wait, holder = gpu_arrays[0][1], gpu_arrays[0][2]
        on_device = (*(a for a, _, _ in gpu_arrays), *given[3:])
        for task, run in (("log Z", hook.log_partition), ("marginals", hook.marginals)):
            got = first_call(task, lambda: run(*given))
            got = got if isinstance(got, tuple) else (got,)
            cpu_seconds = check_inference(batch.problems(), got, f"{task}, batch {count}", args.cpu_repeats)
            note = "CPU: compbench." + ("log_partition_many" if task == "log Z" else "marginals_many")
            run(*on_device)
            wait()
            seconds = median_seconds(lambda: (run(*on_device), wait()), args.repeats)
            table.add(task + ", free length", str(n), count, f"on the GPU ({holder}), results left there", seconds,
                      cpu_seconds, count, note)
            seconds = median_seconds(lambda: run(*given), args.repeats)
            table.add(task + ", free length", str(n), count, "numpy (copies timed)", seconds, cpu_seconds, count, note)
    save(args, machine, device, table, compile_seconds, [])  # the rows so far: a failure below keeps them
    failures = []
    try:
        google_row(args, hook, table, first_call)
    except (Exception, SystemExit) as exc:  # a toolkit that cannot link the teams' cooperative kernel, an answer
        # unlike the CPU's: said in the output, the rows before it kept
        failures.append(f"the Google row failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
        print(failures[-1], flush=True)
    save(args, machine, device, table, compile_seconds, failures)


def google_row(args: argparse.Namespace, hook: Any, table: "Table", first_call: Callable[..., Any]) -> None:
    """Google's test split at its gold lengths (or, with --quick, a few mixed sizes), decoded from numpy."""
    if args.google or args.quick:
        if args.google:
            with np.load(args.google) as data:
                packed = {key: data[key] for key in data.files}
            label = "Google test, gold lengths"
        else:  # the smoke test: a few small problems packed the same way
            problems = [compbench.generate("gaussian", k, seed=k, length=k // 2) for k in (3, 6, 4, 9, 5)]
            packed = {name: np.concatenate([getattr(p, f"{name}_scores").reshape(-1) for p in problems])
                      for name in ("token", "arc", "bigram")}
            for name, size in (("token", lambda k: k), ("arc", lambda k: (k + 1) ** 2),
                               ("bigram", lambda k: (k + 2) ** 2)):
                packed[f"{name}_offsets"] = np.concatenate([[0], np.cumsum([size(p.n) for p in problems])])
            packed["sizes"] = np.array([p.n for p in problems])
            packed["lengths"] = np.array([p.length.min for p in problems])
            label = "mixed sizes, m = n // 2"
        given = padded(packed)
        sizes = packed["sizes"]
        cap = hook.count_plans(sizes, given[4], given[5])[1]
        batch = ProblemBatch.from_arrays(given[0], given[1], given[2], given[3], np.stack(given[4:], axis=1))
        for teams in (False, True):  # one block per sentence, then the costliest sentences in teams of blocks
            heads, value = first_call(f"decode (counted{', teams' if teams else ''})",
                                      lambda: hook.decode(*given, teams=teams))
            cpu_seconds = check_decode(batch.problems(), heads, value, label, args.cpu_repeats)[0]
            seconds = median_seconds(lambda: hook.decode(*given, teams=teams), args.repeats)
            team = hook.gpu_team_sizes(sizes, cap, teams)
            chunks = len(hook.host_chunks(sizes, cap, team))
            how = f", {np.count_nonzero(team)} in teams ({team.sum()} blocks)" if teams else ", one block each"
            table.add(f"MAP, {label}", f"{sizes.min()}..{sizes.max()} (median {int(np.median(sizes))})", len(sizes),
                      f"numpy (copies timed), one padded batch, {chunks} chunks{how}", seconds, cpu_seconds,
                      len(sizes), "CPU: resource-dp")


def save(args: argparse.Namespace, machine: str, device: str, table: "Table", compile_seconds: dict[str, float],
         failures: list[str]) -> None:
    """The table so far, with the compile times and any failure, printed and written to --out."""
    compile_line = "first calls (numba's JIT compile included; once per process, numba's cache keeps it): " + ", ".join(
        f"{name} {seconds:.1f} s" for name, seconds in compile_seconds.items())
    notes = "".join(f"\n{line}" for line in failures)
    print(f"\n{machine}\n# GPU: {device}\n{table.markdown()}\n{compile_line}{notes}")
    if args.out:
        text = (f"{machine}\n# GPU: {device}; CPU kernels on {cores(None)} cores\n"
                f"# {' '.join(sys.argv)}\n\n{table.markdown()}\n\n{compile_line}{notes}\n")
        pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(args.out).write_text(text)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
