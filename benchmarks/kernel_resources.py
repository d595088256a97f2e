"""What each GPU kernel of a benchmark row asks of an H100, read from the compiler without a GPU.

    python benchmarks/kernel_resources.py --out reports/gpu/kernel_resources.md

numba compiles each kernel to PTX for compute capability 9.0, as tests/test_cuda_compile.py does, and NVIDIA's
ptxas (the ``nvidia-cuda-nvcc`` wheel, or ``--ptxas``) assembles it for sm_90 with ``-v``. ptxas reports the
registers per thread, the static shared memory and any spills. The launch adds the rest: the threads per block and the
dynamic shared memory that hook's plan gives. From these the table derives the blocks one multiprocessor holds at
once, and what limits them. It uses an H100's limits (``runtime.H100``: 65,536 registers, a quarter for each warp
scheduler, given to a warp in units of 256; 2,048 threads; 32 blocks; 233,472 bytes of shared memory, given to a block
in units of 128 bytes, 1 KB of them reserved), by the rules of CUDA's occupancy calculator (cuda_occupancy.h), in
``runtime.resident_blocks`` and ``runtime.register_cap``, as the kernels' launches use them. It then gives the
waves a batch of 4,096 sentences takes on 132 multiprocessors where each sentence has a block of its own. NVIDIA's
disassembler (nvdisasm, the ``nvidia-cuda-nvdisasm`` wheel) gives the machine code, from which the table counts the
instructions a candidate of the DP's innermost loops costs (:func:`candidate_loops`): what a thread issues per split
it sums, the measure to cut where the GPU's schedulers, not its memory, are the limit. Where the
registers limit the blocks, the last columns give the cap that would lift that limit (numba's ``max_registers``, at
least 64), with ptxas's spills and the blocks and waves under it; a kernel launched capped by default (the plain
sums', ``eisner.CAPPED_SUMS``) is shown capped, ", capped" after its name, and the last columns give it uncapped.

These are resource counts and arithmetic, not timings. A kernel whose sentences all cost the same (one size in a
batch) runs in whole waves. A row's time falls when its waves do, unless the change that cut them makes each block
slower.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import types
from typing import Any, Callable, Iterator
from unittest import mock

import numpy as np

CC = (9, 0)
BATCH = 4096


def find_ptxas(given: str | None) -> str:
    if given:
        return given
    wheel = sorted(glob.glob(os.path.join(os.path.dirname(np.__file__), "..", "nvidia", "cu*", "bin", "ptxas")))
    found = wheel[-1] if wheel else shutil.which("ptxas")  # the wheel's first: the PTX is NVVM's, of the same CUDA
    if found is None:
        raise SystemExit("ptxas not found: pip install nvidia-cuda-nvcc, or give --ptxas")
    return found


@contextlib.contextmanager
def ptx_compiler(cc: tuple[int, int] = CC) -> Iterator[Callable[..., str]]:
    """A function that compiles a kernel (a numba CUDA dispatcher) for the types of example arguments into PTX for
    compute capability ``cc``, without a GPU: numba asks the current device's compute capability while it compiles
    a device function, so ``get_current_device`` of numba-cuda's dispatcher module (private API, pinned by
    pyproject.toml's numba-cuda range) answers ``cc`` meanwhile."""
    from compbench_solvers.cuda import runtime

    cuda = runtime.import_numba_cuda()
    import numba.cuda.dispatcher as dispatcher

    def ptx_of(kernel: Any, *args: Any) -> str:
        signature = tuple(dispatcher.typeof(a, dispatcher.Purpose.argument) for a in args)
        return cuda.compile_ptx(kernel.py_func, signature, cc=cc)[0]

    current = dispatcher.get_current_device
    dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=cc)
    try:
        yield ptx_of
    finally:
        dispatcher.get_current_device = current


def find_nvdisasm(ptxas: str) -> str | None:
    """NVIDIA's disassembler beside ``ptxas`` (the ``nvidia-cuda-nvdisasm`` wheel of the gpu-compile extra shares its
    folder), else on PATH, else None."""
    beside = os.path.join(os.path.dirname(ptxas), "nvdisasm")
    return beside if os.path.exists(beside) else shutil.which("nvdisasm")


