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

The chart stores scores only (and, in the max semiring, the kept count that breaks ties), no backpointers: the
convolution's inner loop is then a bare max-plus step.  The backtrace asks each item of the best derivation which
of its rules reaches its value (:func:`_derive` in find mode, the same code that filled it, so the candidate scores
are bit-identical): O(n) items times one cell's rules, O(n^2 d) in all.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np
from numba import njit, types

from compbench import Problem

# What the count dimension counts.
NONE, KEPT, DROPPED = 0, 1, 2
COUNTING = {"none": NONE, "kept": KEPT, "dropped": DROPPED}

# Item types (first axis of the chart), in the order a cell's items are built.
SKIP, BOX, RTRAP, LTRAP, RTRI, LTRI = 0, 1, 2, 3, 4, 5
ITEMS = 6

# Rules, as the backtrace reports them.
R_NONE, R_RTRI_SKIP, R_RTRI, R_LTRI, R_BOX = 0, 1, 2, 3, 4
R_RTRAP, R_LTRAP, R_RTRAP_FIRST, R_RTRAP_NEXT, R_LTRAP_FIRST, R_LTRAP_NEXT = 5, 6, 7, 8, 9, 10

MAX_N = 32000  # kept counts are stored as int16
NEG = -np.inf
FILL = -1  # the ``find`` argument of the rules when they fill the chart
EMIT = -2  # ... when they list their hyperedges instead (see :func:`hypergraph`)
EDGE_COLUMNS = 6  # an emitted hyperedge: conclusion, two antecedents (item ids), modifier, head, score


def chart_bytes(n: int, cap: int) -> int:
    """Bytes the chart of an n-token problem allocates with counts up to ``cap``."""
    # a float64 score per item and count, and an int16 kept count per item (the max semiring's tie-break key)
    return ITEMS * (n + 1) ** 2 * (8 * (cap + 1) + 2)


# The kernels run without numba's reference counting (_nrt=False): the chart's arrays are allocated by the caller,
# and a rule that takes the arrays as arguments then costs no atomic increments per call.

@njit(types.void(types.Array(types.float64, 4, "C"), *[types.int64] * 9, types.float64, types.int64,
                 types.Array(types.float64, 2, "C"), types.Array(types.int64, 1, "C")), cache=True, _nrt=False)
def _list_edge(V, x, i, j, a, ai, aj, b, bi, bj, extra, kept, edges, n_edges):
    """Append the offer (x i j) <- (a ai aj) (b bi bj) + extra to ``edges`` when both antecedents have a derivation
    (one compiled version for every rule: listing is not the fill's hot path)."""
    if V[a, ai, aj, 0] != NEG and V[b, bi, bj, 0] != NEG:
        N = V.shape[1]
        e = n_edges[0]
        edges[e, 0] = (x * N + i) * N + j
        edges[e, 1] = -1 if a == LTRI and ai == aj else (a * N + ai) * N + aj
        edges[e, 2] = -1 if b == LTRI and bi == bj else (b * N + bi) * N + bj
        edges[e, 3] = -1 if kept == 0 else (j if x == RTRAP else i)
        edges[e, 4] = -1 if kept == 0 else (i if x == RTRAP else j)
        edges[e, 5] = extra
        n_edges[0] = e + 1


@njit(types.int64(types.Array(types.float64, 4, "C"), types.Array(types.int16, 3, "C"), *[types.int64] * 9,
                  types.float64, *[types.int64] * 4), cache=True, _nrt=False)
def _find_count(V, T, x, i, j, a, ai, aj, b, bi, bj, extra, shift, kept, cap, count):
    """The count c1 of (a ai aj) in the first derivation through this offer that reaches (x i j)'s value at
    ``count``, or -1: the candidate computed by the fill's own expression (one compiled version for every rule: the
    backtrace is not the hot path)."""
    top_a = min(cap, aj - ai)
    top_b = min(cap, bj - bi)
    for c1 in range(top_a + 1):
        c2 = count - shift - c1
        if 0 <= c2 <= top_b and V[a, ai, aj, c1] + extra + V[b, bi, bj, c2] == V[x, i, j, count] \
                and (cap > 0 or T[a, ai, aj] + kept + T[b, bi, bj] == T[x, i, j]):
            return c1
    return -1


