"""Compressive parsing on the GPU: the hook-trick chart of :mod:`compbench_solvers.compressive.chart` (first order,
with bigram scores) as numba CUDA kernels, one thread block per sentence for a whole padded batch in one launch.

The rules are chart.py's first-order ones ([skip], [rtri-skip], [rtri], [ltri-0], [ltri], [box], [rtrap], [ltrap]:
its module docstring lists them, with the items they derive), written once below as device functions, one per
recurrence, each with its rule's line as a comment (positions 0..n, 0 the root and ``<s>``, n+1 ``</s>``; every item
a span (i, j), i <= j, whose value is a vector over a count c = 0..cap of kept or dropped words, as
:func:`compbench_solvers.compressive.base.count_plan` chooses; cap = 0 when nothing is counted).  The chart keeps no
(skip i j): its value is a bigram score, read where [rtri-skip] takes it, and its outside value is (rtri i j)'s
([rtri-skip] is the one rule that reads it), read where the bigrams' marginals take it.

How the GPU runs them: one thread block per sentence; span widths in order (widest first for outside), and per width
three phases separated by ``__syncthreads``: (1) the axioms and boxes, (2) the trapezoids, (3) the triangles (each
phase reads only narrower spans and the phases before it); the threads share the (span, count) units of a phase.
TEAMS (MAP only, :func:`team_sizes`): a sentence whose chart costs at least two multiprocessors' shares of its batch
is parsed by a team of blocks, one per share, in a cooperative launch beside the one-block sentences: the same
phases with the grid's barrier between them, the team's threads sharing the units, and where a phase has fewer units
than threads, up to 32 threads of one block sharing a unit's offers (every g-th split), their partial maxima merged
in shared memory by value, then kept count, then chart.py's order (:func:`_merge`), so a team finds the offer one
thread would (the one-block kernels share offers so too when :data:`BLOCK_GROUP` > 1). Without teams a long
sentence's counted chart keeps one multiprocessor busy long after the rest of its batch is done (Google's test
split: docs/gpu.md).  The semirings:

- max, with backpointers (split and left count of the first offer that reaches the item's value, in chart.py's
  order: rules as listed, splits ascending, left counts ascending) and, without counts, the kept-word count T of the
  best derivation among equal scores fewest kept words first (chart.py's ``tie = -1``, what hook-dp and resource-dp
  use): the backtrace (one thread) then follows exactly the derivation chart.py's ``_backtrace`` finds, so the
  trees and objectives are bit-identical to the CPU kernels'.  With counts, the goal's count is the best allowed
  length, the fewest kept words among equal optima.
- sum-product in log space (log-sum-exp, a running max and a sum of exponentials per item) for inside, and outside
  in pull form: each item's outside value gathers, over the rules that read it, the conclusion's outside value
  times the other antecedent's inside value (the rules above read from the antecedent's side: :func:`rtri_outside`
  and the others below); posteriors exp(outside + inside - log Z) summed over the counts.  No scaling and no fall
  back: log space is exact at any temperature.

Each sentence's chart is laid out by its own n and cap as items x cells x counts, the cells (i <= j, only those
stored) diagonal by diagonal (:func:`_at`: the spans of one width side by side, as the threads of a phase take them);
a block's work area is sized for the batch's largest chart.  THE SHARED/GLOBAL SWITCH
(:func:`_plan`): the work area goes to shared memory when it takes at most :data:`SHARED_BYTES` (48 KiB, a block's
dynamic shared memory without opting in to more), one block per sentence: the max semiring (chart, kept counts,
backpointers, stack: int16, :data:`SHARED_INT`) up to n = 40 without counts, n = 30 with counts up to 1, n = 21 up
to 3; log Z and marginals (inside and outside charts) up to n = 33 without counts.  Otherwise it goes to global
memory, one work area per resident block (at most :data:`WORK_BYTES` in all), the blocks looping over the
sentences, the costliest first.
A team's chart is in global memory, one work area per team (the teamed sentences do not size the others' areas).
Second order (sibling scores) is not supported: its rules ([rtrap-first], [rtrap-next], ...) are not written here.
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import numba
import numpy as np

from compbench.problem import _real_array, check_flag
from compbench.solver import cores

from ..compressive.batch import gather_scores, run_in_parts
from ..jit import with_globals
from . import runtime
from .device import device, fill, int32, log_merge_device, uint32

cuda = runtime.import_numba_cuda()  # kernels are defined without a GPU; the entry points ask runtime.cuda()

BOX, RTRI, LTRI, RTRAP, LTRAP = 0, 1, 2, 3, 4  # the item types a chart keeps (chart.py's but the skips, whose
ITEMS = 5  # values are the bigram scores', read where a rule takes them), those with backpointers first
BACKED = 3  # the item types with backpointers (BOX, RTRI, LTRI): the backtrace reads none of the axioms' and traps'
NONE, KEPT, DROPPED = 0, 1, 2  # what the count dimension counts, as in chart.py
MAX, SUM = 0, 1  # the semirings
NEG = -math.inf
SHARED_BYTES = 48 * 1024  # the chart goes to shared memory when its block needs at most this much, else to global
WORK_BYTES = 2 << 30  # the most the global work areas take (one per resident block)
SHARED_INT = 2  # bytes of a kept count, backpointer or stack entry of a chart in shared memory (int16: every value
# there is below 2^15, since a chart with n (cap+1) + cap >= 2^15 is far beyond SHARED_BYTES); int32 in global memory
TEAM_THREADS = 256  # threads per block of a team (:func:`team_sizes`)
GROUP = 32  # the most threads of a team that share one (span, count) unit's offers (one warp)
SCRATCH = 3 * TEAM_THREADS  # a team block's shared memory for merging partial results (float64; numba needs a
# constant for a shared array's size)
assert TEAM_THREADS % GROUP == 0, "a group of threads sharing a unit lies within one block (_phase)"
assert TEAM_THREADS & (TEAM_THREADS - 1) == 0, "a team's blocks are a power of two threads (_phase's shifts)"
BLOCK_GROUP = 1  # the most threads of a one-block sentence's block that share a unit's offers (:func:`_phase`); 1:
# none.  Only teams share them by default: bench_gpu_compressive.py times 32 too, which is faster is still to measure

FLOAT64, INT16 = cuda.float64, cuda.int16  # numba's types, for the shared arrays (module globals: the simulator
# stands in for ``cuda`` inside the kernels with a module of its own that does not carry them)


# ---------------------------------------------------------------------------------------------------------------
# The semirings' ⊕ and the chart's layout
# ---------------------------------------------------------------------------------------------------------------

@device
def _at(x, i, j, positions, caps):
    """Index of item (x i j) at count 0 in a chart over ``positions`` = n + 1 positions: items x cells x counts, the
    cells (i <= j) diagonal by diagonal (width w = j - i, then i).  The spans a phase's threads take side by side
    have one width, and so have the antecedents they read at one split: side by side in memory too (coalesced global
    reads, no shared-memory bank conflicts)."""
    w = j - i
    return (x * (positions * (positions + 1) // 2) + w * positions - w * (w - 1) // 2 + i) * caps


@device
def _unit(u, units, C):
    """Work unit u of a phase as (kind, i, c): kinds one after another, each (n + 1 - w) spans x C counts.  No
    integer division without counts (C = 1): a 64-bit division is a long instruction sequence on the GPU."""
    kind, r = 0, u
    while r >= units:
        r -= units
        kind += 1
    if C == 1:
        return kind, r, 0
    return kind, r // C, r % C


@device
def _add(semiring, a, s, t, k, v, vt, vk):
    """⊕ one offer of value v into the accumulator (a, s, t, k).  MAX: a is the best value, t its kept count (the
    fewest kept words among equal values: vt < t), k where it came from; an equal offer later does not replace it.
    SUM: a running max a and s = Σ exp(value - a)."""
    if v == NEG:
        return a, s, t, k
    if semiring == SUM:
        a, s = log_merge_device(a, s, v, 1.0)
        return a, s, t, k
    if v > a or (v == a and vt < t):
        return v, s, vt, vk
    return a, s, t, k


@device
def _total(semiring, a, s):
    """The accumulator's value: the max, or log-sum-exp."""
    if semiring == SUM and a != NEG:
        return a + math.log(s)
    return a


@device
def _offers_at(semiring, use_t, V, T, pa, wa, pb, wb, c, shift, extra, kept, cap, split, caps, a, s, t, k):
    """Every offer of one rule instance (x) <- (a) (b) ⊗ extra to count c, its antecedents at places pa and pb
    spanning wa and wb words: the counts c1 + c2 + shift = c, c1 ascending (a span of w words counts at most w).
    The value is chart.py's expression, (V[a, c1] + extra) + V[b, c2], so the max semiring's values are
    bit-identical; ``kept`` words join the kept count."""
    if extra == NEG:
        return a, s, t, k
    rest = c - shift
    vt = 0
    if use_t:
        vt = T[uint32(pa)] + kept + T[uint32(pb)]  # use_t: no counts (caps = 1), an item's index is its cell's
    if cap == 0:  # no counts: the one offer c1 = c2 = 0 (the loop below would stay a loop in the machine code)
        if rest == 0:
            a, s, t, k = _add(semiring, a, s, t, k, V[uint32(pa)] + extra + V[uint32(pb)], vt, split)
        return a, s, t, k
    c1, last = max(0, rest - min(cap, wb)), min(min(cap, wa), rest)
    x, y, key, end = int32(pa + c1), int32(pb + rest - c1), int32(split * caps + c1), int32(pa + last)
    while x <= end:  # c1 ascending: x = pa + c1, y = pb + c2, key = split * caps + c1, in 32-bit steps
        a, s, t, k = _add(semiring, a, s, t, k, V[uint32(x)] + extra + V[uint32(y)], vt, key)
        x, y, key = int32(x + 1), int32(y - 1), int32(key + 1)
    return a, s, t, k


