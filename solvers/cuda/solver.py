"""``cuda-dp``: compressive parsing by the hook-trick chart on the GPU (:mod:`compbench_solvers.cuda.hook`), a batch
in one launch per root mode."""

from __future__ import annotations

from compbench import Capabilities, Option, Problem, ProblemBatch, Solution, Solver, Status

from ..compressive.base import proven_answer
from . import runtime


class CudaDP(Solver):
    """The hook-trick chart of ``hook-dp`` (free length) and ``resource-dp`` (exact and ranged lengths) on a CUDA GPU:
    the same trees and objectives, bit for bit, one thread block per sentence.

    A batch (:meth:`solve_many`: a list of problems or a :class:`compbench.ProblemBatch`, its arrays read as they
    are) is solved in one launch per root mode (a list is not split by size: ``batch_by_size``), its scores copied
    to the GPU and the answers back (part of the time); each answer records the batch's size in ``stats["batch"]``
    and its seconds are the batch's divided equally.  :meth:`solve` is a batch of one.  The
    kernels cannot be interrupted: ``time_limit`` is not enforced.  Without a GPU (or numba-cuda) it is unavailable,
    with the reason; ``NUMBA_ENABLE_CUDASIM=1`` runs it in numba's CUDA simulator (slowly).

    >>> import compbench
    >>> solver = compbench.get_solver("cuda-dp")
    >>> reason = solver.unavailable()        # None under the simulator or on a GPU
    >>> reason is None or reason.startswith(("numba-cuda", "no CUDA GPU", "the CUDA driver"))
    True
    >>> import numpy as np
    >>> batch = compbench.ProblemBatch.from_arrays(np.zeros((2, 4, 4)), sizes=[3, 2], length=2)
    >>> reason is not None or [len(s.kept) for s in solver.solve_many(batch)] == [2, 2]
    True
    """

    name = "cuda-dp"
    description = "hook-trick chart (hook-dp / resource-dp) as CUDA kernels, one thread block per sentence"
    exact = True
    complexity = "O(n^3 d^2) work per sentence, d = 1 + min(m, n - m) (free length: d = 1); a batch in one launch"
    supports = Capabilities(second_order=False)
    accepted_options: dict[str, Option] = {}
    batch_by_size = False  # a block per sentence reads its own size: one launch per root mode

    def unavailable(self) -> str | None:
        return runtime.unavailable()

    def _solve(self, problem: Problem, *, time_limit: float | None, all_lengths: bool) -> Solution:
        return _decode_batch(ProblemBatch.from_problems([problem]))[0]

    def _solve_batch(self, batch: ProblemBatch, *, time_limit: float | None, jobs: int) -> list[Solution]:
        return _decode_batch(batch)


def _decode_batch(batch: ProblemBatch) -> list[Solution]:
    """Every sentence of ``batch`` decoded in one launch, as proven answers (heads cut to each sentence's n + 1);
    one whose chart does not fit the GPU's work areas is ``unsupported``, with why (:func:`hook.too_big`)."""
    from . import hook

    counting, cap = hook.count_plans(batch.sizes, batch.min_length, batch.max_length)
    reasons = hook.too_big(batch.sizes, cap)
    if any(reasons):
        fits = [k for k, why in enumerate(reasons) if why is None]
        answers = dict(zip(fits, _decode_batch(batch.take(fits)) if fits else []))
        return [answers[k] if why is None else Solution(Status.UNSUPPORTED, message=f"cuda-dp: {why}")
                for k, why in enumerate(reasons)]
    heads, objective = hook.decode(*hook.batch_arguments(batch))
    names = ("none", "kept", "dropped")
    solutions = []
    for row, n, value, code, top in zip(heads, batch.sizes.tolist(), objective.tolist(), counting.tolist(),
                                        cap.tolist()):  # plain Python values: no numpy scalar per problem
        solution = proven_answer(row[:n + 1], value)
        solution.stats.update(counting=names[code], cap=top)
        solutions.append(solution)
    return solutions
