"""Plain dependency parsing on the GPU: first-order Eisner (every token kept) in numba CUDA kernels.

One thread block parses one sentence, the whole batch in one launch: the span widths in order, a barrier
(``syncthreads``) between widths, the block's threads over the spans of one width and, where a width has fewer
spans than threads, over their split points too (groups of ``g`` threads per span, each reducing every g-th split;
the group's partial results meet in shared memory).  The deduction system is the hook-trick chart's
(:mod:`compbench_solvers.compressive.chart`) with nothing skipped.  Positions 0..n (0 is the root); per sentence two
charts of (n+2) rows of n+1:

    C[h][e]    complete: h with all its dependents on the side of e, reaching e (h < e: the CPU chart's (rtri h e),
               h > e: (ltri e h)); C[i][i] is both empty halves of i
    I[h][m]    incomplete: the arc h -> m over two facing halves (h < m: (rtrap h m), h > m: (ltrap m h))
    box(i, j)  the two facing halves between i < j, shared by I[i][j] and I[j][i]; first order keeps it in registers

  Item [h][e] lives in column h of its chart, row e - h when h <= e (:func:`_right`), row n + 1 + e - h when h >= e
  (:func:`_left`; C[i][i] in both rows 0 and n+1): a candidate's places are affine in its split (no wrap-around to
  test), the threads of a phase take its spans in order of their first position and, at each split offset, read
  consecutive places (coalesced in global memory, no bank conflicts in shared memory); the outside pass counts its
  candidates from the item outwards so that its reads line up the same way.

THE RULES (each written once below, in the device function that carries its name; ⊕ is max, log-sum-exp or +, ⊗ is
+ or ×, 1 the semiring's one: 0 of log values, 1 of REAL's scaled probabilities, below):

    [complete-0]  C[i][i] = 1                                           the hook-trick chart's [rtri-skip] of (skip i i)
                                                                        and [ltri-0]: nothing on either side
    [box]         box(i, j) = ⊕_{i <= r < j}   C[i][r] ⊗ C[j][r+1]      i's right half beside j's left half
    [rtrap]       I[i][j]   = box(i, j) ⊗ arc(i, j)                     i -> j
    [ltrap]       I[j][i]   = box(i, j) ⊗ arc(j, i)          i >= 1     j -> i (the root is nobody's dependent)
    [rtri]        C[i][j]   = ⊕_{i < m <= j}   I[i][m] ⊗ C[m][j]        m is i's outermost right dependent
                                                                        (single_root: not for i = 0, j < n)
    [ltri]        C[j][i]   = ⊕_{i <= m < j}   C[m][i] ⊗ I[j][m] i >= 1 m is j's outermost left dependent
    goal          C[0][n]

  single_root: C[0][j] for j < n has no rule, so the goal's [rtri] takes exactly one root dependent.
  Outside (log Z's gradient; β below, α the inside values), each rule read backwards by its antecedents, widths in
  reverse, every item pulling from its consumers (no atomics):

    [rtri]   backwards  β(C[m][j]) ⊕= β(C[i][j]) ⊗ α(I[i][m]),   β(I[i][m]) ⊕= β(C[i][j]) ⊗ α(C[m][j])
    [ltri]   backwards  β(C[m][i]) ⊕= β(C[j][i]) ⊗ α(I[j][m]),   β(I[j][m]) ⊕= β(C[j][i]) ⊗ α(C[m][i])
    [box]    backwards  β(C[i][r]) ⊕= β(box(i, j)) ⊗ α(C[j][r+1]), β(C[j][r+1]) ⊕= β(box(i, j)) ⊗ α(C[i][r])
    [rtrap], [ltrap] backwards  β(box(i, j)) = β(I[i][j]) ⊗ arc(i, j) ⊕ β(I[j][i]) ⊗ arc(j, i)
    marginal(h, m) = α(I[h][m]) ⊗ β(I[h][m]) / Z,   goal: β(C[0][n]) = 1

Semirings: MAX (the best tree: each item keeps the first split of its best value, scanning splits upwards, as the
CPU chart's backtrace finds it: the same trees, bit-identical scores, since every candidate is the same sum); REAL
(log Z, and inside + outside for the arc marginals: sums of products of scaled probabilities in float64, a candidate
one multiply-add, where log-sum-exp takes an exp; each arc's factor exp(arc(h, m) - scale(m)) is at most 1, see
:func:`_scale`), kept up to :data:`REAL_WORDS` words when its values stayed in the CPU's scaled chart's range
(SAFE), else the block does its sentence again in LOG (log-sum-exp in float64, exact at any spread of the scores).

WHERE THE CHARTS LIVE (the shared/global switch, :func:`placement`): a chart goes to the block's shared memory when
it fits the 48 KB a block takes without opting in to more (:data:`SHARED_BYTES`, less the 2 KB the split reductions
use), in its dynamic part, sized at the launch (one compiled kernel for every n): the
inside charts (2 (n+1)(n+2) float64 at the batch's padded n) up to n = 52; the marginals' outside charts beside them
up to n = 36, in global memory beyond (the inside charts still in shared memory up to n = 52).  Larger charts are rows
of one global array per launch (cached by L1/L2).  Shared memory beyond 48 KB per block (dynamic, opt-in on the
H100: up to 227 KB) would take the inside charts to n = 118; numba-cuda 0.30 has no API to opt in.  The arc matrix is read once,
coalesced, as the initial value of I (I[h][m] starts as arc(h, m)); the MAP's back-pointers (int16) and the
backtrace's stack are in global memory (written once per item, read once per tree item).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numba
import numpy as np

from compbench.problem_batch import forbid_ignored_arcs
from compbench.problem import ProblemError, _real_array, check_flag, check_scores

from ..compressive.chart import SAFE
from . import runtime
from .device import fill, int32, log_add_device, log_merge_device

cuda = runtime.import_numba_cuda()
float64 = numba.float64  # the shared arrays' dtype, as numba's CUDA target types it

MAX, LOG, REAL = 0, 1, 2  # the semirings
NEG = -math.inf
SHARED_BYTES = 48 * 1024  # the static shared memory of one block
MAX_THREADS = 128  # the most threads per block while a chart is in shared memory (n <= 52)
GLOBAL_THREADS = 256  # threads per block for n >= 64, every chart in global memory: more of the splits at once
SCRATCH = 2  # float64 of the reductions' scratch a thread (static shared memory): a value and a split
REDUCTION_BYTES = 8 * SCRATCH * MAX_THREADS  # the reductions' scratch beside shared charts, at most
FLAG_BYTES = 4  # the block's flag (static shared memory): REAL's values left the range (:func:`_check`)
CAPPED_SUMS = True  # log Z's and the marginals' kernels (REAL, with LOG beside it for a sentence out of range)
# compiled with at most runtime.register_cap(...) registers a thread, as runtime.REGISTER_CAP does every kernel:
# uncapped, ptxas gives the marginals' 90 (REAL's path alone takes 66), which limits their blocks at n = 10 and 100;
# capped, they spill nothing in a loop (reports/gpu/kernel_resources.md, tests/test_cuda_compile.py).  Off: as ptxas
# chooses, which gpu_profile.py times beside it (which is faster is still to be measured on a GPU)
OUTSIDE_IN_SHARED = True  # the marginals' outside charts in shared memory where they fit beside the inside charts;
# False: in global memory always, which doubles the resident blocks where shared memory limits them (n = 25:
# reports/gpu/kernel_resources.md), at the cost of slower reads: gpu_profile.py times both, which is faster is still
# to be measured on a GPU

# The phases of one width (what the threads' tasks are).
BOX, COMPLETE, COMPLETE_OUT, TRAP_OUT = 0, 1, 2, 3
# Items of the backtrace's stack.
C_RIGHT, C_LEFT, I_RIGHT, I_LEFT = 0, 1, 2, 3


def threads_for(N: int) -> int:
    """Threads per block for a padded chart of N = n+1 positions: about one per span of the widest phases (2n
    complete spans of width 1), a multiple of 32; beyond n = 63 (every chart in global memory) twice that many, so
    that the split points of the long spans are shared by more threads (a small batch fills more of the GPU)."""
    return 32 if N <= 16 else (64 if N <= 32 else (MAX_THREADS if N <= 64 else GLOBAL_THREADS))


def placement(N: int, charts: int) -> tuple[int, int]:
    """The shared-memory capacities (in float64, 0: global memory) of the inside charts and of the outside charts
    (``charts`` = 2: none; 4: inside and outside) for a padded N = n+1: each goes to shared memory when it fits the
    48 KB a block takes without opting in, beside the reductions' scratch, the inside charts first."""
    room = (SHARED_BYTES - REDUCTION_BYTES - FLAG_BYTES) // 8
    need = 2 * chart_size(N)
    inside = need if need <= room else 0
    outside = need if charts == 4 and inside and OUTSIDE_IN_SHARED and 2 * need <= room else 0
    return inside, outside