def _candidate_bodies(sass: str) -> list[tuple[list[str], int]]:
    """The innermost loops of a kernel's SASS (nvdisasm's) that read two float64 values or more, add or multiply
    them and write nothing: the loops the DP's ⊕ over splits runs in, and LOG's merges of partial sums.  Each as its
    instructions' opcodes and its float64 reads."""
    code: list[str] = []  # the instructions in order
    labels: dict[str, int] = {}  # a branch target's label -> the index of the instruction it names
    for line in sass.splitlines():
        label = re.match(r"(\.L_x_\d+):", line.strip())
        instruction = re.search(r"/\*[0-9a-f]{4,}\*/\s+([^;]*);", line)
        if label:
            labels[label.group(1)] = len(code)
        elif instruction:
            code.append(instruction.group(1).strip())
    loops = []  # (first, last) instruction of each loop: a branch back
    for k, text in enumerate(code):
        target = re.search(r"\bBRA\b.*\((\.L_x_\d+)\)", text)
        if target and labels.get(target.group(1), k + 1) <= k:
            loops.append((labels[target.group(1)], k))
    bodies = []
    for a, b in loops:
        if any(a <= c and d <= b and (c, d) != (a, b) for c, d in loops):
            continue  # not innermost
        body = [text.split()[1] if text.startswith("@") else text.split()[0] for text in code[a:b + 1]]
        reads = sum(1 for op in body if re.match(r"(LDS|LDG|LD)(\.\w+)*\.64$", op))
        floating = [op for op in body if op.startswith("D")]
        if floating == ["DADD"] * reads or any(re.match(r"(STS|STG|ST)(\.|$)", op) for op in body):
            continue  # a plain sum (one add a value read: REAL's partial sums), or a loop that writes (a fill)
        if reads >= 2 and any(op.startswith(("DADD", "DFMA", "DMUL")) for op in body):
            bodies.append((body, reads))
    return bodies


