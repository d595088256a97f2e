"""The bigram-only model's decoders on its real problems: the chain DP (``bigram-chain``, O(n^2 m)) against
``resource-dp`` on the same zero-arc problems (exact too), at the gold length.  Checks they reach the same optimum.

    .venv/bin/python benchmarks/bench_baselines.py --corpus google --data ../shared/data/google-sentence-compression \
        --model reports/models/google-bigram-crf.npz --split test
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import compbench
from compbench.compression.baselines import ChainSolver, load_model
from compbench.corpora import read_corpus, split_corpus
from compbench.problem import Length


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--model", required=True, help="a bigram model (compbench train --model-kind bigram)")
    parser.add_argument("--split", default="test")
    args = parser.parse_args()
    model = load_model(args.model)
    sentences = [s for s in split_corpus(read_corpus(args.corpus, args.data))[args.split] if s.aligned and s.golds]
    solvers = {"bigram-chain": ChainSolver(), "resource-dp": compbench.get_solver("resource-dp")}
    solvers["resource-dp"].warm_up()
    times: dict[str, list[float]] = {name: [] for name in solvers}
    worst, sizes = 0.0, []
    for sentence in sentences:
        problem = model.problem(sentence, Length.exact(len(sentence.golds[0])))
        sizes.append(sentence.n)
        objectives = {}
        for name, solver in solvers.items():
            start = time.perf_counter()
            objectives[name] = solver.solve(problem).objective
            times[name].append(time.perf_counter() - start)
        worst = max(worst, abs(objectives["bigram-chain"] - objectives["resource-dp"]))
    print(f"{args.corpus} {args.split}: {len(sentences)} problems, n mean {np.mean(sizes):.1f}, max {max(sizes)}; "
          f"largest |objective difference| {worst:.1e}")
    for name, seconds in times.items():
        ms = 1000 * np.array(seconds)
        print(f"  {name:<13} mean {ms.mean():6.2f} ms  median {np.median(ms):6.2f} ms  max {ms.max():7.1f} ms")


if __name__ == "__main__":
    main()