# ---- the semirings: an accumulator (a, b) per item; MAX: (best value, its first split), LOG: (largest value,
# sum of exp(value - largest)), REAL: (sum, unused) ----

@cuda.jit(device=True)
def _zero(semiring):
    """The semiring's zero: no derivation."""
    return 0.0 if semiring == REAL else NEG


@cuda.jit(device=True)
def _one(semiring):
    """The semiring's one: the empty derivation."""
    return 1.0 if semiring == REAL else 0.0


@cuda.jit(device=True)
def _times(semiring, x, y):
    """⊗: + of log values (MAX, LOG), × of scaled probabilities (REAL)."""
    return x * y if semiring == REAL else x + y


@cuda.jit(device=True)
def _empty(semiring):
    return (NEG, -1.0) if semiring == MAX else (_zero(semiring), 0.0)


@cuda.jit(device=True)
def _accumulate(semiring, a, b, v, split):
    """⊕ one candidate ``v`` (from split ``split``): MAX keeps the first of equal values (a strict >), LOG sums
    online, rescaling when a larger value comes, REAL adds."""
    if semiring == MAX:
        if v > a:
            return v, float(split)
        return a, b
    if semiring == REAL:
        return a + v, b
    return log_merge_device(a, b, v, 1.0)


@cuda.jit(device=True)
def _combine(semiring, a, b, a2, b2):
    """⊕ of two partial accumulators; MAX: among equal values the smaller split (the first, as one thread finds)."""
    if semiring == MAX:
        if a2 > a or (a2 == a and a2 != NEG and b2 < b):
            return a2, b2
        return a, b
    if semiring == REAL:
        return a + a2, b
    return log_merge_device(a, b, a2, b2)


@cuda.jit(device=True)
def _value(semiring, a, b):
    if semiring != LOG or a == NEG:
        return a
    return a + math.log(b)


# ---- REAL's scale: arc(h, m) enters as the factor exp(arc(h, m) - scale(m)), scale(m) the largest score of an arc
# into m, kept in I[m][m] (no rule reads I's diagonal: there is no arc m -> m).  Every item covers its dependents
# once (a rule's antecedents split them), so it holds exp(-Σ scale(m) over its dependents m) times its log-space
# value's exp, the goal Z's scale Σ scale(m) over the sentence: log Z = log(goal) + Σ scale(m), and a marginal
# α β / Z has none.  Factors are at most 1; the answer is kept up to REAL_WORDS words when every value stayed at most
# SAFE (compbench_solvers.compressive.chart.SAFE) and the scaled Z at least 1 / SAFE, which bounds what underflows
# (REAL_WORDS), else the block does its sentence again in LOG ----

@cuda.jit(device=True)
def _scale(semiring, arc, sentence, m, n):
    """The scale of the arcs into m (REAL: their largest finite score, 0 when there is none or m is the root;
    otherwise NEG, the diagonal's value as the other semirings leave it)."""
    if semiring != REAL:
        return NEG
    top = NEG
    if m >= 1:
        for h in range(n + 1):
            if h != m:
                top = max(top, arc[sentence, h, m])
    return top if top != NEG else 0.0


