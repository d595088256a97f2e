"""The host's share of cuda-dp's decode from numpy: staging each chunk's scores for its copy to the GPU.

    python benchmarks/bench_staging.py --google .gpu-data/google-test.npz --out reports/gpu/staging.txt

No GPU is needed: the chunks are those hook.decode makes for an H100 (132 multiprocessors), and the buffers are plain
numpy arrays here, pinned ones on a GPU (filling them costs the same). For the padded Google test split (when given)
and random batches of one size, it times two ways of filling the chunks' buffers:
- numpy, the way of commit 8f937af and before: a contiguous range of sentences at the batch's width copied into the
  buffer, any other chunk's rows gathered at its width by fancy indexing, then copied (two passes);
- hook._stage: each sentence's own scores copied once by a compiled loop, on every core.
It reports the medians of ``--repeats`` runs after a warm-up, and the megabytes each way writes.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from bench_gpu_compressive import gaussian_batch, padded
from machine import machine_line

def chunk_buffers(sizes: np.ndarray, chunks: list[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    buffers = []
    for index in chunks:
        w = int(sizes[index].max())
        buffers.append((np.empty((len(index), w + 1, w + 1)), np.empty((len(index), w)),
                        np.empty((len(index), w + 2, w + 2))))
    return buffers


def by_numpy(hook, inputs, chunks, buffers) -> None:
    for index, (arc, token, bigram) in zip(chunks, buffers):  # (what PINNED_STAGING = False copies from)
        for buffer, source in zip((token, arc, bigram), hook._chunk_scores(inputs, index, token.shape[1])):
            np.copyto(buffer, source)


def by_stage(hook, inputs, chunks, buffers) -> None:
    for index, (arc, token, bigram) in zip(chunks, buffers):
        hook._stage(inputs, index, (token, arc, bigram))


def median_ms(run, repeats: int) -> float:
    run()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--google", help="the .npz of Google's test split (bench_gpu_compressive.py --make-google)")
    parser.add_argument("--n", type=int, default=25)
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--out")
    args = parser.parse_args()
    from compbench.solver import cores
    from compbench_solvers.cuda import hook, runtime

    cases = []
    if args.google:
        with np.load(args.google) as data:
            cases.append(("Google test, gold lengths", padded({key: data[key] for key in data.files})))
    for length in (None, 11):
        batch = gaussian_batch(args.batch, args.n, length, seed=5)
        name = f"n = {args.n}, batch {args.batch}, " + ("free length" if length is None else f"m = {length}")
        cases.append((name, hook.batch_arguments(batch)[:6]))
    lines = [machine_line(), f"# host staging of cuda-dp's decode from numpy, {cores(None)} threads; chunks as "
             f"for {runtime.H100_MULTIPROCESSORS} multiprocessors; median of {args.repeats} runs",
             "| batch | sentences | chunks | MB written (numpy / stage) | numpy ms | hook._stage ms | ratio |",
             "|---|---|---|---|---|---|---|"]
    for name, (arc, token, bigram, sizes, lo, hi) in cases:
        inputs = hook.Inputs(np.ascontiguousarray(arc), np.ascontiguousarray(token), np.ascontiguousarray(bigram),
                             np.asarray(sizes, np.int64), np.asarray(lo, np.int64), np.asarray(hi, np.int64))
        cap = hook.count_plans(inputs.sizes, inputs.lo, inputs.hi)[1]
        chunks = hook.host_chunks(inputs.sizes, cap, hook.team_sizes(inputs.sizes, cap, runtime.H100_MULTIPROCESSORS))
        buffers = chunk_buffers(inputs.sizes, chunks)
        written = sum(a.nbytes for chunk in buffers for a in chunk) / 1e6
        own = hook.own_score_bytes(inputs.sizes).sum() / 1e6
        numpy_ms = median_ms(lambda: by_numpy(hook, inputs, chunks, buffers), args.repeats)
        stage_ms = median_ms(lambda: by_stage(hook, inputs, chunks, buffers), args.repeats)
        lines.append(f"| {name} | {len(inputs.sizes)} | {len(chunks)} | {written:.1f} / {own:.1f} | {numpy_ms:.2f} | "
                     f"{stage_ms:.2f} | {numpy_ms / stage_ms:.1f}x |")
        print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
