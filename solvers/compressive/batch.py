"""Batches: many problems through the chart's compiled kernels in one call.

A batch is packed into flat arrays (each problem's scores at its offsets) and one compiled call fills and backtraces
every chart (:func:`decode_many`) or sums its inside and outside (:func:`infer_many`): the per-problem Python (the
chart's allocation, the records, numba's dispatch) is paid once per batch.  The calls release the GIL, so threads run
slices of a batch on several cores.  Each problem's views are cut from the flat arrays with the types the
single-problem kernels are compiled for, so the batch runs the same compiled rules (:mod:`.chart`) and finds the same
answers.  :func:`decode_one` is the same call on one problem: what ``hook-dp`` and ``resource-dp`` make per solve
and ``bisection`` per multiplier; :class:`Packed` keeps a batch packed for decoding again (``bisection``'s rounds).
"""

from __future__ import annotations

import math
import threading

import numpy as np

from compbench import Problem

from ..jit import kernel
from .chart import (ITEMS, KEPT, LTRAP, NEG, NO_SIBLINGS, NONE, RTRAP, RTRI, SAFE, SKIP, Cells, Scores, _backtrace,
                    _fill_max, _inside_sum, _outside_sum)


PACK = 5  # offsets per problem: token, arc (and attach), bigram, heads, sibling (-1: first order)
PARAMS = 5  # settings per problem: single_root, counting, cap, lo, hi
OUT = 3  # results per problem: the count of the best derivation, its objective (-inf: none), its kept words


@kernel(nogil=True)
def _decode_many(offsets, params, kept_bonus, token, arc, bigram, sibling, tie, V_flat, T_flat, attach_flat, zeros,
                 stack, heads, out, order):
    """Fill and backtrace the charts of the problems ``order`` lists (see :func:`pack`; ``params`` per problem:
    single_root, what it counts up to which cap, and its lengths lo..hi): ``heads`` (all -1) gets each problem's best
    derivation among the counts of its lengths (the fewest kept words among equal optima), ``out`` its count, its
    objective (-inf: none) and its kept words."""
    for k in order:
        n = offsets[k + 1, 3] - offsets[k, 3] - 1
        N = n + 1
        single_root, counting, cap, lo, hi = params[k, 0] != 0, params[k, 1], params[k, 2], params[k, 3], params[k, 4]
        size = ITEMS * N * N
        V = V_flat[:size * (cap + 1)].reshape((ITEMS, N, N, cap + 1))
        T = T_flat[:size].reshape((ITEMS, N, N))
        for e in range(size * (cap + 1)):
            V_flat[e] = NEG
        for e in range(size):
            T_flat[e] = 0
        attach = attach_flat[:N * N].reshape((N, N))
        a0, t0 = offsets[k, 1], offsets[k, 0]
        for h in range(N):
            attach[h, 0] = arc[a0 + h * N]
            for m in range(1, N):
                attach[h, m] = arc[a0 + h * N + m] + token[t0 + m - 1]
        b0 = offsets[k, 2]
        bigrams = bigram[b0:b0 + (N + 1) * (N + 1)].reshape((N + 1, N + 1))
        s0 = offsets[k, 4]
        # first order: an empty view, the type of the sibling scores (chart.NO_SIBLINGS)
        siblings = sibling[s0:s0 + N * N * N].reshape((N, N, N)) if s0 >= 0 else sibling[:0].reshape((0, 0, 0))
        ones = zeros[:N]
        chart = Cells(V=V, T=T, window=None, outside=None, mass=None, edges=None, n_edges=None)
        scores = Scores(bigram=bigrams, attach=attach, kept_bonus=kept_bonus[k], sibling=siblings, ones=ones,
                        gap=ones, scale=None, second_order=s0 >= 0, single_root=single_root, counting=counting,
                        cap=cap, tie=tie)
        _fill_max(chart, scores)
        count, top = 0, NEG  # the best allowed length, the fewest kept words among equal optima
        if counting != NONE:
            for m in range(lo, hi + 1):
                c = m if counting == KEPT else n - m
                if V[RTRI, 0, n, c] > top or m == lo:
                    count, top = c, V[RTRI, 0, n, c]
        out[k, 0] = count
        out[k, 1] = V[RTRI, 0, n, count]
        out[k, 2] = T[RTRI, 0, n] if counting == NONE else (count if counting == KEPT else n - count)
        h0 = offsets[k, 3]
        _backtrace(chart, scores, count, heads[h0:h0 + N], stack)


