"""Where the GPU time goes: each workload's copies and kernels on a timeline, and each kernel's counters.

    python benchmarks/gpu_profile.py --google .gpu-data/google-test.npz --trace OUT     (timelines, torch's profiler)
    ncu --clock-control none --section ... python benchmarks/gpu_profile.py --workload NAME   (one workload, once)
    NUMBA_ENABLE_CUDASIM=1 python benchmarks/gpu_profile.py --quick      (a smoke test: each workload once, tiny)

The workloads are the rows of bench_gpu.py and bench_gpu_compressive.py whose goals were missed or whose variants are
to be told apart (docs/gpu.md):
- a call's fixed cost: one sentence, so that the host's share shows alone (at n = 10 a whole batch of 4,096 took
  about 1 ms, and a batch of 256 most of that), from torch and from numba device arrays (whose results numba
  allocates);
- compressive n = 25, batch 4,096, from numpy and from the GPU, with each switch (BLOCK_GROUP, REGISTER_CAP,
  PINNED_STAGING);
- Google's test split from numpy, with teams (one or two of their blocks a multiprocessor) and without;
- plain parsing at n = 10, 25, 50 and 100, each kernel whose registers limit its blocks also capped (the sums'
  kernels, capped by default, also uncapped), and the
  marginals with their outside charts in global memory.

``--trace OUT``: each workload is run twice (numba's compile, the kept buffers), then once under torch's profiler,
which records CUDA's activity for every kernel and copy in the process (numba's launches included). For each run,
OUT/trace-NAME.json holds the profiler's chrome trace, and OUT/timeline.txt has these numbers:
- the wall time;
- the GPU's busy time (the union of its kernels and copies) and its idle gaps;
- each kind's total;
- the first GPU events in order, with their offsets, streams and bytes.
A gap that is large beside the busy time is host time: the staging, launch preparation, the copy back.

``--workload NAME ...`` runs those workloads once each, for Nsight Compute's counters of their kernels (gpu_lease.sh's
``profile`` part); ``--list`` names the workloads.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys
import time
from typing import Any, Callable

import numpy as np

from bench_gpu_compressive import gaussian_batch, on_gpu, padded, setting

GPU_KINDS = ("kernel", "gpu_memcpy", "gpu_memset")  # the chrome trace's categories of events on the GPU
def register_variants(quick: bool) -> dict[tuple[str, int], str]:
    """(task, n) of the plain kernels whose registers matter -> the variant to time beside the default: "capped"
    (runtime.REGISTER_CAP) where registers alone limit the blocks, "uncapped" (eisner.CAPPED_SUMS off) where the
    kernel is launched capped; read off reports/gpu/kernel_resources.md (kernel_resources.py), and with ``quick``
    one of each at the quick sizes (the simulator has no registers: the variant runs, uncapped)."""
    table = pathlib.Path(__file__).resolve().parents[1] / "reports" / "gpu" / "kernel_resources.md"
    found = {("map", 4): "capped", ("marginals", 6): "uncapped"} if quick else {}
    for line in table.read_text().splitlines():
        row = re.match(r"\| plain (map|log_z|marginals), n = (\d+) \|", line)
        if not row:
            continue
        cells = [cell.strip() for cell in line.split("|")]
        key = (row.group(1).replace("_", ""), int(row.group(2)))
        if cells[2].endswith(", capped"):
            found[key] = "uncapped"
        elif cells[8] == "registers" and cells[11] != "-":  # (a cap below what it holds: at least 64)
            found[key] = "capped"
    return found


def workloads(quick: bool, google: str | None) -> dict[str, Callable[[], Callable[[], Any]]]:
    """Name -> a function that prepares the workload's inputs and returns the call to profile (it waits for the
    GPU)."""
    from numba import cuda

    from compbench_solvers.cuda import eisner, hook, runtime

    n, count, m = (5, 6, 2) if quick else (25, 4096, 11)
    plain_sizes = (4, 6) if quick else (10, 25, 50, 100)
    variants = register_variants(quick)

    def compressive(length: int | None, where: str, task: Callable[..., Any],
                    sentences: int = count) -> Callable[[], Callable[[], Any]]:
        def prepare() -> Callable[[], Any]:
            given = hook.batch_arguments(gaussian_batch(sentences, n, length, seed=1 + (length or 0)))
            if where == "GPU":
                given = (*(on_gpu(a)[0] for a in given[:3]), *given[3:])
            return lambda: (task(*given), cuda.synchronize())
        return prepare

    def switched(module: Any, name: str, value: Any,
                 prepare: Callable[[], Callable[[], Any]]) -> Callable[[], Callable[[], Any]]:
        """The workload with the switch ``name`` of ``module`` set to ``value`` while it runs."""
        def prepared() -> Callable[[], Any]:
            run = prepare()

            def call() -> Any:
                with setting(module, name, value):
                    return run()
            return call
        return prepared

    def google_split(teams: bool) -> Callable[[], Callable[[], Any]]:
        def prepare() -> Callable[[], Any]:
            if google is None:
                raise SystemExit("the Google workloads need --google FILE (bench_gpu_compressive.py --make-google)")
            with np.load(google) as data:
                given = padded({key: data[key] for key in data.files})
            return lambda: (hook.decode(*given, teams=teams), cuda.synchronize())
        return prepare

    def plain(size: int, task: Callable[..., Any], where: str,
              sentences: int = count) -> Callable[[], Callable[[], Any]]:
        def prepare() -> Callable[[], Any]:
            arcs = np.random.default_rng(size).normal(size=(sentences, size + 1, size + 1))
            given = {"GPU": lambda: on_gpu(arcs)[0], "numba": lambda: cuda.to_device(arcs),
                     "numpy": lambda: arcs}[where]()
            return lambda: (task(given), cuda.synchronize())
        return prepare

    runs = {  # a call's fixed cost first: one sentence, so that the timeline shows the host's share alone
        "overhead-compressive-free-one-gpu": compressive(None, "GPU", hook.decode, sentences=1),
        "overhead-compressive-free-one-numpy": compressive(None, "numpy", hook.decode, sentences=1),
        "overhead-plain-logz-one-gpu": plain(plain_sizes[0], eisner.tree_log_partition, "GPU", sentences=1),
        "overhead-plain-map-one-gpu": plain(plain_sizes[0], eisner.tree_map, "GPU", sentences=1),
        # the same from a numba device array: its results are numba's (cudaMalloc, and cudaFree's wait), a torch
        # caller's come from torch's caching allocator (runtime.result)
        "overhead-plain-map-one-numba": plain(plain_sizes[0], eisner.tree_map, "numba", sentences=1),
        f"compressive-free-n{n}-gpu": compressive(None, "GPU", hook.decode),
        f"compressive-free-n{n}-gpu-group32": switched(hook, "BLOCK_GROUP", 32, compressive(None, "GPU", hook.decode)),
        f"compressive-free-n{n}-gpu-capped": switched(runtime, "REGISTER_CAP", True,
                                                      compressive(None, "GPU", hook.decode)),
        f"compressive-free-n{n}-numpy": compressive(None, "numpy", hook.decode),
        f"compressive-free-n{n}-numpy-unpinned": switched(hook, "PINNED_STAGING", False,
                                                          compressive(None, "numpy", hook.decode)),
        f"compressive-m{m}-n{n}-gpu": compressive(m, "GPU", hook.decode),
        f"compressive-m{m}-n{n}-gpu-capped": switched(runtime, "REGISTER_CAP", True,
                                                      compressive(m, "GPU", hook.decode)),
        f"compressive-logz-n{n}-gpu": compressive(None, "GPU", hook.log_partition),
        f"compressive-marginals-n{n}-gpu": compressive(None, "GPU", hook.marginals),
        "google-numpy-teams": google_split(True),
        "google-numpy-one-block-each": google_split(False),
        "google-numpy-teams-two-a-multiprocessor": switched(hook, "TEAM_BLOCKS_A_MULTIPROCESSOR", 2,
                                                            google_split(True)),
    }
    for size in plain_sizes:
        for task, function in (("map", eisner.tree_map), ("logz", eisner.tree_log_partition),
                               ("marginals", eisner.tree_marginals)):
            runs[f"plain-{task}-n{size}-gpu"] = plain(size, function, "GPU")
            variant = variants.get((task, size))
            if variant:
                module, name, value = (runtime, "REGISTER_CAP", True) if variant == "capped" else (
                    eisner, "CAPPED_SUMS", False)
                runs[f"plain-{task}-n{size}-gpu-{variant}"] = switched(module, name, value,
                                                                       plain(size, function, "GPU"))
        if eisner.placement(size + 1, 4)[1]:  # outside charts in shared memory: in global memory, uncapped too
            outside_global = switched(eisner, "OUTSIDE_IN_SHARED", False, plain(size, eisner.tree_marginals, "GPU"))
            runs[f"plain-marginals-n{size}-gpu-outside-global"] = outside_global
            runs[f"plain-marginals-n{size}-gpu-outside-global-uncapped"] = switched(eisner, "CAPPED_SUMS", False,
                                                                                     outside_global)
        runs[f"plain-map-n{size}-numpy"] = plain(size, eisner.tree_map, "numpy")
    return runs


def _intervals_union(intervals: list[tuple[float, float]]) -> tuple[float, list[tuple[float, float]]]:
    """The total length of the union of ``intervals`` (start, end) and the gaps between its pieces."""
    busy, gaps, end = 0.0, [], None
    for start, stop in sorted(intervals):
        if end is None or start > end:
            if end is not None:
                gaps.append((end, start))
            busy += stop - start
            end = stop
        elif stop > end:
            busy += stop - end
            end = stop
    return busy, gaps


def timeline(trace: dict, wall_seconds: float, shown: int = 40) -> list[str]:
    """The lines that say where a profiled call's time went (times in ms from its first recorded event), from a
    chrome trace of torch's profiler: its GPU events (categories :data:`GPU_KINDS`), their busy union and gaps, each
    kind's total, the first ``shown`` of them in order; the CUDA API calls' totals on the host."""
    events = [e for e in trace.get("traceEvents", []) if e.get("ph") == "X" and "dur" in e]
    if not events:
        return ["  no events recorded"]
    origin = min(float(e["ts"]) for e in events)
    gpu = sorted((e for e in events if e.get("cat") in GPU_KINDS), key=lambda e: float(e["ts"]))
    lines = [f"  wall {wall_seconds * 1e3:.3f} ms"]
    if not gpu:
        kinds = sorted({str(e.get("cat")) for e in events})
        return lines + [f"  no GPU events recorded (categories seen: {', '.join(kinds)})"]
    spans = [((float(e["ts"]) - origin) / 1e3, (float(e["ts"]) + float(e["dur"]) - origin) / 1e3) for e in gpu]
    busy, gaps = _intervals_union(spans)
    first, last = spans[0][0], max(stop for _, stop in spans)
    longest = ", ".join(f"{b - a:.3f} ms at {a:.3f}" for a, b in sorted(gaps, key=lambda g: g[0] - g[1])[:3])
    lines.append(f"  GPU: first event at {first:.3f} ms, last ends at {last:.3f} ms, busy {busy:.3f} ms; "
                 f"{len(gaps)} idle gaps, {sum(b - a for a, b in gaps):.3f} ms" + (f", the longest {longest}" if gaps
                                                                                 else ""))
    for kind in GPU_KINDS:
        of_kind = [e for e in gpu if e.get("cat") == kind]
        if of_kind:
            total = sum(float(e["dur"]) for e in of_kind) / 1e3
            moved = sum(float(e.get("args", {}).get("bytes", 0)) for e in of_kind)
            lines.append(f"  {kind}: {len(of_kind)} events, {total:.3f} ms" + (f", {moved / 1e6:.1f} MB" if moved
                                                                             else ""))
    host = {}
    for e in events:
        if e.get("cat") in ("cuda_runtime", "cuda_driver"):
            host[e["name"]] = host.get(e["name"], 0.0) + float(e["dur"]) / 1e3
    if host:
        lines.append("  CUDA API on the host: " + ", ".join(f"{name} {ms:.3f} ms" for name, ms in
                                                             sorted(host.items(), key=lambda x: -x[1])[:6]))
    for e, (start, stop) in list(zip(gpu, spans))[:shown]:
        args = e.get("args", {})
        extra = f" stream {args.get('stream', '?')}"
        if "bytes" in args:
            extra += f", {float(args['bytes']) / 1e6:.2f} MB"
        if "grid" in args:
            extra += f", grid {args['grid']} block {args.get('block')}"
        name = re.sub(r"\s+", " ", str(e.get("name", "")))[:70]
        lines.append(f"  {start:9.3f} +{stop - start:8.3f} ms  {e['cat']:<10} {name}{extra}")
    if len(gpu) > shown:
        lines.append(f"  ... {len(gpu) - shown} more GPU events")
    return lines


def trace_all(runs: dict, out: pathlib.Path) -> None:
    import torch
    from torch.profiler import ProfilerActivity, profile

    out.mkdir(parents=True, exist_ok=True)
    report = out / "timeline.txt"
    with report.open("w") as text:
        for name, prepare in runs.items():
            try:
                call = prepare()
                call()
                call()
                with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                    start = time.perf_counter()
                    call()
                    wall = time.perf_counter() - start
                path = out / f"trace-{name}.json"
                prof.export_chrome_trace(str(path))
                lines = timeline(json.loads(path.read_text()), wall)
            except (Exception, SystemExit) as exc:  # one workload's failure is a line, the others still run
                lines = [f"  failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"]
            print(name, *lines, sep="\n", file=text, flush=True)
            print(name, *lines, sep="\n", flush=True)
            torch.cuda.synchronize()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--google", help="the .npz of Google's test split (bench_gpu_compressive.py --make-google)")
    parser.add_argument("--trace", metavar="OUT", help="profile every workload into this folder")
    parser.add_argument("--workload", nargs="+", help="run these workloads once each (for Nsight Compute)")
    parser.add_argument("--list", action="store_true", help="name the workloads")
    parser.add_argument("--quick", action="store_true", help="every workload once at tiny sizes (the simulator)")
    args = parser.parse_args()
    from compbench_solvers.cuda import runtime

    reason = runtime.unavailable()
    if reason is not None:
        raise SystemExit(f"no GPU path here: {reason}")
    runs = workloads(args.quick, args.google)
    if args.list:
        print("\n".join(runs))
    elif args.trace:
        trace_all(runs, pathlib.Path(args.trace))
    else:
        names = args.workload or [name for name in runs if args.google or not name.startswith("google")]
        unknown = [name for name in names if name not in runs]
        if unknown:
            raise SystemExit(f"unknown workload {unknown[0]!r}: --list names them")
        for name in names:
            call = runs[name]()
            start = time.perf_counter()
            call()
            print(f"{name}: {(time.perf_counter() - start) * 1e3:.3f} ms", flush=True)


if __name__ == "__main__":
    sys.exit(main())
