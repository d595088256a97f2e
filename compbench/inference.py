"""Probabilistic inference over the solutions of a problem: the partition function and posterior marginals.

p(solution) ∝ exp(objective): ``log_partition(problem)`` is log Σ exp(objective) over every valid solution (its
length condition, root mode and order; -inf when there is none) and ``marginals(problem)`` the posterior
probability of every token, arc, bigram and, in second order, sibling triple.  The computation (inside and outside
over the hook-trick chart's hypergraph) is provided through the ``compbench.inference`` entry-point group, as the
solvers are, so the core imports no solver.

>>> import compbench, numpy as np
>>> p = compbench.generate("gaussian", n=6, seed=0, length=3)
>>> m = compbench.marginals(p)
>>> round(float(m.token.sum()), 6)          # every solution keeps 3 tokens
3.0
>>> bool(np.isclose(m.log_partition, compbench.log_partition(p)))
True
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np

from .problem import Problem, ProblemError, check_flag, _real_array, check_scores, expect_problem
from .problem_batch import ProblemBatch, forbid_ignored_arcs
from .registry import group_entry_points
from .solver import cores

GROUP = "compbench.inference"


@dataclass(frozen=True)
class Marginals:
    """Posterior probabilities under p(solution) ∝ exp(objective), in the problem's own layouts.

    ``token[k-1]``: token k is kept; ``arc[h, m]``: m is kept with head h; ``bigram[a, b]``: a and b are consecutive
    in 0, kept tokens, n+1; ``sibling[h, s, m]`` (second order): m is a modifier of h whose previous modifier on
    that side is s (s = h for the first).  Token marginals sum to the expected length; every kept token's arc
    marginals over its heads sum to its token marginal.
    """

    log_partition: float
    token: np.ndarray
    arc: np.ndarray
    bigram: np.ndarray
    sibling: np.ndarray | None = None


def at_most_one(*parts: np.ndarray | None) -> None:
    """Clip posterior arrays to 1 in place: the float64 rounding of a sure part's sums lands a few ulps above 1 (and
    log1p(-p) is NaN there).  Every chart's marginals pass through it before they are handed out, a batch's at once
    (a GPU array the caller gave stays as it is)."""
    for part in parts:
        if part is not None:
            np.minimum(part, 1.0, out=part)


@functools.cache
def _provider() -> Any:
    """The registered provider, loaded once per process."""
    found = {ep.name: ep for ep in group_entry_points(GROUP)}
    if "hook-trick" not in found:
        raise RuntimeError(f"no inference provider registered in the {GROUP!r} entry-point group (is compbench "
                           "installed with its solvers?)")
    return found["hook-trick"].load()


def _device_provider(device: Any) -> Any:
    """The provider that computes a batch on ``device``: "cpu" the hook-trick chart's (:func:`_provider`), any other
    the entry point of that name in the group (``cuda``: compbench_solvers.cuda.inference, the GPU kernels), looked
    up once per process.  Its functions raise a RuntimeError with a one-line reason when the device cannot be used
    here.  A device's provider has ``log_partition_many``, ``marginals_many``, ``tree_many`` and ``holds(array)``
    (whether an array already lives on the device: used in place, where anything else is checked first).  Any
    other name, or a value that is no name (device=["cuda"] was the cache's 'unhashable type'), is a ValueError."""
    if device == "cpu":
        return _provider()
    found = _device_entry_points()
    if not isinstance(device, str) or device not in found:
        known = ", ".join(repr(name) for name in ["cpu", *sorted(found)])
        raise ValueError(f"device={device!r}: expected one of {known} (a device's provider is registered in the "
                         f"{GROUP!r} entry-point group; reinstall compbench if it should be there)")
    return _loaded(found[device])


@functools.cache
def _device_entry_points() -> dict[str, Any]:
    return {ep.name: ep for ep in group_entry_points(GROUP) if ep.name != "hook-trick"}


@functools.cache
def _loaded(entry_point: Any) -> Any:
    return entry_point.load()


def log_partition(problem: Problem) -> float:
    """log Σ exp(objective) over every valid solution of ``problem``; -inf when there is none."""
    return float(_provider().log_partition(expect_problem(problem)))


def marginals(problem: Problem) -> Marginals:
    """Posterior marginals of tokens, arcs, bigrams (and sibling triples) under p ∝ exp(objective)."""
    return _provider().marginals(expect_problem(problem))


def log_partition_many(problems: Iterable[Problem] | ProblemBatch, *, jobs: int | None = None,
                       device: str = "cpu") -> np.ndarray:
    """:func:`log_partition` of every problem of a list or a :class:`ProblemBatch`, in order: first-order problems
    in compiled calls (one per thread of ``jobs``; None: every core) that read the batch's padded arrays, the
    per-problem Python paid once per batch (a list is laid out as batches: :meth:`ProblemBatch.grouped`).
    ``device="cuda"``: on the GPU (first order only; ``compbench[gpu]``), one launch per root mode.

    >>> import compbench
    >>> ps = [compbench.generate("gaussian", n=6, seed=s, length=3) for s in range(3)]
    >>> bool(np.allclose(log_partition_many(ps), [log_partition(p) for p in ps]))
    True
    >>> batch = compbench.ProblemBatch.from_arrays(np.zeros((2, 4, 4)), sizes=[3, 2])
    >>> bool(np.allclose(log_partition_many(batch), [log_partition(batch[0]), log_partition(batch[1])]))
    True
    """
    provider = _device_provider(device)
    parts = _batches(problems, device)
    out = np.empty(sum(len(index) for index, _ in parts))
    for index, batch in parts:
        out[index] = provider.log_partition_many(batch, cores(jobs))
    return out


def marginals_many(problems: Iterable[Problem] | ProblemBatch, *, jobs: int | None = None,
                   device: str = "cpu") -> list[Marginals]:
    """:func:`marginals` of every problem of a list or a :class:`ProblemBatch`, in order, as
    :func:`log_partition_many` computes them (on ``device``)."""
    provider = _device_provider(device)
    return ProblemBatch.in_order(_batches(problems, device), lambda batch: provider.marginals_many(batch, cores(jobs)))


def _batches(problems: Iterable[Problem] | ProblemBatch, device: str) -> list[tuple[np.ndarray, ProblemBatch]]:
    """What a device's provider takes, each with its positions: a batch as it is; a list as batches of one root mode
    and order (:meth:`ProblemBatch.grouped`), on the CPU of about one size as well (a GPU launch pads every sentence
    of a batch to the longest anyway)."""
    if isinstance(problems, ProblemBatch):
        return [(np.arange(len(problems)), problems)] if len(problems) else []  # no batch of none to lay out
    return ProblemBatch.grouped(list(problems), by_size=device == "cpu")


def _arc_matrix(name: str, values: Any) -> np.ndarray:
    """An (n+1) x (n+1) float64 matrix of real numbers (not copied when it is one), else a ProblemError naming it."""
    matrix = _real_array(name, values, copy=False)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] < 1:
        raise ProblemError(name, f"expected an (n+1) x (n+1) matrix, got shape {matrix.shape}")
    return matrix