@cuda.jit(device=True)
def _factor(semiring, A, o, S, score, m):
    """arc(h, m) as the semiring multiplies it: REAL exp(score - scale(m)), read off I[m][m]; else the score."""
    if semiring == REAL:
        return math.exp(score - A[o + _size(S) + _right(S, m, m)])
    return score


@cuda.jit(device=True)
def _check(semiring, value, flag):
    """REAL: mark the sentence for LOG (flag[0] = 1) when ``value`` is above SAFE (or NaN)."""
    if semiring == REAL and not value <= SAFE:
        flag[0] = 1


REAL_WORDS = math.floor(math.log(SAFE) / math.log(27 / 4))  # the longest sentence REAL sums: what underflows changes
# Z by at most its outside value (its sensitivity) times 2^-1074, and Z is at least 1 / SAFE.  Factors are at most
# 1, so the number of projective trees of n words, C(3n, n) / (2n + 1) < (27/4)^n, bounds every outside value, and
# that is at most SAFE up to n = 108.  (An outside value the outside pass computes does not bound it: it misses what
# an underflowed inside value lost; the CPU's scaled chart kept wrong answers so, see its rules above chart.SAFE.)


@cuda.jit(device=True)
def _in_range(A, o, S, n, flag):
    """Whether REAL's answer is kept: no value flagged, the scaled Z at least 1 / SAFE (0, no tree, is not: LOG
    tells that apart from an underflow).  Read by every thread after a barrier."""
    return flag[0] == 0 and A[o + _right(S, 0, n)] >= 1.0 / SAFE


@cuda.jit(device=True)
def _scaled_log_z(A, o, S, n):
    """log Z from REAL's goal: log(goal) + Σ scale(m) over the sentence."""
    total = math.log(A[o + _right(S, 0, n)])
    for m in range(1, n + 1):
        total += A[o + _size(S) + _right(S, m, m)]
    return total


# ---- where an item lives ----

@cuda.jit(device=True)
def _right(S, h, e):
    """The place of item [h][e], h <= e (right-headed), in a chart of S + 1 rows of S: row e - h, column h."""
    return (e - h) * S + h


@cuda.jit(device=True)
def _left(S, h, e):
    """The place of item [h][e], h >= e (left-headed): row S + e - h, column h.  A row holds the right items of one
    width and the left items of another side by side (their columns do not meet), C[h][h] is in rows 0 and S both;
    the items of one width and one direction are consecutive in h, and so are the antecedents that a phase's
    threads (one per span, in order of its first position) read at the same split offset: a warp's reads are
    coalesced in global memory, free of bank conflicts in shared memory.  Each rule knows which side its items
    head, so a candidate's places are affine in its split: one add each from the last candidate's."""
    return (S + e - h) * S + h


def chart_size(S: int) -> int:
    """The places of one chart over S = n+1 positions: S + 1 rows of S (:func:`_left`)."""
    return S * (S + 1)


_size = cuda.jit(device=True)(chart_size)


# ---- the rules: the places of one candidate's antecedents, (x, y) for X[x] ⊗ Y[y], in the order the CPU chart adds
# them (its MAX values bit for bit); inside: X = Y = the sentence's charts (C, then I at _size(S); S = n+1), the
# candidate named by its split ----

@cuda.jit(device=True)
def _box(S, i, j, r):
    # [box] box(i, j) <- C[i][r] C[j][r+1]: i's right half up to r beside j's left half from r+1
    return _right(S, i, r), _left(S, j, r + 1)


@cuda.jit(device=True)
def _trap(semiring, box, arc):
    # [rtrap] I[i][j] <- box(i, j) arc(i, j), and [ltrap] I[j][i] <- box(i, j) arc(j, i) (the CPU chart's sum order)
    return _times(semiring, box, arc)


@cuda.jit(device=True)
def _rtri(S, i, j, m):
    # [rtri] C[i][j] <- I[i][m] C[m][j]: m is i's outermost right dependent
    return _size(S) + _right(S, i, m), _right(S, m, j)


@cuda.jit(device=True)
def _ltri(S, i, j, m):
    # [ltri] C[j][i] <- C[m][i] I[j][m]: m is j's outermost left dependent
    return _left(S, m, i), _size(S) + _left(S, j, m)


# ---- the rules read backwards: X = the sentence's outside charts (β(C), then at _size(S) β(box) in the right items'
# places and, until the width's last phase, β(I) in both), Y = its inside charts; the candidates of the item over (i, j)
# named t = 0, 1, ... outwards from it (t-th nearest first), so that the threads of a phase read side by side ----

@cuda.jit(device=True)
def _rtri_back_to_complete(S, i, j, t):
    # [rtri] backwards: β(C[i][j]) ⊕= β(C[k][j]) α(I[k][i]),        k = i-1-t: C[k][j] <- I[k][i] C[i][j]
    k = i - 1 - t
    return _right(S, k, j), _size(S) + _right(S, k, i)


@cuda.jit(device=True)
def _box_back_to_right(S, i, j, t):
    # [box] backwards:  β(C[i][j]) ⊕= β(box(i, h)) α(C[h][j+1]),    h = j+1+t: box(i, h) <- C[i][j] C[h][j+1]
    h = j + 1 + t
    return _size(S) + _right(S, i, h), _left(S, h, j + 1)


@cuda.jit(device=True)
def _ltri_back_to_complete(S, i, j, t):
    # [ltri] backwards: β(C[j][i]) ⊕= β(C[h][i]) α(I[h][j]),        h = j+1+t: C[h][i] <- C[j][i] I[h][j]
    h = j + 1 + t
    return _left(S, h, i), _size(S) + _left(S, h, j)


@cuda.jit(device=True)
def _box_back_to_left(S, i, j, t):
    # [box] backwards:  β(C[j][i]) ⊕= β(box(h, j)) α(C[h][i-1]),    h = i-1-t: box(h, j) <- C[h][i-1] C[j][i]
    h = i - 1 - t
    return _size(S) + _right(S, h, j), _right(S, h, i - 1)


