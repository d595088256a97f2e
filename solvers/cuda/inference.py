"""Inference on the GPU: the ``cuda`` provider of the ``compbench.inference`` entry-point group.

``compbench.tree_log_partition_many(..., device="cuda")`` and ``tree_marginals_many`` call :func:`tree_many`
(plain parsing, :mod:`compbench_solvers.cuda.eisner`'s kernels); ``compbench.log_partition_many(..., device="cuda")``
and ``marginals_many`` call :func:`log_partition_many` and :func:`marginals_many` (compressive parsing,
:mod:`compbench_solvers.cuda.hook`'s kernels).  This module only lays a batch out for the kernels.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any, Sequence

import numpy as np

from compbench import ProblemBatch
from compbench.inference import Marginals, at_most_one
from compbench.problem import ProblemError

from . import runtime


def _kernels(module: str) -> ModuleType:
    """The kernels' module (``eisner`` or ``hook``), after :func:`runtime.unavailable` said the GPU path can run
    (else a RuntimeError with its one-line reason)."""
    reason = runtime.unavailable()
    if reason is not None:
        raise RuntimeError(f"device='cuda' cannot run: {reason}")
    return importlib.import_module(f".{module}", __package__)


def _padded(arc_scores: Sequence[np.ndarray] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A list of (n+1)-square score matrices (or a (B, N+1, N+1) array) as one padded batch and its sizes."""
    if isinstance(arc_scores, np.ndarray) and arc_scores.ndim == 3:
        B, N = arc_scores.shape[0], arc_scores.shape[1]
        return np.ascontiguousarray(arc_scores, dtype=np.float64), np.full(B, N - 1, np.int64)
    arrays = [np.asarray(a, dtype=np.float64) for a in arc_scores]
    for k, arc in enumerate(arrays):
        if arc.ndim != 2 or arc.shape[0] != arc.shape[1] or arc.shape[0] < 1:
            raise ProblemError(f"arc_scores[{k}]", f"expected an (n+1) x (n+1) matrix, got shape {arc.shape}")
    N = max((len(a) for a in arrays), default=1)
    batch = np.full((len(arrays), N, N), -np.inf)
    for b, arc in enumerate(arrays):
        batch[b, :len(arc), :len(arc)] = arc
    return batch, np.array([len(a) - 1 for a in arrays], np.int64)


def holds(array: Any) -> bool:
    """Whether ``array`` already lives on the GPU (used in place; compbench.inference checks anything else first)."""
    return runtime.on_gpu(array)


def tree_many(arc_scores: Any, single_root: bool, with_marginals: bool) -> tuple[Any, list]:
    """log Z of B tree-CRFs and, with ``with_marginals``, their arc marginals, in one launch: ``(log_z, arcs)``.

    ``arc_scores``: a list of (n+1)-square matrices (sizes may differ: padded into one batch) or a (B, N+1, N+1)
    array, numpy (copied to the GPU) or a GPU array (torch, CuPy: used in place).  numpy in: ``log_z`` a numpy (B,)
    array and ``arcs`` each sentence's (n+1)-square numpy matrix; a GPU array in: ``log_z`` (B,) and ``arcs`` the
    (N+1)-square views of one (B, N+1, N+1) array, of the input's kind (``[]`` without ``with_marginals``; with
    them ``log_z`` a numpy array, read into each Marginals' float).
    """
    eisner = _kernels("eisner")
    if runtime.on_gpu(arc_scores):
        if not with_marginals:
            return eisner.tree_log_partition(arc_scores, None, single_root), []
        log_z, arcs = eisner.tree_marginals(arc_scores, None, single_root)  # log Z read into floats: on the host
        return runtime.to_host(log_z), [arcs[b] for b in range(arcs.shape[0])]
    batch, sizes = _padded(arc_scores)
    if not len(batch):  # no sentence, whatever its shape, as on the CPU
        return np.empty(0), []
    if not with_marginals:
        return eisner.tree_log_partition(batch, sizes, single_root), []
    log_z, arcs = eisner.tree_marginals(batch, sizes, single_root)
    at_most_one(arcs)
    return log_z, [arcs[b, :n + 1, :n + 1] for b, n in enumerate(sizes.tolist())]


def _first_order(batch: ProblemBatch) -> None:
    if batch.second_order:
        raise ValueError("device='cuda': second-order (sibling) scores are not supported on the GPU (use device='cpu')")


def log_partition_many(batch: ProblemBatch, jobs: int) -> np.ndarray:
    """log Z of every sentence of a batch, in order, in one launch (``jobs`` is the CPU's thread count: unused
    here)."""
    _first_order(batch)
    if not len(batch):
        return np.empty(0)
    hook = _kernels("hook")
    return hook.log_partition(*hook.batch_arguments(batch))


def marginals_many(batch: ProblemBatch, jobs: int) -> list[Marginals]:
    """:class:`compbench.Marginals` of every sentence of a batch, in order, in one launch, cut from the padded
    arrays (``jobs``: unused)."""
    _first_order(batch)
    if not len(batch):
        return []
    hook = _kernels("hook")
    log_z, token, arc, bigram = hook.marginals(*hook.batch_arguments(batch))
    at_most_one(token, arc, bigram)
    return [Marginals(float(log_z[b]), token[b, :n].copy(), arc[b, :n + 1, :n + 1].copy(),
                      bigram[b, :n + 2, :n + 2].copy()) for b, n in enumerate(batch.sizes.tolist())]
