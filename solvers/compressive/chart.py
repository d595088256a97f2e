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
of its rules reaches its value (:func:`_derive_rules` in FIND mode, the same code that filled it, so the candidate
scores are bit-identical): O(n) items times one cell's rules, O(n^2 d) in all.

OUTSIDE_MAX is the max semiring's outside pass, the same rules with max passing the best completion of each item
down to its antecedents (:meth:`Chart.best_outside`; ``pruned-dp`` bounds the counted chart with it).  FILL_PRUNED
(:class:`Pruning`) derives each item only over a window of counts and trims the window once the item is filled;
the backtrace reads the chart only inside the windows.

The same rules run in two more modes, INSIDE_SUM and OUTSIDE_SUM, in the sum-product semiring on scaled probabilities
(:class:`ScaledChart`): log Z and posterior marginals (:mod:`compbench_solvers.compressive.marginals`).  The chart then
holds no kept counts; the outside values are a second chart of the same shape, filled in the reverse order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from compbench import Problem

from ..jit import NO_REFERENCE_COUNTS, kernel, with_globals

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

# The modes the rules run in.  Each mode has an entry kernel of its own (the ``_fill_*``, ``_emit``, ``_outside_*``
# and ``_backtrace`` kernels below), and the rules (:func:`_derive_rules`) a kernel per mode and order in which the
# mode's own offer and split rule are bound (``_MODES``): each kernel holds one mode's code and one order's, so a
# first solve of a first-order problem compiles only the first-order max fill and its backtrace.
FILL_MAX = 0  # fill the chart in the max semiring (V starts at -inf, T at 0)
FILL_PRUNED = 1  # ... over each item's window of counts only, trimmed once the item is filled (:class:`Pruning`)
FIND = 2  # the backtrace: the first rule instance that reaches an item's value at a count; nothing written
EMIT = 3  # list the hyperedges of a filled max chart (see :func:`hypergraph`)
OUTSIDE_MAX = 4  # the max semiring's outside values: the best completion of each item (:meth:`Chart.best_outside`)
INSIDE_SUM = 5  # sum the chart in scaled probability space (see :class:`ScaledChart`)
OUTSIDE_SUM = 6  # pass outside sums down to the antecedents, in the same space
MODE_NAMES = {FILL_MAX: "fill_max", FILL_PRUNED: "fill_pruned", FIND: "find", EMIT: "emit", OUTSIDE_MAX: "outside_max",
              INSIDE_SUM: "inside_sum", OUTSIDE_SUM: "outside_sum"}
ORDER_NAMES = {1: "first-order", 2: "second-order"}  # the kernels of each order are compiled apart
EVERY = -1  # the rules' ``item`` when they derive every item of a column
EDGE_COLUMNS = 6  # an emitted hyperedge: conclusion, two antecedents (item ids), modifier, head, score


def chart_bytes(n: int, cap: int) -> int:
    """Bytes the chart of an n-token problem allocates with counts up to ``cap``."""
    # a float64 score per item and count, and an int16 kept count per item (the max semiring's tie-break key)
    return ITEMS * (n + 1) ** 2 * (8 * (cap + 1) + 2)


class Cells(NamedTuple):
    """What the kernels write: the chart's cells and what a mode writes besides.  A field no mode of a call reads is
    None: numba types a record's fields only where the code that reads them is compiled, and each mode's kernel
    holds only its own code.  Built by keyword, in Python and in the batch kernels alike."""

    V: np.ndarray  # items x N x N x counts: the best score (max semiring) or scaled probability of each item
    T: np.ndarray | None = None  # items x N x N, int16: the max semiring's kept count of the best derivation
    window: np.ndarray | None = None  # FILL_PRUNED, and FIND on its chart: items x N x N x 2, the counts lo..hi
    #                                   each item keeps (integers as floats; trimmed in place by the fill)
    outside: np.ndarray | None = None  # OUTSIDE_MAX and OUTSIDE_SUM: the outside values, items x N x N x counts
    mass: np.ndarray | None = None  # OUTSIDE_SUM: the sibling triples' posterior mass, mass[h, m, s] (first order:
    #                                 an empty (0, 0, 0) array, never written)
    edges: np.ndarray | None = None  # EMIT: the hyperedges listed, EDGE_COLUMNS numbers each
    n_edges: np.ndarray | None = None  # EMIT: (1,) int64, how many are listed


class Scores(NamedTuple):
    """What the rules read: the problem's scores laid out for the kernels and the fill's settings.  Built by keyword,
    in Python and in the batch kernels alike."""

    bigram: np.ndarray  # bigram[i, j]: j follows i (j = n+1: </s>)
    attach: np.ndarray  # attach[h, m] = arc(h, m) + token(m) (exp of it in scaled probability space)
    kept_bonus: float  # ⊗ every attachment (the Lagrange multiplier of the length; the semiring's one when none)
    sibling: np.ndarray | None  # sib(h, s, m) as :func:`_sib` reads it; None in first order (its type picks the
    #                             first- or second-order rules: :func:`_derive`)
    ones: np.ndarray  # (N,) the semiring's one per split
    gap: np.ndarray  # (N,) gap[r]: the scale a rule bridges between r and r+1 (see :class:`ScaledChart`)
    scale: np.ndarray | None  # (N,) the scaled chart's potential (written by INSIDE_SUM); None in the max semiring
    single_root: bool
    counting: int  # NONE, KEPT or DROPPED
    cap: int  # the largest count; 0 with nothing counted
    tie: int  # +1 / -1: among equal scores prefer more / fewer kept words; 0: the first offer


# The records are passed to the kernels as they are.  numba's cache key names a record's class by its module:
# these are always compbench_solvers.compressive.chart's (pytest imports the solvers only through the installed
# package: tests/test_solver_doctests.py; ``solvers`` is not among its testpaths).
#
# The kernels are defined with compbench_solvers.jit.kernel: cached, and without numba's reference counting (the
# one place the private _nrt flag is set, and why: jit.py).  A kernel that is a call of its own and is called with an
# item type (a constant such as RTRAP) has a signature: numba would compile a version of it per constant otherwise.


@kernel(types.void(types.Array(types.float64, 4, "C"), *[types.int64] * 9, types.float64, types.int64,
                   types.Array(types.float64, 2, "C"), types.Array(types.int64, 1, "C")))
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


_FIND_COUNT = [types.int64(types.Array(types.float64, 4, "C"), types.Array(types.int16, 3, "C"), *[types.int64] * 9,
                           types.float64, *[types.int64] * 4, window)
               for window in (types.Array(types.float64, 4, "C"), types.none)]  # a pruned chart's windows, or None


@kernel(_FIND_COUNT)
def _find_count(V, T, x, i, j, a, ai, aj, b, bi, bj, extra, shift, kept, cap, count, window):
    """The count c1 of (a ai aj) in the first derivation through this offer that reaches (x i j)'s value at
    ``count``, or -1: the candidate computed by the fill's own expression, so the backtrace recovers the derivations
    exactly, without backpointers (a call, one compiled version for every rule: the backtrace is not the hot path).
    A pruned chart (``window`` not None) is read only inside the items' windows
    (outside them V holds nothing)."""
    if cap == 0 and shift == 0 and count == 0:  # the free chart (the usual case)
        v = V[a, ai, aj, 0] + extra + V[b, bi, bj, 0]
        return 0 if v == V[x, i, j, 0] and T[a, ai, aj] + kept + T[b, bi, bj] == T[x, i, j] else -1
    top_a = min(cap, aj - ai)
    top_b = min(cap, bj - bi)
    lo_a, lo_b = 0, 0
    if window is not None:
        lo_a, top_a = int(window[a, ai, aj, 0]), min(top_a, int(window[a, ai, aj, 1]))
        lo_b, top_b = int(window[b, bi, bj, 0]), min(top_b, int(window[b, bi, bj, 1]))
    for c1 in range(lo_a, top_a + 1):
        c2 = count - shift - c1
        if lo_b <= c2 <= top_b and V[a, ai, aj, c1] + extra + V[b, bi, bj, c2] == V[x, i, j, count] \
                and (cap > 0 or T[a, ai, aj] + kept + T[b, bi, bj] == T[x, i, j]):
            return c1
    return -1


@kernel(inline="always")
def _add_sibling_mass(mass, x, i, j, sib, value):
    """Add ``value`` to the posterior mass of the sibling triple (head, sib, modifier) of the attachment (x i j),
    kept as mass[head, modifier, sib]."""
    if x == RTRAP:
        mass[i, j, sib] += value
    else:
        mass[j, i, sib] += value


@kernel
def _best_outside(V, U, x, i, j, a, ai, aj, b, bi, bj, extra, shift, cap):
    """The offer (x i j) <- (a ai aj) (b bi bj) + extra passing outside values down in the max semiring:
    U[a, c1] max= U[x, c1 + c2 + shift] + extra + V[b, c2], and U[b, c2] likewise (a call: not the hot path)."""
    for c1 in range(min(cap, aj - ai) + 1):
        va = V[a, ai, aj, c1]
        if va == NEG:
            continue
        for c2 in range(min(min(cap, bj - bi), cap - shift - c1) + 1):
            vb = V[b, bi, bj, c2]
            o = U[x, i, j, c1 + c2 + shift]
            if vb == NEG or o == NEG:
                continue
            o = o + extra
            U[a, ai, aj, c1] = max(U[a, ai, aj, c1], o + vb)
            U[b, bi, bj, c2] = max(U[b, bi, bj, c2], o + va)