@cuda.jit(device=True)
def _rtri_back_to_trap(S, i, j, t):
    # [rtri] backwards: β(I[i][j]) ⊕= β(C[i][k]) α(C[j][k]),        k = j+t: C[i][k] <- I[i][j] C[j][k]
    k = j + t
    return _right(S, i, k), _right(S, j, k)


@cuda.jit(device=True)
def _ltri_back_to_trap(S, i, j, t):
    # [ltri] backwards: β(I[j][i]) ⊕= β(C[j][k]) α(C[i][k]),        k = i-t: C[j][k] <- C[i][k] I[j][i]
    k = i - t
    return _left(S, j, k), _left(S, i, k)


@cuda.jit(device=True)
def _traps_back_to_box(semiring, right, left, arc_right, arc_left):
    # [rtrap], [ltrap] backwards: β(box(i, j)) = β(I[i][j]) arc(i, j) ⊕ β(I[j][i]) arc(j, i)
    if semiring == REAL:
        return right * arc_right + left * arc_left
    return log_add_device(right + arc_right, left + arc_left)


# ---- one phase of one width: the tasks, each a ⊕ over candidates, spread over groups of g threads ----

@cuda.jit(device=True)
def _line(rule, semiring, a, b, X, Y, S, i, j, first, end, g):
    """⊕ into (a, b) of ``rule``'s candidates s = first, first + g, ... below ``end`` for the item over (i, j), X[x] ⊗
    Y[y] at the places it gives in one sentence's charts, and the s after the last.  The places are affine in s
    (:func:`_left`): each moves by one add a candidate, the step read off the rule at first and first + 1; they are
    32-bit (numba's integers are 64-bit, which take two registers each and several instructions an add)."""
    x, y = rule(S, i, j, first)
    x1, y1 = rule(S, i, j, first + 1)
    dx, dy, g = int32(g * (x1 - x)), int32(g * (y1 - y)), int32(g)
    x, y, s, end = int32(x), int32(y), int32(first), int32(end)
    while s < end:
        a, b = _accumulate(semiring, a, b, _times(semiring, X[x], Y[y]), s)
        x, y, s = int32(x + dx), int32(y + dy), int32(s + g)
    return a, b, s


@cuda.jit(device=True)
def _partial(kind, semiring, A, o, U, p, S, n, w, task, lane, g, single_root):
    """The accumulator of ``task``'s candidates lane, lane + g, ... (``kind``: which items; a task is a span
    (i, i + w), the first ``spans`` tasks right-headed items, the next ones left-headed)."""
    spans = n - w + 1
    left = task >= spans
    i = task - spans if left else task
    j = i + w
    a, b = _empty(semiring)
    inside, outside = A[o:], U[p:]  # the sentence's charts
    if kind == BOX:
        a, b, _ = _line(_box, semiring, a, b, inside, inside, S, i, j, i + lane, j, g)
    elif kind == COMPLETE:
        if not left:
            if not (single_root and i == 0 and j < n):
                a, b, _ = _line(_rtri, semiring, a, b, inside, inside, S, i, j, i + 1 + lane, j + 1, g)
        elif i >= 1:
            a, b, _ = _line(_ltri, semiring, a, b, inside, inside, S, i, j, i + lane, j, g)
    elif kind == COMPLETE_OUT:  # β of C[i][j] (right) or C[j][i] (left): i + n - j candidates, two rules' in turn
        if not left:  # single_root: C[0][j] with j < n has no [rtri] (k = 0 is t = i - 1)
            t_end = i - 1 if (single_root and j < n) else i
            a, b, t = _line(_rtri_back_to_complete, semiring, a, b, outside, inside, S, i, j, lane, t_end, g)
            if t < i:
                t += g
            a, b, _ = _line(_box_back_to_right, semiring, a, b, outside, inside, S, i, j, t - i, n - j, g)
        elif i >= 1:
            a, b, t = _line(_ltri_back_to_complete, semiring, a, b, outside, inside, S, i, j, lane, n - j, g)
            a, b, _ = _line(_box_back_to_left, semiring, a, b, outside, inside, S, i, j, t - (n - j), i, g)
    else:  # TRAP_OUT: β of I[i][j] (right) or I[j][i] (left)
        if not left:  # single_root: C[0][k] with k < n has no [rtri], only k = n (t = n - j)
            first = lane
            if single_root and i == 0:
                first = _at_least(lane, g, n - j)
            a, b, _ = _line(_rtri_back_to_trap, semiring, a, b, outside, inside, S, i, j, first, n + 1 - j, g)
        else:
            a, b, _ = _line(_ltri_back_to_trap, semiring, a, b, outside, inside, S, i, j, lane, i, g)
    return a, b


@cuda.jit(device=True)
def _at_least(first, g, least):
    """The first of first, first + g, first + 2g, ... that is at least ``least`` (g a power of two)."""
    if first >= least:
        return first
    return first + ((least - first + g - 1) & -g)


@cuda.jit(device=True)
def _store(kind, semiring, A, o, U, p, S, n, w, task, a, b, single_root, bp, q, flag):
    """Write ``task``'s item from its accumulator (and, MAX, its split into the back-pointers at q; REAL, a value
    out of range into ``flag``)."""
    spans = n - w + 1
    left = task >= spans
    i = task - spans if left else task
    j = i + w
    value = _value(semiring, a, b)
    _check(semiring, value, flag)
    if kind == BOX:
        right, left_trap = o + _size(S) + _right(S, i, j), o + _size(S) + _left(S, j, i)
        A[right] = _trap(semiring, value, A[right])  # I[i][j] held arc(i, j)'s factor
        A[left_trap] = _trap(semiring, value, A[left_trap]) if i >= 1 else _zero(semiring)
        if semiring == MAX:
            bp[q + _right(S, i, j)] = int(b)
    elif kind == COMPLETE:
        if not left:
            A[o + _right(S, i, j)] = value
            if semiring == MAX:
                bp[q + _size(S) + _right(S, i, j)] = int(b)
        else:
            A[o + _left(S, j, i)] = value  # the zero for i = 0: no candidates
            if semiring == MAX:
                bp[q + _size(S) + _left(S, j, i)] = int(b)
    elif kind == COMPLETE_OUT:
        if not left:
            U[p + _right(S, i, j)] = _one(semiring) if (i == 0 and j == n) else value  # the goal's outside
        else:
            U[p + _left(S, j, i)] = value
    else:
        U[p + _size(S) + (_left(S, j, i) if left else _right(S, i, j))] = value


