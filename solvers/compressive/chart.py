"""The compressive-parsing chart: Eisner's algorithm with the hook trick, compiled with numba.

Positions 0..n (0 is the root and the bigram start ``<s>``; n+1 is ``</s>``).  Every item is a span (i, j) with
i <= j whose value is a vector indexed by a count c = 0..cap: the best score of a derivation of that item that
counts c words, kept or dropped (``counting``).  With nothing counted the vector has length 1 and the chart is
the plain max semiring; otherwise it is the resource-constrained max semiring: ⊗ is max-plus convolution of the
count vectors (truncated at cap), ⊕ is the elementwise max.  The items:

    (skip i j)    i is kept (or is the root) and the words i+1..j are deleted: the hook.  Scores bigram(i, j+1):
                  the next kept word after i is j+1 (or </s>), because a right triangle is always followed by a
                  left triangle, whose first word is kept, or by the end of the sentence.
    (rtri i j)    i with its right dependents, covering i..j (the deleted run after its last kept word included)
    (ltri i j)    j with its left dependents, covering i..j (i is kept)
    (box i j)     (rtri i r) (ltri r+1 j): two facing halves; in first order the shared part of both
                  trapezoids, in second order Eisner's sibling box of two adjacent modifiers i < j of one head
    (rtrap h m)   arc h -> m (h < m), with m's left half and h's right modifiers closer than m
    (ltrap m h)   arc h -> m (m < h), with m's right half and h's left modifiers closer than m

The rules (``attach(h, m) = arc(h, m) + token(m)``: every kept word gets exactly one head, so token scores fold into
its arc; the count of kept words grows by one at every attachment, the count of dropped words at every skip):

    [skip]        (skip i j)   <- .                          bigram(i, j+1), drops j-i words      0 <= i <= j <= n
    [rtri-skip]   (rtri i j)   <- (skip i j)                 i takes no right modifier
    [rtri]        (rtri i j)   <- (rtrap i m) (rtri m j)     m = i's outermost right modifier     i < m <= j
    [ltri-0]      (ltri j j)   <- .
    [ltri]        (ltri i j)   <- (ltri i m) (ltrap m j)     m = j's outermost left modifier      i <= m < j
    [box]         (box i j)    <- (rtri i r) (ltri r+1 j)                                          i <= r < j
  first order:
    [rtrap]       (rtrap h m)  <- (box h m)                  + attach(h, m)
    [ltrap]       (ltrap m h)  <- (box m h)                  + attach(h, m)
  second order (sib(h, s, m): m's previous modifier of h on that side is s, or s = h for the first):
    [rtrap-first] (rtrap h m)  <- (skip h r) (ltri r+1 m)    + attach(h, m) + sib(h, h, m)        h <= r < m
                  [second-order only]: a skip item that has skipped words but taken no modifier yet takes its
                  first right modifier; with skipped words "no modifier yet" is no longer implied by i = j.
    [rtrap-next]  (rtrap h m)  <- (rtrap h s) (box s m)      + attach(h, m) + sib(h, s, m)        h < s < m
    [ltrap-first] (ltrap m h)  <- (rtri m h-1) (ltri h h)    + attach(h, m) + sib(h, h, m)
    [ltrap-next]  (ltrap m h)  <- (box m s) (ltrap s h)      + attach(h, m) + sib(h, s, m)        m < s < h
  goal: (rtri 0 n).
  single_root: (rtri 0 j) with j < n is [rtri-skip] only, and [rtrap-next] never has h = 0, so the goal takes at
  most one root modifier (none: the empty compression).

Deleted words are exactly the skipped ones, and each deleted run belongs to the kept word (or root) just before
it, so every projective tree over every kept subset has exactly one derivation.  Time: O(n^3) items x splits, times
O(cap^2) for the convolution (O(n^3 d^2) with d = cap); memory O(n^2 d).  Second order has the same asymptotic
time (the box and next-sibling rules are O(n^3) like the first-order ones).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from compbench import Problem

# What the count dimension counts.
NONE, KEPT, DROPPED = 0, 1, 2
COUNTING = {"none": NONE, "kept": KEPT, "dropped": DROPPED}

# Item types (first axis of the chart arrays).
SKIP, RTRI, LTRI, BOX, RTRAP, LTRAP = 0, 1, 2, 3, 4, 5
ITEMS = 6

# Rules, as recorded in the chart's backpointers.
R_NONE, R_SKIP, R_RTRI_SKIP, R_RTRI, R_LTRI_0, R_LTRI, R_BOX = 0, 1, 2, 3, 4, 5, 6
R_RTRAP, R_LTRAP, R_RTRAP_FIRST, R_RTRAP_NEXT, R_LTRAP_FIRST, R_LTRAP_NEXT = 7, 8, 9, 10, 11, 12

MAX_N = 32000  # splits and counts are stored as int16
NEG = -np.inf


def chart_bytes(n: int, cap: int) -> int:
    """Bytes the chart of an n-token problem allocates with counts up to ``cap``."""
    # score float64, tie count int16, rule int8, split int16, left count int16
    return ITEMS * (n + 1) ** 2 * (cap + 1) * (8 + 2 + 1 + 2 + 2)


@njit(cache=True, inline="always")
def _offer(V, T, R, S, C, x, i, j, a, ai, aj, b, bi, bj, extra, shift, kept, rule, split, cap, tie):
    """(x i j) ⊕= (a ai aj) ⊗ (b bi bj) ⊗ extra: max-plus convolution of two count vectors, shifted by ``shift``.

    ``kept`` words join the derivation's kept count (the tie-break key).  Among equal scores the first offer
    wins, unless ``tie`` is +1 (prefer more kept words) or -1 (prefer fewer).
    """
    if extra == NEG:
        return
    top_a = min(cap, aj - ai)  # a span (i, j) counts at most j - i words
    top_b = min(cap, bj - bi)
    for c1 in range(top_a + 1):
        va = V[a, ai, aj, c1]
        if va == NEG:
            continue
        va = va + extra
        ta = T[a, ai, aj, c1] + kept
        for c2 in range(min(top_b, cap - shift - c1) + 1):
            v = va + V[b, bi, bj, c2]
            c = c1 + c2 + shift
            old = V[x, i, j, c]
            if v > old or (tie != 0 and v == old and v != NEG
                           and tie * (ta + T[b, bi, bj, c2]) > tie * T[x, i, j, c]):
                V[x, i, j, c] = v
                T[x, i, j, c] = ta + T[b, bi, bj, c2]
                R[x, i, j, c] = rule
                S[x, i, j, c] = split
                C[x, i, j, c] = c1


@njit(cache=True, inline="always")
def _split_rule(V, T, R, S, C, x, i, j, a, b, lo, hi, delta, extra, sib_row, shift, kept, rule, cap, tie):
    """(x i j) ⊕= ⊕_{lo <= s < hi} (a i s) ⊗ (b s+delta j) ⊗ (extra + sib_row[s]): a rule with a split point.

    In the max semiring (cap = 0, nothing counted) the best split is kept in registers and written once.
    """
    if extra == NEG:
        return
    if cap > 0 or shift > 0:
        for s in range(lo, hi):
            _offer(V, T, R, S, C, x, i, j, a, i, s, b, s + delta, j, extra + sib_row[s], shift, kept, rule, s,
                   cap, tie)
        return
    best = V[x, i, j, 0]
    best_kept = T[x, i, j, 0]
    best_split = -1
    for s in range(lo, hi):
        v = V[a, i, s, 0] + V[b, s + delta, j, 0] + (extra + sib_row[s])
        if v > best or (tie != 0 and v == best and v != NEG
                        and tie * (T[a, i, s, 0] + T[b, s + delta, j, 0] + kept) > tie * best_kept):
            best = v
            best_kept = T[a, i, s, 0] + T[b, s + delta, j, 0] + kept
            best_split = s
    if best_split >= 0:
        V[x, i, j, 0] = best
        T[x, i, j, 0] = best_kept
        R[x, i, j, 0] = rule
        S[x, i, j, 0] = best_split
        C[x, i, j, 0] = 0


@njit(cache=True)
def _fill(attach, bigram, sibling, second_order, single_root, counting, cap, tie):
    # sibling[h, m, s] = sib(h, s, m) (s = h: m is h's first modifier on that side)
    N = attach.shape[0]
    n = N - 1
    D = cap + 1
    V = np.full((ITEMS, N, N, D), NEG)
    T = np.zeros((ITEMS, N, N, D), np.int16)
    R = np.zeros((ITEMS, N, N, D), np.int8)
    S = np.zeros((ITEMS, N, N, D), np.int16)
    C = np.zeros((ITEMS, N, N, D), np.int16)
    arc_shift = 1 if counting == KEPT else 0
    zeros = np.zeros(N)  # no per-split score
    # The axioms first, before any rule reads them.  (ltri 0 0), the root's empty left half (score 0, count 0), is
    # the semiring's one: the unary rules use it as their second antecedent.
    for i in range(N):
        # [ltri-0] (ltri i i) <- .
        V[LTRI, i, i, 0] = 0.0
        R[LTRI, i, i, 0] = R_LTRI_0
        for j in range(i, N):
            # [skip] (skip i j) <- .   bigram(i, j+1), drops j-i words
            c = j - i if counting == DROPPED else 0
            if c <= cap:
                V[SKIP, i, j, c] = bigram[i, j + 1]
                R[SKIP, i, j, c] = R_SKIP
    for w in range(N):
        for i in range(N - w):
            j = i + w
            # [rtri-skip] (rtri i j) <- (skip i j)
            _offer(V, T, R, S, C, RTRI, i, j, SKIP, i, j, LTRI, 0, 0, 0.0, 0, 0, R_RTRI_SKIP, 0, cap, tie)
            if w == 0:
                continue
            # [box] (box i j) <- (rtri i r) (ltri r+1 j)
            _split_rule(V, T, R, S, C, BOX, i, j, RTRI, LTRI, i, j, 1, 0.0, zeros, 0, 0, R_BOX, cap, tie)
            if not second_order:
                # [rtrap] (rtrap h m) <- (box h m) + attach(h, m)
                _offer(V, T, R, S, C, RTRAP, i, j, BOX, i, j, LTRI, 0, 0, attach[i, j], arc_shift, 1,
                       R_RTRAP, 0, cap, tie)
                # [ltrap] (ltrap m h) <- (box m h) + attach(h, m)
                if i >= 1:
                    _offer(V, T, R, S, C, LTRAP, i, j, BOX, i, j, LTRI, 0, 0, attach[j, i], arc_shift, 1,
                           R_LTRAP, 0, cap, tie)
            else:
                # [rtrap-first] (rtrap h m) <- (skip h r) (ltri r+1 m) + attach(h, m) + sib(h, h, m)
                _split_rule(V, T, R, S, C, RTRAP, i, j, SKIP, LTRI, i, j, 1, attach[i, j] + sibling[i, j, i], zeros,
                            arc_shift, 1, R_RTRAP_FIRST, cap, tie)
                # [rtrap-next] (rtrap h m) <- (rtrap h s) (box s m) + attach(h, m) + sib(h, s, m)
                if not (single_root and i == 0):
                    _split_rule(V, T, R, S, C, RTRAP, i, j, RTRAP, BOX, i + 1, j, 0, attach[i, j], sibling[i, j],
                                arc_shift, 1, R_RTRAP_NEXT, cap, tie)
                if i >= 1:
                    # [ltrap-first] (ltrap m h) <- (rtri m h-1) (ltri h h) + attach(h, m) + sib(h, h, m)
                    _offer(V, T, R, S, C, LTRAP, i, j, RTRI, i, j - 1, LTRI, j, j, attach[j, i] + sibling[j, i, j],
                           arc_shift, 1, R_LTRAP_FIRST, 0, cap, tie)
                    # [ltrap-next] (ltrap m h) <- (box m s) (ltrap s h) + attach(h, m) + sib(h, s, m)
                    _split_rule(V, T, R, S, C, LTRAP, i, j, BOX, LTRAP, i + 1, j, 0, attach[j, i], sibling[j, i],
                                arc_shift, 1, R_LTRAP_NEXT, cap, tie)
            # [rtri] (rtri i j) <- (rtrap i m) (rtri m j)
            if not (single_root and i == 0 and j < n):
                _split_rule(V, T, R, S, C, RTRI, i, j, RTRAP, RTRI, i + 1, j + 1, 0, 0.0, zeros, 0, 0, R_RTRI, cap, tie)
            # [ltri] (ltri i j) <- (ltri i m) (ltrap m j)
            if i >= 1:
                _split_rule(V, T, R, S, C, LTRI, i, j, LTRI, LTRAP, i, j, 0, 0.0, zeros, 0, 0, R_LTRI, cap, tie)
    return V, T, R, S, C


@njit(cache=True)
def _backtrace(R, S, C, n, count, counting):
    """The heads of the goal's best derivation that counts ``count`` words (-1: deleted), read off the
    backpointers in time linear in the number of items of the derivation."""
    heads = np.full(n + 1, -1, np.int64)
    arc_shift = 1 if counting == KEPT else 0
    stack = [(RTRI, 0, n, count)]
    while len(stack) > 0:
        x, i, j, c = stack.pop()
        rule = R[x, i, j, c]
        split = np.int64(S[x, i, j, c])
        c1 = np.int64(C[x, i, j, c])
        if rule == R_SKIP or rule == R_LTRI_0:
            continue
        if rule == R_RTRI_SKIP:
            stack.append((SKIP, i, j, c1))
        elif rule == R_RTRI:
            stack.append((RTRAP, i, split, c1))
            stack.append((RTRI, split, j, c - c1))
        elif rule == R_LTRI:
            stack.append((LTRI, i, split, c1))
            stack.append((LTRAP, split, j, c - c1))
        elif rule == R_BOX:
            stack.append((RTRI, i, split, c1))
            stack.append((LTRI, split + 1, j, c - c1))
        elif rule == R_RTRAP or rule == R_LTRAP:
            stack.append((BOX, i, j, c1))
        elif rule == R_RTRAP_FIRST:
            stack.append((SKIP, i, split, c1))
            stack.append((LTRI, split + 1, j, c - arc_shift - c1))
        elif rule == R_RTRAP_NEXT:
            stack.append((RTRAP, i, split, c1))
            stack.append((BOX, split, j, c - arc_shift - c1))
        elif rule == R_LTRAP_FIRST:
            stack.append((RTRI, i, j - 1, c1))
        elif rule == R_LTRAP_NEXT:
            stack.append((BOX, i, split, c1))
            stack.append((LTRAP, split, j, c - arc_shift - c1))
        else:  # R_NONE: the goal has no derivation with this count
            heads[:] = -1
            return heads
        if rule == R_RTRAP or rule == R_RTRAP_FIRST or rule == R_RTRAP_NEXT:
            heads[j] = i
        elif rule == R_LTRAP or rule == R_LTRAP_FIRST or rule == R_LTRAP_NEXT:
            heads[i] = j
    return heads


@dataclass(frozen=True)
class ChartScores:
    """A problem's scores laid out for the kernel, prepared once so that the chart can be filled again at any
    kept bonus (bisection fills one chart per lambda)."""

    arc: np.ndarray
    token: np.ndarray
    bigram: np.ndarray
    sibling: np.ndarray  # sibling[h, m, s] = sib(h, s, m); a (1, 1, 1) placeholder in first order
    second_order: bool
    single_root: bool

    @classmethod
    def of(cls, problem: Problem) -> ChartScores:
        second_order = problem.sibling_scores is not None
        # by_split[h, m, s] = sib(h, s, m): the rules read a head-modifier pair's siblings as one contiguous row
        sibling = np.ascontiguousarray(problem.sibling_scores.transpose(0, 2, 1)) if second_order \
            else np.zeros((1, 1, 1))
        return cls(problem.arc_scores, problem.token_scores, problem.bigram_scores, sibling, second_order,
                   problem.single_root)

    @property
    def n(self) -> int:
        return len(self.token)

    def attach(self, kept_bonus: float = 0.0) -> np.ndarray:
        """``attach[h, m] = arc(h, m) + token(m) + kept_bonus``: the score of keeping m as a modifier of h."""
        attach = self.arc.copy()
        attach[:, 1:] += self.token + kept_bonus
        return attach


@dataclass
class Chart:
    """A filled chart.  ``goal[c]`` is the best objective whose derivation counts c words (-inf: none).

    >>> import compbench
    >>> p = compbench.generate("gaussian", n=5, seed=0)
    >>> chart = Chart.fill(p)              # max semiring: goal has one entry
    >>> heads = chart.heads(0)
    >>> bool(abs(compbench.objective(p, heads) - chart.goal[0]) < 1e-9)
    True
    """

    goal: np.ndarray
    kept: np.ndarray  # kept words of the best derivation at each count (the tie-break key)
    counting: str
    _rules: np.ndarray
    _splits: np.ndarray
    _counts: np.ndarray

    @classmethod
    def fill(cls, problem: Problem | ChartScores, *, counting: str = "none", cap: int = 0, kept_bonus: float = 0.0,
             tie: int = 0) -> Chart:
        """Fill the chart of ``problem`` (or of its prepared :class:`ChartScores`) counting ``counting`` words up
        to ``cap``.

        ``kept_bonus`` is added to every kept word's score (the Lagrange multiplier of the length);
        ``tie`` = +1 / -1 breaks ties between equal scores towards more / fewer kept words.
        """
        scores = problem if isinstance(problem, ChartScores) else ChartScores.of(problem)
        n = scores.n
        if n > MAX_N:
            raise ValueError(f"n = {n} exceeds the chart's limit of {MAX_N} tokens")
        if counting == "none":
            cap = 0
        V, T, R, S, C = _fill(scores.attach(kept_bonus), scores.bigram, scores.sibling, scores.second_order,
                              scores.single_root, COUNTING[counting], int(cap), int(tie))
        return cls(V[RTRI, 0, n].copy(), T[RTRI, 0, n].astype(np.int64), counting, R, S, C)

    def heads(self, count: int) -> np.ndarray:
        """The heads of the goal's best derivation at ``count`` (all -1 when there is none)."""
        n = self._rules.shape[1] - 1
        return _backtrace(self._rules, self._splits, self._counts, n, int(count), COUNTING[self.counting])
