"""The problem every solver solves, and the solution it returns.

Tokens are numbered 1..n; position 0 is the root (and the bigram start ``<s>``), n+1 the bigram end ``</s>``.
A solution keeps a set K of tokens and gives each kept token a head (0 or another kept token) so that the heads
form a projective tree rooted at 0.  Its objective is::

    sum_{k in K} token[k] + sum_{k in K} arc[head(k)][k] + sum bigram[a][b]

over consecutive pairs (a, b) of the sequence 0, K in increasing order, n+1.  ``-inf`` forbids a token, arc or
bigram.  See ``docs``/README "The problem" for the full contract.
"""

from __future__ import annotations

import dataclasses
import functools
import numbers
import zlib
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Mapping

import numpy as np

from .limits import MAX_SCORE

NEG_INF = -np.inf


class ProblemError(ValueError):
    """A problem's data breaks the contract; ``field`` names the offending field (e.g. ``scores.arc``)."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Length:
    """A length condition ``min <= |K| <= max`` (``min == max`` is an exact length)."""

    min: int
    max: int

    def __post_init__(self) -> None:
        """Integers 0 <= min <= max, else a :class:`ProblemError` naming the bound (whether they fit a problem's n
        is the problem's check)."""
        for name in ("min", "max"):
            value = getattr(self, name)
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
                raise ProblemError(f"length.{name}", f"expected an integer, got {value!r}"[:200])
            if value < 0:
                raise ProblemError("length" if self.min == self.max else f"length.{name}",
                                   f"{value} is below 0")
            object.__setattr__(self, name, int(value))
        if self.min > self.max:
            raise ProblemError("length", f"min {self.min} > max {self.max}")

    @classmethod
    def exact(cls, m: int) -> Length:
        return cls(m, m)

    @property
    def is_exact(self) -> bool:
        return self.min == self.max

    def __str__(self) -> str:
        return str(self.min) if self.is_exact else f"{self.min}..{self.max}"


def expect_problem(value: Any, name: str = "problem") -> Problem:
    """``value`` when it is a :class:`Problem`, else a TypeError naming the argument (``name``)."""
    if not isinstance(value, Problem):
        raise TypeError(f"{name}: expected a compbench.Problem, got {type(value).__name__}")
    return value


def length_mode(length: Length | None) -> str:
    """``"free"``, ``"exact"`` or ``"range"``."""
    if length is None:
        return "free"
    return "exact" if length.is_exact else "range"


def check_scores(name: str, array: np.ndarray) -> None:
    """ProblemError unless every score of a float64 ``array`` is finite or -inf and within ``MAX_SCORE``.

    Two reductions decide it for a valid array (NaN propagates through ``max``; a score below -MAX_SCORE that is
    not -inf shows as a count); only a bad array is searched for its first bad score, so a batch of scores is
    checked at about the speed of two passes over its memory."""
    if array.size == 0:
        return
    if array.max() <= MAX_SCORE:  # False for NaN, +inf and any too large score
        lowest = array.min()
        if lowest >= -MAX_SCORE or (lowest == -np.inf and np.count_nonzero(array < -MAX_SCORE)
                                    == np.count_nonzero(array == -np.inf)):
            return
    _first_bad_score(name, array)


def _first_bad_score(name: str, array: np.ndarray) -> None:
    """The ProblemError for the first NaN of ``array``, else its first +inf, else its first finite score outside
    ``MAX_SCORE`` (none: returns)."""
    if np.isnan(array).any():
        raise ProblemError(name, f"NaN at index {tuple(int(i) for i in np.argwhere(np.isnan(array))[0])}")
    if np.isposinf(array).any():
        raise ProblemError(name, f"+inf at index {tuple(int(i) for i in np.argwhere(np.isposinf(array))[0])}")
    too_large = np.isfinite(array) & (np.abs(array) > MAX_SCORE)
    if too_large.any():
        index = tuple(int(i) for i in np.argwhere(too_large)[0])
        raise ProblemError(name, f"{float(array[index])!r} at index {index} is outside the score range "
                                 f"[-{MAX_SCORE:g}, {MAX_SCORE:g}] (see compbench.limits)")


def _real_array(name: str, values: Any, copy: bool = True) -> np.ndarray:
    """``values`` as a new float64 array (a copy: a problem or batch owns its arrays; ``copy=False``: not copied when
    they are one already), or a ProblemError naming the field when they are not real numbers."""
    try:
        given = np.asarray(values)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ProblemError(name, f"not an array of numbers ({exc})") from None
    if given.dtype.kind not in "iuf":  # booleans, complex numbers, strings, objects, ragged lists
        raise ProblemError(name, f"expected real numbers, got an array of {given.dtype}")
    try:
        return np.array(given, dtype=np.float64, copy=True if copy else None)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ProblemError(name, f"not an array of numbers ({exc})") from None


def _score_array(name: str, values: Any, shape: tuple[int, ...] | None = None, n: int | None = None) -> np.ndarray:
    array = _real_array(name, values)
    if shape is None:  # the arc matrix defines n: (n+1) x (n+1)
        if array.ndim != 2 or array.shape[0] < 1:
            raise ProblemError(name, f"expected an (n+1) x (n+1) matrix, got shape {array.shape}")
        shape = (array.shape[0], array.shape[0])
    if array.shape != shape:
        source = "" if n is None else f" for n = {n} (scores.arc is {n + 1} x {n + 1})"
        raise ProblemError(name, f"expected shape {shape}{source}, got {array.shape}")
    return np.ascontiguousarray(array)  # its scores checked once the entries the contract ignores are -inf


@dataclass(frozen=True, eq=False)
class Problem:
    """One compression instance (immutable; arrays are contiguous float64, ``-inf`` = forbidden).

    Example
    -------
    >>> import numpy as np
    >>> p = Problem(token_scores=np.zeros(2), arc_scores=np.zeros((3, 3)), bigram_scores=np.zeros((4, 4)),
    ...             length=Length.exact(1))
    >>> p.n, p.length_bounds()
    (2, (1, 1))
    """

    token_scores: np.ndarray  # (n,), entry k-1 scores token k
    arc_scores: np.ndarray  # (n+1, n+1), arc_scores[h, k] scores head h -> modifier k
    bigram_scores: np.ndarray  # (n+2, n+2), bigram_scores[a, b] for 0 <= a < b <= n+1
    length: Length | None = None  # None: free length
    single_root: bool = False
    tokens: tuple[str, ...] | None = None
    id: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)  # pos, gold, meta, ...: kept and ignored
    # Second order: sibling_scores[h, s, k] scores modifier k of head h whose previous kept modifier on the same
    # side (moving outward from h) is s, or s = h when k is h's first modifier on that side.  None: first order.
    sibling_scores: np.ndarray | None = None

    def __post_init__(self) -> None:
        arc = _score_array("scores.arc", self.arc_scores)  # defines n; the other arrays must match it
        n = arc.shape[0] - 1
        token = _score_array("scores.token", self.token_scores, (n,), n)
        bigram = _score_array("scores.bigram", self.bigram_scores, (n + 2, n + 2), n)
        # Entries the contract ignores are stored as -inf so that no solver can use them by accident.
        arc[:, 0] = NEG_INF
        np.fill_diagonal(arc, NEG_INF)
        bigram[np.tril_indices(n + 2)] = NEG_INF
        for name, array in (("scores.token", token), ("scores.arc", arc), ("scores.bigram", bigram)):
            check_scores(name, array)  # what is ignored is read as -inf (as ProblemBatch.from_arrays reads it)
            array.setflags(write=False)
        object.__setattr__(self, "token_scores", token)
        object.__setattr__(self, "arc_scores", arc)
        object.__setattr__(self, "bigram_scores", bigram)
        object.__setattr__(self, "single_root", check_flag("single_root", self.single_root))
        object.__setattr__(self, "length", _check_length(self.length, n))
        if self.tokens is not None:
            if isinstance(self.tokens, (str, bytes)):  # not one string read as its letters
                raise ProblemError("tokens", f"expected a sequence of strings, got {type(self.tokens).__name__}")
            try:
                tokens = tuple(self.tokens)  # a list, a tuple, a numpy array of strings, a generator
            except TypeError:
                raise ProblemError("tokens", f"expected a sequence of strings, got {type(self.tokens).__name__}") \
                    from None
            if len(tokens) != n:
                raise ProblemError("tokens", f"expected {n} strings (one per token score), got {len(tokens)}")
            for k, token in enumerate(tokens):
                if not isinstance(token, str):
                    raise ProblemError(f"tokens[{k}]", f"expected a string, got {token!r}"[:200])
            for i, token in enumerate(tokens):
                _check_text(f"tokens[{i}]", token)
            object.__setattr__(self, "tokens", tuple(map(str, tokens)))  # numpy's str_ as str
        if not isinstance(self.id, str):
            raise ProblemError("id", f"expected a string, got {self.id!r}")
        _check_text("id", self.id)
        if not isinstance(self.extra, Mapping):
            raise ProblemError("extra", f"expected a dict, got {type(self.extra).__name__}")
        object.__setattr__(self, "extra", dict(self.extra))
        if self.sibling_scores is not None:
            sibling = _score_array("scores.sibling", self.sibling_scores, (n + 1, n + 1, n + 1), n)
            sibling[~sibling_triples(n)] = NEG_INF  # triples that cannot occur
            check_scores("scores.sibling", sibling)
            sibling.setflags(write=False)
            object.__setattr__(self, "sibling_scores", sibling)

    def __setstate__(self, state: dict[str, Any]) -> None:
        """An unpickled or copied problem's scores are read-only, as a built one's (pickle made them writable)."""
        self.__dict__.update(state)
        for name in SCORE_FIELDS:
            if state.get(name) is not None:
                state[name].setflags(write=False)

    @classmethod
    def trusted(cls, token_scores: np.ndarray, arc_scores: np.ndarray, bigram_scores: np.ndarray,
                length: Length | int | None = None, single_root: bool = False,
                sibling_scores: np.ndarray | None = None) -> Problem:
        """A problem from arrays the caller vouches for, without the checks of ``Problem(...)`` (a few µs instead
        of about 50): real numbers of the right shapes (n, (n+1, n+1), (n+2, n+2), (n+1,)*3), no NaN, no +inf,
        within ``MAX_SCORE`` (a batch's scores can be checked at once by :func:`check_scores`).  The arrays are
        copied and the entries the contract ignores set to -inf, as ``Problem(...)`` does; no tokens, id or extra.

        >>> p = Problem.trusted(np.zeros(2), np.zeros((3, 3)), np.zeros((4, 4)), length=1)
        >>> p.n, p.length_bounds(), float(p.arc_scores[1, 1])
        (2, (1, 1), -inf)
        """
        problem = object.__new__(cls)
        token = np.array(token_scores, dtype=np.float64)
        arc = np.array(arc_scores, dtype=np.float64)
        bigram = np.array(bigram_scores, dtype=np.float64)
        n = len(token)
        arc[:, 0] = NEG_INF
        arc.flat[::n + 2] = NEG_INF  # the diagonal
        bigram[_lower(n + 2)] = NEG_INF
        sibling = None
        if sibling_scores is not None:
            sibling = np.array(sibling_scores, dtype=np.float64)
            sibling[~sibling_triples(n)] = NEG_INF
        for array in (token, arc, bigram, sibling):
            if array is not None:
                array.setflags(write=False)
        fields = {"token_scores": token, "arc_scores": arc, "bigram_scores": bigram,
                  "length": _check_length(length, n), "single_root": check_flag("single_root", single_root),
                  "tokens": None, "id": "", "extra": {}, "sibling_scores": sibling}
        for name, value in fields.items():
            object.__setattr__(problem, name, value)
        return problem

    @property
    def second_order(self) -> bool:
        return self.sibling_scores is not None

    @property
    def n(self) -> int:
        return int(self.token_scores.shape[0])

    def length_bounds(self) -> tuple[int, int]:
        """The allowed numbers of kept tokens as ``(lo, hi)``; free length is ``(0, n)``."""
        if self.length is None:
            return 0, self.n
        return self.length.min, self.length.max

    @property
    def length_mode(self) -> str:
        return length_mode(self.length)

    def word(self, k: int) -> str:
        """The text of token k (1-based), or ``"#k"`` when the problem has no token texts."""
        return self.tokens[k - 1] if self.tokens is not None else f"#{k}"

    def replace(self, **changes: Any) -> Problem:
        """A copy with some fields changed (e.g. ``p.replace(length=Length.exact(3))``)."""
        return dataclasses.replace(self, **changes)