@device
def _offers(semiring, use_t, V, T, xa, ia, ja, xb, ib, jb, c, shift, extra, kept, cap, split, positions, caps,
            a, s, t, k):
    """:func:`_offers_at` of the rule instance (x) <- (xa ia ja) (xb ib jb)."""
    return _offers_at(semiring, use_t, V, T, _at(xa, ia, ja, positions, caps), ja - ia,
                      _at(xb, ib, jb, positions, caps), jb - ib, c, shift, extra, kept, cap, split, caps, a, s, t, k)


@device
def _places(rule, i, j, split, positions, caps):
    """The places of ``rule``'s two antecedents at ``split`` for the item over (i, j) (:func:`_at`)."""
    xa, ia, ja, xb, ib, jb = rule(i, j, split)
    return _at(xa, ia, ja, positions, caps), _at(xb, ib, jb, positions, caps)


@device
def _split_offers(rule, semiring, use_t, V, T, i, j, c, cap, positions, caps, first, end, g, a, s, t, k):
    """:func:`_offers` of ``rule``'s instances for the item over (i, j) at the splits first, first + g, ... below
    ``end`` (``rule(i, j, split)``: its antecedents (xa, ia, ja, xb, ib, jb)).  An antecedent's place is quadratic
    in the split (:func:`_at`: diagonal by diagonal), so it moves by a step that moves by a constant: two adds a
    split instead of the layout's products, in 32-bit integers (numba's are 64-bit: two registers each, several
    instructions an add)."""
    pa, pb = _places(rule, i, j, first, positions, caps)
    pa1, pb1 = _places(rule, i, j, first + g, positions, caps)
    pa2, pb2 = _places(rule, i, j, first + 2 * g, positions, caps)
    da, db = int32(pa1 - pa), int32(pb1 - pb)
    dda, ddb = int32(pa2 - 2 * pa1 + pa), int32(pb2 - 2 * pb1 + pb)
    pa, pb, split, end, g = int32(pa), int32(pb), int32(first), int32(end), int32(g)
    while split < end:
        xa, ia, ja, xb, ib, jb = rule(i, j, split)
        a, s, t, k = _offers_at(semiring, use_t, V, T, pa, ja - ia, pb, jb - ib, c, 0, 0.0, 0, cap, split, caps,
                                a, s, t, k)
        pa, pb, da, db = int32(pa + da), int32(pb + db), int32(da + dda), int32(db + ddb)
        split = int32(split + g)
    return a, s, t, k


@device
def _completions(O, V, xo, io, jo, xs, is_, js, c, shift, extra, cap, positions, caps, a, s):
    """Outside: the completions an antecedent at count c gets from one rule instance, the conclusion (xo io jo)'s
    outside value at c + c' + shift times the other antecedent (xs is_ js) at c' (log-sum-exp into (a, s))."""
    if extra == NEG:
        return a, s
    po = _at(xo, io, jo, positions, caps)
    ps = _at(xs, is_, js, positions, caps)
    if cap == 0:  # no counts: the one completion c' = 0, as in _offers_at
        if c + shift == 0:
            a, s, t, k = _add(SUM, a, s, 0, 0, O[uint32(po)] + V[uint32(ps)] + extra, 0, 0)
        return a, s
    x, y = int32(po + c + shift), int32(ps)
    end = int32(ps + min(min(cap, js - is_), cap - c - shift))
    while y <= end:  # c' ascending: x = po + c + c' + shift, y = ps + c', as _offers_at steps its counts
        a, s, t, k = _add(SUM, a, s, 0, 0, O[uint32(x)] + V[uint32(y)] + extra, 0, 0)
        x, y = int32(x + 1), int32(y + 1)
    return a, s


@device
def _attach(arc, token, b, h, m):
    """attach(h, m) = arc(h, m) + token(m): the score of keeping m as a modifier of h."""
    return arc[b, h, m] + token[b, m - 1]


# ---------------------------------------------------------------------------------------------------------------
# The rules (inside; the max semiring and the sums), one per recurrence
# ---------------------------------------------------------------------------------------------------------------

@device
def skip_axiom(bigram, b, i, j, c, counting):
    # [skip]        (skip i j)   <- .      bigram(i, j+1), drops j-i words
    dropped = j - i if counting == DROPPED else 0
    return bigram[b, i, j + 1] if c == dropped else NEG


@device
def ltri_axiom(c):
    # [ltri-0]      (ltri j j)   <- .
    return 0.0 if c == 0 else NEG


@device
def _rtri(i, j, m):
    # [rtri]        (rtri i j)   <- (rtrap i m) (rtri m j)      i < m <= j   (single_root: not for (rtri 0 j), j < n)
    return RTRAP, i, m, RTRI, m, j


@device
def _ltri(i, j, m):
    # [ltri]        (ltri i j)   <- (ltri i m) (ltrap m j)      i <= m < j
    return LTRI, i, m, LTRAP, m, j


@device
def _box(i, j, r):
    # [box]         (box i j)    <- (rtri i r) (ltri r+1 j)     i <= r < j
    return RTRI, i, r, LTRI, r + 1, j


@device
def rtri_rules(semiring, use_t, V, T, bigram, b, i, j, c, n, counting, cap, single_root, positions, caps, lane, g):
    """(rtri i j) at count c: [rtri-skip], then [rtri]'s instances (:func:`_rtri`) m = i+1+lane, ... every g-th."""
    # [rtri-skip]   (rtri i j)   <- (skip i j)
    a, s, t, k = NEG, 0.0, 0, 0
    if lane == 0:  # as chart.py offers it, (skip i j) ⊗ (ltri 0 0): + 0.0, no kept word, split i, left count c
        a, s, t, k = _add(semiring, a, s, t, k, skip_axiom(bigram, b, i, j, c, counting) + 0.0, 0, i * caps + c)
    if not (single_root and i == 0 and j < n):
        a, s, t, k = _split_offers(_rtri, semiring, use_t, V, T, i, j, c, cap, positions, caps, i + 1 + lane, j + 1,
                                   g, a, s, t, k)
    return a, s, t, k


@device
def ltri_rule(semiring, use_t, V, T, i, j, c, cap, positions, caps, lane, g):
    """(ltri i j) at count c: [ltri]'s instances (:func:`_ltri`) m = i+lane, ... every g-th."""
    return _split_offers(_ltri, semiring, use_t, V, T, i, j, c, cap, positions, caps, i + lane, j, g,
                         NEG, 0.0, 0, 0)


@device
def box_rule(semiring, use_t, V, T, i, j, c, cap, positions, caps, lane, g):
    """(box i j) at count c: [box]'s instances (:func:`_box`) r = i+lane, ... every g-th."""
    return _split_offers(_box, semiring, use_t, V, T, i, j, c, cap, positions, caps, i + lane, j, g,
                         NEG, 0.0, 0, 0)


@device
def trap_rule(semiring, use_t, V, T, i, j, c, attach, shift, cap, positions, caps):
    # [rtrap]       (rtrap h m)  <- (box h m) + attach(h, m)    with (h, m) = (i, j)
    # [ltrap]       (ltrap m h)  <- (box m h) + attach(h, m)    with (m, h) = (i, j), m >= 1
    return _offers(semiring, use_t, V, T, BOX, i, j, LTRI, 0, 0, c, shift, attach, 1, cap, 0, positions, caps,
                   NEG, 0.0, 0, 0)


# ---------------------------------------------------------------------------------------------------------------
# The same rules read from their antecedents' side: outside in pull form (the sums)
# ---------------------------------------------------------------------------------------------------------------

@device
def rtri_outside(O, V, i, j, c, n, cap, single_root, lo, hi, positions, caps):
    """O(rtri i j) at count c."""
    a, s = NEG, 0.0
    if i == 0 and j == n and lo <= c <= hi:  # goal: (rtri 0 n), at the allowed counts
        a, s = 0.0, 1.0
    # [rtri]  (rtri h j) <- (rtrap h i) (rtri i j)       h < i
    for h in range(i):
        if not (single_root and h == 0 and j < n):
            a, s = _completions(O, V, RTRI, h, j, RTRAP, h, i, c, 0, 0.0, cap, positions, caps, a, s)
    # [box]   (box i k) <- (rtri i j) (ltri j+1 k)       k > j
    for k in range(j + 1, n + 1):
        a, s = _completions(O, V, BOX, i, k, LTRI, j + 1, k, c, 0, 0.0, cap, positions, caps, a, s)
    return _total(SUM, a, s)


@device
def ltri_outside(O, V, i, j, c, n, cap, positions, caps):
    """O(ltri i j) at count c, 1 <= i < j."""
    a, s = NEG, 0.0
    # [ltri]  (ltri i k) <- (ltri i j) (ltrap j k)       k > j
    for k in range(j + 1, n + 1):
        a, s = _completions(O, V, LTRI, i, k, LTRAP, j, k, c, 0, 0.0, cap, positions, caps, a, s)
    # [box]   (box h j) <- (rtri h i-1) (ltri i j)       h < i
    for h in range(i):
        a, s = _completions(O, V, BOX, h, j, RTRI, h, i - 1, c, 0, 0.0, cap, positions, caps, a, s)
    return _total(SUM, a, s)


