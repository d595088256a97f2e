"""Many problems as one set of padded arrays, the kernels' own layout: :class:`ProblemBatch`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from .problem import (NEG_INF, Length, Problem, ProblemError, check_flag, _check_length, _real_array, check_scores,
                      expect_problem, sibling_triples)


def _described(value: Any) -> str:
    """What ``value`` is, for an error: an array's shape and type, else its type."""
    if isinstance(value, np.ndarray):
        return f"shape {value.shape} of {value.dtype}" + ("" if value.flags.c_contiguous else ", not contiguous")
    return type(value).__name__


@dataclass(frozen=True, eq=False)
class ProblemBatch:
    """A batch of problems as padded arrays, the kernels' own layout (no :class:`Problem` per sentence).

    Sentence ``b`` has ``n = sizes[b]`` tokens and its scores are the top-left blocks of the padded arrays:
    ``arc_scores[b, :n+1, :n+1]``, ``token_scores[b, :n]``, ``bigram_scores[b, :n+2, :n+2]`` (its ``</s>`` is
    index n+1) and ``sibling_scores[b, :n+1, :n+1, :n+1]``.  Entries outside the blocks, and those the contract
    ignores, are stored as -inf.  ``min_length``/``max_length`` bound each sentence's number of kept tokens;
    ``free[b]`` marks a sentence of free length (bounds 0..n).  Arrays are contiguous float64 (int64 for lengths),
    read-only.

    >>> import numpy as np
    >>> batch = ProblemBatch.from_arrays(np.zeros((3, 5, 5)), sizes=[4, 2, 3], length=2)
    >>> len(batch), batch.max_n, batch.sizes.tolist(), batch[1].n, batch[1].length_bounds()
    (3, 4, [4, 2, 3], 2, (2, 2))
    """

    token_scores: np.ndarray  # (B, N): token_scores[b, k-1] scores token k of sentence b
    arc_scores: np.ndarray  # (B, N+1, N+1): arc_scores[b, h, k] scores head h -> modifier k
    bigram_scores: np.ndarray  # (B, N+2, N+2): bigram_scores[b, a, c] for 0 <= a < c <= sizes[b]+1
    sizes: np.ndarray  # (B,) int64: the true number of tokens of each sentence
    min_length: np.ndarray  # (B,) int64
    max_length: np.ndarray  # (B,) int64
    free: np.ndarray  # (B,) bool: free length (min 0, max n)
    single_root: bool = False
    sibling_scores: np.ndarray | None = None  # (B, N+1, N+1, N+1); None: first order

    def __setstate__(self, state: dict[str, Any]) -> None:
        """An unpickled or copied batch's arrays are read-only, as a built one's (pickle made them writable)."""
        self.__dict__.update(state)
        for value in state.values():
            if isinstance(value, np.ndarray):
                value.setflags(write=False)

    def __post_init__(self) -> None:
        """Refuse arrays the kernels would read out of bounds: other shapes or types than the layout's, a size
        outside 0..N, lengths outside 0..size (a :class:`ProblemError` naming the field).  The scores themselves are
        checked by :meth:`from_arrays` and :meth:`from_problems`, the ways to build a batch; the constructor takes
        them as they are (as :meth:`Problem.trusted` does)."""
        check_flag("single_root", self.single_root)
        sizes = self.sizes
        if not isinstance(sizes, np.ndarray) or sizes.ndim != 1 or sizes.dtype != np.int64 \
                or not sizes.flags.c_contiguous:
            raise ProblemError("sizes", f"expected a contiguous (B,) int64 array, got {_described(sizes)}")
        batch = len(sizes)
        token = self.token_scores
        if not isinstance(token, np.ndarray) or token.ndim != 2 or token.shape[0] != batch:
            raise ProblemError("token_scores", f"expected a ({batch}, N) float64 array, got {_described(token)}")
        width = token.shape[1]
        shapes = {"token_scores": (batch, width), "arc_scores": (batch, width + 1, width + 1),
                  "bigram_scores": (batch, width + 2, width + 2), "min_length": (batch,), "max_length": (batch,),
                  "free": (batch,)}
        if self.sibling_scores is not None:
            shapes["sibling_scores"] = (batch, width + 1, width + 1, width + 1)
        for name, shape in shapes.items():
            array = getattr(self, name)
            dtype = {"min_length": np.int64, "max_length": np.int64, "free": np.bool_}.get(name, np.float64)
            if not isinstance(array, np.ndarray) or array.shape != shape or array.dtype != dtype \
                    or not array.flags.c_contiguous:
                raise ProblemError(name, f"expected a contiguous {shape} {np.dtype(dtype)} array, got "
                                         f"{_described(array)}")
        for name, bad in (("sizes", (sizes < 0) | (sizes > width)),
                          ("min_length", (self.min_length < 0) | (self.min_length > self.max_length)),
                          ("max_length", self.max_length > sizes),
                          ("free", self.free & ((self.min_length != 0) | (self.max_length != sizes)))):
            if bad.any():
                b = int(np.flatnonzero(bad)[0])
                raise ProblemError(f"{name}[{b}]", f"{getattr(self, name)[b]} does not fit the sentence (size "
                                                   f"{sizes[b]} of at most {width}, lengths {self.min_length[b]}.."
                                                   f"{self.max_length[b]}; a free one's are 0..size)")

    @classmethod
    def from_arrays(cls, arc_scores: Any, token_scores: Any = None, bigram_scores: Any = None, sizes: Any = None,
                    length: Any = None, single_root: bool = False, sibling_scores: Any = None) -> ProblemBatch:
        """A batch from padded score arrays (copied and checked once, vectorized; the padding is not read).

        ``arc_scores`` is (B, N+1, N+1) and fixes B and N; ``token_scores`` (B, N) and ``bigram_scores``
        (B, N+2, N+2) default to zeros; ``sizes`` (B,) gives each sentence's true n <= N (default N for all);
        ``length`` is None (free), an integer or a :class:`Length` for every sentence, or per sentence an integer
        array (B,) of exact lengths or (B, 2) of ``(min, max)`` rows; ``sibling_scores`` (B, N+1, N+1, N+1) makes
        the batch second order.  A bad field is a :class:`ProblemError` that names it and the sentence.
        """
        arc = _score_array_batch("scores.arc", arc_scores, None)
        batch, width = arc.shape[0], arc.shape[1] - 1
        if sizes is None:
            size = np.full(batch, width, np.int64)
        else:
            size = np.asarray(sizes)
            if size.shape != (batch,) or size.dtype.kind not in "iu":
                raise ProblemError("sizes", f"expected {batch} integers, got shape {size.shape} of {size.dtype}")
            bad = np.flatnonzero((size < 0) | (size > width))  # before the cast: a huge uint64 wrapped to -1
            if bad.size:
                raise ProblemError(f"sizes[{bad[0]}]", f"{size[bad[0]]} is outside 0..{width} (arc_scores is "
                                                       f"{width + 1} x {width + 1} per sentence)")
            size = size.astype(np.int64)
        token = (np.zeros((batch, width)) if token_scores is None
                 else _score_array_batch("scores.token", token_scores, (batch, width)))
        bigram = (np.zeros((batch, width + 2, width + 2)) if bigram_scores is None
                  else _score_array_batch("scores.bigram", bigram_scores, (batch, width + 2, width + 2)))
        sibling = (None if sibling_scores is None else
                   _score_array_batch("scores.sibling", sibling_scores, (batch, width + 1, width + 1, width + 1)))
        lo, hi, free = _batch_lengths(length, size)
        # Entries the contract ignores, and the padding, are -inf (as in Problem), so that no kernel uses them.
        index = np.arange(width + 2)
        inside = index[None, :] <= size[:, None]  # (B, N+2): 0..n
        arc_mask = inside[:, :width + 1, None] & inside[:, None, :width + 1]
        forbid_ignored_arcs(arc, size)
        token[~(index[None, :width] < size[:, None])] = NEG_INF
        ends = index[None, :] <= size[:, None] + 1  # 0..n+1
        bigram[~(ends[:, :, None] & ends[:, None, :])] = NEG_INF
        bigram[:, ~(index[:, None] < index[None, :])] = NEG_INF
        arrays = [token, arc, bigram]
        if sibling is not None:
            sibling[:, ~sibling_triples(width)] = NEG_INF
            sibling[~(arc_mask[:, :, :, None] & inside[:, None, None, :width + 1])] = NEG_INF
            arrays.append(sibling)
        for name, array in zip(("scores.token", "scores.arc", "scores.bigram", "scores.sibling"), arrays):
            check_scores(name, array)  # the index of a bad entry starts with its sentence
        for array in (*arrays, size, lo, hi, free):
            array.setflags(write=False)
        return cls(token, arc, bigram, size, lo, hi, free, check_flag("single_root", single_root), sibling)

    @classmethod
    def from_problems(cls, problems: Sequence[Problem]) -> ProblemBatch:
        """The problems (one root mode, all first or all second order) padded into one batch.

        >>> import compbench
        >>> ps = [compbench.generate("gaussian", n, seed=n, length=2) for n in (3, 5)]
        >>> batch = ProblemBatch.from_problems(ps)
        >>> batch.arc_scores.shape, all(np.array_equal(batch[k].arc_scores, p.arc_scores) for k, p in enumerate(ps))
        ((2, 6, 6), True)
        """
        problems = [expect_problem(p, f"problems[{k}]") for k, p in enumerate(problems)]
        if not problems:
            raise ProblemError("problems", "expected at least one problem")
        kinds = {(p.single_root, p.sibling_scores is not None) for p in problems}
        if len(kinds) > 1:
            raise ProblemError("problems", "a batch has one root mode and one order (first or second)")
        single_root, second_order = kinds.pop()
        sizes = np.array([len(p.token_scores) for p in problems], np.int64)
        free = np.array([p.length is None for p in problems])
        bounds = np.array([(0, n) if p.length is None else (p.length.min, p.length.max)
                           for p, n in zip(problems, sizes.tolist())], np.int64).reshape(-1, 2)
        if sizes.min() == sizes.max():  # nothing to pad: the arrays one after the other
            n = int(sizes[0])
            token, arc, bigram, sibling = (
                None if name == "sibling_scores" and not second_order else
                np.concatenate([getattr(p, name).reshape(-1) for p in problems]).reshape(len(problems), *shape)
                for name, shape in (("token_scores", (n,)), ("arc_scores", (n + 1,) * 2),
                                    ("bigram_scores", (n + 2,) * 2), ("sibling_scores", (n + 1,) * 3)))
        else:
            token, arc, bigram, sibling = _padded(problems, int(sizes.max()), second_order)
        lo, hi = bounds[:, 0].copy(), bounds[:, 1].copy()
        for array in (token, arc, bigram, sibling, sizes, lo, hi, free):
            if array is not None:
                array.setflags(write=False)
        return cls(token, arc, bigram, sizes, lo, hi, free, single_root, sibling)

    @classmethod
    def grouped(cls, problems: Sequence[Problem], by_size: bool = True) -> list[tuple[np.ndarray, ProblemBatch]]:
        """Any problems as batches, with the positions each one's sentences had: one per root mode and order, and
        with ``by_size`` split where a sentence is more than a quarter longer than the shortest of its batch (padding
        at most about twice the scores a sentence has).

        >>> import compbench
        >>> ps = [compbench.generate("gaussian", n, seed=n) for n in (3, 12, 4)]
        >>> [(index.tolist(), batch.max_n) for index, batch in ProblemBatch.grouped(ps)]
        [([0, 2], 4), ([1], 12)]
        """
        problems = [expect_problem(p, f"problems[{k}]") for k, p in enumerate(problems)]
        keys = [(p.single_root, p.sibling_scores is not None, len(p.token_scores)) for p in problems]
        groups: list[list[int]] = []
        first = None
        for k in sorted(range(len(problems)), key=keys.__getitem__):
            root, order, n = keys[k]
            same = first is not None and first[:2] == (root, order)
            if same and (not by_size or n <= first[2] + max(1, first[2] // 4)):
                groups[-1].append(k)
            else:
                groups.append([k])
                first = keys[k]
        return [(np.array(sorted(group), np.int64), cls.from_problems([problems[k] for k in sorted(group)]))
                for group in groups]

    @staticmethod
    def in_order(parts: list[tuple[np.ndarray, ProblemBatch]],
                 answers: Callable[[ProblemBatch], Sequence[Any]]) -> list:
        """``answers(batch)`` of every part that :meth:`grouped` made, each put back at its sentence's position.

        >>> import compbench
        >>> ps = [compbench.generate("gaussian", n, seed=n) for n in (3, 12, 4)]
        >>> ProblemBatch.in_order(ProblemBatch.grouped(ps), lambda batch: batch.sizes.tolist())
        [3, 12, 4]
        """
        out: list[Any] = [None] * sum(len(index) for index, _ in parts)
        for index, batch in parts:
            for k, answer in zip(index.tolist(), answers(batch)):
                out[k] = answer
        return out

    def take(self, index: Sequence[int] | np.ndarray) -> ProblemBatch:
        """The sentences ``index`` lists (positions in 0..B-1), in that order, as a batch of their own (copied)."""
        positions = np.asarray(index)
        if positions.ndim != 1 or (positions.size and positions.dtype.kind not in "iu"):
            raise TypeError(f"index: expected a list of sentence positions, got {_described(positions)}")
        index = positions.astype(np.int64)
        outside = index[(index < 0) | (index >= len(self))]
        if outside.size:
            raise IndexError(f"index: sentence {outside[0]} of a batch of {len(self)}")
        arrays = [None if a is None else a[index] for a in (self.token_scores, self.arc_scores, self.bigram_scores,
                                                               self.sizes, self.min_length, self.max_length, self.free,
                                                               self.sibling_scores)]
        for array in arrays:
            if array is not None:
                array.setflags(write=False)
        token, arc, bigram, sizes, lo, hi, free, sibling = arrays
        return ProblemBatch(token, arc, bigram, sizes, lo, hi, free, self.single_root, sibling)

    def length_modes(self) -> np.ndarray:
        """Each sentence's length mode: ``"free"``, ``"exact"`` or ``"range"``."""
        return np.where(self.free, "free", np.where(self.min_length == self.max_length, "exact", "range"))

    def __len__(self) -> int:
        return int(self.sizes.shape[0])

    @property
    def max_n(self) -> int:
        """N, the padded number of tokens."""
        return int(self.token_scores.shape[1])

    @property
    def second_order(self) -> bool:
        return self.sibling_scores is not None

    def length_of(self, b: int) -> Length | None:
        """Sentence ``b``'s length condition (None: free)."""
        return None if self.free[b] else Length(int(self.min_length[b]), int(self.max_length[b]))

    def __getitem__(self, b: int) -> Problem:
        """Sentence ``b`` as a :class:`Problem` (its blocks copied)."""
        if not isinstance(b, (int, np.integer)) or isinstance(b, (bool, np.bool_)):
            raise TypeError(f"a batch is indexed by a sentence position, got {type(b).__name__} (take() makes a "
                            f"batch of several)")
        if not -len(self) <= b < len(self):
            raise IndexError(f"sentence {b} of a batch of {len(self)}")
        b = b % len(self)
        n = int(self.sizes[b])
        sibling = None if self.sibling_scores is None else self.sibling_scores[b, :n + 1, :n + 1, :n + 1]
        return Problem.trusted(self.token_scores[b, :n], self.arc_scores[b, :n + 1, :n + 1],
                               self.bigram_scores[b, :n + 2, :n + 2], self.length_of(b), self.single_root, sibling)

    def problems(self) -> list[Problem]:
        """Every sentence as a :class:`Problem`."""
        return [self[b] for b in range(len(self))]


def _padded(problems: list[Problem], width: int, second_order: bool) -> tuple[np.ndarray, ...]:
    """The problems' scores as padded arrays of ``width`` tokens (-inf outside each one's blocks)."""
    batch = len(problems)
    token = np.full((batch, width), NEG_INF)
    arc = np.full((batch, width + 1, width + 1), NEG_INF)
    bigram = np.full((batch, width + 2, width + 2), NEG_INF)
    sibling = np.full((batch, width + 1, width + 1, width + 1), NEG_INF) if second_order else None
    for b, p in enumerate(problems):
        n = p.n
        token[b, :n] = p.token_scores
        arc[b, :n + 1, :n + 1] = p.arc_scores
        bigram[b, :n + 2, :n + 2] = p.bigram_scores
        if sibling is not None:
            sibling[b, :n + 1, :n + 1, :n + 1] = p.sibling_scores
    return token, arc, bigram, sibling


def forbid_ignored_arcs(arc_scores: np.ndarray, sizes: np.ndarray | None = None) -> None:
    """Write -inf, in place, where a (B, N+1, N+1) stack of arc matrices is ignored by the contract: column 0 (no arc
    into the root), the diagonal and, with ``sizes`` (B,), each sentence's padding past ``sizes[b]``."""
    index = np.arange(arc_scores.shape[1])
    if sizes is not None:
        inside = index[None, :] <= sizes[:, None]
        arc_scores[~(inside[:, :, None] & inside[:, None, :])] = NEG_INF
    arc_scores[:, :, 0] = NEG_INF
    arc_scores[:, index, index] = NEG_INF


def _score_array_batch(name: str, values: Any, shape: tuple[int, ...] | None) -> np.ndarray:
    """A batch's score array, copied to contiguous float64 (checked once its padding is masked)."""
    array = _real_array(name, values)
    if shape is None:
        if array.ndim != 3 or array.shape[1] != array.shape[2] or array.shape[1] < 1:
            raise ProblemError(name, f"expected a (B, N+1, N+1) array, got shape {array.shape}")
    elif array.shape != shape:
        raise ProblemError(name, f"expected shape {shape}, got {array.shape}")
    return np.ascontiguousarray(array)


def _batch_lengths(length: Any, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-sentence (min, max, free) from a batch's ``length`` argument, each checked against its sentence."""
    batch = sizes.shape[0]
    if length is None:
        return np.zeros(batch, np.int64), sizes.copy(), np.ones(batch, bool)
    if isinstance(length, tuple):  # (0, 2) reads as a range, but per sentence it would be exact lengths 0 and 2
        raise ProblemError("length", f"a tuple is ambiguous, got {length!r}: a range for every sentence is "
                                     "Length(min, max), per sentence a list or array of lengths or (min, max) rows")
    shared = isinstance(length, (Length, int, np.integer)) and not isinstance(length, bool)
    if shared:
        given = [length] * batch
    else:
        array = np.asarray(length)
        if array.dtype.kind not in "iu" or array.shape not in ((batch,), (batch, 2)):
            raise ProblemError("length", f"expected None, an integer, a Length, or integers of shape ({batch},) "
                                         f"or ({batch}, 2), got shape {array.shape} of {array.dtype}")
        given = array.reshape(batch, -1).tolist()
    rows = []
    for b, (row, n) in enumerate(zip(given, sizes.tolist())):
        try:
            rows.append(_check_length(row if shared else Length(row[0], row[-1]), n))
        except ProblemError as exc:  # the sentence named: by its row, or after the batch's one length
            if shared:
                raise ProblemError(exc.field, f"{exc.message} for sentence {b} (n = {n})") from None
            raise ProblemError(f"{exc.field}[{b}]", exc.message) from None
    lo = np.array([row.min for row in rows], np.int64)  # type: ignore[union-attr]
    hi = np.array([row.max for row in rows], np.int64)  # type: ignore[union-attr]
    return lo, hi, np.zeros(batch, bool)
