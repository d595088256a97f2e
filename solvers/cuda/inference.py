"""The ``cuda`` inference provider (entry point ``cuda`` of the ``compbench.inference`` group): log Z and posterior
marginals of compressive problems by :mod:`compbench_solvers.cuda.hook`'s kernels, for
``compbench.log_partition_many(..., device="cuda")`` and ``compbench.marginals_many(..., device="cuda")``."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from compbench import Problem, ProblemBatch
from compbench.inference import Marginals

from . import runtime


def _batches(problems: Sequence[Problem] | ProblemBatch) -> list[tuple[list[int], ProblemBatch]]:
    """The batches to launch (one per root mode) and the positions of their sentences; first order only."""
    reason = runtime.unavailable()
    if reason is not None:
        raise RuntimeError(f"device='cuda': {reason}")
    if isinstance(problems, ProblemBatch):
        batches = [(list(range(len(problems))), problems)]
    else:
        problems = list(problems)
        batches = []
        for single_root in (False, True):
            index = [k for k, p in enumerate(problems) if p.single_root == single_root]
            if index:
                batches.append((index, ProblemBatch.from_problems([problems[k] for k in index])))
    if any(batch.second_order for _, batch in batches):
        raise ValueError("device='cuda': second-order (sibling) scores are not supported on the GPU (use device='cpu')")
    return batches


def _arguments(batch: ProblemBatch) -> tuple:
    return (batch.arc_scores, batch.token_scores, batch.bigram_scores, batch.sizes, batch.min_length,
            batch.max_length, batch.single_root)


def log_partition_many(problems: Sequence[Problem] | ProblemBatch, jobs: int) -> np.ndarray:
    """log Z of every problem, in order (``jobs`` is the CPU's thread count: unused here)."""
    from . import hook

    batches = _batches(problems)
    out = np.empty(sum(len(index) for index, _ in batches))
    for index, batch in batches:
        if len(batch):
            out[index] = hook.log_partition(*_arguments(batch))
    return out


def marginals_many(problems: Sequence[Problem] | ProblemBatch, jobs: int) -> list[Marginals]:
    """:class:`compbench.Marginals` of every problem, in order, cut from the padded arrays (``jobs``: unused)."""
    from . import hook

    batches = _batches(problems)
    answers: list[Marginals | None] = [None] * sum(len(index) for index, _ in batches)
    for index, batch in batches:
        if not len(batch):
            continue
        log_z, token, arc, bigram = hook.marginals(*_arguments(batch))
        for b, (k, n) in enumerate(zip(index, batch.sizes.tolist())):
            answers[k] = Marginals(float(log_z[b]), token[b, :n].copy(), arc[b, :n + 1, :n + 1].copy(),
                                   bigram[b, :n + 2, :n + 2].copy())
    return answers  # type: ignore[return-value]