@device
def rtrap_outside(O, V, i, j, c, n, cap, single_root, positions, caps):
    """O(rtrap i j) at count c."""
    a, s = NEG, 0.0
    # [rtri]  (rtri i k) <- (rtrap i j) (rtri j k)       k >= j   (single_root: not for (rtri 0 k), k < n)
    for k in range(j, n + 1):
        if not (single_root and i == 0 and k < n):
            a, s = _completions(O, V, RTRI, i, k, RTRI, j, k, c, 0, 0.0, cap, positions, caps, a, s)
    return _total(SUM, a, s)


@device
def ltrap_outside(O, V, i, j, c, cap, positions, caps):
    """O(ltrap i j) at count c, 1 <= i < j."""
    a, s = NEG, 0.0
    # [ltri]  (ltri h j) <- (ltri h i) (ltrap i j)       1 <= h <= i
    for h in range(1, i + 1):
        a, s = _completions(O, V, LTRI, h, j, LTRI, h, i, c, 0, 0.0, cap, positions, caps, a, s)
    return _total(SUM, a, s)


@device
def box_outside(O, V, i, j, c, right, left, shift, cap, positions, caps):
    """O(box i j) at count c (``right`` = attach(i, j), ``left`` = attach(j, i))."""
    a, s = NEG, 0.0
    # [rtrap] (rtrap i j) <- (box i j) + attach(i, j)
    a, s = _completions(O, V, RTRAP, i, j, LTRI, 0, 0, c, shift, right, cap, positions, caps, a, s)
    # [ltrap] (ltrap i j) <- (box i j) + attach(j, i)    i >= 1
    if i >= 1:
        a, s = _completions(O, V, LTRAP, i, j, LTRI, 0, 0, c, shift, left, cap, positions, caps, a, s)
    return _total(SUM, a, s)


# ---------------------------------------------------------------------------------------------------------------
# The passes over one sentence (every thread of the block calls them)
# ---------------------------------------------------------------------------------------------------------------

AXIOMS_AND_BOXES, TRAPEZOIDS, TRIANGLES = 0, 1, 2  # the phases of one width, in order
BARRIER = None  # bound in each copy of _inside (:func:`compbench_solvers.jit.with_globals`): its phases' barrier


@device
def _partial(phase, semiring, use_t, V, T, arc, token, bigram, b, n, w, counting, cap, single_root, positions, caps,
             units, C, shift, u, lane, g):
    """Unit u of a phase (a (span, count) pair of one item kind): the accumulator of its offers lane, lane + g, ...
    (every offer when g = 1), and the item it concludes (-1: none)."""
    kind, i, c = _unit(u, units, C)
    j = i + w
    a, s, t, k = NEG, 0.0, 0, 0
    if phase == AXIOMS_AND_BOXES:  # (the [skip] axioms are not kept: rtri_rules reads the bigram scores)
        if w == 0:
            if lane == 0:
                a, s = ltri_axiom(c), 1.0
            return a, s, t, k, LTRI, i, j, c
        a, s, t, k = box_rule(semiring, use_t, V, T, i, j, c, cap, positions, caps, lane, g)
        return a, s, t, k, BOX, i, j, c
    if phase == TRAPEZOIDS:
        if kind == 1 and i == 0:  # the root is no modifier
            return a, s, t, k, -1, i, j, c
        attach = _attach(arc, token, b, i, j) if kind == 0 else _attach(arc, token, b, j, i)
        a, s, t, k = trap_rule(semiring, use_t, V, T, i, j, c, attach, shift, cap, positions, caps)
        return a, s, t, k, RTRAP + kind, i, j, c
    if kind == 1 and (w == 0 or i == 0):  # (ltri j j) is an axiom; (ltri 0 j) has no derivation
        return a, s, t, k, -1, i, j, c
    if kind == 0:
        a, s, t, k = rtri_rules(semiring, use_t, V, T, bigram, b, i, j, c, n, counting, cap, single_root, positions,
                                caps, lane, g)
    else:
        a, s, t, k = ltri_rule(semiring, use_t, V, T, i, j, c, cap, positions, caps, lane, g)
    return a, s, t, k, RTRI + kind, i, j, c


@device
def _store(semiring, use_t, V, T, back, x, i, j, c, a, s, t, k, positions, caps):
    """Write item (x i j) at count c from its accumulator: its value, and for the max semiring its backpointer (not
    for the axioms and trapezoids: the backtrace needs none there) and, without counts, its kept count."""
    if x < 0:
        return
    p = _at(x, i, j, positions, caps)
    V[p + c] = _total(semiring, a, s)
    if semiring == MAX:
        if x == BOX or x == RTRI or (x == LTRI and i < j):
            back[p + c] = k
        if use_t:
            T[p] = t


@device
def _merge(a, t, k, a2, t2, k2):
    """The max semiring's ⊕ of two partial accumulators of one item (threads that took different offers): the larger
    value, then the fewer kept words, then the earlier offer (the smaller k = split * caps + c1, which grows along
    chart.py's order), which is the offer one thread taking them all in order keeps (:func:`_add`)."""
    if a2 > a or (a2 == a and a2 != NEG and (t2 < t or (t2 == t and k2 < k))):
        return a2, t2, k2
    return a, t, k


@device
def _group(semiring, units, splits, members, block, most):
    """Threads per unit: 1, or for the max semiring a power of two up to ``most`` within one block, no more than the
    unit's splits, while the ``members`` threads take every unit in one round."""
    g = 1
    if semiring == MAX:
        while 2 * g <= most and 2 * g <= splits and 2 * g * units <= members and 2 * g <= block:
            g *= 2
    return g


@device
def _phase(phase, semiring, use_t, V, T, back, arc, token, bigram, b, n, w, counting, cap, single_root, positions,
           caps, rank, members, group, scratch):
    """Every unit of one phase of width w, by ``members`` threads (this one ``rank``: a block, or a team of
    blocks).  Each unit's offers go to g threads of one block (:func:`_group`), g - 1 of them ``block // g`` threads
    apart, their partial accumulators meeting in ``scratch`` (3 per thread of the block); g = 1: one thread per
    unit, no scratch."""
    C = cap + 1
    units = max(0, n + 1 - w) * C
    shift = 1 if counting == KEPT else 0  # an attachment adds a kept word
    total = units if phase == AXIOMS_AND_BOXES else 2 * units  # one item kind, or right- and left-headed
    splits = w + 1 if phase != TRAPEZOIDS else 1
    block = cuda.blockDim.x
    g = _group(semiring, total, splits, members, block, group)
    if g == 1:
        u = rank
        while u < total:  # (a range whose step is not a constant divides by it, in 64 bits: a long call on a GPU)
            a, s, t, k, x, i, j, c = _partial(phase, semiring, use_t, V, T, arc, token, bigram, b, n, w, counting,
                                              cap, single_root, positions, caps, units, C, shift, u, 0, 1)
            _store(semiring, use_t, V, T, back, x, i, j, c, a, s, t, k, positions, caps)
            u += members
        return
    log_block, log_g = cuda.ffs(block) - 1, cuda.ffs(g) - 1  # both powers of two (_plan, TEAM_THREADS): masks and
    # shifts, not 64-bit divisions
    tid = rank & (block - 1)
    per_block = block >> log_g  # units per block per round
    lane = tid >> (log_block - log_g)
    per_round = (members >> log_block) * per_block
    first = 0
    while first < total:
        u = first + (rank >> log_block) * per_block + (tid & (per_block - 1))
        a, s, t, k, x, i, j, c = NEG, 0.0, 0, 0, -1, 0, 0, 0
        if u < total:
            a, s, t, k, x, i, j, c = _partial(phase, semiring, use_t, V, T, arc, token, bigram, b, n, w, counting,
                                              cap, single_root, positions, caps, units, C, shift, u, lane, g)
        scratch[tid], scratch[block + tid], scratch[2 * block + tid] = a, t, k
        cuda.syncthreads()
        if lane == 0:
            for other in range(1, g):
                slot = tid + other * per_block
                a, t, k = _merge(a, t, k, scratch[slot], int(scratch[block + slot]), int(scratch[2 * block + slot]))
            _store(semiring, use_t, V, T, back, x, i, j, c, a, s, t, k, positions, caps)
        cuda.syncthreads()  # the scratch is read before the next round writes it
        first += per_round


def _inside(semiring, V, T, back, arc, token, bigram, b, n, counting, cap, single_root, positions, caps, rank,
            members, widths, group, scratch):
    """Fill the chart of sentence b, span widths in order, three phases per width (:func:`_phase`) with the
    ``BARRIER`` after each: by one block (``_inside_block``, a block's barrier) or by a team of blocks
    (``_inside_team``, the grid's barrier: every team of the launch steps through ``widths`` >= n + 1 widths, barrier
    for barrier).  Not a device function itself: each barrier has a copy
    (:func:`compbench_solvers.jit.with_globals`)."""
    use_t = semiring == MAX and cap == 0  # without counts: the kept count breaks ties (fewest kept words); T[p]
    # is item p's kept count (caps = 1)
    for w in range(widths):
        for phase in range(3):
            if phase != TRAPEZOIDS or 0 < w <= n:
                _phase(phase, semiring, use_t, V, T, back, arc, token, bigram, b, n, w, counting, cap, single_root,
                       positions, caps, rank, members, group, scratch)
            BARRIER()