def pack(problems: list[Problem]) -> tuple[np.ndarray, ...]:
    """A batch's scores as flat arrays and the offsets of each problem's (token, arc, bigram, heads, sibling; -1 for
    first order), one row per problem and a last row of totals."""
    offsets = np.zeros((len(problems) + 1, PACK), np.int64)
    sizes = [(p.n, (p.n + 1) ** 2, (p.n + 2) ** 2, p.n + 1, 0 if p.sibling_scores is None else (p.n + 1) ** 3)
             for p in problems]
    if sizes:
        np.cumsum(sizes, axis=0, out=offsets[1:])
    for k, p in enumerate(problems):
        if p.sibling_scores is None:
            offsets[k, 4] = -1

    def flat(arrays: list[np.ndarray]) -> np.ndarray:
        # one problem's own array needs no copy (a read-only view of it)
        if len(arrays) == 1:
            out = arrays[0].reshape(-1)
        else:
            out = np.concatenate([a.reshape(-1) for a in arrays]) if arrays else np.zeros(0)
        out.flags.writeable = False  # the type of a problem's scores: the same compiled kernels
        return out

    siblings = [p.sibling_scores for p in problems if p.sibling_scores is not None]
    return (offsets, flat([p.token_scores for p in problems]), flat([p.arc_scores for p in problems]),
            flat([p.bigram_scores for p in problems]), flat(siblings) if siblings else NO_SIBLINGS.reshape(-1))


_scratch = threading.local()  # each thread's work arrays for the one-problem path, grown when needed


# Work arrays up to this many values (16 MiB) are kept for the thread's next call; larger ones are not: a kept
# counted chart of n = 200 (hundreds of MiB) made the next pruned-dp fill 4-15x slower (measured 2026-11-25).
KEEP_WORK = 1 << 21


def _work(scores: int, N: int) -> tuple[np.ndarray, ...]:
    """Work arrays for charts of ``scores`` values over N positions: (V, T, attach, zeros, stack)."""
    work = getattr(_scratch, "work", None)
    if work is None or work[0].size < scores or work[3].size < N:
        scores, N = max(scores, work[0].size if work else 0), max(N, work[3].size if work else 0)
        work = (np.empty(scores), np.empty(ITEMS * N * N, np.int16), np.empty(N * N), np.zeros(N),
                np.empty((8 * (N + 1), 4), np.int64))
        _scratch.work = work if scores <= KEEP_WORK else None
    return work


_ONE = np.zeros(1, np.int64)  # the one-problem path's order
_NO_BONUS = np.zeros(1)


def decode_one(problem: Problem, counting: int = NONE, cap: int = 0, lo: int = 0, hi: int = 0,
               tie: int = -1, kept_bonus: float = 0.0) -> tuple[np.ndarray, float, int]:
    """:func:`decode_many` of one problem without packing (its own arrays, this thread's work arrays): the per-call
    cost of ``hook-dp`` and ``resource-dp``.  (heads, objective (-inf: none), kept words); with a ``kept_bonus``
    (added to every kept word's score) the objective includes it."""
    n = problem.n
    N = n + 1
    sibling = problem.sibling_scores
    offsets = np.array(((0, 0, 0, 0, -1 if sibling is None else 0), (n, N * N, (N + 1) ** 2, N, 0)), np.int64)
    params = np.array(((problem.single_root, counting, cap, lo, hi),), np.int64)
    heads = np.full(N, -1, np.int64)
    out = np.empty((1, OUT))
    _decode_many(offsets, params, np.array((kept_bonus,)) if kept_bonus else _NO_BONUS,
                 problem.token_scores.reshape(-1), problem.arc_scores.reshape(-1), problem.bigram_scores.reshape(-1),
                 (NO_SIBLINGS if sibling is None else sibling).reshape(-1), np.int64(tie),
                 *_work(ITEMS * N * N * (cap + 1), N), heads, out, _ONE)
    return heads, float(out[0, 1]), int(out[0, 2])


