"""Batches: many sentences through the chart's compiled kernels in one call, in one layout.

The kernels read a :class:`compbench.ProblemBatch`'s padded arrays as they are: sentence k's scores are the
top-left blocks of ``token[k]``, ``arc[k]``, ``bigram[k]`` (and ``sibling[k]``) and its size is ``sizes[k]``; the
rules index the blocks directly, so nothing is copied per sentence.  A single problem is a batch of one (its own
arrays viewed with a leading axis of 1: :func:`decode_one`), so both paths run the same compiled call and find the
same answers.  One compiled call fills and backtraces every chart of a batch (:func:`decode`) or sums its inside and
outside (:func:`infer`): the per-sentence Python (the chart's allocation, the records, numba's dispatch) is paid
once per batch.  The calls release the GIL, so threads run slices of a batch on several cores.
"""

from __future__ import annotations

import functools
import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed, wait
from typing import Callable

import numpy as np

from compbench import Problem, ProblemBatch

from ..jit import kernel, with_globals
from .chart import (ITEMS, KEPT, LTRAP, NEG, NONE, RTRAP, RTRI, SAFE, SKIP, Cells, Scores, _backtrace,
                    _fill_max, _inside_sum, _outside_sum, exp_attach, log2_solutions,
                    outside_underflow_negligible, shift_to_unit, underflow_safe)

PARAMS = 4  # settings per sentence: what it counts (NONE, KEPT, DROPPED), the cap, its lengths lo..hi
OUT = 3  # results per sentence: the count of the best derivation, its objective (-inf: none), its kept words


@kernel
def best_count(goal, counting, n, lo, hi):
    """The count of ``goal`` (a goal's values per count of ``counting`` words, n tokens) at the best allowed
    length lo..hi: the best objective, the fewest kept words among equal optima (0 when nothing is counted).
    The one place this rule lives: the batch kernel, ``resource-dp``'s ``all_lengths`` and ``pruned-dp`` call it."""
    if counting == NONE:
        return 0
    count, top = 0, NEG
    for m in range(lo, hi + 1):
        c = m if counting == KEPT else n - m
        if goal[c] > top or m == lo:
            count, top = c, goal[c]
    return count


ORDER = None  # bound in each order's copy of _decode_sentences (:func:`compbench_solvers.jit.with_globals`)


def _decode_sentences(token, arc, bigram, sibling, sizes, single_root, params, kept_bonus, tie, V_flat, T_flat,
                      attach_flat, zeros, stack, heads, out, order):
    """Fill and backtrace the charts of the sentences ``order`` lists (a batch's padded arrays, ``sizes`` per
    sentence; ``params`` per sentence: what it counts up to which cap, and its lengths lo..hi; ``kept_bonus`` added
    to each kept word): ``heads`` (B x (N+1) flat, all -1) gets each sentence's best derivation among the counts of
    its lengths (:func:`best_count`), ``out`` its count, its objective (-inf: none) and its kept words.

    Not a kernel itself: each order has a copy (``_DECODE_MANY``) in which ``ORDER`` is a constant, so that a
    sentence's sibling scores are None in first order and an array in second, never optional (numba decides
    ``sibling is None`` at compile time only for an argument typed None); their type picks the order's rules
    (:func:`compbench_solvers.compressive.chart._derive`)."""
    width = heads.shape[0] // sizes.shape[0]
    for k in order:
        n = sizes[k]
        N = n + 1
        counting, cap, lo, hi = params[k, 0], params[k, 1], params[k, 2], params[k, 3]
        size = ITEMS * N * N
        V = V_flat[:size * (cap + 1)].reshape((ITEMS, N, N, cap + 1))
        T = T_flat[:size].reshape((ITEMS, N, N))
        for e in range(size * (cap + 1)):
            V_flat[e] = NEG
        for e in range(size):
            T_flat[e] = 0
        attach = attach_flat[:N * N].reshape((N, N))  # attach(h, m) = arc(h, m) + token(m)
        for h in range(N):
            attach[h, 0] = arc[k, h, 0]
            for m in range(1, N):
                attach[h, m] = arc[k, h, m] + token[k, m - 1]
        ones = zeros[:N]
        chart = Cells(V=V, T=T, window=None, outside=None, mass=None, edges=None, n_edges=None)
        scores = Scores(bigram=bigram[k], attach=attach, kept_bonus=kept_bonus[k],
                        sibling=sibling[k] if ORDER == 2 else None, ones=ones, gap=ones, scale=None,
                        single_root=single_root, counting=counting, cap=cap, tie=tie)
        _fill_max(chart, scores)
        count = best_count(V[RTRI, 0, n], counting, n, lo, hi)
        out[k, 0] = count
        out[k, 1] = V[RTRI, 0, n, count]
        out[k, 2] = T[RTRI, 0, n] if counting == NONE else (count if counting == KEPT else n - count)
        _backtrace(chart, scores, count, heads[k * width:k * width + N], stack)