@njit(cache=True, inline="always", _nrt=False)
def _offer(V, T, x, i, j, a, ai, aj, b, bi, bj, extra, shift, kept, cap, tie, find, edges, n_edges):
    """(x i j) ⊕= (a ai aj) ⊗ (b bi bj) ⊗ extra: max-plus convolution of two count vectors, shifted by ``shift``.

    With ``find`` = c >= 0 nothing is written: the result is the count c1 of (a ai aj) in the first derivation
    through this offer that reaches (x i j)'s value at count c, or -1.  Fill and find compute a candidate by the same
    expression, so the backtrace recovers the derivations exactly, without backpointers.

    With cap = 0 (the max semiring) T holds the kept count of the best derivation: ``kept`` words join it, and
    among equal scores the first offer wins unless ``tie`` is +1 (prefer more kept words) or -1 (prefer fewer).
    With counts, the count fixes the kept words of every item, so there is nothing to break.

    With ``find`` = EMIT nothing is computed: the offer is appended to ``edges`` as a hyperedge when both
    antecedents have a derivation in the filled max chart V: its conclusion and antecedents as item ids
    (x * N + i) * N + j, -1 for the (ltri i i) axioms, the semiring's one; for an attachment (``kept`` = 1) the
    modifier and head ((rtrap h m) is (x h m), (ltrap m h) is (x m h)), else -1 -1; and its score.
    """
    if extra == NEG:
        return -1
    if find == EMIT:
        _list_edge(V, x, i, j, a, ai, aj, b, bi, bj, extra, kept, edges, n_edges)
        return -1
    top_a = min(cap, aj - ai)  # a span (i, j) counts at most j - i words
    top_b = min(cap, bj - bi)
    if find >= 0:
        return _find_count(V, T, x, i, j, a, ai, aj, b, bi, bj, extra, shift, kept, cap, find)
    if cap == 0:
        if shift == 0:
            v = V[a, ai, aj, 0] + extra + V[b, bi, bj, 0]
            t = T[a, ai, aj] + kept + T[b, bi, bj]
            if v > V[x, i, j, 0] or (v == V[x, i, j, 0] and v != NEG and tie * t > tie * T[x, i, j]):
                V[x, i, j, 0] = v
                T[x, i, j] = t
        return -1
    for c1 in range(top_a + 1):
        va = V[a, ai, aj, c1]
        if va == NEG:
            continue
        va = va + extra
        for c2 in range(min(top_b, cap - shift - c1) + 1):
            c = c1 + c2 + shift
            V[x, i, j, c] = max(V[x, i, j, c], va + V[b, bi, bj, c2])
    return -1


@njit(cache=True, inline="always", _nrt=False)
def _split_rule(V, T, x, i, j, a, b, lo, hi, delta, extra, sib_row, shift, kept, cap, tie, find, edges, n_edges):
    """(x i j) ⊕= ⊕_{lo <= s < hi} (a i s) ⊗ (b s+delta j) ⊗ (extra + sib_row[s]): a rule with a split point.

    With ``find`` = c >= 0: the first (split, c1) that reaches (x i j)'s value at count c, or (-1, -1).  In the max
    semiring the best split is kept in registers and written once.
    """
    if extra == NEG:
        return -1, -1
    if find != FILL or cap > 0 or shift > 0:
        for s in range(lo, hi):
            c1 = _offer(V, T, x, i, j, a, i, s, b, s + delta, j, extra + sib_row[s], shift, kept, cap, tie, find,
                        edges, n_edges)
            if c1 >= 0:
                return s, c1
        return -1, -1
    best = V[x, i, j, 0]
    best_kept = T[x, i, j]
    for s in range(lo, hi):
        v = V[a, i, s, 0] + (extra + sib_row[s]) + V[b, s + delta, j, 0]
        if v > best or (v == best and v != NEG):  # the kept count only when it can matter
            t = T[a, i, s] + kept + T[b, s + delta, j]
            if v > best or tie * t > tie * best_kept:
                best = v
                best_kept = t
    V[x, i, j, 0] = best
    T[x, i, j] = best_kept
    return -1, -1