@kernel
def _best_outside_split(V, U, x, i, j, a, b, lo, hi, delta, extra, row):
    """(x i j) <- (a i s) (b s+delta j) + extra + row[s] for lo <= s < hi passing outside values down in the max
    semiring without counts: U[x] read once."""
    o = U[x, i, j, 0]
    if o == NEG:
        return
    for s in range(lo, hi):
        va, vb = V[a, i, s, 0], V[b, s + delta, j, 0]
        if va != NEG and vb != NEG:
            e = o + (extra + row[s])
            U[a, i, s, 0] = max(U[a, i, s, 0], e + vb)
            U[b, s + delta, j, 0] = max(U[b, s + delta, j, 0], e + va)


@kernel
def _trim_window(V, window, bound, bound_slope, floor, x, i, j):
    """After the pruned fill derived (x i j): drop its counts whose value plus the bound on their completions,
    min_l (bound[l, x, i, j] + bound_slope[l] * c), is below ``floor`` (set to -inf; the window shrinks to the
    counts left at its ends).  Not a rule: what :mod:`compbench_solvers.compressive.pruned` proves about them."""
    lo, hi = int(window[x, i, j, 0]), int(window[x, i, j, 1])
    first, last = hi + 1, lo - 1
    for c in range(lo, hi + 1):
        v = V[x, i, j, c]
        if v == NEG:
            continue
        completion = np.inf
        for l in range(bound.shape[0]):
            completion = min(completion, bound[l, x, i, j] + bound_slope[l] * c)
        if v + completion < floor:
            V[x, i, j, c] = NEG
        else:
            first, last = min(first, c), c
    window[x, i, j, 0], window[x, i, j, 1] = first, last


@kernel
def _inside_offer(V, x, i, j, a, ai, aj, b, bi, bj, extra, shift, cap):
    """The offer (x i j) <- (a ai aj) (b bi bj) ⊗ extra summed in scaled probability space over count vectors
    (shifted by ``shift``): V[x] += V[a] * V[b] * extra.  The counts an antecedent cannot have (many) hold 0: the
    loops skip them, as the max semiring's skip -inf."""
    top_a = min(cap, aj - ai)
    top_b = min(cap, bj - bi)
    for c1 in range(top_a + 1):  # V[x, c1 + c2 + shift] += V[a, c1] V[b, c2] extra
        va = V[a, ai, aj, c1] * extra
        if va != 0.0:
            for c2 in range(min(top_b, cap - shift - c1) + 1):
                V[x, i, j, c1 + c2 + shift] += va * V[b, bi, bj, c2]


@kernel(inline="always")
def _outside_offer(V, O, mass, x, i, j, a, ai, aj, b, bi, bj, extra, shift, cap, sib):
    """The offer (x i j) <- (a ai aj) (b bi bj) ⊗ extra passing outside sums down: O[a] += O[x] * V[b] * extra and
    O[b] += O[x] * V[a] * extra, and with ``sib`` >= 0 the offer's posterior mass O[x] * V[a] * V[b] * extra goes
    to the sibling triple (head, sib, modifier) of the attachment (x i j)."""
    top_a = min(cap, aj - ai)
    top_b = min(cap, bj - bi)
    posterior = 0.0
    for c1 in range(top_a + 1):  # O[a, c1] += Σ_c2 O[x, c1 + c2 + shift] V[b, c2] extra; O[b, c2] += ... V[a, c1]
        va = V[a, ai, aj, c1]
        if va != 0.0:
            toward_a = 0.0
            for c2 in range(min(top_b, cap - shift - c1) + 1):
                o = O[x, i, j, c1 + c2 + shift] * extra
                toward_a += o * V[b, bi, bj, c2]
                O[b, bi, bj, c2] += o * va
            O[a, ai, aj, c1] += toward_a
            posterior += toward_a * va
    if sib >= 0:
        _add_sibling_mass(mass, x, i, j, sib, posterior)


@kernel
def _outside_unary(V, O, mass, x, i, j, a, ai, aj, b, bi, bj, extra, shift, cap, sib):
    """:func:`_outside_offer` as a call of its own (a rule without a split)."""
    _outside_offer(V, O, mass, x, i, j, a, ai, aj, b, bi, bj, extra, shift, cap, sib)


@kernel
def _inside_split(V, x, i, j, a, b, lo, hi, delta, extra, row, shift, cap):
    """(x i j) <- (a i s) (b s+delta j) ⊗ extra ⊗ row[s] for lo <= s < hi, summed inside."""
    if cap > 0 or shift > 0:
        for s in range(lo, hi):
            _inside_offer(V, x, i, j, a, i, s, b, s + delta, j, extra * row[s], shift, cap)
        return
    total = 0.0
    for s in range(lo, hi):
        total += V[a, i, s, 0] * row[s] * V[b, s + delta, j, 0]
    V[x, i, j, 0] += total * extra


@kernel
def _outside_split(V, O, mass, x, i, j, a, b, lo, hi, delta, extra, row, shift, cap, record):
    """(x i j) <- (a i s) (b s+delta j) ⊗ extra ⊗ row[s] for lo <= s < hi passing outside sums down; ``record``
    sends each split's posterior mass to the sibling triple with the split (1) or the head (2) as the previous
    sibling, or nowhere (0)."""
    head = i if x == RTRAP else j
    if cap > 0 or shift > 0:
        for s in range(lo, hi):
            _outside_offer(V, O, mass, x, i, j, a, i, s, b, s + delta, j, extra * row[s], shift, cap,
                           s if record == 1 else (head if record == 2 else -1))
        return
    o = O[x, i, j, 0] * extra
    if o == 0.0:
        return
    for s in range(lo, hi):
        w = o * row[s]
        va, vb = V[a, i, s, 0], V[b, s + delta, j, 0]
        O[a, i, s, 0] += w * vb
        O[b, s + delta, j, 0] += w * va
        if record > 0:
            _add_sibling_mass(mass, x, i, j, s if record == 1 else head, w * va * vb)


# What :func:`compbench_solvers.jit.with_globals` binds in each kernel's copy of :func:`_split_offers` and
# :func:`_derive_rules`: the mode, the order (1 or 2), the mode's offer and split rule.  Unbound here (numba cannot
# compile a call of None).
MODE = ORDER = offer = split_rule = None


@kernel(types.void(types.Array(types.float64, 4, "C"), *[types.int64] * 9, types.float64, types.int64, types.int64))
def _max_convolve(V, x, i, j, a, ai, aj, b, bi, bj, extra, shift, cap):
    """[FILL_MAX] with counts: (x i j) max= (a ai aj) + (b bi bj) + extra as the max-plus convolution of their count
    vectors, shifted by ``shift`` (a call, one compiled version for every rule: O(cap^2) work per offer, so the call
    costs little, and each rule's inlined copy would cost compilation)."""
    for c1 in range(min(cap, aj - ai) + 1):  # a span (i, j) counts at most j - i words
        va = V[a, ai, aj, c1]
        if va == NEG:
            continue
        va = va + extra
        for c2 in range(min(min(cap, bj - bi), cap - shift - c1) + 1):
            c = c1 + c2 + shift
            V[x, i, j, c] = max(V[x, i, j, c], va + V[b, bi, bj, c2])


@kernel(inline="always")
def _max_offer(V, T, x, i, j, a, ai, aj, b, bi, bj, extra, shift, kept, cap, tie):
    """[FILL_MAX] (x i j) max= (a ai aj) + (b bi bj) + extra: max-plus convolution of two count vectors, shifted by
    ``shift`` (:func:`_max_convolve`).  With cap = 0 T holds the kept count of the best derivation: ``kept`` words
    join it, and among equal scores the first offer wins unless ``tie`` is +1 (prefer more kept words) or -1 (prefer
    fewer).  With counts, the count fixes the kept words of every item, so there is nothing to break."""
    if cap > 0:
        _max_convolve(V, x, i, j, a, ai, aj, b, bi, bj, extra, shift, cap)
    elif shift == 0:  # (with cap = 0 and kept words counted, no derivation keeps a word)
        v = V[a, ai, aj, 0] + extra + V[b, bi, bj, 0]
        t = T[a, ai, aj] + kept + T[b, bi, bj]
        if v > V[x, i, j, 0] or (v == V[x, i, j, 0] and v != NEG and tie * t > tie * T[x, i, j]):
            V[x, i, j, 0] = v
            T[x, i, j] = t


@kernel(types.void(types.Array(types.float64, 4, "C"), types.Array(types.float64, 4, "C"), *[types.int64] * 9,
                   types.float64, types.int64, types.int64))