def _tree_problem(arc_scores: np.ndarray, sibling_scores: np.ndarray | None, single_root: bool) -> Problem:
    """The compression problem of plain parsing: every token kept, no token or bigram scores."""
    arc_scores = _arc_matrix("arc_scores", arc_scores)
    n = len(arc_scores) - 1
    return Problem(np.zeros(n), arc_scores, np.zeros((n + 2, n + 2)), length=n, single_root=single_root,
                   sibling_scores=sibling_scores)


def tree_log_partition(arc_scores: np.ndarray, sibling_scores: np.ndarray | None = None,
                       single_root: bool = False) -> float:
    """log Z of :func:`tree_marginals`'s tree-CRF, without the marginals.

    >>> import numpy as np
    >>> round(float(np.exp(tree_log_partition(np.zeros((4, 4))))))    # 3 tokens: 12 projective trees
    12
    """
    return log_partition(_tree_problem(arc_scores, sibling_scores, single_root))


def tree_marginals(arc_scores: np.ndarray, sibling_scores: np.ndarray | None = None,
                   single_root: bool = False) -> Marginals:
    """A tree-CRF for plain dependency parsing: every token kept, p(tree) ∝ exp(Σ arc scores (+ sibling scores))
    over the projective trees; ``arc`` holds the arc posteriors, ``log_partition`` log Z.

    >>> import numpy as np
    >>> m = tree_marginals(np.zeros((4, 4)))         # 3 tokens: 12 projective trees, each 1/12
    >>> round(float(np.exp(m.log_partition))), np.allclose(m.arc[:, 1:].sum(axis=0), 1.0)
    (12, True)
    """
    return marginals(_tree_problem(arc_scores, sibling_scores, single_root))