class Packed:
    """A batch packed once (:func:`pack`) and decoded as often as asked, any part of it at a time (bisection
    decodes its problems again at a new multiplier each round)."""

    def __init__(self, problems: list[Problem]):
        self.offsets, self.token, self.arc, self.bigram, self.sibling = pack(problems)
        self.single_root = np.fromiter((p.single_root for p in problems), bool, len(problems))

    def __len__(self) -> int:
        return len(self.single_root)

    def heads(self, heads: np.ndarray, k: int) -> np.ndarray:
        """Problem k's heads in a ``heads`` array :meth:`decode` returned."""
        return heads[self.offsets[k, 3]:self.offsets[k + 1, 3]]

    def decode(self, params: np.ndarray, kept_bonus: np.ndarray | None = None, tie: int = -1, jobs: int = 1,
               which: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The best derivations of the problems ``which`` lists (None: all) in compiled calls over ``jobs``
        threads, as :func:`decode_many`: (heads, out), rows of the others left at -1 and 0."""
        offsets = self.offsets
        K = len(self)
        heads = np.full(int(offsets[-1, 3]), -1, np.int64)
        out = np.zeros((K, OUT))
        which = np.arange(K) if which is None else np.asarray(which, np.int64)
        if len(which) == 0:
            return heads, out
        params = np.array(params, np.int64).reshape(K, PARAMS)
        params[:, 0] = self.single_root
        caps = params[:, 2]
        bonus = np.zeros(K) if kept_bonus is None else np.ascontiguousarray(kept_bonus, np.float64)
        N = offsets[1:, 3] - offsets[:-1, 3]
        cells = ITEMS * N ** 2 * (caps + 1)
        shares = _shares(N[which].astype(np.float64) ** 3 * (caps[which] + 1) ** 2, jobs)

        def run(share: list[int]) -> None:
            if not share:
                return
            order = which[sorted(share)]
            most = int(N[order].max())
            _decode_many(offsets, params, bonus, self.token, self.arc, self.bigram, self.sibling, np.int64(tie),
                         np.empty(int(cells[order].max())), np.empty(ITEMS * most * most, np.int16),
                         np.empty(most * most), np.zeros(most), np.empty((8 * (most + 1), 4), np.int64), heads, out,
                         order)

        _run_shares(run, shares)
        return heads, out


def decode_many(problems: list[Problem], params: np.ndarray, kept_bonus: np.ndarray | None = None, tie: int = -1,
                jobs: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The best derivations of a batch in compiled calls over ``jobs`` threads: problem k counts ``params[k, 1]``
    words (NONE, KEPT or DROPPED) up to ``params[k, 2]`` and takes its best count among lengths params[k, 3]..
    params[k, 4] (``params[k, 0]``: ignored, the problem's root mode is used).  (heads, offsets, out): problem k's
    heads are heads[offsets[k, 3]:offsets[k + 1, 3]], ``out[k]`` its count, objective and kept words."""
    batch = Packed(problems)
    heads, out = batch.decode(params, kept_bonus, tie, jobs)
    return heads, batch.offsets, out


def _shares(cost: np.ndarray, jobs: int) -> list[list[int]]:
    """Each thread's problems: dealt largest ``cost`` first to the thread with the least work (a long sentence costs
    as much as hundreds of short ones)."""
    jobs = max(1, min(int(jobs), len(cost)))
    if jobs == 1:
        return [list(range(len(cost)))]
    shares: list[list[int]] = [[] for _ in range(jobs)]
    work = np.zeros(jobs)
    for k in np.argsort(-cost, kind="stable").tolist():
        w = int(work.argmin())
        shares[w].append(k)
        work[w] += cost[k]
    return shares


def _run_shares(run, shares: list[list[int]]) -> None:
    """``run(share)`` for every share, on threads when more than one (the kernels release the GIL)."""
    if len(shares) == 1:
        run(shares[0])
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(len(shares)) as pool:
        list(pool.map(run, shares))


@kernel(nogil=True)
def _infer_many(offsets, params, token, arc, bigram, V_flat, O_flat, attach_flat, ones, gap, scale, goal,
                with_marginals, log_z, safe, token_out, arc_out, bigram_out, order):
    """log Z (and with ``with_marginals`` the posterior marginals of tokens, arcs and bigrams, at the offsets of
    :func:`pack`) of the first-order problems ``order`` lists, by the scaled chart's inside and outside, as
    :class:`ScaledChart` computes them one at a time; ``params`` per problem as :func:`_decode_many` takes them and
    ``goal[k, c]`` the weight of count c at the goal.  ``safe[k]`` is False where a value left the safe range: that
    problem's answer is to be computed again by the engine that falls back to log space."""
    for k in order:
        n = offsets[k + 1, 3] - offsets[k, 3] - 1
        N = n + 1
        single_root, counting, cap = params[k, 0] != 0, params[k, 1], params[k, 2]
        size = ITEMS * N * N * (cap + 1)
        V = V_flat[:size].reshape((ITEMS, N, N, cap + 1))
        for e in range(size):
            V_flat[e] = 0.0
        attach = attach_flat[:N * N].reshape((N, N))
        a0, t0 = offsets[k, 1], offsets[k, 0]
        largest = 0.0
        for h in range(N):
            for m in range(N):
                attach[h, m] = math.exp(arc[a0 + h * N + m] + (token[t0 + m - 1] if m >= 1 else 0.0))
                largest = max(largest, attach[h, m])
        for j in range(N):
            ones[j], gap[j], scale[j] = 1.0, 1.0, 0.0
        b0 = offsets[k, 2]
        bigrams = bigram[b0:b0 + (N + 1) * (N + 1)].reshape((N + 1, N + 1))
        scores = Scores(bigram=bigrams, attach=attach, kept_bonus=1.0, sibling=bigram[:0].reshape((0, 0, 0)),
                        ones=ones[:N], gap=gap[:N], scale=scale[:N], second_order=np.bool_(False),
                        single_root=single_root, counting=counting, cap=cap, tie=np.int64(0))
        _inside_sum(Cells(V=V, T=None, window=None, outside=None, mass=None, edges=None, n_edges=None), scores)
        z, top = 0.0, 0.0
        for c in range(cap + 1):
            z += V[RTRI, 0, n, c] * goal[k, c]
        for e in range(size):
            top = max(top, V_flat[e])
        for j in range(N):
            largest = max(largest, gap[j])
        safe[k] = largest <= SAFE and top <= SAFE and 1.0 / SAFE <= z <= SAFE
        log_z[k] = math.log(z) + scale[n] if safe[k] else NEG
        if not (with_marginals and safe[k]):
            continue
        O = O_flat[:size].reshape((ITEMS, N, N, cap + 1))
        for e in range(size):
            O_flat[e] = 0.0
        for c in range(cap + 1):
            O[RTRI, 0, n, c] = goal[k, c]
        _outside_sum(Cells(V=V, T=None, window=None, outside=O, mass=O_flat[:0].reshape((0, 0, 0)), edges=None,
                           n_edges=None), scores)
        for e in range(size):
            top = max(top, O_flat[e])
        if not top <= SAFE:
            safe[k] = False
            continue
        arcs = arc_out[a0:a0 + N * N].reshape((N, N))
        bigram_k = bigram_out[b0:b0 + (N + 1) * (N + 1)].reshape((N + 1, N + 1))
        for i in range(N):
            for j in range(i, N):
                right, left, skip = 0.0, 0.0, 0.0
                for c in range(cap + 1):
                    right += O[RTRAP, i, j, c] * V[RTRAP, i, j, c]
                    left += O[LTRAP, i, j, c] * V[LTRAP, i, j, c]
                    skip += O[SKIP, i, j, c] * V[SKIP, i, j, c]
                if i < j:
                    arcs[i, j] = right / z  # (rtrap h m): h -> m
                    arcs[j, i] = left / z  # (ltrap m h): h -> m
                bigram_k[i, j + 1] = skip / z  # (skip i j): i and j+1 are consecutive
        for m in range(1, N):
            total = 0.0
            for h in range(N):
                total += arcs[h, m]
            token_out[t0 + m - 1] = total


def infer_many(problems: list[Problem], params: np.ndarray, goal: np.ndarray, with_marginals: bool,
               jobs: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_infer_many` over a batch of first-order problems in compiled calls over ``jobs`` threads: (log Z,
    safe, offsets, token, arc, bigram posteriors as flat arrays at the offsets of :func:`pack`)."""
    offsets, token, arc, bigram, _ = pack(problems)
    return infer_packed(offsets, token, arc, bigram, params, goal, with_marginals, jobs)


def infer_packed(offsets: np.ndarray, token: np.ndarray, arc: np.ndarray, bigram: np.ndarray, params: np.ndarray,
                 goal: np.ndarray, with_marginals: bool,
                 jobs: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`infer_many` of a batch already laid out as :func:`pack` lays it out (read-only float64 arrays)."""
    K = len(offsets) - 1
    log_z, safe = np.full(K, NEG), np.zeros(K, bool)
    outputs = [np.zeros(int(offsets[-1, column])) if with_marginals else np.zeros(1) for column in (0, 1, 2)]
    if K == 0:
        return log_z, safe, offsets, *outputs
    params = np.ascontiguousarray(params, np.int64)
    N = offsets[1:, 3] - offsets[:-1, 3]
    cells = ITEMS * N ** 2 * (params[:, 2] + 1)
    shares = _shares(N.astype(np.float64) ** 3 * (params[:, 2] + 1) ** 2, jobs)

    def run(share: list[int]) -> None:
        if not share:
            return
        order = np.array(sorted(share), np.int64)
        most, scores = int(N[order].max()), int(cells[order].max())
        _infer_many(offsets, params, token, arc, bigram, np.empty(scores), np.empty(scores if with_marginals else 1),
                    np.empty(most * most), np.empty(most), np.empty(most), np.empty(most), goal, with_marginals, log_z,
                    safe, *outputs, order)

    _run_shares(run, shares)
    return log_z, safe, offsets, *outputs