def _pruned_offer(V, w, x, i, j, a, ai, aj, b, bi, bj, extra, shift, cap):
    """[FILL_PRUNED] :func:`_max_convolve` over the counts each item keeps (its window in ``w``; a call, one compiled
    version for every rule, as :func:`_max_convolve`)."""
    lo_a, top_a = int(w[a, ai, aj, 0]), min(min(cap, aj - ai), int(w[a, ai, aj, 1]))
    lo_b, top_b = int(w[b, bi, bj, 0]), min(min(cap, bj - bi), int(w[b, bi, bj, 1]))
    lo_x, hi_x = int(w[x, i, j, 0]), int(w[x, i, j, 1])
    for c1 in range(lo_a, top_a + 1):
        va = V[a, ai, aj, c1]
        if va == NEG:
            continue
        va = va + extra
        for c2 in range(max(lo_b, lo_x - shift - c1), min(top_b, hi_x - shift - c1) + 1):
            c = c1 + c2 + shift
            V[x, i, j, c] = max(V[x, i, j, c], va + V[b, bi, bj, c2])


@kernel(inline="always")
def _shift(scores, kept):
    """How far a rule instance that keeps ``kept`` words shifts its conclusion's count."""
    return kept if scores.counting == KEPT else 0


# Each mode's code for the two shapes of rule instance that :func:`_derive_rules` writes: an offer, (x i j) <- (a ai
# aj) (b bi bj) ⊗ extra, and a split rule, (x i j) ⊕= ⊕_{lo <= s < hi} (a i s) ⊗ (b s+delta j) ⊗ extra ⊗ row[s].
# Each mode's kernel binds the names ``offer`` and ``split_rule`` to its own (``_MODES``), so it holds that mode's
# code and no other's: a first solve compiles the max fill and its backtrace and nothing else.
#
# An offer's arguments: ``to``, ``left``, ``right`` the items (x, i, j), (a, ai, aj), (b, bi, bj); ``kept`` words
# join the derivation (1 for an attachment); ``count`` the count FIND looks for; ``sib`` >= 0 the previous sibling
# of an attachment, whose posterior mass OUTSIDE_SUM records (second order).  A split rule's: ``to`` = (x, i, j),
# ``parts`` = (a, b), ``splits`` = (lo, hi, delta), ``row`` the sibling scores sib(h, s, m) of the split or the
# scale of the gap between s and s+1 or the semiring's ones, ``record`` where OUTSIDE_SUM sends each split's
# posterior mass (:func:`_outside_split`).  FIND returns the left count c1 (an offer) or the split and c1 (a split
# rule) of the first derivation through the instance that reaches (x i j)'s value at ``count``, or -1 (-1, -1); the
# other modes return -1 (-1, -1).  In the max semiring a -inf ``extra`` offers nothing, in the sums' a 0.


@kernel(inline="always")
def _offer_fill_max(chart, scores, to, left, right, extra, kept, count, sib):
    """[FILL_MAX] (x i j) max= (a ai aj) + (b bi bj) + extra (:func:`_max_offer`)."""
    (x, i, j), (a, ai, aj), (b, bi, bj) = to, left, right
    if extra != NEG:
        _max_offer(chart.V, chart.T, x, i, j, a, ai, aj, b, bi, bj, extra, _shift(scores, kept), kept, scores.cap,
                   scores.tie)
    return -1


@kernel(inline="always")
def _split_fill_max(chart, scores, to, parts, splits, extra, row, kept, count, record):
    """[FILL_MAX] every split's offer; without counts the best split kept in registers and written once."""
    (x, i, j), (a, b), (lo, hi, delta) = to, parts, splits
    if extra == NEG:
        return -1, -1
    cap, shift = scores.cap, _shift(scores, kept)
    if cap > 0:
        for s in range(lo, hi):
            if extra + row[s] != NEG:
                _max_convolve(chart.V, x, i, j, a, i, s, b, s + delta, j, extra + row[s], shift, cap)
        return -1, -1
    if shift > 0:  # kept words counted up to 0: no attachment
        return -1, -1
    V, T, tie = chart.V, chart.T, scores.tie
    best = V[x, i, j, 0]
    best_kept = T[x, i, j]
    for s in range(lo, hi):
        v = V[a, i, s, 0] + (extra + row[s]) + V[b, s + delta, j, 0]
        if v > best or (v == best and v != NEG):  # the kept count only when it can matter
            t = T[a, i, s] + kept + T[b, s + delta, j]
            if v > best or tie * t > tie * best_kept:
                best = v
                best_kept = t
    V[x, i, j, 0] = best
    T[x, i, j] = best_kept
    return -1, -1


@kernel(inline="always")
def _offer_fill_pruned(chart, scores, to, left, right, extra, kept, count, sib):
    """[FILL_PRUNED] the max fill's offer over the counts each item keeps (:func:`_pruned_offer`)."""
    (x, i, j), (a, ai, aj), (b, bi, bj) = to, left, right
    if extra != NEG:
        _pruned_offer(chart.V, chart.window, x, i, j, a, ai, aj, b, bi, bj, extra, _shift(scores, kept), scores.cap)
    return -1


@kernel(inline="always")
def _offer_find(chart, scores, to, left, right, extra, kept, count, sib):
    """[FIND] the count of (a ai aj) in the first derivation through the offer that reaches (x i j)'s value at
    ``count``, or -1 (:func:`_find_count`)."""
    (x, i, j), (a, ai, aj), (b, bi, bj) = to, left, right
    if extra == NEG:
        return -1
    return _find_count(chart.V, chart.T, x, i, j, a, ai, aj, b, bi, bj, extra, _shift(scores, kept), kept,
                       scores.cap, count, chart.window)


@kernel(inline="always")
def _offer_emit(chart, scores, to, left, right, extra, kept, count, sib):
    """[EMIT] list the instance in ``chart.edges`` when both antecedents have a derivation in the filled max chart:
    its conclusion and antecedents as item ids (x * N + i) * N + j, -1 for the (ltri i i) axioms, the semiring's
    one; for an attachment its modifier and head ((rtrap h m) is (x h m), (ltrap m h) is (x m h)), else -1 -1; and
    its score (:func:`_list_edge`)."""
    (x, i, j), (a, ai, aj), (b, bi, bj) = to, left, right
    if extra != NEG:
        _list_edge(chart.V, x, i, j, a, ai, aj, b, bi, bj, extra, kept, chart.edges, chart.n_edges)
    return -1


@kernel(inline="always")
def _offer_outside_max(chart, scores, to, left, right, extra, kept, count, sib):
    """[OUTSIDE_MAX] U[a] max= U[x] + extra + V[b], U[b] max= U[x] + extra + V[a] (:func:`_best_outside`)."""
    (x, i, j), (a, ai, aj), (b, bi, bj) = to, left, right
    if extra != NEG:
        _best_outside(chart.V, chart.outside, x, i, j, a, ai, aj, b, bi, bj, extra, _shift(scores, kept), scores.cap)
    return -1


@kernel(inline="always")
def _offer_inside_sum(chart, scores, to, left, right, extra, kept, count, sib):
    """[INSIDE_SUM] V[x] += V[a] * V[b] * extra (:func:`_inside_offer`)."""
    (x, i, j), (a, ai, aj), (b, bi, bj) = to, left, right
    if extra != 0.0:
        _inside_offer(chart.V, x, i, j, a, ai, aj, b, bi, bj, extra, _shift(scores, kept), scores.cap)
    return -1


@kernel(inline="always")
def _split_inside_sum(chart, scores, to, parts, splits, extra, row, kept, count, record):
    """[INSIDE_SUM] the sum over the splits (:func:`_inside_split`)."""
    (x, i, j), (a, b), (lo, hi, delta) = to, parts, splits
    if extra != 0.0:
        _inside_split(chart.V, x, i, j, a, b, lo, hi, delta, extra, row, _shift(scores, kept), scores.cap)
    return -1, -1


@kernel(inline="always")
def _offer_outside_sum(chart, scores, to, left, right, extra, kept, count, sib):
    """[OUTSIDE_SUM] O[a] += O[x] * V[b] * extra, O[b] += O[x] * V[a] * extra, and with ``sib`` >= 0 the posterior
    mass to the sibling triple (head, ``sib``, modifier) (:func:`_outside_unary`)."""
    (x, i, j), (a, ai, aj), (b, bi, bj) = to, left, right
    if extra != 0.0:
        _outside_unary(chart.V, chart.outside, chart.mass, x, i, j, a, ai, aj, b, bi, bj, extra,
                       _shift(scores, kept), scores.cap, sib)
    return -1


@kernel(inline="always")
def _split_outside_sum(chart, scores, to, parts, splits, extra, row, kept, count, record):
    """[OUTSIDE_SUM] the outside sums over the splits and their posterior mass (:func:`_outside_split`)."""
    (x, i, j), (a, b), (lo, hi, delta) = to, parts, splits
    if extra != 0.0:
        _outside_split(chart.V, chart.outside, chart.mass, x, i, j, a, b, lo, hi, delta, extra, row,
                       _shift(scores, kept), scores.cap, record)
    return -1, -1


def _split_offers(chart, scores, to, parts, splits, extra, row, kept, count, record):
    """[FILL_PRUNED, FIND, EMIT, OUTSIDE_MAX with counts] every split's ``offer``, in order; FIND stops at the first
    that reaches the item's value.  Not a kernel itself: ``offer`` is bound in each mode's copy
    (:func:`compbench_solvers.jit.with_globals`)."""
    (x, i, j), (a, b), (lo, hi, delta) = to, parts, splits
    if extra == NEG:
        return -1, -1
    for s in range(lo, hi):
        c1 = offer(chart, scores, (x, i, j), (a, i, s), (b, s + delta, j), extra + row[s], kept, count, -1)
        if c1 >= 0:
            return s, c1
    return -1, -1