def tree_log_partition_many(arc_scores: Sequence[np.ndarray] | np.ndarray, single_root: bool = False, *,
                            jobs: int | None = None, device: str = "cpu") -> Any:
    """log Z of :func:`tree_marginals` for a batch of first-order arc score matrices (a list, or an array
    B x (n+1) x (n+1)), in order: the scores are checked once for the batch (:func:`compbench.problem.check_scores`)
    and laid out for one compiled call per size and thread (``jobs`` threads; None: every core), without building a
    ``Problem`` each.

    ``device="cuda"``: one GPU launch for the whole batch (``pip install 'compbench[gpu]'``, a CUDA GPU; docs/gpu.md),
    ``jobs`` unused.  numpy in (copied to the GPU), numpy out; a GPU array in (a torch tensor or CuPy array B x
    (n+1) x (n+1), float64, used in place and not checked), a GPU array of the same kind out.  Without a GPU: a
    RuntimeError with the one-line reason.

    >>> np.exp(tree_log_partition_many(np.zeros((2, 4, 4)))).round()     # 12 projective trees of 3 tokens
    array([12., 12.])
    """
    if device != "cpu":
        provider = _device_provider(device)
        return provider.tree_many(*_device_trees(provider, arc_scores, single_root, jobs), False)[0]
    return _trees(arc_scores, single_root, False, cores(jobs))[0]


def tree_marginals_many(arc_scores: Sequence[np.ndarray] | np.ndarray, single_root: bool = False, *,
                        jobs: int | None = None, device: str = "cpu") -> list[Marginals]:
    """:func:`tree_marginals` of a batch of first-order arc score matrices, in order, computed as
    :func:`tree_log_partition_many` computes log Z (``device`` likewise: with a GPU array in, each ``arc`` is a
    view of one GPU array of the same kind; ``compbench_solvers.cuda.eisner.tree_marginals`` gives that array
    itself, without a Marginals per sentence).

    >>> m = tree_marginals_many(np.zeros((2, 4, 4)))
    >>> [round(float(np.exp(x.log_partition))) for x in m]
    [12, 12]
    """
    if device != "cpu":
        provider = _device_provider(device)
        log_z, arcs = provider.tree_many(*_device_trees(provider, arc_scores, single_root, jobs), True)
    else:
        log_z, arcs = _trees(arc_scores, single_root, True, cores(jobs))
    out = []
    for value, arc in zip(log_z.tolist(), arcs):
        n = len(arc) - 1
        if value == -np.inf:  # no tree
            out.append(Marginals(value, np.zeros(n), arc, np.zeros((n + 2, n + 2))))
        else:
            out.append(Marginals(value, np.ones(n), arc, _bigram_marginals(n)))
    return out


def _not_one_matrix(arc_scores: Any) -> None:
    """A ProblemError for one matrix given where a batch of them is expected (read as rows of vectors)."""
    if getattr(arc_scores, "ndim", None) == 2:
        shape = arc_scores.shape
    elif isinstance(arc_scores, (list, tuple)) and arc_scores and np.ndim(arc_scores[0]) == 1:  # nested lists
        shape = (len(arc_scores), len(arc_scores[0]))
    else:
        return
    raise ProblemError("arc_scores", f"expected a list of (n+1) x (n+1) matrices or a B x (n+1) x (n+1) array, "
                                     f"got one matrix of shape {shape} (a batch of one: [matrix])")


