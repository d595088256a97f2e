"""compbench against the tensor libraries (supar, torch-struct) on the same arc score matrices: sentences per second.

    .venv/bin/python benchmarks/bench_peers.py --sizes 10 25 50 --batches 1 16 256
    (peers: pip install -e '.[peers]'; without them compbench is measured alone)

One thread (``torch.set_num_threads(1)``, ``jobs=1``), float64, CPU; each row's batches are timed alternately in one
process, the median of ``--repeats`` runs.  Plain dependency parsing, every token kept, several roots allowed:
log Z (``compbench.tree_log_partition_many``), arc marginals (``compbench.tree_marginals_many``) and the MAP tree
(``resource-dp`` at length n through ``compbench.solve_many``: the same chart as ``hook-dp`` with nothing
counted).  compbench's times include checking the scores and laying them out (for MAP, building each problem by
``Problem.trusted`` after one ``check_scores`` of the batch).  The peers get one padded tensor per batch (one
sentence at a time at batch 1).  log Z is checked against compbench's before timing.
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import statistics
import sys
import time
import types

import numpy as np

import compbench
from compbench import Problem
from compbench.problem import check_scores

from machine import machine_line


def load_peers() -> dict:
    """The peers that are installed: supar's structs (imported without its package's own imports, which pull in
    nltk and transformers) and torch-struct."""
    peers: dict = {}
    try:
        import torch
    except ImportError:
        return peers
    torch.set_num_threads(1)
    spec = importlib.util.find_spec("supar")
    if spec is not None:
        root = pathlib.Path(spec.origin).parent
        for name, path in (("supar", root), ("supar.utils", root / "utils")):
            module = types.ModuleType(name)
            module.__path__ = [str(path)]
            sys.modules.setdefault(name, module)
        from supar.structs import DependencyCRF

        peers["supar"] = DependencyCRF
    if importlib.util.find_spec("torch_struct") is not None:
        import torch_struct
        from torch_struct.semirings import semirings

        # torch-struct 0.5 zeroes the (empty) padding of full-length sentences in place on a leaf that requires
        # grad, which torch >= 2 refuses: skip the empty slices
        original = semirings._BaseLog.zero_
        semirings._BaseLog.zero_ = staticmethod(lambda xs: xs if xs.numel() == 0 else original(xs))
        peers["torch-struct"] = torch_struct.DependencyCRF
    return peers


def tree_problems(arcs: np.ndarray) -> list[Problem]:
    check_scores("arc_scores", arcs)
    n = arcs.shape[1] - 1
    token, bigram = np.zeros(n), np.zeros((n + 2, n + 2))
    return [Problem.trusted(token, arc, bigram, length=n) for arc in arcs]


def compbench_runs(arcs: np.ndarray) -> dict:
    resource = compbench.get_solver("resource-dp")
    return {
        "log Z": lambda: compbench.tree_log_partition_many(arcs),
        "marginals": lambda: compbench.tree_marginals_many(arcs),
        "MAP": lambda: resource.solve_many(tree_problems(arcs), jobs=1),
    }


def peer_runs(name: str, crf, arcs: np.ndarray, device: str = "cpu", dtype=None) -> dict:
    """The peer's log Z, marginals and MAP on one batch, its scores already on ``device`` in ``dtype`` (default
    float64); benchmarks/bench_gpu.py runs them on the GPU."""
    import torch

    dtype = dtype or torch.float64
    B, N = arcs.shape[0], arcs.shape[1]
    if name == "supar":  # scores[b, dependent, head], the root at position 0
        scores = torch.tensor(np.ascontiguousarray(arcs.transpose(0, 2, 1)), dtype=dtype, device=device)
        scores = torch.where(torch.isinf(scores), torch.full_like(scores, -1e30), scores)
        lens = torch.full((B,), N - 1, dtype=torch.long, device=device)

        def make(grad: bool = False):
            s = scores.clone().requires_grad_(grad)
            return crf(s, lens, multiroot=True)
        return {"log Z": lambda: make().log_partition.sum().item(),
                "marginals": lambda: make(True).marginals,
                "MAP": lambda: make().argmax}
    # torch-struct: potentials[b, head, dependent] over the words, the root arcs on the diagonal
    potentials = np.ascontiguousarray(arcs[:, 1:, 1:]).copy()
    index = np.arange(N - 1)
    potentials[:, index, index] = arcs[:, 0, 1:]
    potentials = torch.tensor(potentials, dtype=dtype, device=device)

    def dist(grad: bool = False):
        return crf(potentials.clone().requires_grad_(grad), multiroot=True)
    return {"log Z": lambda: dist().partition.sum().item(),
            "marginals": lambda: dist(True).marginals,
            "MAP": lambda: dist().argmax}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 25, 50])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 16, 256])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--sentences", type=int, default=256, help="sentences per timed run (batch 1: one at a time)")
    args = parser.parse_args()
    print(machine_line(), flush=True)
    peers = load_peers()
    print(f"peers installed: {', '.join(peers) or 'none (compbench alone)'}; one thread, float64, CPU")
    print("| n | batch | task | " + " | ".join(["compbench", *peers]) + " | compbench / best peer |")
    print("|---|---|---|" + "---|" * (len(peers) + 2))
    rng = np.random.default_rng(0)
    for n in args.sizes:
        for batch in args.batches:
            arcs = rng.standard_normal((args.sentences, n + 1, n + 1))
            chunks = [arcs[k:k + batch] for k in range(0, len(arcs), batch)]
            systems = {"compbench": [compbench_runs(chunk) for chunk in chunks]}
            for name, crf in peers.items():
                systems[name] = [peer_runs(name, crf, chunk) for chunk in chunks]
            reference = compbench.tree_log_partition_many(arcs[:1])[0]
            for name, crf in peers.items():  # the same model: the same log Z
                got = peer_runs(name, crf, arcs[:1])["log Z"]()
                if not np.isclose(got, reference, rtol=1e-9):
                    print(f"note: {name}'s log Z {got} differs from compbench's {reference} at n = {n}")
            for task in ("log Z", "marginals", "MAP"):
                times: dict[str, list[float]] = {name: [] for name in systems}
                for name, runs in systems.items():
                    for run in runs[:1]:
                        run[task]()  # warm up (compilation, caches)
                for _ in range(args.repeats):
                    for name, runs in systems.items():
                        start = time.perf_counter()
                        for run in runs:
                            run[task]()
                        times[name].append(time.perf_counter() - start)
                rate = {name: len(arcs) / statistics.median(values) for name, values in times.items()}
                best = max((rate[name] for name in peers), default=None)
                ratio = f"{rate['compbench'] / best:.2f}x" if best else ""
                print(f"| {n} | {batch} | {task} | " + " | ".join(f"{rate[name]:,.0f}" for name in systems)
                      + f" | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