@njit(cache=True, _nrt=False)  # a call, not inlined: inlining it in fill and backtrace took 98 s to compile
def _derive(V, T, attach, kept_bonus, sibling, zeros, second_order, single_root, arc_shift, cap, tie, x, i, j,
            find, edges, n_edges):
    """Apply every rule that concludes (x i j) (i < j; for i = j only [rtri-skip]).

    With ``find`` = c >= 0 nothing is written: the first rule, split and left count that reach (x i j)'s value at
    count c, or R_NONE.  With ``find`` = EMIT every rule instance is appended to ``edges`` instead.  This is the
    only place where the rules are written.
    """
    n = V.shape[1] - 1
    attach_right = attach[i, j] + kept_bonus  # attach(i, j): i is the head
    attach_left = attach[j, i] + kept_bonus  # attach(j, i): j is the head
    if x == BOX:
        # [box] (box i j) <- (rtri i r) (ltri r+1 j)
        s, c1 = _split_rule(V, T, BOX, i, j, RTRI, LTRI, i, j, 1, 0.0, zeros, 0, 0, cap, tie, find, edges, n_edges)
        if s >= 0:
            return R_BOX, s, c1
    elif x == RTRAP and not second_order:
        # [rtrap] (rtrap h m) <- (box h m) + attach(h, m)
        c1 = _offer(V, T, RTRAP, i, j, BOX, i, j, LTRI, 0, 0, attach_right, arc_shift, 1, cap, tie, find, edges,
                    n_edges)
        if c1 >= 0:
            return R_RTRAP, 0, c1
    elif x == LTRAP and not second_order and i >= 1:
        # [ltrap] (ltrap m h) <- (box m h) + attach(h, m)
        c1 = _offer(V, T, LTRAP, i, j, BOX, i, j, LTRI, 0, 0, attach_left, arc_shift, 1, cap, tie, find, edges,
                    n_edges)
        if c1 >= 0:
            return R_LTRAP, 0, c1
    elif x == RTRAP:
        # [rtrap-first] (rtrap h m) <- (skip h r) (ltri r+1 m) + attach(h, m) + sib(h, h, m)
        s, c1 = _split_rule(V, T, RTRAP, i, j, SKIP, LTRI, i, j, 1, attach_right + sibling[i, i, j], zeros,
                            arc_shift, 1, cap, tie, find, edges, n_edges)
        if s >= 0:
            return R_RTRAP_FIRST, s, c1
        # [rtrap-next] (rtrap h m) <- (rtrap h s) (box s m) + attach(h, m) + sib(h, s, m)
        if not (single_root and i == 0):
            s, c1 = _split_rule(V, T, RTRAP, i, j, RTRAP, BOX, i + 1, j, 0, attach_right, sibling[i, :, j],
                                arc_shift, 1, cap, tie, find, edges, n_edges)
            if s >= 0:
                return R_RTRAP_NEXT, s, c1
    elif x == LTRAP and i >= 1:
        # [ltrap-first] (ltrap m h) <- (rtri m h-1) (ltri h h) + attach(h, m) + sib(h, h, m)
        c1 = _offer(V, T, LTRAP, i, j, RTRI, i, j - 1, LTRI, j, j, attach_left + sibling[j, j, i], arc_shift, 1,
                    cap, tie, find, edges, n_edges)
        if c1 >= 0:
            return R_LTRAP_FIRST, 0, c1
        # [ltrap-next] (ltrap m h) <- (box m s) (ltrap s h) + attach(h, m) + sib(h, s, m)
        s, c1 = _split_rule(V, T, LTRAP, i, j, BOX, LTRAP, i + 1, j, 0, attach_left, sibling[j, :, i], arc_shift, 1,
                            cap, tie, find, edges, n_edges)
        if s >= 0:
            return R_LTRAP_NEXT, s, c1
    elif x == RTRI:
        # [rtri-skip] (rtri i j) <- (skip i j)
        c1 = _offer(V, T, RTRI, i, j, SKIP, i, j, LTRI, 0, 0, 0.0, 0, 0, cap, tie, find, edges, n_edges)
        if c1 >= 0:
            return R_RTRI_SKIP, 0, c1
        # [rtri] (rtri i j) <- (rtrap i m) (rtri m j)
        if not (single_root and i == 0 and j < n):
            s, c1 = _split_rule(V, T, RTRI, i, j, RTRAP, RTRI, i + 1, j + 1, 0, 0.0, zeros, 0, 0, cap, tie, find,
                                edges, n_edges)
            if s >= 0:
                return R_RTRI, s, c1
    elif x == LTRI and i >= 1:
        # [ltri] (ltri i j) <- (ltri i m) (ltrap m j)
        s, c1 = _split_rule(V, T, LTRI, i, j, LTRI, LTRAP, i, j, 0, 0.0, zeros, 0, 0, cap, tie, find, edges, n_edges)
        if s >= 0:
            return R_LTRI, s, c1
    return R_NONE, 0, 0