def candidate_loops(sass: str) -> list[int]:
    """The machine instructions a candidate (one pair of float64 chart reads) of each candidate loop
    (:func:`_candidate_bodies`; the compiler may unroll one, whose count then covers several candidates)."""
    return [round(len(body) / (reads // 2)) for body, reads in _candidate_bodies(sass)]


def loop_spills(sass: str) -> int:
    """The spill instructions (local memory's stores and loads) inside the candidate loops."""
    return sum(1 for body, _ in _candidate_bodies(sass) for op in body if re.match(r"(STL|LDL)(\.|$)", op))


def assemble(ptxas: str, ptx: str, cap: int | None = None) -> dict:
    """ptxas -v's registers, static shared memory and spills of the one kernel in ``ptx`` (at most ``cap``
    registers a thread: numba's ``max_registers``, which it hands to the same assembler), and with nvdisasm at
    hand its candidate loops' instructions (:func:`candidate_loops`) and its calls of the 64-bit integer division
    (a subroutine whose registers the whole kernel holds; else None)."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "kernel.ptx")
        with open(path, "w") as f:
            f.write(ptx)
        relocatable = ["-c"] if "cudaCGSynchronize" in ptx else []  # the grid's barrier links with cudadevrt
        limit = [f"-maxrregcount={cap}"] if cap else []
        binary = os.path.join(folder, "kernel.o")
        done = subprocess.run([ptxas, f"-arch=sm_{CC[0]}{CC[1]}", "-v", *relocatable, *limit, path, "-o", binary],
                              capture_output=True, text=True)
        nvdisasm = find_nvdisasm(ptxas)
        sass = subprocess.run([nvdisasm, "-c", binary], capture_output=True, text=True).stdout if (
            nvdisasm and not done.returncode) else None
    if done.returncode:
        raise RuntimeError(done.stderr.strip().splitlines()[-1])
    text = done.stderr + done.stdout
    used = re.search(r"Used (\d+) registers", text)
    smem = re.search(r"(\d+) bytes smem", text)
    spills = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", text)
    # ptxas -c leaves out the static shared memory: then the PTX's own .shared arrays give it
    static = int(smem.group(1)) if smem else sum(map(int, re.findall(r"\.shared\s[^;\[]*\[(\d+)\]", ptx)))
    return {"registers": int(used.group(1)), "static": static,
            "spills": (int(spills.group(1)), int(spills.group(2))) if spills else (0, 0), "ptx": ptx,
            "candidate": candidate_loops(sass) if sass is not None else None,
            "loop_spills": loop_spills(sass) if sass is not None else None,
            "divisions": len(re.findall(r"CALL\S*\s+`\(\S*__cuda_sm20_(?:div|rem)_[su]64\)", sass)) if sass is not None
            else None}


def rows(ptxas: str) -> list[dict]:
    """Each benchmark row's kernel as it is launched: a kernel capped by default (eisner's sums,
    ``eisner.capped_by_default``) assembled at its cap, with ptxas's own choice kept as ``uncapped``."""
    from compbench_solvers.cuda import runtime

    with ptx_compiler() as ptx_of:
        found = _rows(ptxas, ptx_of)
    for row in found:
        cap = runtime.register_cap(row["threads"], row["static"] + row["dynamic"], runtime.H100)
        if row.get("capped") and cap < row["registers"]:
            uncapped = {key: row[key] for key in ("registers", "spills", "candidate", "loop_spills", "divisions")}
            row.update(assemble(ptxas, row["ptx"], cap), uncapped=uncapped, kernel=f"{row['kernel']}, capped")
    return found


def plain_arguments(task: str, N: int, B: int = 4) -> tuple:
    """Arguments of the types :mod:`compbench_solvers.cuda.eisner`'s kernel of ``task`` ("map", "log_z",
    "marginals") is launched with, for B sentences of N = n+1 positions (numpy arrays: a kernel compiles for their
    types)."""
    from compbench_solvers.cuda import eisner

    arc, sizes, value = np.zeros((B, N, N)), np.zeros(B, np.int64), np.zeros(B)
    chart = np.zeros(B * 2 * eisner.chart_size(N))
    if task == "map":
        return (arc, sizes, True, value, np.zeros((B, N), np.int64), np.zeros(len(chart), np.int16),
                np.zeros(B * 3 * (4 * N + 4), np.int32), chart)
    in_log_space = np.zeros(1, np.int64)
    if task == "log_z":
        return arc, sizes, True, value, chart, in_log_space
    return arc, sizes, True, value, np.zeros((B, N, N)), chart, chart, in_log_space


def compressive_arguments(kernel: str, n: int, B: int = 4, floats: int = 64, ints: int = 64, scratch: int = 0,
                          group: int = 1) -> tuple:
    """Arguments of the types :mod:`compbench_solvers.cuda.hook`'s ``kernel`` ("decode_shared", "decode_global",
    "decode_team", "infer_shared", "infer_global") is launched with, for B sentences of n words, work areas of
    ``floats`` and ``ints`` (a shared chart's: ``floats`` and the merge's ``scratch``), ``group`` threads a unit."""
    arc, token, bigram = np.zeros((B, n + 1, n + 1)), np.zeros((B, n)), np.zeros((B, n + 2, n + 2))
    common = (arc, token, bigram, np.zeros((B, 5), np.int64), np.zeros(B, np.int64), True)
    areas = (np.zeros((2, floats)), np.zeros((2, max(ints, 1)), np.int32))
    answers = (np.zeros((B, n + 1), np.int64), np.zeros(B))
    marginals = (np.zeros(B), np.zeros((B, n)), np.zeros((B, n + 1, n + 1)), np.zeros((B, n + 2, n + 2)))
    return {"decode_shared": (*common, floats, scratch, group, *answers),
            "decode_global": (*common, *areas, group, *answers),
            "decode_team": (*common[:4], np.zeros((B, 4), np.int64), True, n + 1, *areas, *answers),
            "infer_shared": (*common, True, areas[1][0], *marginals),
            "infer_global": (*common, True, areas[1][0], areas[0], *marginals)}[kernel]


def _rows(ptxas: str, ptx_of: Callable[..., str]) -> list[dict]:
    from compbench_solvers.cuda import eisner, hook, runtime

    out = []
    for n in (10, 25, 50, 100):  # plain parsing (bench_gpu.py's rows)
        N = n + 1
        for task in ("map", "log_z", "marginals"):
            inside, outside = eisner.placement(N, 4 if task == "marginals" else 2)
            threads = eisner.threads_for(N)
            kernel = eisner._kernel(task, bool(inside), bool(outside), threads)
            args = plain_arguments(task, N)
            where = "shared" if inside else "global"
            out.append({"row": f"plain {task}, n = {n}", "kernel": f"eisner {task} ({where} charts)",
                        "threads": threads, "dynamic": 8 * (inside + outside), "per_sentence": True,
                        "capped": eisner.capped_by_default(task), **assemble(ptxas, ptx_of(kernel, *args))})
            if task == "marginals" and outside:  # eisner.OUTSIDE_IN_SHARED = False
                kernel = eisner._kernel(task, True, False, threads)
                out.append({"row": f"plain {task}, n = {n}, outside charts global",
                            "kernel": f"eisner {task} (inside charts shared, outside global)", "threads": threads,
                            "dynamic": 8 * inside, "per_sentence": True, "capped": eisner.capped_by_default(task),
                            **assemble(ptxas, ptx_of(kernel, *args))})
    n, m = 25, 11  # compressive (bench_gpu_compressive.py's rows)
    for length, task in ((None, "MAP, free length"), (m, f"MAP, m = {m}"), (None, "log Z"), (None, "marginals")):
        sizes = np.full(BATCH, n)
        lo = np.full(BATCH, 0 if length is None else length)
        hi = np.full(BATCH, n if length is None else length)
        semiring = hook.MAX if task.startswith("MAP") else hook.SUM
        with mock.patch.object(runtime, "multiprocessors", lambda: runtime.H100_MULTIPROCESSORS), \
                mock.patch.object(runtime, "multiprocessor", lambda: runtime.H100):  # (a global chart's plan asks)
            plan = hook._plan(sizes, lo, hi, semiring)
        dynamic = hook.dynamic_shared(plan)
        where = "shared" if plan.shared else "global"
        kernel = hook.decoder(plan) if semiring == hook.MAX else hook.inferrer(plan)
        args = compressive_arguments(f"{'decode' if semiring == hook.MAX else 'infer'}_{where}", n,
                                     floats=plan.floats, ints=plan.ints, scratch=plan.scratch, group=plan.group)
        out.append({"row": f"compressive {task}, n = {n}", "kernel": kernel.py_func.__name__.lstrip("_") + (
                    " (shared chart)" if plan.shared else f" (global chart, {plan.blocks} blocks)"),
                    "threads": plan.threads, "dynamic": dynamic, "per_sentence": plan.shared,
                    **assemble(ptxas, ptx_of(kernel, *args))})
    out.append({"row": "compressive MAP, Google test (its teams)", "kernel": "decode_team (global chart)",
                "threads": hook.TEAM_THREADS, "dynamic": 0, "per_sentence": False,
                **assemble(ptxas, ptx_of(hook._decode_team, *compressive_arguments("decode_team", n)))})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ptxas", help="ptxas to use (default: the nvidia-cuda-nvcc wheel's, else the one on PATH)")
    parser.add_argument("--out")
    args = parser.parse_args()
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
        raise SystemExit("numba's CUDA simulator is on: it compiles nothing (unset NUMBA_ENABLE_CUDASIM)")
    from compbench_solvers.cuda import runtime

    ptxas = find_ptxas(args.ptxas)
    version = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    lines = [f"# H100 (sm_90) resources of each benchmark row's kernel: ptxas {version}; batch {BATCH:,}, "
             f"{runtime.H100_MULTIPROCESSORS} multiprocessors",
             "| row | kernel | threads | registers | spills (stores/loads, bytes) | shared bytes (static + dynamic) | "
             "blocks per SM | limited by | waves at 4,096 | instructions a candidate (fewest-most) | at most this many "
             "registers | spills then | blocks per SM then | waves then |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]

    def per_candidate(counts: list[int] | None) -> str:
        if counts is None:
            return "(no nvdisasm)"
        return f"{min(counts)}-{max(counts)}" if counts else "-"

    for row in rows(ptxas):
        def waves(blocks: int) -> str:  # (a kernel whose blocks loop over the sentences has none)
            if not row["per_sentence"]:
                return "-"
            resident = blocks * runtime.H100_MULTIPROCESSORS
            return f"{BATCH / resident:.2f} ({-(-BATCH // resident)})"

        shared = row["static"] + row["dynamic"]
        blocks, limit = runtime.resident_blocks(row["registers"], row["threads"], shared, runtime.H100)
        line = (f"| {row['row']} | {row['kernel']} | {row['threads']} | {row['registers']} | "
                f"{row['spills'][0]}/{row['spills'][1]} | {row['static']:,} + {row['dynamic']:,} | {blocks} | "
                f"{limit} | {waves(blocks)} | {per_candidate(row['candidate'])} |")
        cap = runtime.register_cap(row["threads"], shared, runtime.H100)
        other = None
        if "uncapped" in row:  # launched capped: the last columns are ptxas's own choice
            other, label = row["uncapped"], f"uncapped ({row['uncapped']['registers']})"
        elif limit == "registers" and cap < row["registers"]:  # the same kernel under numba's max_registers = cap
            other, label = assemble(ptxas, row["ptx"], cap), str(cap)
        if other is None:
            line += " - | | | |"
        else:
            other_blocks = runtime.resident_blocks(other["registers"], row["threads"], shared, runtime.H100)[0]
            line += (f" {label} | {other['spills'][0]}/{other['spills'][1]} | {other_blocks} | "
                     f"{waves(other_blocks)} |")
        lines.append(line)
        print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        print(text)


if __name__ == "__main__":
    sys.exit(main())