@cuda.jit(device=True)
def _group(tasks, most, T):
    """Threads per task: a power of two up to 32 (one warp), as many as the block has to spare, no more than the
    candidates."""
    g = 1
    while g < 32 and g < most and 2 * g * tasks <= T:
        g *= 2
    return g


@cuda.jit(device=True)
def _phase(kind, semiring, A, o, U, p, S, n, w, single_root, bp, q, red, flag):
    """Every task of one phase of width w, by all threads of the block (each round: g threads per task, their
    partial accumulators combined in shared memory by the task's first thread), then a barrier.  Consecutive
    threads take consecutive tasks (the g threads of a task are T/g apart), so that a warp reads consecutive places
    of the charts (:func:`_left`).  T and g are powers of two: a task and a lane are a mask and a shift of the thread
    (a 64-bit division is a long sequence of instructions on the GPU)."""
    tid, T = cuda.threadIdx.x, cuda.blockDim.x
    spans = n - w + 1
    tasks = spans if kind == BOX else 2 * spans
    most = w if kind <= COMPLETE else n - w + 1
    g = _group(tasks, most, T)
    shift = cuda.ffs(T) - cuda.ffs(g)  # log2 of the tasks per round, T / g
    per_round = 1 << shift
    first = 0
    while first < tasks:  # (a range with a step that is not a constant divides by it, in 64 bits)
        task = first + (tid & (per_round - 1))
        lane = tid >> shift
        a, b = _empty(semiring)
        if task < tasks:
            a, b = _partial(kind, semiring, A, o, U, p, S, n, w, task, lane, g, single_root)
        if g > 1:
            red[tid] = a
            red[T + tid] = b
            cuda.syncthreads()
            if lane == 0:
                for other in range(1, g):
                    slot = tid + other * per_round
                    a, b = _combine(semiring, a, b, red[slot], red[T + slot])
        if lane == 0 and task < tasks:
            _store(kind, semiring, A, o, U, p, S, n, w, task, a, b, single_root, bp, q, flag)
        if g > 1 and first + per_round < tasks:
            cuda.syncthreads()  # the scratch is read before the next round writes it
        first += per_round
    cuda.syncthreads()


@cuda.jit(device=True)
def _inside(semiring, arc, sentence, A, o, S, n, single_root, bp, q, red, flag):
    """Fill the inside charts: REAL's scales (:func:`_scale`), the axioms and the arcs (read once more, coalesced, as
    I's initial value), then the widths in order."""
    tid, T = cuda.threadIdx.x, cuda.blockDim.x
    m = tid
    while m < S:  # each thread the columns it fills below, which read their scale
        A[o + _size(S) + _right(S, m, m)] = _scale(semiring, arc, sentence, m, n)
        A[o + _size(S) + _left(S, m, m)] = _zero(semiring)
        m += T
    for h in range(S):
        m = tid
        while m < S:
            if h == m:  # [complete-0] C[i][i] = 1, in both its places (the end of the right and the left items)
                A[o + _right(S, h, h)] = _one(semiring)
                A[o + _left(S, h, h)] = _one(semiring)
            else:
                place = _right(S, h, m) if h < m else _left(S, h, m)
                A[o + place] = _zero(semiring)
                A[o + _size(S) + place] = _factor(semiring, A, o, S, arc[sentence, h, m], m) if m >= 1 else \
                    _zero(semiring)
            m += T
    cuda.syncthreads()
    for w in range(1, n + 1):
        _phase(BOX, semiring, A, o, A, o, S, n, w, single_root, bp, q, red, flag)
        _phase(COMPLETE, semiring, A, o, A, o, S, n, w, single_root, bp, q, red, flag)


@cuda.jit(device=True)
def _posterior(semiring, inside, outside, total):
    """An item's marginal from its inside, outside and goal values: REAL α β / Z, LOG exp(α + β - log Z)."""
    if semiring == REAL:
        return inside * outside / total
    return math.exp(inside + outside - total)


@cuda.jit(device=True)
def _outside(semiring, arc, sentence, A, o, U, p, S, n, single_root, total, marginals, red, flag):
    """Outside values, widths in reverse, and every arc's marginal once its trapezoid's outside value is known
    (``total``: the goal's inside value)."""
    tid, T = cuda.threadIdx.x, cuda.blockDim.x
    for w in range(n, 0, -1):
        _phase(COMPLETE_OUT, semiring, A, o, U, p, S, n, w, single_root, red, 0, red, flag)
        _phase(TRAP_OUT, semiring, A, o, U, p, S, n, w, single_root, red, 0, red, flag)
        i = tid
        while i <= n - w:
            j = i + w
            right = U[p + _size(S) + _right(S, i, j)]
            left = U[p + _size(S) + _left(S, j, i)]
            if total != _zero(semiring):
                marginals[sentence, i, j] = _posterior(semiring, A[o + _size(S) + _right(S, i, j)], right, total)
                if i >= 1:
                    marginals[sentence, j, i] = _posterior(semiring, A[o + _size(S) + _left(S, j, i)], left, total)
            arc_right = _factor(semiring, A, o, S, arc[sentence, i, j], j)
            arc_left = _factor(semiring, A, o, S, arc[sentence, j, i], i) if i >= 1 else _zero(semiring)
            box = _traps_back_to_box(semiring, right, left, arc_right, arc_left)
            _check(semiring, box, flag)
            U[p + _size(S) + _right(S, i, j)] = box
            i += T
        cuda.syncthreads()