@njit(cache=True, _nrt=False)
def _sweep(V, T, attach, kept_bonus, sibling, zeros, second_order, single_root, arc_shift, cap, tie, find, edges,
           n_edges):
    """Every rule of every cell, narrow spans first (``find`` = FILL fills the chart, EMIT lists its hyperedges)."""
    N = V.shape[1]
    for w in range(N):
        for i in range(N - w):
            j = i + w
            # a cell's items in the order they read each other: box, trapezoids, then the triangles
            for x in range(BOX if w > 0 else RTRI, LTRI + 1 if w > 0 else RTRI + 1):
                _derive(V, T, attach, kept_bonus, sibling, zeros, second_order, single_root, arc_shift, cap, tie,
                        x, i, j, find, edges, n_edges)


@njit(cache=True, _nrt=False)
def _fill(bigram, V, T, attach, kept_bonus, sibling, zeros, second_order, single_root, counting, cap, tie, edges,
          n_edges):
    # V (items x N x N x counts) starts at -inf and T (items x N x N) at 0.
    # sibling[h, s, m] = sib(h, s, m) (s = h: m is h's first modifier on that side)
    N = V.shape[1]
    arc_shift = 1 if counting == KEPT else 0
    # The axioms first, before any rule reads them.  (ltri 0 0), the root's empty left half (score 0, count 0), is
    # the semiring's one: the unary rules use it as their second antecedent.
    for i in range(N):
        # [ltri-0] (ltri i i) <- .
        V[LTRI, i, i, 0] = 0.0
        for j in range(i, N):
            # [skip] (skip i j) <- .   bigram(i, j+1), drops j-i words
            c = j - i if counting == DROPPED else 0
            if c <= cap:
                V[SKIP, i, j, c] = bigram[i, j + 1]
    # FILL as an int64 like the backtrace's counts and the listing's EMIT: numba compiles a call with a constant
    # argument as a version of its own, and one version of _derive (all rules inlined) takes 15 s to compile
    _sweep(V, T, attach, kept_bonus, sibling, zeros, second_order, single_root, arc_shift, cap, tie, np.int64(FILL),
           edges, n_edges)


@njit(cache=True, inline="always", _nrt=False)
def _push(stack, top, x, i, j, c):
    stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = x, i, j, c
    return top + 1


@njit(cache=True, _nrt=False)
def _backtrace(V, T, attach, kept_bonus, sibling, zeros, second_order, single_root, counting, cap, tie, edges,
               n_edges, count, heads, stack):
    """Write into ``heads`` (all -1) the heads of the goal's best derivation that counts ``count`` words, found by
    asking each of its items which rule reached its value: time linear in the derivation's items times one cell's
    rules.  ``stack`` has room for the derivation's items (4 columns: item, i, j, count)."""
    n = V.shape[1] - 1
    if V[RTRI, 0, n, count] == NEG:  # the goal has no derivation with this count
        return
    arc_shift = 1 if counting == KEPT else 0
    top = _push(stack, 0, RTRI, 0, n, count)
    while top > 0:
        top -= 1
        x, i, j, c = stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3]
        if x == SKIP or (x == LTRI and i == j):  # the axioms
            continue
        rule, split, c1 = _derive(V, T, attach, kept_bonus, sibling, zeros, second_order, single_root, arc_shift,
                                  cap, tie, x, i, j, c, edges, n_edges)
        if rule == R_RTRI_SKIP:
            top = _push(stack, top, SKIP, i, j, c1)
        elif rule == R_RTRI:
            top = _push(stack, top, RTRAP, i, split, c1)
            top = _push(stack, top, RTRI, split, j, c - c1)
        elif rule == R_LTRI:
            top = _push(stack, top, LTRI, i, split, c1)
            top = _push(stack, top, LTRAP, split, j, c - c1)
        elif rule == R_BOX:
            top = _push(stack, top, RTRI, i, split, c1)
            top = _push(stack, top, LTRI, split + 1, j, c - c1)
        elif rule == R_RTRAP or rule == R_LTRAP:
            top = _push(stack, top, BOX, i, j, c1)
        elif rule == R_RTRAP_FIRST:
            top = _push(stack, top, SKIP, i, split, c1)
            top = _push(stack, top, LTRI, split + 1, j, c - arc_shift - c1)
        elif rule == R_RTRAP_NEXT:
            top = _push(stack, top, RTRAP, i, split, c1)
            top = _push(stack, top, BOX, split, j, c - arc_shift - c1)
        elif rule == R_LTRAP_FIRST:
            top = _push(stack, top, RTRI, i, j - 1, c1)
        elif rule == R_LTRAP_NEXT:
            top = _push(stack, top, BOX, i, split, c1)
            top = _push(stack, top, LTRAP, split, j, c - arc_shift - c1)
        else:
            raise AssertionError("a chart item has no rule that reaches its value")
        if rule == R_RTRAP or rule == R_RTRAP_FIRST or rule == R_RTRAP_NEXT:
            heads[j] = i
        elif rule == R_LTRAP or rule == R_LTRAP_FIRST or rule == R_LTRAP_NEXT:
            heads[i] = j