_DECODE_MANY = {order: kernel(nogil=True)(with_globals(_decode_sentences, f"_decode_many_{order}", ORDER=order))
                for order in (1, 2)}


def _decode_many(token, arc, bigram, sibling, *arguments) -> None:
    """:func:`_decode_sentences` compiled for the batch's order (``sibling`` None: first order)."""
    _DECODE_MANY[1 if sibling is None else 2](token, arc, bigram, sibling, *arguments)


_scratch = threading.local()  # each thread's work arrays for the one-problem path, grown when needed


# Work arrays up to this many values (16 MiB) are kept for the thread's next call; larger ones are not: a kept
# counted chart of n = 200 (hundreds of MiB) made the next pruned-dp fill 4-15x slower (measured 2026-11-25).
KEEP_WORK = 1 << 21


def _work(scores: int, N: int) -> tuple[np.ndarray, ...]:
    """Work arrays for charts of ``scores`` values over N positions: (V, T, attach, zeros, stack)."""
    work = getattr(_scratch, "work", None)
    if work is None or work[0].size < scores or work[3].size < N:
        scores, N = max(scores, work[0].size if work else 0), max(N, work[3].size if work else 0)
        work = _new_work(scores, N)
        _scratch.work = work if scores <= KEEP_WORK else None
    return work


def _new_work(scores: int, N: int) -> tuple[np.ndarray, ...]:
    return (np.empty(scores), np.empty(ITEMS * N * N, np.int16), np.empty(N * N), np.zeros(N),
            np.empty((8 * (N + 1), 4), np.int64))


_ONE = np.zeros(1, np.int64)  # the one-problem path's order
_NO_BONUS = np.zeros(1)


def decode_one(problem: Problem, counting: int = NONE, cap: int = 0, lo: int = 0, hi: int = 0,
               tie: int = -1, kept_bonus: float = 0.0) -> tuple[np.ndarray, float, int]:
    """:func:`decode` of one problem as a batch of one (views of its own arrays, this thread's work arrays): the
    per-call cost of ``hook-dp`` and ``resource-dp``.  (heads, objective (-inf: none), kept words); with a
    ``kept_bonus`` (added to every kept word's score) the objective includes it."""
    n = problem.n
    N = n + 1
    sibling = problem.sibling_scores
    heads = np.full(N, -1, np.int64)
    out = np.empty((1, OUT))
    sizes = np.array((n,))
    sizes.flags.writeable = False  # as a batch's: one compiled version
    _decode_many(problem.token_scores[None], problem.arc_scores[None], problem.bigram_scores[None],
                 None if sibling is None else sibling[None], sizes, problem.single_root,
                 np.array(((counting, cap, lo, hi),)),
                 np.array((kept_bonus,)) if kept_bonus else _NO_BONUS, np.int64(tie),
                 *_work(ITEMS * N * N * (cap + 1), N), heads, out, _ONE)
    return heads, float(out[0, 1]), int(out[0, 2])