_split_fill_pruned = kernel(inline="always")(with_globals(_split_offers, "_split_fill_pruned",
                                                          offer=_offer_fill_pruned))
_split_find = kernel(inline="always")(with_globals(_split_offers, "_split_find", offer=_offer_find))
_split_emit = kernel(inline="always")(with_globals(_split_offers, "_split_emit", offer=_offer_emit))
_split_outside_max_counted = kernel(inline="always")(with_globals(_split_offers, "_split_outside_max_counted",
                                                                  offer=_offer_outside_max))


@kernel(inline="always")
def _split_outside_max(chart, scores, to, parts, splits, extra, row, kept, count, record):
    """[OUTSIDE_MAX] without counts U[x] read once for every split (:func:`_best_outside_split`); with counts every
    split's offer."""
    if scores.cap > 0:
        return _split_outside_max_counted(chart, scores, to, parts, splits, extra, row, kept, count, record)
    (x, i, j), (a, b), (lo, hi, delta) = to, parts, splits
    if extra != NEG:
        _best_outside_split(chart.V, chart.outside, x, i, j, a, b, lo, hi, delta, extra, row)
    return -1, -1


# Each mode's offer and split rule, in first order (second order: ``_SECOND_ORDER_MODES``, below).
_MODES = {FILL_MAX: (_offer_fill_max, _split_fill_max), FILL_PRUNED: (_offer_fill_pruned, _split_fill_pruned),
          FIND: (_offer_find, _split_find), EMIT: (_offer_emit, _split_emit),
          OUTSIDE_MAX: (_offer_outside_max, _split_outside_max), INSIDE_SUM: (_offer_inside_sum, _split_inside_sum),
          OUTSIDE_SUM: (_offer_outside_sum, _split_outside_sum)}
# In second order the max fill's split rule has the counted convolution inlined: second order's split rules make
# more offers over shorter spans, and through a call resource-dp ran 15% slower at n = 25, m = 11 (0.57 ms against
# 0.49); in first order the call cost no measured time, and inlining it cost about 2 s of a first solve's compilation.
_SECOND_ORDER_MODES = {**_MODES, FILL_MAX: (_offer_fill_max, kernel(inline="always")(with_globals(
    _split_fill_max.py_func, "_split_fill_max_inlined",
    _max_convolve=kernel(inline="always")(with_globals(_max_convolve.py_func, "_max_convolve_inlined")))))}


@kernel(inline="always")
def _times(mode, a, b):
    """The semiring's ⊗ of two scores: + in the max semiring (log space), * in scaled probability space."""
    return a * b if mode == INSIDE_SUM or mode == OUTSIDE_SUM else a + b


@kernel(inline="always")
def _sib(mode, sibling, h, s, m):
    """sib(h, s, m): the problem's layout sibling[h, s, m] in the max semiring, sibling[h, m, s] in the sums'."""
    return sibling[h, m, s] if mode == INSIDE_SUM or mode == OUTSIDE_SUM else sibling[h, s, m]


@kernel(inline="always")
def _sib_row(mode, sibling, h, m):
    """sib(h, s, m) for every s, a row indexed by s (contiguous in the sums' layout)."""
    return sibling[h, m, :] if mode == INSIDE_SUM or mode == OUTSIDE_SUM else sibling[h, :, m]


@kernel(inline="always")
def _column_item(k, j, backward):
    """The k-th item (x, i) of column j in the order the fill derives them: the cells (i, j) from i = j down to 0, a
    cell's items from BOX to LTRI; ``backward`` (the outside modes): all in reverse."""
    cell, x = k // (ITEMS - 1), BOX + k % (ITEMS - 1)
    return (LTRI + BOX - x, cell) if backward else (x, j - cell)


def _derive_rules(chart, scores, j, item, count):
    """Every rule concluding (x i j) (i < j; for i = j only [rtri-skip]) in one mode: for ``item`` = EVERY every
    item of column j, the cells from the narrowest (j j) to the widest (0 j), a cell's items in the order they read
    each other (box, trapezoids, then the triangles), all in reverse for the outside modes; else the one item
    ``item`` = (x * N + i).  This is the only place where the rules are written.

    Not a kernel itself: each mode and order has a copy of it (``_DERIVES``, by
    :func:`compbench_solvers.jit.with_globals`) in which the names ``MODE``, ``ORDER`` (1 or 2), ``offer`` and
    ``split_rule`` (the mode's: ``_MODES``) are constants, so numba drops the other modes' and the other order's
    code before it types anything.  Each copy is a call of its own, made once per column (a call passes the
    records' arrays: one call per item made the free chart's fill 2.7x slower at n = 25; inlining it into the fill
    compiles for minutes).

    FIND (the backtrace) writes nothing and returns the first rule, split and left count that reach the item's value
    at ``count``, or R_NONE; the other modes return R_NONE.  ``scores.ones`` is the semiring's one per split,
    ``scores.gap[r]`` the scale of the gap between r and r+1 that a rule whose antecedents do not share a word
    bridges (the semiring's one but in scaled probability space: see :class:`ScaledChart`).
    """
    N = chart.V.shape[1]
    n = N - 1
    one = 1.0 if MODE == INSIDE_SUM or MODE == OUTSIDE_SUM else 0.0
    gap, sibling = scores.gap, scores.sibling
    for k in range(1 if item >= 0 else (j + 1) * (ITEMS - 1)):
        if item >= 0:
            x, i = item // N, item % N
        else:
            x, i = _column_item(k, j, MODE == OUTSIDE_MAX or MODE == OUTSIDE_SUM)
        if i == j and x != RTRI:  # the diagonal's cells have one item with a rule
            continue
        attach_right = _times(MODE, scores.attach[i, j], scores.kept_bonus)  # attach(i, j): i is the head
        attach_left = _times(MODE, scores.attach[j, i], scores.kept_bonus)  # attach(j, i): j is the head
        if x == BOX:
            # [box] (box i j) <- (rtri i r) (ltri r+1 j)
            s, c1 = split_rule(chart, scores, (BOX, i, j), (RTRI, LTRI), (i, j, 1), one, gap, 0, count, 0)
            if s >= 0:
                return R_BOX, s, c1
        elif x == RTRAP and ORDER == 1:
            # [rtrap] (rtrap h m) <- (box h m) + attach(h, m)
            c1 = offer(chart, scores, (RTRAP, i, j), (BOX, i, j), (LTRI, 0, 0), attach_right, 1, count, -1)
            if c1 >= 0:
                return R_RTRAP, 0, c1
        elif x == LTRAP and ORDER == 1 and i >= 1:
            # [ltrap] (ltrap m h) <- (box m h) + attach(h, m)
            c1 = offer(chart, scores, (LTRAP, i, j), (BOX, i, j), (LTRI, 0, 0), attach_left, 1, count, -1)
            if c1 >= 0:
                return R_LTRAP, 0, c1
        elif x == RTRAP and ORDER == 2:
            # [rtrap-first] (rtrap h m) <- (skip h r) (ltri r+1 m) + attach(h, m) + sib(h, h, m)
            no_sibling = _times(MODE, attach_right, _sib(MODE, sibling, i, i, j))
            s, c1 = split_rule(chart, scores, (RTRAP, i, j), (SKIP, LTRI), (i, j, 1), no_sibling, gap, 1,
                               count, 2)
            if s >= 0:
                return R_RTRAP_FIRST, s, c1
            # [rtrap-next] (rtrap h m) <- (rtrap h s) (box s m) + attach(h, m) + sib(h, s, m)
            if not (scores.single_root and i == 0):
                s, c1 = split_rule(chart, scores, (RTRAP, i, j), (RTRAP, BOX), (i + 1, j, 0), attach_right,
                                   _sib_row(MODE, sibling, i, j), 1, count, 1)
                if s >= 0:
                    return R_RTRAP_NEXT, s, c1
        elif x == LTRAP and ORDER == 2 and i >= 1:
            # [ltrap-first] (ltrap m h) <- (rtri m h-1) (ltri h h) + attach(h, m) + sib(h, h, m)
            no_sibling = _times(MODE, _times(MODE, attach_left, _sib(MODE, sibling, j, j, i)), gap[j - 1])
            c1 = offer(chart, scores, (LTRAP, i, j), (RTRI, i, j - 1), (LTRI, j, j), no_sibling, 1, count, j)
            if c1 >= 0:
                return R_LTRAP_FIRST, 0, c1
            # [ltrap-next] (ltrap m h) <- (box m s) (ltrap s h) + attach(h, m) + sib(h, s, m)
            s, c1 = split_rule(chart, scores, (LTRAP, i, j), (BOX, LTRAP), (i + 1, j, 0), attach_left,
                               _sib_row(MODE, sibling, j, i), 1, count, 1)
            if s >= 0:
                return R_LTRAP_NEXT, s, c1
        elif x == RTRI:
            # [rtri-skip] (rtri i j) <- (skip i j)
            c1 = offer(chart, scores, (RTRI, i, j), (SKIP, i, j), (LTRI, 0, 0), one, 0, count, -1)
            if c1 >= 0:
                return R_RTRI_SKIP, 0, c1
            # [rtri] (rtri i j) <- (rtrap i m) (rtri m j)
            if not (scores.single_root and i == 0 and j < n):
                s, c1 = split_rule(chart, scores, (RTRI, i, j), (RTRAP, RTRI), (i + 1, j + 1, 0), one,
                                   scores.ones, 0, count, 0)
                if s >= 0:
                    return R_RTRI, s, c1
        elif x == LTRI and i >= 1:
            # [ltri] (ltri i j) <- (ltri i m) (ltrap m j)
            s, c1 = split_rule(chart, scores, (LTRI, i, j), (LTRI, LTRAP), (i, j, 0), one, scores.ones, 0,
                               count, 0)
            if s >= 0:
                return R_LTRI, s, c1
    return R_NONE, 0, 0