@cuda.jit(device=True)
def _backtrace(bp, q, S, n, heads, sentence, stack, s0):
    """One thread: the best tree's heads from the back-pointers (box splits at q, complete splits at q + S*S),
    depth first with a stack of (item, i, j) in global memory."""
    stack[s0], stack[s0 + 1], stack[s0 + 2] = C_RIGHT, 0, n
    top = 1
    while top > 0:
        top -= 1
        x, i, j = stack[s0 + 3 * top], stack[s0 + 3 * top + 1], stack[s0 + 3 * top + 2]
        if i == j:
            continue
        if x == C_RIGHT:  # [rtri] C[i][j] <- I[i][m] C[m][j]
            m = bp[q + _size(S) + _right(S, i, j)]
            x1, i1, j1, x2, i2, j2 = I_RIGHT, i, m, C_RIGHT, m, j
        elif x == C_LEFT:  # [ltri] C[j][i] <- C[m][i] I[j][m]
            m = bp[q + _size(S) + _left(S, j, i)]
            x1, i1, j1, x2, i2, j2 = C_LEFT, i, m, I_LEFT, m, j
        else:  # [rtrap] / [ltrap] over [box] box(i, j) <- C[i][r] C[j][r+1]
            if x == I_RIGHT:
                heads[sentence, j] = i
            else:
                heads[sentence, i] = j
            r = bp[q + _right(S, i, j)]
            x1, i1, j1, x2, i2, j2 = C_RIGHT, i, r, C_LEFT, r + 1, j
        stack[s0 + 3 * top], stack[s0 + 3 * top + 1], stack[s0 + 3 * top + 2] = x1, i1, j1
        stack[s0 + 3 * top + 3], stack[s0 + 3 * top + 4], stack[s0 + 3 * top + 5] = x2, i2, j2
        top += 2


# ---- the kernels: one block per sentence; each made once per (task, shared capacities) ----

@cuda.jit(device=True)
def _run_map(arc, sizes, single_root, value, heads, bp, stack, A, o, red, flag):
    sentence, tid, T = cuda.blockIdx.x, cuda.threadIdx.x, cuda.blockDim.x
    n = sizes[sentence]
    S = n + 1
    fill(heads, sentence, -1, tid, T)
    q = sentence * 2 * _size(heads.shape[1])
    _inside(MAX, arc, sentence, A, o, S, n, single_root, bp, q, red, flag)
    if tid == 0:
        best = A[o + _right(S, 0, n)]
        value[sentence] = best
        if best != NEG:
            _backtrace(bp, q, S, n, heads, sentence, stack, sentence * 3 * (4 * heads.shape[1] + 4))


@cuda.jit(device=True)
def _log_space_inside(arc, sentence, A, o, S, n, single_root, value, red, flag, in_log_space):
    """The inside pass in LOG, for a sentence REAL does not keep: its log Z into ``value`` (and returned to every
    thread), counted in ``in_log_space``."""
    _inside(LOG, arc, sentence, A, o, S, n, single_root, red, 0, red, flag)
    log_z = A[o + _right(S, 0, n)]
    if cuda.threadIdx.x == 0:
        value[sentence] = log_z
        cuda.atomic.add(in_log_space, 0, 1)
    return log_z


@cuda.jit(device=True)
def _run_log_z(arc, sizes, single_root, value, A, o, red, flag, in_log_space):
    """log Z in REAL up to :data:`REAL_WORDS` words, kept when its values stayed in range (:func:`_in_range`), else
    in LOG (:func:`_log_space_inside`)."""
    sentence, tid = cuda.blockIdx.x, cuda.threadIdx.x
    n = sizes[sentence]
    S = n + 1
    if tid == 0:
        flag[0] = 0
    kept = n <= REAL_WORDS
    if kept:
        _inside(REAL, arc, sentence, A, o, S, n, single_root, red, 0, red, flag)
        kept = _in_range(A, o, S, n, flag)
        cuda.syncthreads()  # every thread has read the flag and the goal before LOG writes over them
    if kept:
        if tid == 0:
            value[sentence] = _scaled_log_z(A, o, S, n)
    else:
        _log_space_inside(arc, sentence, A, o, S, n, single_root, value, red, flag, in_log_space)


@cuda.jit(device=True)
def _run_marginals(arc, sizes, single_root, value, marginals, A, o, U, p, red, flag, in_log_space):
    """log Z and the marginals in REAL, inside and outside, up to :data:`REAL_WORDS` words, or both again in LOG
    when REAL's values left the range (:func:`_log_space_inside`)."""
    sentence, tid, T = cuda.blockIdx.x, cuda.threadIdx.x, cuda.blockDim.x
    n = sizes[sentence]
    S = n + 1
    N = marginals.shape[1]
    for h in range(N):
        fill(marginals[sentence], h, 0.0, tid, T)
    if tid == 0:
        flag[0] = 0
    kept, z = n <= REAL_WORDS, 0.0
    if kept:
        _inside(REAL, arc, sentence, A, o, S, n, single_root, red, 0, red, flag)
        z = A[o + _right(S, 0, n)]
        kept = _in_range(A, o, S, n, flag)
        cuda.syncthreads()  # every thread has read the flag before the outside pass can set it
    if kept:
        _outside(REAL, arc, sentence, A, o, U, p, S, n, single_root, z, marginals, red, flag)
        kept = flag[0] == 0  # (after the pass's last barrier: an overflow)
    if kept:
        if tid == 0:
            value[sentence] = _scaled_log_z(A, o, S, n)
    else:
        log_z = _log_space_inside(arc, sentence, A, o, S, n, single_root, value, red, flag, in_log_space)
        _outside(LOG, arc, sentence, A, o, U, p, S, n, single_root, log_z, marginals, red, flag)


