"""``cuda-dp``: compressive parsing by the hook-trick chart on the GPU (:mod:`compbench_solvers.cuda.hook`), a batch
in one launch per root mode."""

from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np

from compbench import Capabilities, Problem, ProblemBatch, Solution, Solver, Status

from . import runtime


def _answer(heads: np.ndarray, value: float) -> Solution:
    """A best derivation as a proven answer, ``infeasible`` when there is none (value -inf)."""
    if value == -math.inf:
        return Solution(Status.INFEASIBLE, bound=-math.inf)
    return Solution(Status.OPTIMAL, heads, value, bound=value)


class CudaDP(Solver):
    """The hook-trick chart of ``hook-dp`` (free length) and ``resource-dp`` (exact and ranged lengths) on a CUDA GPU:
    the same trees and objectives, bit for bit, one thread block per sentence.

    A batch (:meth:`solve_many`: a list of problems or a :class:`compbench.ProblemBatch`) is solved in one launch per
    root mode, its scores copied to the GPU and the answers back (part of the time); each answer records the batch's
    size in ``stats["batch"]`` and its seconds are the batch's divided equally.  :meth:`solve` is a batch of one.  The
    kernels cannot be interrupted: ``time_limit`` is not enforced.  Without a GPU (or numba-cuda) it is unavailable,
    with the reason; ``NUMBA_ENABLE_CUDASIM=1`` runs it in numba's CUDA simulator (slowly).

    >>> import compbench
    >>> solver = compbench.get_solver("cuda-dp")
    >>> reason = solver.unavailable()        # None under the simulator or on a GPU
    >>> reason is None or reason.startswith(("numba-cuda", "no CUDA GPU", "the CUDA driver"))
    True
    """

    name = "cuda-dp"
    description = "hook-trick chart (hook-dp / resource-dp) as CUDA kernels, one thread block per sentence"
    exact = True
    complexity = "O(n^3 d^2) work per sentence, d = 1 + min(m, n - m) (free length: d = 1); a batch in one launch"
    supports = Capabilities(second_order=False)
    option_names = frozenset()

    def unavailable(self) -> str | None:
        return runtime.unavailable()

    def _solve(self, problem: Problem, *, time_limit: float | None, all_lengths: bool) -> Solution:
        return _decode_batch(ProblemBatch.from_problems([problem]))[0]

    def _solve_batch(self, batch: ProblemBatch, *, time_limit: float | None, jobs: int) -> list[Solution]:
        return _decode_batch(batch)

    def solve_many(self, problems: Iterable[Problem] | ProblemBatch, *, time_limit: float | None = None,
                   jobs: int | None = None, **options: Any) -> list[Solution]:
        """Solve a :class:`compbench.ProblemBatch` (its arrays read as they are, no :class:`compbench.Problem`
        built) or a list of problems (padded into one batch per root mode and order: one launch each), in order, as
        :meth:`compbench.Solver.solve_many`.

        >>> import compbench, numpy as np
        >>> batch = compbench.ProblemBatch.from_arrays(np.zeros((2, 4, 4)), sizes=[3, 2], length=2)
        >>> solver = compbench.get_solver("cuda-dp")
        >>> answers = solver.solve_many(batch)
        >>> solver.unavailable() is not None or [len(s.kept) for s in answers] == [2, 2]
        True
        """
        if isinstance(problems, ProblemBatch):
            return super().solve_many(problems, time_limit=time_limit, jobs=jobs, **options)
        problems = list(problems)
        if len(problems) <= 1:
            return super().solve_many(problems, time_limit=time_limit, jobs=jobs, **options)
        answers: list[Solution | None] = [None] * len(problems)
        for kind in {(p.single_root, p.second_order) for p in problems}:
            index = [k for k, p in enumerate(problems) if (p.single_root, p.second_order) == kind]
            batch = ProblemBatch.from_problems([problems[k] for k in index])
            for k, answer in zip(index, super().solve_many(batch, time_limit=time_limit, jobs=jobs, **options)):
                answers[k] = answer
        return answers  # type: ignore[return-value]


def _decode_batch(batch: ProblemBatch) -> list[Solution]:
    """Every sentence of ``batch`` decoded in one launch, as proven answers (heads cut to each sentence's n + 1)."""
    from . import hook

    heads, objective = hook.decode(batch.arc_scores, batch.token_scores, batch.bigram_scores, batch.sizes,
                                   batch.min_length, batch.max_length, batch.single_root)
    counting, cap = hook.count_plans(batch.sizes, batch.min_length, batch.max_length)
    names = ("none", "kept", "dropped")
    solutions = []
    for row, n, value, code, top in zip(heads, batch.sizes.tolist(), objective.tolist(), counting.tolist(),
                                        cap.tolist()):  # plain Python values: no numpy scalar per problem
        solution = _answer(row[:n + 1], value)
        solution.stats.update(counting=names[code], cap=top)
        solutions.append(solution)
    return solutions