def _device_trees(provider: Any, arc_scores: Any, single_root: Any, jobs: Any) -> tuple[Any, bool]:
    """A device's tree input checked as the CPU path checks it: ``single_root`` a flag, ``jobs`` a valid count
    (unused), numpy scores real and in range (one B x (n+1) x (n+1) array kept whole); an array the ``provider``
    holds on its device (a GPU array) used in place, unchecked."""
    single_root = check_flag("single_root", single_root)
    cores(jobs)
    _not_one_matrix(arc_scores)
    if provider.holds(arc_scores):
        return arc_scores, single_root
    if isinstance(arc_scores, np.ndarray) and arc_scores.ndim == 3 and arc_scores.dtype.kind in "iuf":
        batch = arc_scores.astype(np.float64, copy=False)
        if len(batch):
            _arc_matrix("arc_scores[0]", batch[0])  # square, at least 1 x 1 (as every matrix is)
        return _checked_matrices(batch, range(len(batch))), single_root
    arrays = _arc_matrices(arc_scores)
    return [_checked_matrices(arc[None], [k])[0] for k, arc in enumerate(arrays)], single_root


def _arc_matrices(arc_scores: Sequence[np.ndarray] | np.ndarray) -> list[np.ndarray]:
    """A batch's arc matrices, each square and real (:func:`_arc_matrix`; their range is checked later): one matrix
    refused, a numeric B x (n+1) x (n+1) array read as float64 views of one array."""
    _not_one_matrix(arc_scores)
    if isinstance(arc_scores, np.ndarray) and arc_scores.dtype.kind in "iuf":
        arc_scores = arc_scores.astype(np.float64, copy=False)
    return [_arc_matrix(f"arc_scores[{k}]", arc) for k, arc in enumerate(arc_scores)]


def _checked_matrices(batch: np.ndarray, index: Iterable[int]) -> np.ndarray:
    """A stack of arc matrices checked as a Problem checks its arc scores (:func:`check_scores`), at once; a bad one
    named by its ``index`` in the whole list.  What the contract ignores (column 0, the diagonal) is read as -inf, as
    a Problem stores it: a stack holding something out of range there (a mask of -1e30, say) comes back a copy with
    -inf in its place, any other stack as it is."""
    try:
        check_scores("arc_scores", batch)
        return batch
    except ProblemError:
        batch = batch.copy()
        forbid_ignored_arcs(batch)
        for k, matrix in zip(index, batch):
            check_scores(f"arc_scores[{k}]", matrix)
        return batch


def _trees(arc_scores: Sequence[np.ndarray] | np.ndarray, single_root: bool, with_marginals: bool,
           jobs: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """log Z (and arc marginals) of a batch of tree-CRFs, grouped by size for the provider's batch path."""
    arrays = _arc_matrices(arc_scores)
    log_z, arcs = np.empty(len(arrays)), [np.zeros(0)] * len(arrays)
    sizes: dict[int, list[int]] = {}
    for k, arc in enumerate(arrays):
        sizes.setdefault(len(arc), []).append(k)
    for index in sizes.values():
        batch = _checked_matrices(np.stack([arrays[k] for k in index]), index)
        values, margins = _provider().tree_many(batch, single_root, with_marginals, jobs)
        log_z[index] = values
        for k, arc in zip(index, margins):
            arcs[k] = arc
    return log_z, arcs


def _bigram_marginals(n: int) -> np.ndarray:
    """Every token kept: the bigrams (k, k+1) for k = 0..n, each with probability 1."""
    bigram = np.zeros((n + 2, n + 2))
    bigram[np.arange(n + 1), np.arange(1, n + 2)] = 1.0
    return bigram