_DERIVES = {(mode, order): kernel(with_globals(_derive_rules, f"_derive_{name}_{order}", MODE=mode, ORDER=order,
                                              offer=helpers[mode][0], split_rule=helpers[mode][1]))
            for mode, name in MODE_NAMES.items() for order, helpers in ((1, _MODES), (2, _SECOND_ORDER_MODES))}


def _derive(mode, chart, scores, j, item, count):
    """Apply the rules in ``mode`` (a constant) to column j or to one item (:func:`_derive_rules`): the kernel of
    ``_DERIVES`` for the mode and the problem's order, which numba picks while it compiles the call (first order:
    ``scores.sibling`` is None)."""
    raise TypeError("_derive runs only compiled, with a constant mode")


@overload(_derive, prefer_literal=True, inline="always", jit_options=NO_REFERENCE_COUNTS)
def _derive_of(mode, chart, scores, j, item, count):
    if not isinstance(mode, types.IntegerLiteral):
        return None
    sibling = scores.types[scores.fields.index("sibling")]
    if not isinstance(sibling, (types.NoneType, types.Array)):
        raise TypingError(f"the sibling scores must be None (first order) or an array (second order), not {sibling}")
    order = 1 if isinstance(sibling, types.NoneType) else 2
    derive = _DERIVES[mode.literal_value, order]
    return lambda mode, chart, scores, j, item, count: derive(chart, scores, j, item, count)


@kernel(inline="always")
def _axioms(mode, chart, scores, j):
    """The axioms ending at j, set before any rule reads them: in the max semiring as they are, in scaled
    probability space exp(score - (scale[j] - scale[i])).  (ltri 0 0), the root's empty left half (score 0, count
    0), is the semiring's one: the unary rules use it as their second antecedent.  Returns, in INSIDE_SUM, the
    smallest value an allowed axiom got (0.0 when one underflowed: :data:`NORMAL`'s rule), else 1.0."""
    V = chart.V
    smallest = 1.0
    # [ltri-0] (ltri j j) <- .
    V[LTRI, j, j, 0] = 1.0 if mode == INSIDE_SUM else 0.0
    for i in range(j + 1):
        # [skip] (skip i j) <- .   bigram(i, j+1), drops j-i words
        c = j - i if scores.counting == DROPPED else 0
        if c <= scores.cap:
            if mode == INSIDE_SUM:
                V[SKIP, i, j, c] = math.exp(scores.bigram[i, j + 1] - (scores.scale[j] - scores.scale[i]))
                if scores.bigram[i, j + 1] > NEG:
                    smallest = min(smallest, V[SKIP, i, j, c])
            else:
                V[SKIP, i, j, c] = scores.bigram[i, j + 1]
    return smallest


@kernel
def _guess_scale(gap, scale, j):
    """Before INSIDE_SUM derives the items ending at j: their scale scale[j], the last step repeated, and gap[j-1]."""
    if j >= 1:
        scale[j] = scale[j - 1] + (scale[j - 1] - scale[j - 2] if j >= 2 else 0.0)
        gap[j - 1] = math.exp(scale[j - 1] - scale[j])
@kernel
def _move_sibling_triples(sibling, packed, out, best, gather):
    """Copy sibling[h, s, m] for the triples the rules read (s = h, or s between h and m: about a third of the
    array) into ``packed``, each less its attachment's best, best[h, m] (-inf if none: then as it is) (``gather``),
    or back from it into out[h, m, s]; their number."""
    N = sibling.shape[0]
    k = 0
    for h in range(N):
        for m in range(1, N):
            lo, hi = (h, m) if h < m else (m + 1, h + 1)  # [h, m) right of h, (m, h] left of it
            if gather:
                top = NEG
                for s in range(lo, hi):
                    top = max(top, sibling[h, s, m])
                best[h, m] = top
            for s in range(lo, hi):
                if gather:
                    packed[k] = sibling[h, s, m] - (best[h, m] if best[h, m] > NEG else 0.0)
                else:
                    out[h, m, s] = packed[k]
                k += 1
    return k


def _exp_siblings(sibling: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, float]:
    """exp(sib(h, s, m) - best(h, m)) as out[h, m, s] (the sums' layout: a rule's row over s is contiguous) where
    the rules read it, 0 elsewhere; best(h, m) the largest sib(h, s, m) the rules read (-inf if none), which the
    attachment takes (:meth:`ScaledChart.fill`), so that every factor is at most 1; the largest and the smallest
    factor of an allowed triple.  numpy's vectorized exp over the packed triples (a third of the time of numba's
    scalar exp, and of numpy's over the whole array, mostly -inf)."""
    N = len(sibling)
    out, best = np.zeros_like(sibling), np.full((N, N), NEG)
    packed = np.empty(int(np.abs(np.arange(N)[:, None] - np.arange(1, N)).sum()))  # |m - h| triples per (h, m)
    count = _move_sibling_triples(sibling, packed, out, best, True)
    lowest = packed[:count].min(initial=0.0, where=packed[:count] > NEG)
    np.exp(packed[:count], out=packed[:count])
    _move_sibling_triples(sibling, packed, out, best, False)
    return out, best, float(packed[:count].max(initial=0.0)), math.exp(lowest)


@kernel
def _normalize_column(V, gap, scale, j):
    """After INSIDE_SUM derived the items (x i j), i < j: divide them by their largest value M and add log M to
    scale[j] (the axioms (x j j) have scale 0 and stay).  Every one of them is a sum of products with exactly one
    factor scaled by scale[j] (an item ending at j or gap[j-1]), so the division keeps the chart exact.  (Dividing
    only when M is far from 1 lets the guessed scales drift away from the items' growth: the wide items underflow
    at n = 200.)  Returns the smallest nonzero value of these items before and after the division (1.0 if none;
    :data:`NORMAL`'s rule)."""
    top, smallest = 0.0, math.inf
    for x in range(ITEMS):
        for i in range(j):
            for c in range(V.shape[3]):
                top = max(top, V[x, i, j, c])
                if V[x, i, j, c] > 0.0:
                    smallest = min(smallest, V[x, i, j, c])
    if top == 0.0 or not math.isfinite(top):
        return 1.0
    for x in range(ITEMS):
        for i in range(j):
            for c in range(V.shape[3]):
                V[x, i, j, c] /= top
    scale[j] += math.log(top)
    gap[j - 1] /= top
    return smallest / max(top, 1.0)


@kernel
def _fill_max(chart, scores):
    """[FILL_MAX] Every rule of every cell, column by column: the axioms ending at j, then the cells ending at j
    from the narrowest (j j) to the widest (0 j), a cell's items in the order they read each other (box, trapezoids,
    then the triangles)."""
    for j in range(chart.V.shape[1]):
        _axioms(FILL_MAX, chart, scores, j)
        _derive(FILL_MAX, chart, scores, j, EVERY, 0)


@kernel
def _fill_pruned(chart, scores, trim):
    """[FILL_PRUNED] :func:`_fill_max` item by item, each over its window of counts (``chart.window``), trimmed once
    derived: ``trim`` = (bound, slope, floor) drops the counts below the floor (:func:`_trim_window`)."""
    N = chart.V.shape[1]
    bound, slope, floor = trim
    for j in range(N):
        _axioms(FILL_PRUNED, chart, scores, j)
        for i in range(j, -1, -1):
            for x in range(BOX if i < j else RTRI, LTRI + 1 if i < j else RTRI + 1):
                lo, hi = int(chart.window[x, i, j, 0]), int(chart.window[x, i, j, 1])
                if lo > hi:  # no count of the item is kept
                    continue
                chart.V[x, i, j, lo:hi + 1] = NEG  # a pruned chart is allocated empty: its windows start at -inf
                _derive(FILL_PRUNED, chart, scores, j, x * N + i, 0)
                _trim_window(chart.V, chart.window, bound, slope, floor, x, i, j)


@kernel
def _emit(chart, scores):
    """[EMIT] List every rule instance of a filled max chart into ``chart.edges``, in fill order."""
    for j in range(chart.V.shape[1]):
        _derive(EMIT, chart, scores, j, EVERY, 0)


@kernel
def _outside_max(chart, scores):
    """[OUTSIDE_MAX] The max semiring's outside values into ``chart.outside`` (the goal's set by the caller), the
    fill's order reversed."""
    for j in range(chart.V.shape[1] - 1, -1, -1):
        _derive(OUTSIDE_MAX, chart, scores, j, EVERY, 0)