def announce_compile(kernels: tuple, what: str, seconds: str) -> None:
    """Say once on stderr that ``kernels`` (numba dispatchers) are about to be compiled, when numba's cache holds no
    version of them for this source file (a fresh machine, or the source changed).  Checked once per process:
    reading the cache's index is file I/O, and this runs before every hyperedge listing."""
    if what in _checked:
        return
    _checked.add(what)
    try:
        cached = all(kernel._cache._cache_file._load_index() for kernel in kernels)
    except Exception:  # numba's cache layout is private: say nothing rather than fail
        return
    if not cached:
        print(f"compbench: compiling {what} with numba, once per machine (about {seconds} on 2 cores); later runs "
              "load them from the cache in under a second", file=sys.stderr, flush=True)


_checked: set[str] = set()  # what announce_compile has looked at in this process
_NO_EDGES = np.zeros((0, EDGE_COLUMNS))  # the fill and the backtrace list no hyperedges
_NO_EDGE_COUNT = np.zeros(1, np.int64)
_NO_SIBLINGS = np.zeros((1, 1, 1))  # first order; read-only like a problem's sibling scores: one compiled version
_NO_SIBLINGS.flags.writeable = False


@dataclass(frozen=True)
class ChartScores:
    """A problem's scores laid out for the kernel, prepared once so that the chart can be filled again at any
    kept bonus (bisection fills one chart per lambda)."""

    attach: np.ndarray  # attach[h, m] = arc(h, m) + token(m): the score of keeping m as a modifier of h
    bigram: np.ndarray
    sibling: np.ndarray  # sibling[h, s, m] = sib(h, s, m); a (1, 1, 1) placeholder in first order
    zeros: np.ndarray  # the per-split score of the rules that have none
    second_order: bool
    single_root: bool

    @classmethod
    def of(cls, problem: Problem) -> ChartScores:
        second_order = problem.sibling_scores is not None
        sibling = problem.sibling_scores if second_order else _NO_SIBLINGS
        attach = problem.arc_scores.copy()
        attach[:, 1:] += problem.token_scores
        return cls(attach, problem.bigram_scores, sibling, np.zeros(problem.n + 1), second_order, problem.single_root)

    @property
    def n(self) -> int:
        return len(self.zeros) - 1


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
    _kernel_inputs: tuple  # what the backtrace needs: the chart's arrays, the scores and the fill's settings

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
        cap = 0 if counting == "none" else int(cap)
        V = np.full((ITEMS, n + 1, n + 1, cap + 1), NEG)
        T = np.zeros((ITEMS, n + 1, n + 1), np.int16)
        # the chart and everything its rules read, for the fill and again for the backtrace
        inputs = (V, T, scores.attach, float(kept_bonus), scores.sibling, scores.zeros, scores.second_order,
                  scores.single_root, COUNTING[counting], cap, int(tie), _NO_EDGES, _NO_EDGE_COUNT)
        _fill(scores.bigram, *inputs)
        if counting == "none":
            kept = T[RTRI, 0, n:n + 1].astype(np.int64)
        else:
            kept = np.arange(cap + 1) if counting == "kept" else n - np.arange(cap + 1)
        return cls(V[RTRI, 0, n].copy(), kept, inputs)

    def heads(self, count: int) -> np.ndarray:
        """The heads of the goal's best derivation at ``count`` (all -1 when there is none)."""
        n = self._kernel_inputs[0].shape[1] - 1  # the chart's scores V: items x N x N x counts
        heads = np.full(n + 1, -1, np.int64)
        # a derivation has at most 2(n+1) axioms, as many binary rules, and as many unary rules as both
        stack = np.empty((8 * (n + 2), 4), np.int64)
        _backtrace(*self._kernel_inputs, int(count), heads, stack)
        return heads