@device
def _sync_block():
    cuda.syncthreads()


@device
def _sync_grid():
    cuda.cg.this_grid().sync()


_inside_block = device(with_globals(_inside, "_inside_block", BARRIER=_sync_block))
_inside_team = device(with_globals(_inside, "_inside_team", BARRIER=_sync_grid))


@device
def _outside(O, V, arc, token, b, n, counting, cap, single_root, lo, hi, positions, caps):
    """Outside values of sentence b (log space), span widths from the widest, three phases per width."""
    tid, threads = cuda.threadIdx.x, cuda.blockDim.x
    shift = 1 if counting == KEPT else 0
    C = cap + 1
    for w in range(n, -1, -1):
        units = (n + 1 - w) * C
        u = tid
        while u < 2 * units:  # (A) the triangles
            kind, i, c = _unit(u, units, C)
            j = i + w
            if kind == 0:
                O[_at(RTRI, i, j, positions, caps) + c] = rtri_outside(O, V, i, j, c, n, cap, single_root, lo, hi,
                                                                   positions, caps)
            elif i >= 1 and w > 0:
                O[_at(LTRI, i, j, positions, caps) + c] = ltri_outside(O, V, i, j, c, n, cap, positions, caps)
            u += threads
        cuda.syncthreads()
        u = tid
        while w > 0 and u < 2 * units:  # (B) the trapezoids (a skip's outside value is its (rtri i j)'s: see the
            # bigrams below)
            kind, i, c = _unit(u, units, C)
            j = i + w
            if kind == 0:
                O[_at(RTRAP, i, j, positions, caps) + c] = rtrap_outside(O, V, i, j, c, n, cap, single_root,
                                                                         positions, caps)
            elif i >= 1:
                O[_at(LTRAP, i, j, positions, caps) + c] = ltrap_outside(O, V, i, j, c, cap, positions, caps)
            u += threads
        cuda.syncthreads()
        u = tid
        while w > 0 and u < units:  # (C) the boxes
            kind, i, c = _unit(u, units, C)
            j = i + w
            right = _attach(arc, token, b, i, j)
            left = _attach(arc, token, b, j, i) if i >= 1 else NEG
            O[_at(BOX, i, j, positions, caps) + c] = box_outside(O, V, i, j, c, right, left, shift, cap,
                                                                 positions, caps)
            u += threads
        cuda.syncthreads()


@device
def _goal_count(V, n, counting, lo, hi, positions, caps):
    """The goal's count: the best allowed length, the fewest kept words among equal optima (as resource-dp)."""
    if counting == NONE:
        return 0
    p = _at(RTRI, 0, n, positions, caps)
    count, top = 0, NEG
    for m in range(lo, hi + 1):
        c = m if counting == KEPT else n - m
        if V[p + c] > top or m == lo:
            count, top = c, V[p + c]
    return count


@device
def _push(stack, top, x, i, j, c):
    stack[4 * top], stack[4 * top + 1], stack[4 * top + 2], stack[4 * top + 3] = x, i, j, c
    return top + 1


@device
def _backtrace(back, heads, b, n, count, shift, positions, caps, stack):
    """heads[b] of the goal's derivation at ``count`` that the backpointers name (one thread)."""
    top = _push(stack, 0, RTRI, 0, n, count)
    while top > 0:
        top -= 1
        x, i, j, c = stack[4 * top], stack[4 * top + 1], stack[4 * top + 2], stack[4 * top + 3]
        if x == LTRI and i == j:  # the axiom ([rtri-skip]'s skip is never pushed)
            continue
        if x == RTRAP or x == LTRAP:  # [rtrap] / [ltrap]: no backpointer, one antecedent
            if x == RTRAP:
                heads[b, j] = i
            else:
                heads[b, i] = j
            top = _push(stack, top, BOX, i, j, c - shift)
            continue
        p = _at(x, i, j, positions, caps) + c  # (x is one of the BACKED types)
        split, c1 = back[p], 0
        if caps > 1:
            split, c1 = back[p] // caps, back[p] % caps
        if x == RTRI:
            if split != i:  # [rtri]; split = i: [rtri-skip], nothing below it but an axiom
                top = _push(stack, top, RTRAP, i, split, c1)
                top = _push(stack, top, RTRI, split, j, c - c1)
        elif x == LTRI:  # [ltri]
            top = _push(stack, top, LTRI, i, split, c1)
            top = _push(stack, top, LTRAP, split, j, c - c1)
        else:  # [box]
            top = _push(stack, top, RTRI, i, split, c1)
            top = _push(stack, top, LTRI, split + 1, j, c - c1)


