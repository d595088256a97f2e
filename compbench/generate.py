"""Synthetic instance kinds (reproducible from a seed).

- ``gaussian``: every token, arc and bigram score drawn from N(0, 1); ties have probability zero.
- ``integer-ties``: scores drawn from the integers -2..2, so many solutions tie on purpose.
- ``forbidden``: gaussian scores with about a third of the arcs and bigrams forbidden (-inf) and a few tokens too;
  some instances have no solution at all.
- ``distance``: arc and bigram scores that prefer short arcs and adjacent words (closer to real parsers' scores),
  plus N(0, 1) noise.

Any kind can carry second-order sibling scores (``second_order=True``).
"""

from __future__ import annotations

import numpy as np

from .limits import available_memory, memory_budget
from .problem import Length, Problem, is_finite_number, is_flag

KINDS = ("gaussian", "integer-ties", "forbidden", "distance")


def generate(kind: str, n: int, seed: int = 0, length: int | Length | None = None, index: int = 0,
             single_root: bool = False, second_order: bool = False) -> Problem:
    """One synthetic problem; the same (kind, n, seed, index) always gives the same scores.

    ``second_order`` adds sibling scores of the same kind (their own random stream: the first-order scores are
    the same as without them).

    >>> p = generate("integer-ties", n=6, seed=3, length=3)
    >>> p.n, p.length_bounds(), p.id
    (6, (3, 3), 'integer-ties-n6-s3-0')
    """
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r} (known: {', '.join(KINDS)})")
    for name, value in (("n", n), ("seed", seed), ("index", index)):
        _check_natural(name, value)
    if not is_flag(second_order):
        raise TypeError(f"second_order: expected true or false, got {second_order!r}")
    n, seed, index = int(n), int(seed), int(index)
    rng = np.random.default_rng([seed, n, index, KINDS.index(kind)])
    shapes = ((n,), (n + 1, n + 1), (n + 2, n + 2))
    if kind == "integer-ties":
        token, arc, bigram = (rng.integers(-2, 3, size=s).astype(np.float64) for s in shapes)
    else:
        token, arc, bigram = (rng.standard_normal(s) for s in shapes)
    if kind == "forbidden":
        arc[rng.random(arc.shape) < 0.35] = -np.inf
        bigram[rng.random(bigram.shape) < 0.35] = -np.inf
        token[rng.random(token.shape) < 0.1] = -np.inf
    if kind == "distance":
        positions = np.arange(n + 2)
        gap = np.abs(positions[:, None] - positions[None, :]).astype(np.float64)
        arc += 2.0 - np.log1p(gap[: n + 1, : n + 1])
        bigram += 1.5 - np.log1p(gap)
    sibling = None
    if second_order:
        sibling_rng = np.random.default_rng([seed, n, index, KINDS.index(kind), 2])
        shape = (n + 1,) * 3
        if kind == "integer-ties":
            sibling = sibling_rng.integers(-2, 3, size=shape).astype(np.float64)
        else:
            sibling = sibling_rng.standard_normal(shape)
        if kind == "forbidden":
            sibling[sibling_rng.random(shape) < 0.1] = -np.inf
    return Problem(token, arc, bigram, length=length, single_root=single_root, sibling_scores=sibling,
                   tokens=tuple(f"w{k}" for k in range(1, n + 1)), id=f"{kind}-n{n}-s{seed}-{index}",
                   extra={"meta": {"kind": kind, "seed": seed, "index": index}})


def generate_set(kind: str, n: int, count: int, seed: int = 0, length_ratio: float | None = 0.45,
                 single_root: bool = False, second_order: bool = False) -> list[Problem]:
    """``count`` problems of one kind and size; ``length_ratio`` R in 0..1 gives m = round(R n) (None: free
    length)."""
    _check_natural("count", count)
    _check_natural("n", n)
    need = count * 8 * (n + (n + 1) ** 2 + (n + 2) ** 2 + ((n + 1) ** 3 if second_order else 0) + 128)
    if need > memory_budget(share=0.5):  # refused up front: a set that grows until the machine swaps
        raise MemoryError(f"count: {count} instance(s) of n = {n} need about {need / 2**30:.1f} GiB of scores, more "
                          f"than half the memory available ({available_memory() / 2**30:.1f} GiB)")
    if length_ratio is not None and not (is_finite_number(length_ratio) and 0 <= length_ratio <= 1):
        raise ValueError(f"length_ratio: expected None or a number in 0..1, got {length_ratio!r}")
    length = None if length_ratio is None else int(round(length_ratio * n))
    return [generate(kind, n, seed=seed, length=length, index=i, single_root=single_root, second_order=second_order)
            for i in range(count)]


def _check_natural(name: str, value: object) -> None:
    if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)) or value < 0:
        raise ValueError(f"{name}: expected an integer >= 0, got {value!r}")