SCORE_FIELDS = ("token_scores", "arc_scores", "bigram_scores", "sibling_scores")


def score_digest(problem: Problem) -> dict[str, Any]:
    """A digest of what a solver must leave as it found it: each score array of ``problem`` (its shape, dtype and a
    CRC-32 of its bytes; None where it has none), its length condition and root mode.  Taken before a solver runs, it
    tells whether the solver wrote into its input, without holding a second copy of the scores (a checksum against
    accidents, not tampering: about 0.3 s a GB)."""
    digests: dict[str, Any] = {"length": problem.length, "single_root": problem.single_root}
    for name in SCORE_FIELDS:
        scores = getattr(problem, name)
        if scores is None:
            digests[name] = None
            continue
        scores = np.ascontiguousarray(scores)
        digests[name] = (scores.shape, scores.dtype.str, zlib.crc32(memoryview(scores.reshape(-1)).cast("B")))
    return digests


def changed_scores(problem: Problem, before: dict[str, Any]) -> str | None:
    """The first field of ``problem`` that no longer matches ``before``, its :func:`score_digest` taken before a
    solver ran (a solver that wrote into its input through a pointer, ``setflags`` or ``object.__setattr__``), or
    None when every score, the length and the root mode are as they were.

    >>> p = Problem(np.zeros(2), np.zeros((3, 3)), np.zeros((4, 4)))
    >>> before = score_digest(p)
    >>> p.arc_scores.setflags(write=True); p.arc_scores[0, 1] = 5.0
    >>> changed_scores(p, before)
    'arc_scores'
    """
    now = score_digest(problem)
    return next((name for name in now if now[name] != before[name]), None)