@kernel
def _inside_sum(chart, scores):
    """[INSIDE_SUM] The fill's order in scaled probability space (V starts at 0): each column's scale guessed
    before its items are derived and set once they are (:class:`ScaledChart`).  Returns what the underflow rules
    read (above :data:`SAFE`): the smallest nonzero item value it ever held (axioms included; 0.0 when an allowed
    axiom underflowed), the smallest gap factor a rule read, the reach, max over i < j of s_j - scale[i], s_j
    the larger of column j's guessed and set scale, and the most any s_j exceeds scale[j]."""
    smallest_item, smallest_gap, reach, lowest_scale, excess = 1.0, 1.0, 0.0, 0.0, 0.0
    scale = scores.scale
    for j in range(chart.V.shape[1]):
        _guess_scale(scores.gap, scale, j)
        guess = scale[j]
        smallest_item = min(smallest_item, _axioms(INSIDE_SUM, chart, scores, j))
        _derive(INSIDE_SUM, chart, scores, j, EVERY, 0)
        if j >= 1:
            smallest_gap = min(smallest_gap, scores.gap[j - 1])  # as this column's rules read it
            smallest_item = min(smallest_item, _normalize_column(chart.V, scores.gap, scale, j))
            smallest_gap = min(smallest_gap, scores.gap[j - 1])  # as the later columns' rules read it
            reach = max(reach, max(guess, scale[j]) - lowest_scale)
            excess = max(excess, guess - scale[j])
        lowest_scale = min(lowest_scale, scale[j])
    return smallest_item, smallest_gap, reach, excess


@kernel
def _outside_sum(chart, scores):
    """[OUTSIDE_SUM] Outside sums into ``chart.outside`` (the goal's set by the caller), the fill's order reversed."""
    for j in range(chart.V.shape[1] - 1, -1, -1):
        _derive(OUTSIDE_SUM, chart, scores, j, EVERY, 0)


@kernel(inline="always")
def _push(stack, top, x, i, j, c):
    stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = x, i, j, c
    return top + 1