@device
def _layout(n, cap):
    """A sentence's own chart: its positions (0..n), counts (0..cap) and the values it holds (items x cells (i <= j
    <= n) x counts)."""
    return n + 1, cap + 1, ITEMS * ((n + 1) * (n + 2) // 2) * (cap + 1)


@device
def _areas(floats, ints, n, cap):
    """Sentence's own chart in a decoder's work areas: its values (floats); in ints its backpointers (the
    :data:`BACKED` item types, the first), then its kept counts (read without counts only) and in the same place the
    backtrace's stack (the backtrace reads no kept count)."""
    positions, caps, size = _layout(n, cap)
    backed = BACKED * (size // ITEMS)
    return floats[:size], ints[backed:], ints[:backed], ints[backed:]


@device
def _answer(V, back, heads, objective, b, n, counting, cap, lo, hi, stack):
    """The goal's value and the backtrace of sentence b (one thread), its chart filled."""
    positions, caps, size = _layout(n, cap)
    count = _goal_count(V, n, counting, lo, hi, positions, caps)
    value = V[_at(RTRI, 0, n, positions, caps) + count]
    objective[b] = value
    if value != NEG:
        _backtrace(back, heads, b, n, count, 1 if counting == KEPT else 0, positions, caps, stack)


@device
def _sentence(params, b, counted):
    """Sentence b's size, what its chart counts and up to which cap, and its allowed lengths (its row of
    :class:`Plan`'s params); nothing counted where ``counted`` is False (a copy for sentences without counts)."""
    n, lo, hi = params[b, 0], params[b, 3], params[b, 4]
    counting, cap = (params[b, 1], params[b, 2]) if counted else (NONE, 0)
    return n, counting, cap, lo, hi


COUNTED = GROUPED = True  # bound in each copy of _decode_sentences and _infer_sentences (:data:`DECODERS`,
# :data:`INFERRERS`): whether its sentences may have a count dimension, and whether threads may share a unit's offers
# (group > 1); a copy without leaves that code out, and the registers it holds (reports/gpu/kernel_resources.md)
SENTENCES = None  # bound in each copy of a kernel: its copy of _decode_sentences or _infer_sentences


def _decode_sentences(floats, ints, arc, token, bigram, params, order, single_root, group, scratch, heads, objective):
    """Every sentence this block is given: fill, goal, backtrace (up to ``group`` threads sharing a unit's offers,
    merged in ``scratch``: :func:`_phase`).  Not a device function itself: a copy per :data:`COUNTED` and
    :data:`GROUPED`."""
    tid, threads = cuda.threadIdx.x, cuda.blockDim.x
    q = cuda.blockIdx.x
    while q < order.shape[0]:
        b = order[q]
        q += cuda.gridDim.x
        n, counting, cap, lo, hi = _sentence(params, b, COUNTED)
        V, T, back, stack = _areas(floats, ints, n, cap)
        fill(heads, b, -1, tid, threads)
        _inside_block(MAX, V, T, back, arc, token, bigram, b, n, counting, cap, single_root, n + 1, cap + 1, tid,
                      threads, n + 1, group if GROUPED else 1, scratch)
        if tid == 0:
            _answer(V, back, heads, objective, b, n, counting, cap, lo, hi, stack)
        cuda.syncthreads()


def _infer_sentences(floats, no_ints, arc, token, bigram, params, order, single_root, with_marginals, log_z,
                     token_out, arc_out, bigram_out):
    """log Z (and the marginals) of every sentence this block is given; the work area holds the sentence's inside
    and outside charts.  Not a device function itself: a copy per :data:`COUNTED`."""
    tid, threads = cuda.threadIdx.x, cuda.blockDim.x
    q = cuda.blockIdx.x
    while q < order.shape[0]:
        b = order[q]
        q += cuda.gridDim.x
        n, counting, cap, lo, hi = _sentence(params, b, COUNTED)
        positions, caps, size = _layout(n, cap)
        V = floats[:size]
        O = floats[size:2 * size]
        _inside_block(SUM, V, no_ints, no_ints, arc, token, bigram, b, n, counting, cap, single_root, positions,
                      caps, tid, threads, n + 1, 1, V[:0])
        # the allowed counts of the goal
        first, last = 0, 0
        if counting == KEPT:
            first, last = lo, hi
        elif counting == DROPPED:
            first, last = n - hi, n - lo
        p = _at(RTRI, 0, n, positions, caps)
        a, s = NEG, 0.0
        for c in range(first, last + 1):
            a, s, t, k = _add(SUM, a, s, 0, 0, V[p + c], 0, 0)
        z = _total(SUM, a, s)
        if tid == 0:
            log_z[b] = z
        if not with_marginals:
            cuda.syncthreads()
            continue
        if z != NEG:
            _outside(O, V, arc, token, b, n, counting, cap, single_root, first, last, positions, caps)
        N = arc_out.shape[1]
        for h in range(N):  # arcs: (rtrap h m) is h -> m, (ltrap m h) is h -> m
            m = tid
            while m < N:
                total = 0.0
                if z != NEG and m >= 1 and h != m and h <= n and m <= n:
                    pi = _at(RTRAP, h, m, positions, caps) if h < m else _at(LTRAP, m, h, positions, caps)
                    for c in range(cap + 1):
                        total += math.exp(O[pi + c] + V[pi + c] - z)
                arc_out[b, h, m] = min(total, 1.0)  # float64's rounding of sums near 1e12: 1.00003 (CPU alike)
                m += threads
        M = bigram_out.shape[1]
        for i in range(M):  # bigrams: (skip i j) is i and j+1 consecutive; O(skip i j) = O(rtri i j) by
            j1 = tid  # [rtri-skip] (rtri i j) <- (skip i j), its only rule
            while j1 < M:
                total = 0.0
                if z != NEG and i < j1 and j1 <= n + 1:
                    po = _at(RTRI, i, j1 - 1, positions, caps)
                    for c in range(cap + 1):
                        total += math.exp(O[po + c] + skip_axiom(bigram, b, i, j1 - 1, c, counting) - z)
                bigram_out[b, i, j1] = min(total, 1.0)
                j1 += threads
        cuda.syncthreads()
        m = tid + 1
        while m < N:  # tokens: the sum of their arcs
            total = 0.0
            if m <= n:
                for h in range(n + 1):
                    total += arc_out[b, h, m]
            token_out[b, m - 1] = min(total, 1.0)
            m += threads
        cuda.syncthreads()


# ---------------------------------------------------------------------------------------------------------------
# The kernels: the chart in shared memory (one block per sentence) or in global memory (a work area per block)
# ---------------------------------------------------------------------------------------------------------------

def _decode_shared(arc, token, bigram, params, order, single_root, floats_size, scratch, group, heads, objective):
    shared = cuda.shared.array(0, FLOAT64)  # the merge's scratch (Plan.scratch float64), then the chart
    ints = cuda.shared.array(0, INT16)  # the same memory: the int16 part follows the float64 part (SHARED_INT)
    end = scratch + floats_size
    SENTENCES(shared[scratch:end], ints[4 * end:], arc, token, bigram, params, order, single_root, group,
              shared[:scratch], heads, objective)


def _decode_global(arc, token, bigram, params, order, single_root, floats, ints, group, heads, objective):
    slot = cuda.blockIdx.x
    scratch = cuda.shared.array(0, FLOAT64)  # the merge's scratch: 3 per thread when group > 1, else empty
    SENTENCES(floats[slot], ints[slot], arc, token, bigram, params, order, single_root, group, scratch, heads,
              objective)


@cuda.jit(cache=True)
def _decode_team(arc, token, bigram, params, teams, single_root, widths, floats, ints, heads, objective):
    """A team of blocks per sentence (a cooperative launch: the teams step through the widths together, the grid's
    barrier between phases).  ``teams`` (blocks, 4): block k's team (the row of its work areas), the team's first
    block, its number of blocks and its sentence."""
    row = cuda.blockIdx.x
    team, first, size, b = teams[row, 0], teams[row, 1], teams[row, 2], teams[row, 3]
    block = cuda.blockDim.x
    rank, members = (cuda.blockIdx.x - first) * block + cuda.threadIdx.x, size * block
    scratch = cuda.shared.array(SCRATCH, FLOAT64)
    n, counting, cap, lo, hi = _sentence(params, b, True)
    V, T, back, stack = _areas(floats[team], ints[team], n, cap)
    fill(heads, b, -1, rank, members)
    _inside_team(MAX, V, T, back, arc, token, bigram, b, n, counting, cap, single_root, n + 1, cap + 1, rank, members,
                 widths, GROUP, scratch)
    if rank == 0:
        _answer(V, back, heads, objective, b, n, counting, cap, lo, hi, stack)


def _infer_shared(arc, token, bigram, params, order, single_root, with_marginals, no_ints, log_z, token_out,
                  arc_out, bigram_out):
    floats = cuda.shared.array(0, FLOAT64)
    SENTENCES(floats, no_ints, arc, token, bigram, params, order, single_root, with_marginals, log_z, token_out,
              arc_out, bigram_out)


def _infer_global(arc, token, bigram, params, order, single_root, with_marginals, no_ints, floats, log_z,
                  token_out, arc_out, bigram_out):
    SENTENCES(floats[cuda.blockIdx.x], no_ints, arc, token, bigram, params, order, single_root, with_marginals,
              log_z, token_out, arc_out, bigram_out)


def _copies(sentences: Any, kernels: tuple[Any, Any], name: str, **constants: bool) -> dict[bool, Any]:
    """The kernels (the chart in shared memory: True, in global memory: False) over one copy of ``sentences`` with
    the globals ``constants`` (:data:`COUNTED`, :data:`GROUPED`), each a copy named with ``name``."""
    copy = device(with_globals(sentences, sentences.__name__ + name, **constants))
    return {shared: cuda.jit(cache=True)(with_globals(kernel, kernel.__name__ + name, SENTENCES=copy))
            for shared, kernel in zip((True, False), kernels)}


DECODERS = {(counted, grouped): _copies(_decode_sentences, (_decode_shared, _decode_global),
                                        ("_counted" if counted else "_free") + ("_grouped" if grouped else ""),
                                        COUNTED=counted, GROUPED=grouped)
            for counted in (False, True) for grouped in (False, True)}
INFERRERS = {counted: _copies(_infer_sentences, (_infer_shared, _infer_global), "_counted" if counted else "_free",
                              COUNTED=counted) for counted in (False, True)}


def _counted(plan: "Plan") -> bool:
    """Whether a sentence ``plan``'s launch takes has a count dimension."""
    return bool((plan.params[plan.order, 1] != NONE).any())


def decoder(plan: "Plan") -> Any:
    """The decoding kernel of ``plan``'s launch: its chart's place, and the copy without counts or shared offers
    where none of the sentences it takes has them."""
    return DECODERS[_counted(plan), plan.group > 1][plan.shared]


def inferrer(plan: "Plan") -> Any:
    """The kernel of log Z and the marginals for ``plan``'s launch: its chart's place, and the copy without counts
    where none of the sentences it takes has them."""
    return INFERRERS[_counted(plan)][plan.shared]


# ---------------------------------------------------------------------------------------------------------------
# Host side
# ---------------------------------------------------------------------------------------------------------------

class Plan(NamedTuple):
    """How a batch is launched: per-sentence parameters (n, counting, cap, lo, hi), the order the blocks take the
    sentences in (the costliest first), the work area of one block (the largest sentence's) and where it lives."""

    params: np.ndarray  # (B, 5) int64
    order: np.ndarray  # (B,) int64
    threads: int
    floats: int  # float64 per block
    ints: int  # ints per block (int16 in shared memory, int32 in global memory)
    shared: bool
    blocks: int
    group: int  # the most threads sharing a unit's offers (MAX: BLOCK_GROUP; SUM: 1)
    scratch: int  # float64 of shared memory per block for their merge


def chart_cost(sizes: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """A sentence's chart's work, up to a constant: (n + 1)^3 spans and splits times (cap + 1)^2 pairs of counts."""
    return (sizes + 1.0) ** 3 * (cap + 1.0) ** 2


def team_sizes(sizes: np.ndarray, cap: np.ndarray, blocks: int) -> np.ndarray:
    """Blocks per sentence for a batch launched on a GPU whose teams hold ``blocks`` blocks at once
    (:func:`team_blocks`: one a multiprocessor by default): a sentence whose chart costs at least two blocks' shares
    of the batch's work (:func:`chart_cost`) gets a team of one block per share (no more than it has threads' work
    for, :data:`GROUP` threads per (span, count) unit of its widest phase, and all teams together at most
    ``blocks``); 0 for the others (one block each, in the block kernels). With one multiprocessor (the simulator's)
    no sentence is teamed.

    >>> sizes, cap = np.array([168, 96] + [25] * 100), np.array([10, 13] + [11] * 100)
    >>> team_sizes(sizes, cap, 132)[:3].tolist()  # 75 and 23 of 132 blocks, the 100 others one block each
    [75, 23, 0]
    """
    cost = chart_cost(sizes, cap)
    share = cost.sum() / max(blocks, 1)
    most = -(-2 * (sizes + 1) * (cap + 1) * GROUP // TEAM_THREADS)
    team = np.minimum(np.floor(cost / share), most).astype(np.int64)
    while team[team >= 2].sum() > blocks:  # scaled down until the teams fit the GPU together
        team = np.floor(team * 0.9).astype(np.int64)
    return np.where(team >= 2, team, 0)


def count_plans(sizes: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What each sentence's chart counts and up to which cap: :func:`compbench_solvers.compressive.base.count_plan`
    vectorized (nothing for free length; else the cheaper of kept words up to hi and dropped words up to n - lo)."""
    free = (lo == 0) & (hi == sizes)
    kept = hi <= sizes - lo
    counting = np.where(free, NONE, np.where(kept, KEPT, DROPPED))
    cap = np.where(free, 0, np.where(kept, hi, sizes - lo))
    return counting.astype(np.int64), cap.astype(np.int64)


def _chart_values(sizes: np.ndarray, cap: np.ndarray, semiring: int) -> tuple[np.ndarray, np.ndarray]:
    """Per sentence, the float64 and integer values of a work area that holds its chart: for MAX the chart, its kept
    counts, backpointers and backtrace stack; for SUM the inside and outside charts."""
    cells = (sizes + 1) * (sizes + 2) // 2
    size = ITEMS * cells * (cap + 1)
    if semiring == MAX:  # (:func:`_areas`: the kept counts without counts, the stack in the same place)
        kept_or_stack = np.maximum(np.where(cap == 0, ITEMS * cells, 0), 4 * 8 * (sizes + 2))
        return size, BACKED * cells * (cap + 1) + kept_or_stack
    return 2 * size, np.zeros_like(size)


def too_big(sizes: np.ndarray, cap: np.ndarray, semiring: int = MAX) -> list[str | None]:
    """Per sentence, why its chart cannot be parsed here (a work area larger than :data:`WORK_BYTES` in global
    memory), else None."""
    return _too_big(sizes, *_chart_values(sizes, cap, semiring))


def _too_big(sizes: np.ndarray, floats: np.ndarray, ints: np.ndarray) -> list[str | None]:
    """:func:`too_big` of charts of ``floats`` and ``ints`` values (:func:`_chart_values`)."""
    needed = 8 * floats + 4 * ints
    return [None if bytes_ <= WORK_BYTES else f"the GPU chart for n = {n} needs {bytes_ / 2**20:.0f} MiB, above "
            f"the {WORK_BYTES >> 20} MiB of work areas (compbench_solvers.cuda.hook.WORK_BYTES)"
            for n, bytes_ in zip(sizes.tolist(), needed.tolist())]


def _work_sizes(sizes: np.ndarray, cap: np.ndarray, semiring: int) -> tuple[int, int]:
    """The float64 and integer values of a work area that holds the chart of any of these sentences; a MemoryError
    in one line when one of them needs more than :data:`WORK_BYTES` (:func:`too_big`)."""
    floats, ints = _chart_values(sizes, cap, semiring)
    why = next((reason for reason in _too_big(sizes, floats, ints) if reason is not None), None)
    if why is not None:
        raise MemoryError(why)
    return int(floats.max()), int(ints.max())


def _plan(sizes: np.ndarray, lo: np.ndarray, hi: np.ndarray, semiring: int, among: np.ndarray | None = None) -> Plan:
    """The launch of a batch (of the sentences ``among``, all by default; ``params`` covers all).  A block's work
    area holds one sentence's chart, sized for the largest (:func:`_work_sizes`).  THE SWITCH: in shared memory when
    that takes at most :data:`SHARED_BYTES` (one block per sentence), else in global memory, one area per resident
    block (at most :data:`WORK_BYTES` in all), the blocks looping over the sentences."""
    counting, cap = count_plans(sizes, lo, hi)
    params = np.stack([sizes, counting, cap, lo, hi], axis=1).astype(np.int64)
    among = np.arange(len(sizes)) if among is None else among
    sizes, cap = sizes[among], cap[among]
    floats, ints = _work_sizes(sizes, cap, semiring)
    units = int((2 * np.maximum(sizes, 1) * (cap + 1)).max())  # the (span, count) pairs of a phase, at most
    threads = int(min(256, 32 * -(-units // 32)))  # 256 threads may use 255 registers each
    group = BLOCK_GROUP if semiring == MAX else 1
    if group > 1:  # threads sharing a unit's offers: blocks of a power of two (_phase's masks and shifts)
        threads = 1 << (threads - 1).bit_length()
    scratch = 3 * threads if group > 1 else 0
    order = among[np.argsort(-chart_cost(sizes, cap), kind="stable")].astype(np.int64)
    B = len(sizes)
    if 8 * (floats + scratch) + SHARED_INT * ints <= SHARED_BYTES:
        assert (sizes * (cap + 1) + cap < 1 << 15).all(), "SHARED_INT's int16 holds every value of the chart"
        return Plan(params, order, threads, floats, ints, True, B, group, scratch)
    nbytes = 8 * floats + 4 * ints
    resident = runtime.multiprocessors() * (runtime.multiprocessor().threads // threads)
    return Plan(params, order, threads, floats, ints, False, max(1, min(B, resident, WORK_BYTES // nbytes)), group,
                scratch)


def _ints(values: Any, name: str, B: int) -> np.ndarray:
    """A (B,) integer array on the host (a GPU array is copied back: per-sentence sizes and bounds are small)."""
    if runtime.on_gpu(values):
        values = values.copy_to_host() if hasattr(values, "copy_to_host") else cuda.as_cuda_array(values).copy_to_host()
    array = np.asarray(values)
    if array.shape != (B,) or array.dtype.kind not in "iu":
        raise ValueError(f"{name}: expected {B} integers, got shape {array.shape} of {array.dtype}")
    if array.size and array.dtype.kind == "u" and int(array.max()) > np.iinfo(np.int64).max:  # cast, it would wrap
        raise ValueError(f"{name}: {int(array.max())} is out of range")
    return array.astype(np.int64)


class Inputs(NamedTuple):
    arc: Any
    token: Any
    bigram: Any
    sizes: np.ndarray
    lo: np.ndarray
    hi: np.ndarray


def _on_host(array: Any, use: str) -> np.ndarray:
    """A numpy array of float64 (no copy when it is one already, C-contiguous); ``use`` as
    :func:`compbench_solvers.cuda.runtime.on_device`'s, not needed here."""
    return np.ascontiguousarray(array, dtype=np.float64)


def _inputs(arc_scores: Any, token_scores: Any, bigram_scores: Any, sizes: Any, min_length: Any,
            max_length: Any, place: Any = runtime.on_device) -> Inputs:
    """The scores where ``place`` puts them (by default on the GPU: numpy copied, GPU arrays in place) and the
    per-sentence sizes and bounds, checked."""
    runtime.cuda()  # a RuntimeError with the one-line reason when there is no GPU (nor the simulator)
    real = lambda name, values: values if runtime.on_gpu(values) else _real_array(name, values, copy=False)  # noqa
    arc = place(real("arc_scores", arc_scores), "arc")
    if arc.ndim != 3 or arc.shape[1] != arc.shape[2] or arc.shape[1] < 1:
        raise ValueError(f"arc_scores: expected (B, N+1, N+1), got shape {arc.shape}")
    B, width = arc.shape[0], arc.shape[1] - 1
    token = place(np.zeros((B, width)) if token_scores is None else real("token_scores", token_scores), "token")
    bigram = place(np.zeros((B, width + 2, width + 2)) if bigram_scores is None
                   else real("bigram_scores", bigram_scores), "bigram")
    if token.shape != (B, width):
        raise ValueError(f"token_scores: expected {(B, width)}, got {token.shape}")
    if bigram.shape != (B, width + 2, width + 2):
        raise ValueError(f"bigram_scores: expected {(B, width + 2, width + 2)}, got {bigram.shape}")
    n = np.full(B, width, np.int64) if sizes is None else _ints(sizes, "sizes", B)
    lo = np.zeros(B, np.int64) if min_length is None else _ints(min_length, "min_length", B)
    hi = n.copy() if max_length is None else _ints(max_length, "max_length", B)
    bad = np.flatnonzero((n < 0) | (n > width) | (lo < 0) | (lo > hi) | (hi > n))
    if bad.size:
        k = int(bad[0])
        raise ValueError(f"sentence {k}: size {n[k]} and lengths {lo[k]}..{hi[k]} are not 0 <= min <= max <= size "
                         f"<= {width}")
    return Inputs(arc, token, bigram, n, lo, hi)


def dynamic_shared(plan: Plan) -> int:
    """The bytes of dynamic shared memory a block of ``plan``'s launch takes: the shared chart's, or the merge's
    scratch."""
    return 8 * (plan.floats + plan.scratch) + SHARED_INT * plan.ints if plan.shared else 8 * plan.scratch


def _launched(kernel: Any, plan: Plan, stream: Any = 0) -> Any:
    """``kernel`` configured for ``plan``'s launch on ``stream`` (its blocks, threads and :func:`dynamic_shared`),
    under :data:`compbench_solvers.cuda.runtime.REGISTER_CAP` its copy of capped registers."""
    dynamic = dynamic_shared(plan)
    return runtime.capped(kernel, plan.threads, dynamic)[plan.blocks, plan.threads, stream, dynamic]


TEAM_BLOCKS_A_MULTIPROCESSOR = 1  # the teams' blocks one multiprocessor holds at once.  1: the team kernel as
# compiled (144 registers a thread, reports/gpu/kernel_resources.md), one block, the rest of the multiprocessor left to
# the other sentences' blocks beside it; 2: its copy with at most 128 registers a thread (ptxas spills 40 bytes, none in
# a loop over candidates), twice the blocks in each team and nothing beside them.  An experiment switch that
# gpu_profile.py times beside the default (which is faster is still to be measured on a GPU)


def team_kernel() -> Any:
    """:func:`_decode_team` as launched: with more than one block a multiprocessor
    (:data:`TEAM_BLOCKS_A_MULTIPROCESSOR`), its copy with the registers that many blocks leave each thread."""
    if TEAM_BLOCKS_A_MULTIPROCESSOR == 1 or runtime.simulated():
        return _decode_team
    registers = runtime.multiprocessor().registers // (TEAM_BLOCKS_A_MULTIPROCESSOR * TEAM_THREADS)
    return runtime.with_max_registers(_decode_team, min(255, registers // 8 * 8))


def team_blocks() -> int:
    """The most blocks the teams of one launch take: :data:`TEAM_BLOCKS_A_MULTIPROCESSOR` per multiprocessor, or
    fewer where a cooperative launch of :func:`team_kernel` holds fewer (a context limited to part of the GPU).  Its
    first call compiles the kernel."""
    return _team_blocks(TEAM_BLOCKS_A_MULTIPROCESSOR)


@functools.cache
def _team_blocks(per_multiprocessor: int) -> int:
    if runtime.simulated():
        return runtime.multiprocessors()
    blocks = per_multiprocessor * runtime.multiprocessors()
    return min(blocks, team_kernel().compile(team_signature()).max_cooperative_grid_blocks(TEAM_THREADS))


def gpu_team_sizes(sizes: np.ndarray, cap: np.ndarray, teams: bool = True) -> np.ndarray:
    """:func:`team_sizes` on this GPU, as :func:`decode` takes them (none when ``teams`` is False);
    :func:`team_blocks` (a compile, the first time) is asked only when some sentence gets a team."""
    team = team_sizes(sizes, cap, runtime.multiprocessors() if teams else 1)
    return team_sizes(sizes, cap, team_blocks()) if team.any() else team


def team_signature() -> tuple:
    """The argument types :func:`_decode_team` is launched with (C-contiguous arrays, as the launches make them)."""
    f64, i64, array = numba.float64, numba.int64, numba.types.Array
    return (array(f64, 3, "C"), array(f64, 2, "C"), array(f64, 3, "C"), array(i64, 2, "C"), array(i64, 2, "C"),
            numba.boolean, i64, array(f64, 2, "C"), array(numba.int32, 2, "C"), array(i64, 2, "C"), array(f64, 1, "C"))


def _team_launch(arc: Any, token: Any, bigram: Any, params: np.ndarray, teamed: np.ndarray, blocks: np.ndarray,
                 single_root: bool, heads: Any, objective: Any, stream: Any, slot: int) -> tuple[Any, tuple]:
    """The cooperative launch of :func:`team_kernel`, ready to go (its arrays copied and allocated): sentence
    teamed[t] parsed by blocks[t] blocks, its chart in row t of a global work area."""
    rows = np.repeat(np.arange(len(teamed)), blocks)
    teams = np.stack([rows, (np.cumsum(blocks) - blocks)[rows], blocks[rows], teamed[rows]], axis=1).astype(np.int64)
    floats, ints = _work_sizes(params[teamed, 0], params[teamed, 2], MAX)
    widths = int(params[teamed, 0].max()) + 1
    return team_kernel()[len(teams), TEAM_THREADS, stream], (
        arc, token, bigram, runtime.kept_copy(params, "team-params", slot, stream),
        runtime.kept_copy(teams, "teams", slot, stream),
        bool(single_root), widths, runtime.work_area((len(teamed), floats), np.float64, slot, "team"),
        runtime.work_area((len(teamed), ints), np.int32, slot, "team"), heads, objective)


def _launch_decode(arc: Any, token: Any, bigram: Any, sizes: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                   single_root: bool, heads: Any, objective: Any, stream: Any = 0, slot: int = 0,
                   team: np.ndarray | None = None, team_stream: Any = None) -> None:
    """The decoder over a batch already on the GPU: the sentences with ``team`` > 0 in teams of that many blocks
    (:func:`team_sizes`, one cooperative launch on ``team_stream``, by default ``stream``), the others one block
    each, in one launch on ``stream`` (global work areas in ``slot``).  Everything either launch needs is copied and
    allocated before the first starts: an allocation could wait for the running kernel."""
    team = np.zeros(len(sizes), np.int64) if team is None else team
    teamed, rest = np.flatnonzero(team), np.flatnonzero(team == 0)
    plan = _plan(sizes, lo, hi, MAX, rest if rest.size else None)
    launches = []
    if teamed.size:
        launches.append(_team_launch(arc, token, bigram, plan.params, teamed, team[teamed], single_root, heads,
                                     objective, stream if team_stream is None else team_stream, slot))
    if rest.size:
        params = runtime.kept_copy(plan.params, "params", slot, stream)
        order = runtime.kept_copy(plan.order, "order", slot, stream)
        args = (arc, token, bigram, params, order, bool(single_root))
        if plan.shared:
            launches.append((_launched(decoder(plan), plan, stream),
                             (*args, plan.floats, plan.scratch, plan.group, heads, objective)))
        else:
            floats = runtime.work_area((plan.blocks, plan.floats), np.float64, slot)
            ints = runtime.work_area((plan.blocks, plan.ints), np.int32, slot)
            launches.append((_launched(decoder(plan), plan, stream), (*args, floats, ints, plan.group, heads,
                                                                      objective)))
    for kernel, args in launches:
        kernel(*args)


CHUNK = 512  # the fewest sentences of a chunk of a batch decoded from numpy (a smaller batch is one chunk)
PINNED_STAGING = True  # a chunk's scores go through a pinned buffer of ours (False: copied from numpy's own memory,
# which the driver stages; bench_gpu_compressive.py times both ways in one run: which is faster is still to measure)
_streams: list[Any] = []  # the chunks' streams, made once


def own_score_bytes(sizes: np.ndarray) -> np.ndarray:
    """The bytes of each sentence's own scores: n token, (n+1)^2 arc and (n+2)^2 bigram scores in float64."""
    return 8 * ((sizes + 1) ** 2 + (sizes + 2) ** 2 + sizes)


def _stage(inputs: Inputs, index: np.ndarray, buffers: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    """A chunk's sentences (rows ``index`` of the batch) into its pinned buffers (token, arc, bigram), each its own
    scores only (:func:`compbench_solvers.compressive.batch.gather_scores`), on every core in parts of about equal
    bytes."""
    nbytes = own_score_bytes(inputs.sizes[index])
    jobs = cores(None)  # one kept pool for every chunk, in as many parts as the chunk has STAGE_BYTES, at most jobs
    run_in_parts(lambda part: gather_scores(inputs.token, inputs.arc, inputs.bigram, inputs.sizes, index, part,
                                            *buffers), np.arange(len(index)), nbytes, jobs,
                 parts=min(jobs, int(nbytes.sum()) // runtime.STAGE_BYTES))


def _chunk_scores(inputs: Inputs, index: np.ndarray, w: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A chunk's scores (token, arc, bigram) at its width ``w`` as numpy holds them: a contiguous range of
    sentences at the batch's width in place, any other chunk's sentences gathered at ``w`` (numpy's fancy indexing:
    a copy)."""
    if w == inputs.token.shape[1] and np.all(np.diff(index) == 1):
        cut = slice(int(index[0]), int(index[-1]) + 1)
        return inputs.token[cut], inputs.arc[cut], inputs.bigram[cut]
    return inputs.token[index, :w], inputs.arc[index, :w + 1, :w + 1], inputs.bigram[index, :w + 2, :w + 2]


def host_chunks(sizes: np.ndarray, cap: np.ndarray, team: np.ndarray) -> list[np.ndarray]:
    """The chunks a batch decoded from numpy is copied and launched in (sentence indices): the teamed sentences
    (``team`` > 0) first, a chunk of their own; then the others, the costliest first (:func:`chart_cost`): a chunk
    ends at max(:data:`CHUNK`, a quarter of the batch) sentences, so that one chunk is copied while the one before it
    runs, or where the sizes fall below 3/4 of its first (each chunk is copied at its own width: little padding).
    Equal costs keep their order: a batch of one size is cut into contiguous ranges."""
    teamed, rest = np.flatnonzero(team), np.flatnonzero(team == 0)
    chunks = [teamed] if teamed.size else []
    order = rest[np.argsort(-chart_cost(sizes[rest], cap[rest]), kind="stable")]
    target = max(CHUNK, -(-len(order) // 4))
    start = 0
    while start < len(order):  # one numpy search a chunk, not a Python step a sentence
        end = min(start + target, len(order))
        narrower = np.flatnonzero(4 * sizes[order[start + 1:end]] < 3 * sizes[order[start]])
        end = start + 1 + narrower[0] if narrower.size else end
        chunks.append(order[start:end])
        start = end
    return chunks


def _decode_from_host(inputs: Inputs, single_root: bool, teams: bool) -> tuple[np.ndarray, np.ndarray]:
    """:func:`decode` of numpy scores: the batch in chunks (:func:`host_chunks`), each on a stream of its own, its
    scores staged in pinned memory and copied at its own width while the chunks before it are copied and run; the
    answers copied back once all have run."""
    B, width = inputs.arc.shape[0], inputs.arc.shape[1] - 1
    heads = np.full((B, width + 1), -1, np.int64)
    objective = np.full(B, -np.inf)
    counting, cap = count_plans(inputs.sizes, inputs.lo, inputs.hi)
    team = gpu_team_sizes(inputs.sizes, cap, teams)
    chunks = host_chunks(inputs.sizes, cap, team)
    while len(_streams) < len(chunks):
        _streams.append(cuda.stream())
    with cuda.defer_cleanup():  # no memory freed (a device-wide wait) while the chunks run
        device = []
        for slot, index in enumerate(chunks, start=1):  # every buffer first: nothing allocated while chunks run
            w = int(inputs.sizes[index].max())
            shapes = {"arc": (len(index), w + 1, w + 1), "token": (len(index), w), "bigram": (len(index), w + 2, w + 2)}
            device.append({**{use: (runtime.work_area(shape, np.float64, slot, use),
                                    runtime.pinned(shape, np.float64, slot, use) if PINNED_STAGING else None)
                              for use, shape in shapes.items()},
                           "heads": runtime.work_area((len(index), w + 1), np.int64, slot, "heads"),
                           "objective": runtime.work_area((len(index),), np.float64, slot, "objective")})
        try:
            for k, (index, chunk) in enumerate(zip(chunks, device)):
                stream = _streams[k]
                uses = ("token", "arc", "bigram")
                if PINNED_STAGING:  # while the chunks before this one are copied and run
                    _stage(inputs, index, tuple(chunk[use][1] for use in uses))
                    for use in uses:  # from pinned memory: asynchronous, at full speed
                        chunk[use][0].copy_to_device(chunk[use][1], stream=stream)
                else:  # from pageable memory: each call returns once the driver has staged it
                    scores = _chunk_scores(inputs, index, chunk["heads"].shape[1] - 1)
                    for source, use in zip(scores, uses):
                        chunk[use][0].copy_to_device(np.ascontiguousarray(source), stream=stream)
                _launch_decode(chunk["arc"][0], chunk["token"][0], chunk["bigram"][0], inputs.sizes[index],
                               inputs.lo[index], inputs.hi[index], single_root, chunk["heads"], chunk["objective"],
                               stream, slot=1 + k, team=team[index])
        finally:  # also after a failure: no copy from a kept pinned buffer outlives the call
            for stream in _streams[:len(chunks)]:
                stream.synchronize()
        for index, chunk in zip(chunks, device):
            heads[index, :chunk["heads"].shape[1]] = chunk["heads"].copy_to_host()
            objective[index] = chunk["objective"].copy_to_host()
    return heads, objective


def batch_arguments(batch: Any) -> tuple:
    """A :class:`compbench.ProblemBatch` as the arguments :func:`decode`, :func:`log_partition` and :func:`marginals`
    take: (arc, token and bigram scores, sizes, min_length, max_length, single_root)."""
    return (batch.arc_scores, batch.token_scores, batch.bigram_scores, batch.sizes, batch.min_length,
            batch.max_length, batch.single_root)


def decode(arc_scores: Any, token_scores: Any = None, bigram_scores: Any = None, sizes: Any = None,
           min_length: Any = None, max_length: Any = None, single_root: bool = False,
           teams: bool = True) -> tuple[Any, Any]:
    """The best compression and tree of every sentence of a padded batch, exactly as hook-dp (free length) and
    resource-dp (min_length/max_length per sentence) find them: in one launch when the scores are on the GPU; from
    numpy in chunks on streams of their own, each copied at its own width while the ones before it run
    (:func:`host_chunks`).

    ``arc_scores`` (B, N+1, N+1), ``token_scores`` (B, N), ``bigram_scores`` (B, N+2, N+2): sentence b's scores are
    the top-left blocks for its ``sizes[b]`` tokens (default N), as in :class:`compbench.ProblemBatch`; finite or
    -inf, not checked here (ProblemBatch checks them).  numpy arrays are copied to the GPU, GPU arrays (torch, CuPy)
    read in place.  Returns (heads (B, N+1) int64: head of token k or -1 when dropped, -1 at 0 and in the padding;
    objective (B,) float64, -inf where there is no solution), as the kind of array ``arc_scores`` is.  ``teams``:
    the costliest sentences parsed by teams of blocks (:func:`team_sizes`); False: one block per sentence (no
    cooperative launch).

    >>> import numpy as np
    >>> heads, value = decode(np.zeros((2, 4, 4)), sizes=np.array([3, 2]), min_length=np.array([3, 2]),
    ...                       max_length=np.array([3, 2]))
    >>> (heads >= 0).sum(axis=1).tolist(), value.tolist()
    ([3, 2], [0.0, 0.0])
    """
    single_root, teams = check_flag("single_root", single_root), check_flag("teams", teams)
    if not any(runtime.on_gpu(a) for a in (arc_scores, token_scores, bigram_scores)):
        return _decode_from_host(_inputs(arc_scores, token_scores, bigram_scores, sizes, min_length, max_length,
                                         place=_on_host), single_root, teams)
    inputs = _inputs(arc_scores, token_scores, bigram_scores, sizes, min_length, max_length)
    B, width = inputs.arc.shape[0], inputs.arc.shape[1] - 1
    heads = runtime.result(arc_scores, (B, width + 1), np.int64, "heads")
    objective = runtime.result(arc_scores, (B,), np.float64, "objective")
    if B:
        cap = count_plans(inputs.sizes, inputs.lo, inputs.hi)[1]
        team = gpu_team_sizes(inputs.sizes, cap, teams)
        with runtime.ordered(_on_gpu(arc_scores, token_scores, bigram_scores)):
            if not team.any():
                _launch_decode(inputs.arc, inputs.token, inputs.bigram, inputs.sizes, inputs.lo, inputs.hi,
                               single_root, heads, objective)
            else:  # the teams beside the other sentences, on two (blocking) streams of their own (on the default
                # stream the one launch would wait for the other), which the default stream then waits for
                while len(_streams) < 2:
                    _streams.append(cuda.stream())
                with cuda.defer_cleanup():  # no memory freed (a device-wide wait) between the launches
                    _launch_decode(inputs.arc, inputs.token, inputs.bigram, inputs.sizes, inputs.lo, inputs.hi,
                                   single_root, heads, objective, _streams[0], team=team, team_stream=_streams[1])
                for stream in _streams[:2]:
                    done = cuda.event()
                    done.record(stream)
                    done.wait(cuda.default_stream())
    return runtime.returned_like(arc_scores, heads), runtime.returned_like(arc_scores, objective)


def _on_gpu(*arrays: Any) -> Any:
    """The first of ``arrays`` that lives on the GPU (the one whose library's stream the launches follow), or
    None."""
    return next((array for array in arrays if runtime.on_gpu(array)), None)


def _infer(arc_scores: Any, token_scores: Any, bigram_scores: Any, sizes: Any, min_length: Any, max_length: Any,
           single_root: bool, with_marginals: bool) -> tuple[Any, ...]:
    single_root = check_flag("single_root", single_root)
    inputs = _inputs(arc_scores, token_scores, bigram_scores, sizes, min_length, max_length)
    B, width = inputs.arc.shape[0], inputs.arc.shape[1] - 1
    log_z = runtime.result(arc_scores, (B,), np.float64, "log-z")
    token = runtime.result(arc_scores, (B, width) if with_marginals else (1, 1), np.float64, "token-marginals")
    arc = runtime.result(arc_scores, (B, width + 1, width + 1) if with_marginals else (1, 1, 1), np.float64,
                         "arc-marginals")
    bigram = runtime.result(arc_scores, (B, width + 2, width + 2) if with_marginals else (1, 1, 1), np.float64,
                            "bigram-marginals")
    if B:
        plan = _plan(inputs.sizes, inputs.lo, inputs.hi, SUM)
        params, order = runtime.kept_copy(plan.params, "params"), runtime.kept_copy(plan.order, "order")
        no_ints = runtime.work_area((1,), np.int32, use="no-ints")  # the sums keep no kept counts nor backpointers
        args = (inputs.arc, inputs.token, inputs.bigram, params, order, bool(single_root), bool(with_marginals),
                no_ints)
        with runtime.ordered(_on_gpu(arc_scores, token_scores, bigram_scores)):
            if plan.shared:
                _launched(inferrer(plan), plan)(*args, log_z, token, arc, bigram)
            else:
                floats = runtime.work_area((plan.blocks, plan.floats), np.float64)
                _launched(inferrer(plan), plan)(*args, floats, log_z, token, arc, bigram)
    out = (log_z, token, arc, bigram) if with_marginals else (log_z,)
    return tuple(runtime.returned_like(arc_scores, array) for array in out)


def log_partition(arc_scores: Any, token_scores: Any = None, bigram_scores: Any = None, sizes: Any = None,
                  min_length: Any = None, max_length: Any = None, single_root: bool = False) -> Any:
    """log Z of every sentence of a padded batch (arguments as :func:`decode`): log Σ exp(objective) over its
    solutions, -inf where there is none; (B,) float64.

    >>> import numpy as np
    >>> np.exp(log_partition(np.zeros((1, 4, 4)), min_length=np.array([3]), max_length=np.array([3]))).round()
    array([12.])
    """
    return _infer(arc_scores, token_scores, bigram_scores, sizes, min_length, max_length, single_root, False)[0]


def marginals(arc_scores: Any, token_scores: Any = None, bigram_scores: Any = None, sizes: Any = None,
              min_length: Any = None, max_length: Any = None, single_root: bool = False) -> tuple[Any, ...]:
    """log Z and the posterior marginals of every sentence of a padded batch (arguments as :func:`decode`): (log_z
    (B,), token (B, N), arc (B, N+1, N+1), bigram (B, N+2, N+2)) in :class:`compbench.Marginals`' layouts, zeros in
    the padding and where there is no solution.

    >>> import numpy as np
    >>> log_z, token, arc, bigram = marginals(np.zeros((1, 4, 4)), min_length=np.array([2]), max_length=np.array([2]))
    >>> float(token.sum().round(12)), bool(np.allclose(arc[0, :, 1:].sum(axis=0), token[0]))
    (2.0, True)
    """
    return _infer(arc_scores, token_scores, bigram_scores, sizes, min_length, max_length, single_root, True)