@functools.cache
def _lower(size: int) -> tuple[np.ndarray, np.ndarray]:
    """The indices on and below the diagonal of a size x size matrix (cached: a trusted problem's bigram mask)."""
    return np.tril_indices(size)


def is_flag(value: Any) -> bool:
    """Is ``value`` true or false itself: a bool (numpy's too), never a value read as one (``bool("false")`` is
    True)?  The one test of every true/false argument."""
    return isinstance(value, (bool, np.bool_))


def is_finite_number(value: Any) -> bool:
    """Is ``value`` a finite real number itself (numpy's too), never a bool or a string?  The one test of every
    number field that must be finite.

    >>> is_finite_number(2), is_finite_number(np.float32(0.5)), is_finite_number(True), is_finite_number(float("inf"))
    (True, True, False, False)
    """
    return isinstance(value, numbers.Real) and not is_flag(value) and bool(np.isfinite(value))


def check_flag(name: str, value: Any) -> bool:
    """A true/false field of a problem (:func:`is_flag`), as a bool."""
    if not is_flag(value):
        raise ProblemError(name, f"expected true or false, got {value!r}"[:200])
    return bool(value)


def _check_text(name: str, text: str) -> None:
    """Text must be valid Unicode (a lone UTF-16 surrogate, e.g. from JSON's "\\ud800", cannot be printed)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ProblemError(name, f"not valid Unicode ({exc.reason} at character {exc.start})") from None


def sibling_triples(n: int) -> np.ndarray:
    """Mask of the (h, s, k) triples that can occur: k != h, k >= 1, and s = h or s strictly between h and k."""
    h, s, k = np.ogrid[: n + 1, : n + 1, : n + 1]
    between = ((h < s) & (s < k)) | ((k < s) & (s < h))
    return (k != h) & (k >= 1) & ((s == h) | between)


def _check_length(length: Any, n: int) -> Length | None:
    if length is None:
        return None
    if isinstance(length, bool):
        raise ProblemError("length", f"expected an integer, a {{min, max}} range or null, got {length!r}")
    if isinstance(length, (int, np.integer)):
        if not 0 <= length <= n:
            raise ProblemError("length", f"{length} is outside 0..{n}")
        return Length.exact(int(length))
    if not isinstance(length, Length):
        raise ProblemError("length", f"expected an integer, a {{min, max}} range or null, got {length!r}")
    for name, value in (("min", length.min), ("max", length.max)):  # integers 0 <= min <= max (Length's check)
        if value > n:
            raise ProblemError(f"length.{name}" if not length.is_exact else "length",
                               f"{value} is outside 0..{n}")
    return length


class Status(str, Enum):
    OPTIMAL = "optimal"  # proven optimal
    FEASIBLE = "feasible"  # valid, not proven optimal (an inexact solver that found none: no heads, nothing proven)
    INFEASIBLE = "infeasible"  # proven: no solution exists
    TIMEOUT = "timeout"  # time limit hit; carries the best valid solution found, if any
    UNSUPPORTED = "unsupported"  # the solver does not handle this kind of problem
    ERROR = "error"

    def __str__(self) -> str:
        return self.value


@dataclass
class Solution:
    """What a solver returns.

    ``heads`` has n+1 entries: ``heads[k]`` is the head of token k (0 = root) or -1 when k is deleted;
    ``heads[0]`` is -1.  ``seconds`` holds ``setup`` (model build, compilation) and ``solve`` wall-clock times.
    With ``all_lengths=True`` a solver also fills ``by_length[m]``, the best solution keeping exactly m tokens.
    """

    status: Status
    heads: np.ndarray | None = None
    objective: float | None = None
    bound: float | None = None
    seconds: dict[str, float] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    by_length: list[Solution] | None = None

    def __post_init__(self) -> None:
        if type(self.status) is not Status:  # the solvers' own answers: no lookup to pay
            self.status = Status(self.status)
        if type(self.heads) is np.ndarray and self.heads.dtype == np.int64 and self.heads.ndim == 1:
            self.heads = self.heads.copy()  # the solvers' own answers: no checks to pay
        elif self.heads is not None:
            heads = np.asarray(self.heads)
            if heads.ndim != 1 or not ((np.issubdtype(heads.dtype, np.integer) and np.all(heads < 2 ** 62)) or (
                    np.issubdtype(heads.dtype, np.floating) and np.all(heads == np.round(heads))
                    and np.all(np.abs(heads) < 2.0 ** 62))):  # inf and 1e30 are no index (cast, they wrapped)
                raise ValueError(f"heads must be a vector of integers, got {heads.tolist()!r}"[:200])
            self.heads = heads.astype(np.int64)
        if self.objective is not None:
            self.objective = float(self.objective)
        if self.bound is not None:
            self.bound = float(self.bound)

    @property
    def kept(self) -> np.ndarray:
        """The kept tokens (1-based, increasing); empty when there is no solution."""
        if self.heads is None:
            return np.zeros(0, dtype=np.int64)
        return np.flatnonzero(self.heads[1:] >= 0) + 1

    @property
    def has_solution(self) -> bool:
        return self.heads is not None