def decode(batch: ProblemBatch, params: np.ndarray, kept_bonus: np.ndarray | None = None, tie: int = -1,
           jobs: int = 1, which: np.ndarray | None = None,
           each: Callable[[np.ndarray, np.ndarray, np.ndarray], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The best derivations of the sentences ``which`` lists (None: all) in compiled calls over ``jobs`` threads:
    sentence k counts ``params[k, 0]`` words (NONE, KEPT or DROPPED) up to ``params[k, 1]`` and takes its best
    count among lengths ``params[k, 2]..params[k, 3]``, each kept word scoring ``kept_bonus[k]`` more.
    (heads B x (N+1), out B x 3): ``heads[k, :sizes[k] + 1]`` are sentence k's heads, ``out[k]`` its count,
    objective and kept words; the rows of the others are left at -1 and 0.  ``each(part, heads, out)`` is called in
    this thread with each part of ``which`` once it is decoded, while the threads decode the rest
    (:func:`run_in_parts`)."""
    B, width = len(batch), batch.max_n + 1
    heads = np.full(B * width, -1, np.int64)
    out = np.zeros((B, OUT))
    rows = heads.reshape(B, width)
    which = np.arange(B) if which is None else np.asarray(which, np.int64)
    if len(which):
        params = np.ascontiguousarray(params, np.int64).reshape(B, PARAMS)
        bonus = np.zeros(B) if kept_bonus is None else np.ascontiguousarray(kept_bonus, np.float64)
        N = batch.sizes + 1
        cells = ITEMS * N ** 2 * (params[:, 1] + 1)
        arrays = (batch.token_scores, batch.arc_scores, batch.bigram_scores, batch.sibling_scores, batch.sizes,
                  batch.single_root, params, bonus, np.int64(tie))

        def run(part: np.ndarray) -> None:
            _decode_many(*arrays, *_new_work(int(cells[part].max()), int(N[part].max())), heads, out, part)

        run_in_parts(run, which, N[which].astype(np.float64) ** 3 * (params[which, 1] + 1) ** 2, jobs,
                     None if each is None else lambda part: each(part, rows, out))
    return rows, out


PARTS_PER_JOB = 8  # a batch on several threads is cut into this many parts per thread, of about equal cost


@functools.cache
def _threads(jobs: int) -> ThreadPoolExecutor:
    """The kept pool of ``jobs`` threads (one per number asked for: no thread is started per call)."""
    return ThreadPoolExecutor(jobs, thread_name_prefix="compbench")


os.register_at_fork(after_in_child=_threads.cache_clear)  # a forked child has the pools but not their threads


def run_in_parts(run: Callable[[np.ndarray], None], which: np.ndarray, cost: np.ndarray, jobs: int,
                 each: Callable[[np.ndarray], None] | None = None, parts: int | None = None) -> None:
    """``run(part)`` for parts of ``which`` that cover it, then ``each(part)`` when given.  One thread or one part:
    all of ``which`` at once, in this thread.  Else ``parts`` parts (default ``PARTS_PER_JOB`` a thread) of about
    equal ``cost``, the costliest sentences first (a long sentence costs as much as hundreds of short ones), on
    ``jobs`` threads (the kernels release the GIL) that take the next part when they finish one; ``each`` runs in
    this thread on each part as it is done, so the answers of the parts done are built while the threads decode the
    others.  None is still running when it returns or raises (a failure cancels the parts not yet started)."""
    jobs = max(1, int(jobs))  # the pool's size (not cut to the parts: one kept pool for every call that asks it)
    parts = min(len(which), jobs * PARTS_PER_JOB if parts is None else int(parts))
    if jobs == 1 or parts <= 1:
        run(which)
        if each is not None:
            each(which)
        return
    order = np.argsort(-cost, kind="stable")
    ends = np.searchsorted(np.cumsum(cost[order]), cost.sum() * np.arange(1, parts) / parts, side="right")
    pieces = [np.sort(which[chunk]) for chunk in np.split(order, ends) if len(chunk)]
    futures = {_threads(jobs).submit(run, piece): piece for piece in pieces}
    try:
        for future in as_completed(futures):
            future.result()
            if each is not None:
                each(futures[future])
    except BaseException:
        for future in futures:
            future.cancel()
        raise
    finally:  # the parts write into the caller's arrays: none may outlive the call
        wait(futures)


@kernel(nogil=True)
def gather_scores(token, arc, bigram, sizes, rows, which, token_out, arc_out, bigram_out):
    """Sentence ``rows[k]`` of a padded batch into row k of the padded arrays ``*_out`` (a chunk of the batch at a
    width of its own), for k in ``which``: its own scores only, its n token scores and the top-left (n+1)-square of
    its arc and (n+2)-square of its bigram scores (the rest of the rows is left as it is: the kernels read a
    sentence's own scores only)."""
    for k in which:
        b = rows[k]
        n = sizes[b]
        for j in range(n):
            token_out[k, j] = token[b, j]
        for i in range(n + 1):
            for j in range(n + 1):
                arc_out[k, i, j] = arc[b, i, j]
        for i in range(n + 2):
            for j in range(n + 2):
                bigram_out[k, i, j] = bigram[b, i, j]


@kernel(nogil=True)
def _infer_many(token, arc, bigram, sizes, single_root, params, goal, V_flat, O_flat, attach_flat, bigram_flat, ones,
                gap, scale, prefix, with_marginals, log_z, safe, token_out, arc_out, bigram_out, order):
    """log Z (and with ``with_marginals`` the posterior marginals of tokens, arcs and bigrams, into the padded
    ``token_out``, ``arc_out`` and ``bigram_out``) of the first-order sentences ``order`` lists, by the scaled
    chart's inside and outside, as :class:`ScaledChart` computes them one at a time; ``params`` per sentence: what
    it counts and the cap, and ``goal[k, c]`` the weight of count c at the goal.  ``safe[k]`` is False where a value
    left the safe range or underflowed: that sentence's answer is to be computed again by the engine that falls
    back to log space (the rules above :data:`compbench_solvers.compressive.chart.SAFE`)."""
    for k in order:
        n = sizes[k]
        N = n + 1
        counting, cap = params[k, 0], params[k, 1]
        size = ITEMS * N * N * (cap + 1)
        V = V_flat[:size].reshape((ITEMS, N, N, cap + 1))
        for e in range(size):
            V_flat[e] = 0.0
        attach = attach_flat[:N * N].reshape((N, N))
        shifted_bigram = bigram_flat[:(N + 1) * (N + 1)].reshape((N + 1, N + 1))
        for h in range(N):
            for m in range(N):
                attach[h, m] = arc[k, h, m] + (token[k, m - 1] if m >= 1 else 0.0)
        shift = shift_to_unit(attach, bigram[k], shifted_bigram, prefix)
        largest, smallest_attach = exp_attach(attach)
        for j in range(N):
            ones[j], gap[j], scale[j] = 1.0, 1.0, 0.0
        scores = Scores(bigram=shifted_bigram, attach=attach, kept_bonus=1.0, sibling=None, ones=ones[:N],
                        gap=gap[:N], scale=scale[:N], single_root=single_root, counting=counting, cap=cap,
                        tie=np.int64(0))  # first order: no sibling scores
        smallest_item, smallest_gap, reach, _ = _inside_sum(Cells(V=V, T=None, window=None, outside=None, mass=None,
                                                               edges=None, n_edges=None), scores)
        z, top = 0.0, 0.0
        for c in range(cap + 1):
            z += V[RTRI, 0, n, c] * goal[k, c]
        for e in range(size):
            top = max(top, V_flat[e])
        for j in range(N):
            largest = max(largest, gap[j])
        safe[k] = (largest <= SAFE and top <= SAFE and 0.0 < z <= SAFE
                   and underflow_safe(smallest_item, min(smallest_attach, smallest_gap), reach, z, scale[n], n, cap,
                                      log2_solutions(n, counting, goal[k]), largest))
        log_z[k] = math.log(z) + scale[n] + shift if safe[k] else NEG
        if not (with_marginals and safe[k]):
            continue
        O = O_flat[:size].reshape((ITEMS, N, N, cap + 1))
        for e in range(size):
            O_flat[e] = 0.0
        for c in range(cap + 1):
            O[RTRI, 0, n, c] = goal[k, c]
        _outside_sum(Cells(V=V, T=None, window=None, outside=O, mass=O_flat[:0].reshape((0, 0, 0)), edges=None,
                           n_edges=None), scores)
        top_outside = 0.0
        for e in range(size):
            top_outside = max(top_outside, O_flat[e])
        if not (top_outside <= SAFE and outside_underflow_negligible(top, largest, z, n, cap)):
            safe[k] = False
            continue
        arcs, bigrams = arc_out[k], bigram_out[k]
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
                bigrams[i, j + 1] = skip / z  # (skip i j): i and j+1 are consecutive
        for m in range(1, N):
            total = 0.0
            for h in range(N):
                total += arcs[h, m]
            token_out[k, m - 1] = total


def infer(batch: ProblemBatch, params: np.ndarray, goal: np.ndarray, with_marginals: bool, jobs: int = 1,
          which: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """:func:`_infer_many` over the first-order sentences ``which`` lists (None: all) in compiled calls over
    ``jobs`` threads: (log Z, safe, and with ``with_marginals`` the token, arc and bigram posteriors in the batch's
    padded shapes; else three empty arrays)."""
    B, width = len(batch), batch.max_n
    log_z, safe = np.full(B, NEG), np.zeros(B, bool)
    shapes = ((B, width), (B, width + 1, width + 1), (B, width + 2, width + 2))
    outputs = [np.zeros(shape if with_marginals else (1,) * len(shape)) for shape in shapes]
    which = np.arange(B) if which is None else np.asarray(which, np.int64)
    if len(which):
        params = np.ascontiguousarray(params, np.int64)
        N = batch.sizes + 1
        cells = ITEMS * N ** 2 * (params[:, 1] + 1)
        arrays = (batch.token_scores, batch.arc_scores, batch.bigram_scores, batch.sizes, batch.single_root, params,
                  goal)

        def run(order: np.ndarray) -> None:
            most, scores = int(N[order].max()), int(cells[order].max())
            _infer_many(*arrays, np.empty(scores), np.empty(scores if with_marginals else 1), np.empty(most * most),
                        np.empty((most + 1) ** 2), np.empty(most), np.empty(most), np.empty(most), np.empty(most + 1),
                        with_marginals, log_z, safe, *outputs, order)

        run_in_parts(run, which, N[which].astype(np.float64) ** 3 * (params[which, 1] + 1) ** 2, jobs)
    return log_z, safe, *outputs