@dataclass(frozen=True)
class Hypergraph:
    """The deduction system of a problem as a hypergraph: one hyperedge per rule instance (axioms included) whose
    antecedents have a derivation and whose score is finite.  Items are numbered ``(x * N + i) * N + j`` with
    N = n + 1; an antecedent of -1 is none (the axioms' missing antecedents, and the (ltri i i) axioms, which are
    the semiring's one: every unary rule's second antecedent is (ltri 0 0)).  The derivations of the goal are
    exactly the solutions: a hyperpath from the goal down to the axioms is one projective tree over one kept set.

    >>> import compbench
    >>> g = hypergraph(compbench.generate("gaussian", n=3, seed=0))
    >>> int(g.goal), bool((g.modifier[g.conclusion == g.goal] == -1).all())
    (67, True)
    """

    conclusion: np.ndarray  # (E,) item id of each hyperedge's conclusion
    antecedents: np.ndarray  # (E, 2) item ids, -1 for none
    modifier: np.ndarray  # (E,) the word an attachment keeps (a [rtrap*] / [ltrap*] rule), else -1
    head: np.ndarray  # (E,) the attachment's head, else -1
    score: np.ndarray  # (E,) float: bigram for [skip], attach (+ sibling) for attachments, 0 otherwise
    goal: int  # the item (rtri 0 n)
    n: int

    @property
    def num_items(self) -> int:
        return ITEMS * (self.n + 1) ** 2


def max_hyperedges(n: int) -> int:
    """An upper bound on the hyperedges of an n-token problem: per cell of width w >= 1 at most w [box], 2w
    [rtrap*], w [ltrap*], w + 1 [rtri*] and w [ltri] instances; [rtri-skip] on the diagonal; the [skip] axioms."""
    N = n + 1
    return sum((N - w) * (6 * w + 2) for w in range(1, N)) + N + N * (N + 1) // 2


def hypergraph(problem: Problem | ChartScores) -> Hypergraph:
    """The hyperedges of ``problem``'s deduction system, listed by the rules themselves (:func:`_derive` in EMIT
    mode) after the max chart is filled: first the [skip] axioms (no antecedents, their score as [skip] set it), then
    every rule instance in fill order, so that every hyperedge follows those that conclude its antecedents."""
    scores = problem if isinstance(problem, ChartScores) else ChartScores.of(problem)
    announce_compile((_fill, _sweep), "the hook-trick chart kernels", "10 s")
    n = scores.n
    N = n + 1
    V = np.full((ITEMS, N, N, 1), NEG)
    T = np.zeros((ITEMS, N, N), np.int16)
    settings = (scores.attach, 0.0, scores.sibling, scores.zeros, scores.second_order, scores.single_root)
    _fill(scores.bigram, V, T, *settings, NONE, 0, 0, _NO_EDGES, _NO_EDGE_COUNT)
    edges = np.empty((max_hyperedges(n), EDGE_COLUMNS))
    i, j = np.nonzero(V[SKIP, :, :, 0] != NEG)  # row by row: the order of the fill
    edges[:len(i), 0] = (SKIP * N + i) * N + j
    edges[:len(i), 1:5] = -1
    edges[:len(i), 5] = V[SKIP, i, j, 0]
    count = np.array([len(i)], np.int64)
    _sweep(V, T, *settings, 0, 0, 0, EMIT, edges, count)
    ids = edges[:count[0], :5].astype(np.int64)
    return Hypergraph(ids[:, 0].copy(), ids[:, 1:3].copy(), ids[:, 3].copy(), ids[:, 4].copy(),
                      edges[:count[0], 5].copy(), (RTRI * N + 0) * N + n, n)