@functools.cache
def _kernel(task: str, inside: bool, outside: bool, threads: int) -> Any:
    """The kernel of ``task`` ("map", "log_z", "marginals") with its inside charts in the block's shared memory
    (``inside``; else rows of the global ``chart`` argument) and likewise the outside charts, for blocks of
    ``threads`` threads: one compiled version each, whatever the batch's n.  The reductions' scratch (2 float64 a
    thread) is static shared memory; the charts there are its dynamic part, 2 _size(N) float64 each pair at the
    batch's padded N, sized at the launch (:func:`_launched`)."""
    scratch = SCRATCH * threads  # the reductions' scratch in float64, a constant of the kernel
    if task == "map":
        if inside:
            @cuda.jit
            def kernel(arc, sizes, single_root, value, heads, bp, stack, chart):
                red = cuda.shared.array(scratch, float64)
                flag = cuda.shared.array(1, int32)
                A = cuda.shared.array(0, float64)
                _run_map(arc, sizes, single_root, value, heads, bp, stack, A, 0, red, flag)
        else:
            @cuda.jit
            def kernel(arc, sizes, single_root, value, heads, bp, stack, chart):
                red = cuda.shared.array(scratch, float64)
                flag = cuda.shared.array(1, int32)
                o = cuda.blockIdx.x * 2 * _size(arc.shape[1])
                _run_map(arc, sizes, single_root, value, heads, bp, stack, chart, o, red, flag)
    elif task == "log_z":
        if inside:
            @cuda.jit
            def kernel(arc, sizes, single_root, value, chart, in_log_space):
                red = cuda.shared.array(scratch, float64)
                flag = cuda.shared.array(1, int32)
                A = cuda.shared.array(0, float64)
                _run_log_z(arc, sizes, single_root, value, A, 0, red, flag, in_log_space)
        else:
            @cuda.jit
            def kernel(arc, sizes, single_root, value, chart, in_log_space):
                red = cuda.shared.array(scratch, float64)
                flag = cuda.shared.array(1, int32)
                o = cuda.blockIdx.x * 2 * _size(arc.shape[1])
                _run_log_z(arc, sizes, single_root, value, chart, o, red, flag, in_log_space)
    elif inside and outside:
        @cuda.jit
        def kernel(arc, sizes, single_root, value, marginals, chart, outside_chart, in_log_space):
            red = cuda.shared.array(scratch, float64)
            flag = cuda.shared.array(1, int32)
            charts = cuda.shared.array(0, float64)  # the inside charts, then the outside ones
            _run_marginals(arc, sizes, single_root, value, marginals, charts, 0, charts, 2 * _size(arc.shape[1]), red,
                           flag, in_log_space)
    elif inside:
        @cuda.jit
        def kernel(arc, sizes, single_root, value, marginals, chart, outside_chart, in_log_space):
            red = cuda.shared.array(scratch, float64)
            flag = cuda.shared.array(1, int32)
            A = cuda.shared.array(0, float64)
            p = cuda.blockIdx.x * 2 * _size(arc.shape[1])
            _run_marginals(arc, sizes, single_root, value, marginals, A, 0, outside_chart, p, red, flag, in_log_space)
    else:
        @cuda.jit
        def kernel(arc, sizes, single_root, value, marginals, chart, outside_chart, in_log_space):
            red = cuda.shared.array(scratch, float64)
            flag = cuda.shared.array(1, int32)
            o = cuda.blockIdx.x * 2 * _size(arc.shape[1])
            _run_marginals(arc, sizes, single_root, value, marginals, chart, o, outside_chart, o, red, flag,
                           in_log_space)
    return kernel


def _launched(task: str, inside: int, outside: int, threads: int, blocks: int) -> Any:
    """:func:`_kernel` configured for ``blocks`` blocks of ``threads`` threads (one a sentence) and ``inside`` +
    ``outside`` float64 of dynamic shared memory (:func:`placement`'s: the charts there), under
    :data:`compbench_solvers.cuda.runtime.REGISTER_CAP` (the sums: :data:`CAPPED_SUMS`) its copy of capped
    registers."""
    dynamic = 8 * (inside + outside)
    kernel = _kernel(task, bool(inside), bool(outside), threads)
    return runtime.capped(kernel, threads, dynamic + 8 * SCRATCH * threads + FLAG_BYTES,
                          always=capped_by_default(task))[blocks, threads, 0, dynamic]


def capped_by_default(task: str) -> bool:
    """Whether the kernel of ``task`` is launched with capped registers without runtime.REGISTER_CAP."""
    return CAPPED_SUMS and task != "map"


# ---- the public functions ----

def _prepare(arc_scores: Any, sizes: Any, single_root: Any) -> tuple[Any, Any, int, int, bool]:
    """The scores and sizes on the GPU (numpy: checked, then copied; a GPU array: used in place, unchecked), the
    batch size B, the padded N = n+1 and ``single_root`` checked (true or false itself, never a string)."""
    runtime.cuda()  # a RuntimeError with the one-line reason when there is no GPU (nor the simulator)
    single_root = check_flag("single_root", single_root)
    shape = tuple(arc_scores.shape) if hasattr(arc_scores, "shape") else np.shape(arc_scores)
    if len(shape) != 3 or shape[1] != shape[2] or shape[1] < 1:
        raise ValueError(f"arc_scores: expected a (B, N+1, N+1) array, got shape {shape}")
    B, N = int(shape[0]), int(shape[1])
    if not runtime.on_gpu(arc_scores):
        arc_scores = _read_entries_checked(np.ascontiguousarray(_real_array("arc_scores", arc_scores, copy=False)),
                                           None if sizes is None or runtime.on_gpu(sizes) else np.asarray(sizes))
    if sizes is None:
        sizes_device = runtime.filled((B,), N - 1, np.int64, "eisner-full-sizes")
    elif runtime.on_gpu(sizes):
        sizes_device = runtime.on_device(sizes, "eisner-sizes", np.int64)
    else:
        sizes = np.asarray(sizes)
        if sizes.shape != (B,) or sizes.dtype.kind not in "iu" or (sizes < 0).any() or (sizes > N - 1).any():
            raise ValueError(f"sizes: expected {B} integers in 0..{N - 1}, got {sizes!r}"[:200])
        sizes_device = runtime.kept_copy(sizes.astype(np.int64), "eisner-sizes")
    return runtime.on_device(arc_scores, "eisner-arcs"), sizes_device, B, N, single_root