@kernel
def _backtrace(chart, scores, count, heads, stack):
    """[FIND] Write into ``heads`` (all -1) the heads of the goal's best derivation that counts ``count`` words,
    found by asking each of its items which rule reached its value: time linear in the derivation's items times one
    cell's rules.  ``stack`` has room for the derivation's items (4 columns: item, i, j, count)."""
    n = chart.V.shape[1] - 1
    if chart.V[RTRI, 0, n, count] == NEG:  # the goal has no derivation with this count
        return
    arc_shift = 1 if scores.counting == KEPT else 0
    top = _push(stack, 0, RTRI, 0, n, count)
    while top > 0:
        top -= 1
        x, i, j, c = stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3]
        if x == SKIP or (x == LTRI and i == j):  # the axioms
            continue
        rule, split, c1 = _derive(FIND, chart, scores, j, x * (n + 1) + i, c)
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
    reading the cache's index is file I/O, and this runs before every
    hyperedge listing."""
    if what in _checked:
        return
    _checked.add(what)
    try:
        cached = all(kernel._cache._cache_file._load_index() for kernel in kernels)
    except Exception:  # numba's cache layout is private: say nothing rather than fail
        return
    if not cached:
        from compbench.progress import stage

        stage(f"compiling {what} with numba (about {seconds} on 2 idle cores), once per environment: every new "
              "venv or numba cache folder (NUMBA_CACHE_DIR) compiles them again; later runs load them from the cache "
              "in under a second")


_checked: set[str] = set()  # what announce_compile has looked at in this process


@dataclass(frozen=True)
class Pruning:
    """What a pruned fill keeps (:mod:`compbench_solvers.compressive.pruned` proves it): item (x i j) is filled only
    over the counts window[x, i, j, 0] .. window[x, i, j, 1] (an empty window: not at all), and once filled, its
    count c is dropped when V[x, i, j, c] + min_l (bound[l, x, i, j] + slope[l] * c) < floor."""

    window: np.ndarray  # items x N x N x 2, float64 holding integers (trimmed in place by the fill)
    bound: np.ndarray  # L x items x N x N
    slope: np.ndarray  # (L,)
    floor: float


@dataclass(frozen=True)
class ChartScores:
    """A problem's scores laid out for the kernel, prepared once so that the chart can be filled again at any
    kept bonus (bisection fills one chart per lambda)."""

    attach: np.ndarray  # attach[h, m] = arc(h, m) + token(m): the score of keeping m as a modifier of h
    bigram: np.ndarray
    sibling: np.ndarray | None  # sibling[h, s, m] = sib(h, s, m); None in first order
    zeros: np.ndarray  # the per-split score of the rules that have none
    single_root: bool

    @classmethod
    def of(cls, problem: Problem) -> ChartScores:
        attach = problem.arc_scores.copy()
        attach[:, 1:] += problem.token_scores
        return cls(attach, problem.bigram_scores, problem.sibling_scores, np.zeros(problem.n + 1), problem.single_root)

    @property
    def order(self) -> int:
        """1, or 2 with sibling scores."""
        return 1 if self.sibling is None else 2

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
    _cells: Cells  # what the backtrace needs: the filled chart, the scores and the fill's settings
    _scores: Scores

    @classmethod
    def fill(cls, problem: Problem | ChartScores, *, counting: str = "none", cap: int = 0, kept_bonus: float = 0.0,
             tie: int = 0, pruning: Pruning | None = None) -> Chart:
        """Fill the chart of ``problem`` (or of its prepared :class:`ChartScores`) counting ``counting`` words up
        to ``cap``.

        ``kept_bonus`` is added to every kept word's score (the Lagrange multiplier of the length);
        ``tie`` = +1 / -1 breaks ties between equal scores towards more / fewer kept words; ``pruning`` (with
        counts): fill each item only over the counts it keeps (:class:`Pruning`).
        """
        scores = problem if isinstance(problem, ChartScores) else ChartScores.of(problem)
        n = scores.n
        if n > MAX_N:
            raise ValueError(f"n = {n} exceeds the chart's limit of {MAX_N} tokens")
        cap = 0 if counting == "none" else int(cap)
        pruned = pruning is not None and cap > 0
        # a pruned chart is read and written only inside the windows (the fill sets them to -inf first), so it is
        # allocated empty: no page of it is touched outside them (np.full would touch all of it, most of the time)
        V = np.empty((ITEMS, n + 1, n + 1, cap + 1)) if pruned else np.full((ITEMS, n + 1, n + 1, cap + 1), NEG)
        T = np.zeros((ITEMS, n + 1, n + 1), np.int16)
        # the chart and everything its rules read, for the fill and again for the backtrace
        # (in log space the semiring's ones, the gaps' scales and the unused scales are all zeros)
        zeros = scores.zeros
        cells = Cells(V=V, T=T, window=pruning.window if pruned else None)
        rules = Scores(bigram=scores.bigram, attach=scores.attach, kept_bonus=float(kept_bonus), sibling=scores.sibling,
                       ones=zeros, gap=zeros, scale=None,
                       single_root=scores.single_root, counting=COUNTING[counting], cap=cap, tie=int(tie))
        if pruned:
            _fill_pruned(cells, rules, (pruning.bound, pruning.slope, float(pruning.floor)))
        else:
            _fill_max(cells, rules)
        if counting == "none":
            kept = T[RTRI, 0, n:n + 1].astype(np.int64)
        else:
            kept = np.arange(cap + 1) if counting == "kept" else n - np.arange(cap + 1)
        goal = V[RTRI, 0, n].copy()
        if pruned:  # the goal's counts outside its window have no derivation left
            lo, hi = (int(c) for c in pruning.window[RTRI, 0, n])
            goal[:max(lo, 0)] = NEG
            goal[max(hi + 1, 0):] = NEG
        return cls(goal, kept, cells, rules)

    def best_outside(self) -> np.ndarray:
        """The max semiring's outside values (items x N x N x counts): the best score of a completion of each item
        into a derivation of the goal at each count (the goal's count; -inf: none) under the same kept bonus, by the
        rules of the fill run in reverse (:func:`_derive_rules` in OUTSIDE_MAX mode)."""
        U = np.full_like(self._cells.V, NEG)
        n = U.shape[1] - 1
        U[RTRI, 0, n] = 0.0
        _outside_max(self._cells._replace(outside=U), self._scores)
        return U

    def heads(self, count: int) -> np.ndarray:
        """The heads of the goal's best derivation at ``count`` (all -1 when there is none)."""
        n = self._cells.V.shape[1] - 1
        heads = np.full(n + 1, -1, np.int64)
        if self.goal[count] == NEG:  # no derivation (a pruned chart holds nothing outside the windows)
            return heads
        # a derivation has at most 2(n+1) axioms, as many binary rules, and as many unary rules as both
        stack = np.empty((8 * (n + 2), 4), np.int64)
        _backtrace(self._cells, self._scores, int(count), heads, stack)
        return heads


# The scaled chart sums probabilities of shifted scores (:func:`shift_to_unit`; in second order each attachment takes
# its best sibling score, so that sibling factors are at most 1 too): every score factor is at most 1, so every solution
# weighs at most 1, and so does every completion of an item.  The only factors above 1 are the gaps (scaled space's), at
# most one in a rule.  Its answer is kept on SAFE's rule and one of the three underflow rules below.
#
# SAFE's: every value it multiplied (inside, outside, score factors) is at most SAFE, and so is the scaled Z, which is
# above 0 (no overflow; an inf or NaN fails it too).
#
# NORMAL's (nothing underflowed): a rule multiplies at most two items and three score factors (second order's [*-first]:
# attach, sib and gap), so when every nonzero item value the inside pass held (before and after its column's division)
# is at least `item` and every factor an allowed score gave (attach, sib, gap) at least `factor`, with item^2 factor^3
# >= NORMAL (both taken at most 1), no product underflowed, a sum of positive terms cannot, and neither did a division
# by a column's largest value (its results are among the values checked).
#
# The bound's (what underflowed is negligible): an operation loses at most 2^-1074 of its result, in the scaled units of
# its item (i, j), times the gap that may multiply it after (the largest factor: an intermediate product of a rule that
# underflows is multiplied on only by factors and items); exp(s_j - s_i) in shifted units, s_j the column's scale (the
# larger of the guessed and the set one while the column is summed; a rule reads at most one item of the column being
# summed, so an underflowed factor loses at most 2^-1074 times that column's largest value).  In shifted units an item's
# outside value is at most its number of completions, at most the number of solutions (a completion and a derivation of
# the item are a solution): at most the sum over the goal's lengths m of C(n, m) (27/4)^(m+1) (:func:`log2_solutions`).
# So Z loses at most operations x solutions x 2^-1074 x exp(max_{i<j} s_j - s_i) (the pass's `reach`), and the scaled Z
# is Z over exp(s_n): the answer is kept when that loss is below 2^LOSS of it (:func:`underflow_safe` reads both rules).
#
# The best completion's (a third bound, tighter, for the sentences the first two refuse; a max chart and its outside
# pass): an item's outside value is at most its number of completions times the weight of its best one, exp(U) with U
# the max chart's outside value of the item over the shifted scores, so Z loses at most operations x solutions x 2^-1074
# x exp(max over items of s_j - s_i + U + the most a guessed scale exceeded its set one).  Tiny items (far below their
# column's largest) pass it only when no heavy completion makes them matter (:meth:`ScaledChart.underflow_safe`; the
# batch kernel leaves such sentences to it).
#
# Either way every inside value is exact to its number of operations in a chain times 2^-53.  The outside pass may
# underflow: an outside value's loss delta (at most 2^-1074 an operation, times a gap after it) changes a posterior O I
# / Z by at most delta times an inside value over the scaled Z; the marginals are kept when the operations' sum of that
# is below 2^LOSS (:func:`outside_underflow_negligible`).  (A second review's search found the holes the first version
# of these rules had: sibling factors up to 2^300 after an attach factor that underflowed, a gap after an outside
# product that did, and words never kept whose scores were not shifted.) Computed outside values do not bound an
# underflowed inside value's effect (they miss what the underflow lost): tests/test_marginals.py has sentences of 5
# words whose log Z was off by 5 when the scaled chart kept answers whose outside values were at most SAFE.
SAFE = 2.0 ** 300
NORMAL = 2.0 ** -1022  # the smallest normal double
LOSS = -60.0  # log2 of the largest relative loss the bound's rule accepts


@kernel(inline="always")
def _log2_lost(n: int, cap: int, largest_factor: float) -> float:
    """log2 of what a pass over the chart of n words counting up to ``cap`` can lose to underflow, in its items'
    scaled units: its operations (a bound) times 2^-1074 times the largest factor above 1 (a gap) that can multiply
    a result after it underflowed."""
    N = n + 1
    return math.log2(8.0 * N * N * N * (cap + 1) * (cap + 1)) - 1074.0 + math.log2(max(largest_factor, 1.0))


@kernel(inline="always")
def log2_solutions(n: int, counting: int, goal: np.ndarray) -> float:
    """log2 of a bound on the number of solutions of n words at the counts the goal's weights ``goal`` take (every
    length when nothing is counted): the sum over their lengths m of C(n, m) (27/4)^(m+1), kept sets times
    projective trees (C(3m, m) / (2m + 1) over m words, with one root or several)."""
    most, total = NEG, 0.0
    for m in range(n + 1):
        c = m if counting == KEPT else n - m
        if counting != NONE and (c >= len(goal) or goal[c] == 0.0):
            continue
        term = (math.lgamma(n + 1) - math.lgamma(m + 1) - math.lgamma(n - m + 1)
                + (m + 1) * math.log(27.0 / 4.0)) / math.log(2.0)
        if term > most:
            total, most = total * 2.0 ** (most - term) + 1.0, term
        else:
            total += 2.0 ** (term - most)
    return most + math.log2(total) if most > NEG else 0.0


@kernel(inline="always")
def underflow_safe(smallest_item: float, smallest_factor: float, reach: float, scaled_z: float, last_scale: float,
                   n: int, cap: int, solutions: float, largest_factor: float) -> bool:
    """Whether what the inside pass can have lost to underflow is negligible: NORMAL's rule, from the smallest
    nonzero item value and the smallest factor an allowed score gave, or the bound's, from the pass's ``reach``
    (:func:`_inside_sum`), the scaled Z, scale[n], ``solutions`` (:func:`log2_solutions`) and the largest factor
    (a gap's)."""
    item, factor = min(smallest_item, 1.0), min(smallest_factor, 1.0)
    if item * item * factor * factor * factor >= NORMAL:
        return True
    return _loss_negligible(reach, scaled_z, last_scale, n, cap, solutions, largest_factor)


@kernel(inline="always")
def _loss_negligible(conversion: float, scaled_z: float, last_scale: float, n: int, cap: int, solutions: float,
                     largest_factor: float) -> bool:
    """The bounds' comparison (the second and third rules): what the inside pass can have lost, operations x
    solutions x 2^-1074 x the largest gap x exp(``conversion``) (the most an item's scaled unit, times its
    completions' weight for the third rule, is worth in shifted units), is below 2^LOSS of Z = scaled Z exp(s_n)."""
    if not scaled_z > 0.0:
        return False
    return (_log2_lost(n, cap, largest_factor) + solutions + (conversion - last_scale) / math.log(2.0)
            <= math.log2(scaled_z) + LOSS)


@kernel(inline="always")
def outside_underflow_negligible(largest_inside: float, largest_factor: float, scaled_z: float, n: int,
                                 cap: int) -> bool:
    """Whether what the outside pass can have lost to underflow changes no posterior by 2^LOSS (above SAFE)."""
    return (_log2_lost(n, cap, largest_factor) + math.log2(max(largest_inside, 1.0))
            <= math.log2(scaled_z) + LOSS)


@kernel
def exp_attach(attach):
    """The shifted attach scores to their factors, in place: (the largest factor, the smallest of an allowed score,
    at most 1), what SAFE's and NORMAL's rules read."""
    largest, lowest = 0.0, 0.0
    for h in range(attach.shape[0]):
        for m in range(attach.shape[1]):
            if attach[h, m] > NEG:
                lowest = min(lowest, attach[h, m])
            attach[h, m] = math.exp(attach[h, m])
            largest = max(largest, attach[h, m])
    return largest, math.exp(lowest)


@kernel
def shift_to_unit(attach, bigram, bigram_out, prefix):
    """Shift a problem's scores so that every score factor of a solution is at most 1, and return the shift C (log Z
    is C more than the shifted problem's).  A kept word k pays attach(h, k) - A_k and the bigram into it bigram(i,
    k) - B_k; a dropped one pays -(A_k + B_k); </s> pays its bigram - B_(n+1).  A_k is the best attach into k, B_k
    the best bigram into k or -A_k if larger (so that A_k + B_k >= 0).  Every solution pays each A_k + B_k once: C is
    their sum.  ``attach`` is shifted in place (second order: attach plus the best sibling score, as
    :meth:`ScaledChart.fill` passes it), the bigrams into ``bigram_out`` (a skip (i, l-1) pays bigram(i, l) - B_l and
    the dropped words between: ``prefix`` sums A_k + B_k).  A word that can never be kept (no allowed attach or no
    allowed bigram into it) gets none of either: no factor above 1 is left anywhere.  Entries at -inf stay.

    >>> import numpy as np
    >>> attach, bigram = np.array([[-np.inf, 2.0], [-np.inf, -np.inf]]), np.array([[-np.inf, 1.0, 0.5]] * 3)
    >>> shift_to_unit(attach, bigram, out := np.empty((3, 3)), np.empty(3))
    3.5
    >>> [float(x) for x in (attach[0, 1], out[0, 1], out[1, 2], out[0, 2])]  # keep 1: 2-2, 1-1, .5-.5; drop: .5-3.5
    [0.0, 0.0, 0.0, -3.0]
    """
    N = attach.shape[0]
    n = N - 1
    for i in range(N + 1):
        for k in range(N + 1):
            bigram_out[i, k] = bigram[i, k]
    prefix[0] = 0.0
    entry = 0.0
    for k in range(1, N + 1):
        best_in, best_bigram = 0.0, NEG
        if k <= n:
            best_in = NEG
            for h in range(N):
                best_in = max(best_in, attach[h, k])
        for i in range(k):
            best_bigram = max(best_bigram, bigram[i, k])
        if k <= n and (best_in == NEG or best_bigram == NEG):  # k is never kept: no attach or bigram into it
            for h in range(N):
                attach[h, k] = NEG
            for i in range(k):
                bigram_out[i, k] = NEG
            prefix[k] = prefix[k - 1]
            continue
        if best_bigram == NEG:  # </s> is never reached: no solution
            best_bigram = 0.0
        best_bigram = max(best_bigram, -best_in)
        if k <= n:
            for h in range(N):
                attach[h, k] -= best_in
            prefix[k] = prefix[k - 1] + best_in + best_bigram
        else:
            entry = best_bigram
        for i in range(k):  # the skip (i, k-1): the bigram into k and the words i+1 .. k-1 it drops
            bigram_out[i, k] = bigram[i, k] - best_bigram - (prefix[k - 1] - prefix[i])
    return prefix[n] + entry


@dataclass
class ScaledChart:
    """The chart in the sum-product semiring (INSIDE_SUM), in scaled probability space: the item (x i j) at count c
    holds exp(L - (scale[j] - scale[i])), where L is the log-sum-exp of its derivations' scores.  The scale is a
    potential over positions, so it telescopes: the scales of two antecedents that share their middle word add up to
    their conclusion's, and those of a rule whose antecedents leave a gap between r and r+1 miss it by gap[r] =
    exp(scale[r] - scale[r+1]), a factor of the rule like a sibling score.  Each column of items ending at j is
    normalized once it is derived (its largest value is 1), which sets scale[j]: no log and no exp in the rules'
    loops (an exp per score, a log per column).  Scores far apart (a low temperature, n in the thousands) can leave
    a value out of range: :mod:`compbench_solvers.compressive.marginals` checks, and falls back to log space.

    >>> import compbench
    >>> p = compbench.generate("gaussian", n=5, seed=0)
    >>> chart = ScaledChart.fill(p)
    >>> bool(abs(np.log(chart.goal[0]) + chart.scale[-1] + chart.shift - compbench.log_partition(p)) < 1e-9)
    True
    """

    inside: np.ndarray  # items x N x N x counts
    scale: np.ndarray  # (N,) the potential: log value = log(stored) + scale[j] - scale[i] + (shift at the goal)
    shift: float  # what :func:`shift_to_unit` took off every solution's score
    largest_factor: float  # the largest score factor exp(score) the rules multiply by (gaps included)
    underflow: tuple[float, float, float]  # what the first two underflow rules read (:func:`underflow_safe`)
    excess: float  # the most a column's guessed scale exceeded its set one (the third rule's)
    _unit_scores: ChartScores  # the shifted scores, in log space (the third rule's max chart), but the siblings'
    _sibling_shift: np.ndarray | None  # [h, m]: what each sibling score of the attachment (h, m) is shifted by
    _counting: str
    _cells: Cells
    _scores: Scores

    @classmethod
    def fill(cls, problem: Problem, *, counting: str = "none", cap: int = 0) -> ScaledChart:
        """Inside over ``problem``'s chart counting ``counting`` words up to ``cap``."""
        scores = ChartScores.of(problem)
        order = scores.order
        announce_compile((_DERIVES[INSIDE_SUM, order], _DERIVES[OUTSIDE_SUM, order]),
                         f"the {ORDER_NAMES[order]} inside-outside kernels", "10-15 s")
        n = scores.n
        cap = 0 if counting == "none" else int(cap)
        V = np.zeros((ITEMS, n + 1, n + 1, cap + 1))
        attach, bigram, sibling, sibling_shift = scores.attach.copy(), np.empty((n + 2, n + 2)), None, None
        largest, smallest = 0.0, 1.0
        if order == 2:  # each attachment takes its best sibling score: every sibling factor at most 1 too
            sibling, best, largest, smallest = _exp_siblings(scores.sibling)
            sibling.flags.writeable = False  # the type of a problem's sibling scores: one compiled version
            attach += best  # -inf where no sibling is allowed: the attachment is never made
            sibling_shift = np.where(best > NEG, best, 0.0)
        shift = shift_to_unit(attach, scores.bigram, bigram, np.empty(n + 2))
        unit_attach = attach.copy()  # the shifted scores in log space, for the third underflow rule's max chart
        largest_attach, smallest_attach = exp_attach(attach)
        largest, smallest = max(largest, largest_attach), min(smallest, smallest_attach)
        cells = Cells(V=V)
        rules = Scores(bigram=bigram, attach=attach, kept_bonus=1.0, sibling=sibling, ones=np.ones(n + 1),
                       gap=np.ones(n + 1), scale=np.zeros(n + 1),
                       single_root=scores.single_root, counting=COUNTING[counting], cap=cap, tie=0)
        smallest_item, smallest_gap, reach, excess = _inside_sum(cells, rules)
        return cls(V, rules.scale, float(shift), float(max(largest, rules.gap.max(initial=0.0))),
                   (smallest_item, min(smallest, smallest_gap), reach), excess,
                   ChartScores(unit_attach, bigram, scores.sibling, scores.zeros, scores.single_root), sibling_shift,
                   counting, cells, rules)

    @property
    def second_order(self) -> bool:
        return self._scores.sibling is not None

    def underflow_safe(self, goal: np.ndarray) -> bool:
        """Whether what the inside pass can have lost to underflow is negligible beside the scaled Z the goal's
        weights ``goal`` sum: :func:`underflow_safe`'s two rules, else the third (above SAFE), which fills the max
        chart of the shifted scores and its outside."""
        n, cap = self.inside.shape[1] - 1, self.inside.shape[3] - 1
        scaled_z = float(self.goal @ goal)
        solutions = log2_solutions(n, COUNTING[self._counting], goal)
        if underflow_safe(*self.underflow, scaled_z, self.scale[n], n, cap, solutions, self.largest_factor):
            return True
        if not scaled_z > 0.0:
            return False
        # [the third rule] an item's outside value is at most its completions' number times the best one's weight
        scores = self._unit_scores
        if self._sibling_shift is not None:
            scores = replace(scores, sibling=scores.sibling - self._sibling_shift[:, None, :])
        best = Chart.fill(scores, counting=self._counting, cap=cap).best_outside()
        span = self.scale[None, :] - self.scale[:, None]  # span[i, j] = scale[j] - scale[i]: scaled to shifted
        worst = float((best + span[None, :, :, None]).max())
        if worst == NEG:  # no item has a completion
            return True
        return bool(_loss_negligible(worst + self.excess, scaled_z, self.scale[n], n, cap, solutions,
                                     self.largest_factor))

    @property
    def goal(self) -> np.ndarray:
        """The goal (rtri 0 n) over its counts, scaled by exp(-scale[n])."""
        n = self.inside.shape[1] - 1
        return self.inside[RTRI, 0, n]

    def outside(self, goal_outside: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Outside values from ``goal_outside`` (the goal's, per count), in the same scaled space (item (x i j):
        exp(L_out - (scale[n] - scale[j] + scale[i]))), and in second order the posterior mass of every sibling
        triple (h, s, m), unnormalized, as mass[h, m, s] (the sums' layout: the outside pass writes along s)."""
        n = self.inside.shape[1] - 1
        outside = np.zeros_like(self.inside)
        mass = np.zeros((n + 1,) * 3 if self.second_order else (0, 0, 0))  # first order: no sibling triples
        outside[RTRI, 0, n] = goal_outside
        _outside_sum(self._cells._replace(outside=outside, mass=mass), self._scores)
        return outside, mass


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
    """The hyperedges of ``problem``'s deduction system, listed by the rules themselves (:func:`_derive_rules` in EMIT
    mode) after the max chart is filled: first the [skip] axioms (no antecedents, their score as [skip] set it), then
    every rule instance in fill order, so that every hyperedge follows those that conclude its antecedents."""
    scores = problem if isinstance(problem, ChartScores) else ChartScores.of(problem)
    announce_compile((_DERIVES[FILL_MAX, scores.order], _DERIVES[EMIT, scores.order]),
                     f"the hook-trick chart's {ORDER_NAMES[scores.order]} fill and hyperedge listing", "5 s")
    n = scores.n
    N = n + 1
    chart = Chart.fill(scores)  # the max chart: which items have a derivation
    V = chart._cells.V
    edges = np.empty((max_hyperedges(n), EDGE_COLUMNS))
    i, j = np.nonzero(V[SKIP, :, :, 0] != NEG)  # the axioms, before every rule instance
    edges[:len(i), 0] = (SKIP * N + i) * N + j
    edges[:len(i), 1:5] = -1
    edges[:len(i), 5] = V[SKIP, i, j, 0]
    count = np.array([len(i)], np.int64)
    _emit(chart._cells._replace(edges=edges, n_edges=count), chart._scores)
    ids = edges[:count[0], :5].astype(np.int64)
    return Hypergraph(ids[:, 0].copy(), ids[:, 1:3].copy(), ids[:, 3].copy(), ids[:, 4].copy(),
                      edges[:count[0], 5].copy(), (RTRI * N + 0) * N + n, n)