def _read_entries_checked(arc_scores: np.ndarray, sizes: np.ndarray | None) -> np.ndarray:
    """``arc_scores`` checked (:func:`check_scores`) where the kernels read it: what they never read (column 0, the
    diagonal, a sentence's padding past ``sizes[b]``) may hold anything (a mask of -1e30, NaN), as on the CPU.  A
    batch that holds something out of range there comes back a copy with -inf in its place."""
    try:
        check_scores("arc_scores", arc_scores)
        return arc_scores
    except ProblemError:
        valid = sizes is not None and sizes.shape == arc_scores.shape[:1] and sizes.dtype.kind in "iu"  # else refused
        masked = arc_scores.copy()
        forbid_ignored_arcs(masked, sizes if valid else None)
        check_scores("arc_scores", masked)
        return masked


def tree_map(arc_scores: Any, sizes: Any = None, single_root: bool = False) -> tuple[Any, Any]:
    """The best projective tree of each sentence of a padded batch: ``(heads, scores)``.

    ``arc_scores`` (B, N+1, N+1), ``arc_scores[b, h, m]`` scores h -> m (0 is the root), a numpy array (copied to
    the GPU) or a GPU array (torch, CuPy: used in place); sentence b is its top-left (sizes[b]+1)-square block
    (``sizes`` default: N for all).  ``heads`` (B, N+1) int64 as :class:`compbench.Solution`'s (heads[b, 0] = -1,
    -1 past the sentence and for a sentence with no tree), ``scores`` (B,) float64 (-inf: no tree); the same
    kind of arrays as given.  Ties go to the tree the CPU chart's backtrace finds (the first split of each best item).
    For example (on a GPU, or under ``NUMBA_ENABLE_CUDASIM=1``), ``tree_map(np.zeros((1, 4, 4)))`` gives the heads
    ``[[-1, 0, 1, 2]]`` (each token on the one before it: the first split of every tie, as the CPU chart's) and the
    score ``[0.]``.
    """
    arc, sizes_device, B, N, single_root = _prepare(arc_scores, sizes, single_root)
    value = runtime.result(arc_scores, (B,), np.float64, "eisner-value")
    heads = runtime.result(arc_scores, (B, N), np.int64, "eisner-heads")
    if B:
        inside, _ = placement(N, 2)
        bp = runtime.work_area((B * 2 * chart_size(N),), np.int16, use="eisner-back")  # scratch, kept between calls
        stack = runtime.work_area((B * 3 * (4 * N + 4),), np.int32, use="eisner-stack")
        chart = runtime.work_area((1 if inside else B * 2 * chart_size(N),), np.float64, use="eisner-chart")
        threads = threads_for(N)
        with runtime.ordered(arc_scores):
            _launched("map", inside, 0, threads, B)(arc, sizes_device, single_root, value, heads, bp, stack,
                                                    chart)
    return runtime.returned_like(arc_scores, heads), runtime.returned_like(arc_scores, value)


def tree_log_partition(arc_scores: Any, sizes: Any = None, single_root: bool = False) -> Any:
    """log Z of each sentence's tree-CRF, p(tree) ∝ exp(Σ arc scores) over its projective trees: (B,) float64
    (-inf: no tree), the kind of array given.  Arguments as :func:`tree_map`'s."""
    arc, sizes_device, B, N, single_root = _prepare(arc_scores, sizes, single_root)
    value = runtime.result(arc_scores, (B,), np.float64, "eisner-value")
    if B:
        inside, _ = placement(N, 2)
        chart = runtime.work_area((1 if inside else B * 2 * chart_size(N),), np.float64, use="eisner-chart")
        threads = threads_for(N)
        with runtime.ordered(arc_scores):
            _launched("log_z", inside, 0, threads, B)(arc, sizes_device, single_root, value, chart,
                                                      _log_space_counter())
    return runtime.returned_like(arc_scores, value)


def tree_marginals(arc_scores: Any, sizes: Any = None, single_root: bool = False) -> tuple[Any, Any]:
    """log Z and the arc marginals p(h -> m) of each sentence's tree-CRF: ``(log_z (B,), marginals (B, N+1,
    N+1))``, zeros past the sentence and for a sentence with no tree; the kind of arrays given.  Arguments as
    :func:`tree_map`'s."""
    arc, sizes_device, B, N, single_root = _prepare(arc_scores, sizes, single_root)
    value = runtime.result(arc_scores, (B,), np.float64, "eisner-value")
    marginals = runtime.result(arc_scores, (B, N, N), np.float64, "eisner-marginals")
    if B:
        inside, outside = placement(N, 4)
        chart = runtime.work_area((1 if inside else B * 2 * chart_size(N),), np.float64, use="eisner-chart")
        outside_chart = runtime.work_area((1 if outside else B * 2 * chart_size(N),), np.float64, use="eisner-outside")
        threads = threads_for(N)
        with runtime.ordered(arc_scores):
            _launched("marginals", inside, outside, threads, B)(arc, sizes_device, single_root, value,
                                                                marginals, chart, outside_chart, _log_space_counter())
    return runtime.returned_like(arc_scores, value), runtime.returned_like(arc_scores, marginals)


@functools.cache
def _log_space_counter() -> Any:
    """The device counter of sentences the sums did in log space (one per process)."""
    return runtime.cuda().to_device(np.zeros(1, np.int64))


def summed_in_log_space() -> int:
    """How many sentences :func:`tree_log_partition` and :func:`tree_marginals` have summed in log space in this
    process (0 on a GPU that has summed nothing): those whose scaled sums' values left the range, and log Z's over
    :data:`REAL_WORDS` words.  What a benchmark of the sums reports beside its times.  It waits for the GPU."""
    return int(_log_space_counter().copy_to_host()[0]) if runtime.unavailable() is None else 0
