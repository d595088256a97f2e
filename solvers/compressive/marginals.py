"""log Z and posterior marginals by inside and outside over the hook-trick chart, in two engines.

**The scaled chart** (:class:`compbench_solvers.compressive.chart.ScaledChart`, used first): inside and outside are two more
modes of the rules that fill and backtrace the max chart (``_derive_rules``), in the sum-product semiring on scaled
probabilities.  Inside sums I[x] += I[a] I[b] score(e) over every rule instance e = (x <- a b); outside, in the
reverse order, O[a] += O[x] I[b] score(e) and O[b] += O[x] I[a] score(e); an item's posterior is O[x] I[x] / Z.
An item's marginal gives an arc ((rtrap h m), (ltrap m h)) or a bigram ((skip i j): i and j+1 consecutive); second
order's sibling triples get the posterior mass of the attachments that score them, summed during outside.  With a
length condition every item carries a vector over its count of kept (or dropped) words, and products are
convolutions truncated at the cap, as in resource-dp.  First-order problems go through the batch kernel
(:func:`compbench_solvers.compressive.batch.infer`, the same rules; one problem is a batch of one, so an answer
does not depend on the batch it came in), second-order ones, and first-order ones the batch kernel refused, through
:class:`ScaledChart` (whose third underflow rule the kernel lacks).  The answer is kept when no value overflowed and
what underflowed provably changes nothing (the rules above :data:`SAFE`); otherwise --

**the log-space engine** answers (about ten times slower, at any temperature; its posteriors, rounded as float64 rounds
sums as large as the scores, are clipped to 1):
:func:`compbench_solvers.compressive.chart.hypergraph` lists every rule instance of the deduction system
(``_derive_rules`` in EMIT mode), and the two passes below are the generic semiring algorithms over that list (Goodman
1999) with ⊕ = log-sum-exp and ⊗ = +; the convolutions of count vectors run on numbers scaled per vector, in log space
where their spreads are too wide.  A hyperedge's posterior goes to what it scores: an attachment (h -> m) to token m,
arc (h, m) and, in second order, the sibling triple (h, s, m), where s is read off its antecedents ((rtrap h s) in
[rtrap-next], (ltrap s h) in [ltrap-next], s = h in the [*-first] rules); a [skip] axiom (skip i j) to bigram (i, j+1).

Every projective tree over every kept set is exactly one derivation (``tests/test_ilp.py`` counts them), so Z sums
exp(objective) over the solutions exactly once each.
"""

from __future__ import annotations

import math

import numpy as np

from compbench import Problem, ProblemBatch
from compbench.inference import Marginals, at_most_one
from compbench.limits import available_memory

from ..jit import njit
from .base import count_plan
from .batch import _infer_many, infer
from .chart import (COUNTING, ITEMS, LTRAP, RTRAP, SAFE, SKIP, Hypergraph, ScaledChart, announce_compile,
                    hypergraph, max_hyperedges, outside_underflow_negligible)

NEG = -np.inf


def log_add(a: float, b: float) -> float:
    """log(exp(a) + exp(b)) without overflow, -inf the semiring's zero: plain Python, compiled for the CPU here
    (:func:`_log_add`) and for the GPU in :mod:`compbench_solvers.cuda.device`."""
    if a == NEG:
        return b
    if b == NEG:
        return a
    if a > b:
        return a + math.log1p(math.exp(b - a))
    return b + math.log1p(math.exp(a - b))


_log_add = njit(cache=True)(log_add)


def log_merge(top: float, total: float, top2: float, total2: float) -> tuple[float, float]:
    """⊕ of two running log-sum-exps, each held as (top, total): top the largest value, total Σ exp(value - top), so
    that the log-sum-exp is top + log(total); (-inf, 0) holds nothing, and one value v is (v, 1).  One exp, after
    the choice of which side is larger (a GPU's threads that choose differently would run both sides of a branch
    one after the other): the larger side's total plus the smaller's scaled by exp(-|top - top2|).  Compiled for the
    GPU in :mod:`compbench_solvers.cuda.device`, which both GPU kernel modules use."""
    if top2 == NEG:
        return top, total
    larger, smaller = (total2, total) if top2 > top else (total, total2)
    return max(top, top2), larger + smaller * math.exp(-abs(top - top2))


RANGE = 300.0  # a count vector whose finite values spread wider than this is convolved in log space


@njit(cache=True, inline="always")
def _scaled(values, item, top, out):
    """Write exp(values[item, c] - offset) for c = 0..top into ``out``; return the offset (the largest value, -inf
    when there is none) and the spread of the finite values.  Item -1 is the semiring's one: 1 at count 0.
    Convolutions then run on numbers in [0, 1], with one exp and one log per count instead of one log-sum-exp per
    pair of counts; where the spreads of the vectors of one hyperedge add up to more than 2 RANGE (scores at a low
    temperature), products of scaled values could underflow, and that hyperedge is done in log space."""
    if item < 0:
        out[0] = 1.0
        return 0.0, 0.0
    offset, low = NEG, np.inf
    for c in range(top + 1):
        v = values[item, c]
        offset = max(offset, v)
        if v != NEG:
            low = min(low, v)
    for c in range(top + 1):
        out[c] = math.exp(values[item, c] - offset) if offset != NEG else 0.0
    return offset, (offset - low if offset != NEG else 0.0)


@njit(cache=True, inline="always")
def _value(values, item, c):
    """An item's value at count c; item -1 is the semiring's one (count 0)."""
    if item < 0:
        return 0.0 if c == 0 else NEG
    return values[item, c]


@njit(cache=True, inline="always")
def _top(most, item):
    """The largest count an antecedent can have: a span (i, j) keeps at most j - i words; the one keeps none."""
    return 0 if item < 0 else most[item]


@njit(cache=True)
def _inside(conclusion, antecedents, score, adds, most, inside):
    """inside[item, c]: log-sum-exp over the derivations of the item that keep c words (adds[e] words per edge)."""
    cap = inside.shape[1] - 1
    pa, pb = np.empty(cap + 1), np.empty(cap + 1)
    for e in range(conclusion.shape[0]):
        x, a, b, k = conclusion[e], antecedents[e, 0], antecedents[e, 1], adds[e]
        ta, tb = min(cap - k, _top(most, a)), min(cap - k, _top(most, b))
        if ta < 0 or tb < 0:
            continue
        ma, spread_a = _scaled(inside, a, ta, pa)
        mb, spread_b = _scaled(inside, b, tb, pb)
        if ma == NEG or mb == NEG:
            continue
        if spread_a + spread_b > 2 * RANGE:
            for c1 in range(ta + 1):  # the same sum in log space
                for c2 in range(min(tb, cap - k - c1) + 1):
                    v = _value(inside, a, c1) + _value(inside, b, c2)
                    if v != NEG:
                        inside[x, c1 + c2 + k] = _log_add(inside[x, c1 + c2 + k], v + score[e])
            continue
        base = ma + mb + score[e]
        for c in range(k, min(cap, ta + tb + k) + 1):  # I[x, c] ⊕= ⊕_{c1 + c2 + k = c} I[a, c1] ⊗ I[b, c2] ⊗ s
            total = 0.0
            for c1 in range(max(0, c - k - tb), min(ta, c - k) + 1):
                total += pa[c1] * pb[c - k - c1]
            if total > 0.0:
                inside[x, c] = _log_add(inside[x, c], base + math.log(total))


@njit(cache=True)
def _outside(conclusion, antecedents, score, adds, most, inside, outside, log_z, posterior):
    """outside[item, c] in reverse order, and each hyperedge's posterior probability."""
    cap = inside.shape[1] - 1
    pa, pb, po = np.empty(cap + 1), np.empty(cap + 1), np.empty(cap + 1)
    for e in range(conclusion.shape[0] - 1, -1, -1):
        x, a, b, k = conclusion[e], antecedents[e, 0], antecedents[e, 1], adds[e]
        posterior[e] = 0.0
        ta, tb = min(cap - k, _top(most, a)), min(cap - k, _top(most, b))
        if ta < 0 or tb < 0:
            continue
        mo, spread_o = _scaled(outside, x, cap, po)
        ma, spread_a = _scaled(inside, a, ta, pa)
        mb, spread_b = _scaled(inside, b, tb, pb)
        if mo == NEG or ma == NEG or mb == NEG:
            continue
        if spread_o + spread_a + spread_b > 2 * RANGE:
            log_total = NEG  # the same sums in log space
            for c1 in range(ta + 1):
                for c2 in range(min(tb, cap - k - c1) + 1):
                    va, vb, vo = _value(inside, a, c1), _value(inside, b, c2), outside[x, c1 + c2 + k]
                    if va == NEG or vb == NEG or vo == NEG:
                        continue
                    log_total = _log_add(log_total, vo + va + vb + score[e])
                    if a >= 0:
                        outside[a, c1] = _log_add(outside[a, c1], vo + vb + score[e])
                    if b >= 0:
                        outside[b, c2] = _log_add(outside[b, c2], vo + va + score[e])
            posterior[e] = math.exp(log_total - log_z) if log_total != NEG else 0.0
            continue
        total = 0.0  # Σ O[x, c1 + c2 + k] I[a, c1] I[b, c2]: the hyperedge's posterior mass
        for c1 in range(ta + 1):
            toward_a = 0.0  # O[a, c1] ⊕= O[x, c1 + c2 + k] ⊗ I[b, c2] ⊗ s
            for c2 in range(min(tb, cap - k - c1) + 1):
                toward_a += po[c1 + c2 + k] * pb[c2]
            total += toward_a * pa[c1]
            if a >= 0 and toward_a > 0.0:
                outside[a, c1] = _log_add(outside[a, c1], mo + mb + score[e] + math.log(toward_a))
        if b >= 0:
            for c2 in range(tb + 1):
                toward_b = 0.0  # O[b, c2] ⊕= O[x, c1 + c2 + k] ⊗ I[a, c1] ⊗ s
                for c1 in range(min(ta, cap - k - c2) + 1):
                    toward_b += po[c1 + c2 + k] * pa[c1]
                if toward_b > 0.0:
                    outside[b, c2] = _log_add(outside[b, c2], mo + ma + score[e] + math.log(toward_b))
        if total > 0.0:
            posterior[e] = math.exp(mo + ma + mb + score[e] + math.log(total) - log_z)


def _refuse_if_too_big(engine: str, n: int, needed: int) -> None:
    """MemoryError, with what it would take, when ``needed`` bytes exceed the memory available now (not read for
    less than 64 MiB: reading /proc costs more than a small chart takes to fill; numpy's own MemoryError remains)."""
    if needed < 1 << 26:
        return
    available = available_memory()
    if needed > available:
        raise MemoryError(f"compbench.marginals: the {engine} for n = {n} needs {needed / 2**20:.0f} MiB, "
                          f"above the {available / 2**20:.0f} MiB available")


def _log_space_inside(problem: Problem) -> tuple[Hypergraph, np.ndarray, np.ndarray, np.ndarray, float, int, int]:
    """Inside over the hypergraph; with a length condition counting kept words up to its upper end."""
    counting = problem.length is not None
    lo, hi = problem.length_bounds() if counting else (0, 0)
    # the listed hyperedges (6 numbers each, twice while listing), inside and outside per item and count
    _refuse_if_too_big("log-space engine", problem.n, 8 * (12 * max_hyperedges(problem.n)
                                                         + 2 * ITEMS * (problem.n + 1) ** 2 * (hi + 1)))
    graph = hypergraph(problem)
    adds = (graph.modifier >= 0).astype(np.int64) if counting else np.zeros(len(graph.score), np.int64)
    N = graph.n + 1
    items = np.arange(graph.num_items)
    most = np.minimum(hi, items % N - (items // N) % N).astype(np.int64)  # at most j - i words in (i, j)
    inside = np.full((graph.num_items, hi + 1), NEG)
    _inside(graph.conclusion, graph.antecedents, graph.score, adds, most, inside)
    allowed = inside[graph.goal, lo:hi + 1]
    top = allowed.max() if len(allowed) else NEG
    log_z = float(top + np.log(np.exp(allowed - top).sum())) if top != NEG else -math.inf
    return graph, adds, most, inside, log_z, lo, hi


def log_space_marginals(problem: Problem) -> Marginals:
    """:func:`marginals` in log space over the listed hypergraph: at any temperature and length, about ten times
    slower than the scaled chart.  A posterior is exp(inside + outside - log Z) of sums as large as the scores:
    float64 rounds them by up to 2^-52 of the largest (about 1e-4 at scores near 1e12): a sure token read 1.00003,
    clipped to 1 (:func:`compbench.inference.at_most_one`, as every chart's)."""
    graph, adds, most, inside, log_z, lo, hi = _log_space_inside(problem)
    n = problem.n
    if log_z == -math.inf:
        return _no_solution(problem)
    outside = np.full_like(inside, NEG)
    outside[graph.goal, lo:hi + 1] = 0.0
    posterior = np.zeros(len(graph.score))
    _outside(graph.conclusion, graph.antecedents, graph.score, adds, most, inside, outside, log_z, posterior)
    attach = np.flatnonzero(graph.modifier >= 0)
    heads, mods, mass = graph.head[attach], graph.modifier[attach], posterior[attach]
    N = n + 1

    def summed(index: np.ndarray, weights: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:  # float64, even empty
        return np.bincount(index, weights, minlength=int(np.prod(shape))).astype(np.float64, copy=False).reshape(shape)

    token = summed(mods - 1, mass, (n,))
    arc = summed(heads * N + mods, mass, (N, N))
    x, i, j = graph.conclusion // (N * N), (graph.conclusion // N) % N, graph.conclusion % N
    skips = np.flatnonzero((x == SKIP) & (graph.antecedents[:, 0] < 0))
    bigram = summed(i[skips] * (N + 1) + j[skips] + 1, posterior[skips], (N + 1, N + 1))
    sibling = None
    if problem.second_order:
        sibling = summed((heads * N + _previous_sibling(graph, attach)) * N + mods, mass, (N, N, N))
    at_most_one(token, arc, bigram, sibling)
    return Marginals(log_z, token, arc, bigram, sibling)


def _no_solution(problem: Problem) -> Marginals:
    n = problem.n
    sibling = np.zeros((n + 1,) * 3) if problem.second_order else None
    return Marginals(-math.inf, np.zeros(n), np.zeros((n + 1, n + 1)), np.zeros((n + 2, n + 2)), sibling)


def _goal_counts(n: int, lo: int, hi: int) -> tuple[str, int, np.ndarray]:
    """What the scaled chart counts for n tokens and lengths lo..hi (the cheaper of kept and dropped words, as
    resource-dp), its cap, and the goal's weights over the counts: 1 where the count meets the length condition."""
    counting, cap = count_plan(n, lo, hi)
    goal = np.zeros(cap + 1)
    if counting == "none":
        goal[0] = 1.0
    elif counting == "kept":
        goal[lo:hi + 1] = 1.0
    else:
        goal[n - hi:n - lo + 1] = 1.0
    return counting, cap, goal


def _scaled_inside(problem: Problem) -> tuple[ScaledChart, np.ndarray, float] | None:
    """The scaled chart, its goal weights and scaled Z; None when a value left the safe range or the inside pass
    underflowed (SAFE's and NORMAL's rules: :mod:`compbench_solvers.compressive.chart`)."""
    counting, cap, goal = _goal_counts(problem.n, *problem.length_bounds())
    N = problem.n + 1
    # inside and outside charts; in second order the sibling factors, their packed copy and posteriors
    _refuse_if_too_big("scaled chart", problem.n, 8 * (2 * ITEMS * N ** 2 * (cap + 1)
                                                     + (3 * N ** 3 if problem.second_order else 0)))
    chart = ScaledChart.fill(problem, counting=counting, cap=cap)
    with np.errstate(invalid="ignore"):  # inf * 0 when a value overflowed: caught below
        z = float(chart.goal @ goal)
    if not (chart.largest_factor <= SAFE and chart.inside.max() <= SAFE and 0.0 < z <= SAFE
            and chart.underflow_safe(goal)):
        return None
    return chart, goal, z


def scaled_log_partition(problem: Problem) -> float | None:
    """log Z by the scaled chart (:class:`ScaledChart`), or None when its values left the safe range."""
    found = _scaled_inside(problem)
    if found is None:
        return None
    chart, _, z = found
    return math.log(z) + float(chart.scale[-1]) + chart.shift


def scaled_marginals(problem: Problem) -> Marginals | None:
    """:func:`marginals` by the scaled chart's inside and outside, or None when a value left the safe range."""
    found = _scaled_inside(problem)
    if found is None:
        return None
    chart, goal, z = found
    outside, mass = chart.outside(goal)
    n = problem.n
    if not (outside.max() <= SAFE and outside_underflow_negligible(float(chart.inside.max()), chart.largest_factor, z,
                                                                    n, len(goal) - 1)):
        return None
    item = (outside * chart.inside).sum(axis=-1) / z  # the posterior of every item (x i j), i <= j
    arc = np.triu(item[RTRAP], 1) + np.triu(item[LTRAP], 1).T  # (rtrap h m): h -> m; (ltrap m h): h -> m
    bigram = np.zeros((n + 2, n + 2))
    bigram[:n + 1, 1:] = np.triu(item[SKIP])  # (skip i j): i and j+1 are consecutive
    sibling = None
    if problem.second_order:
        sibling = mass.transpose(0, 2, 1)  # the problem's layout [h, s, m], a view
        sibling *= 1.0 / z
    log_z = math.log(z) + float(chart.scale[-1]) + chart.shift
    token = arc[:, 1:].sum(axis=0)
    at_most_one(token, arc, bigram, sibling)
    return Marginals(log_z, token, arc, bigram, sibling)


def log_partition(problem: Problem) -> float:
    """log Σ exp(objective) over every solution of ``problem`` (its length condition, root mode and order)."""
    return float(log_partition_many(ProblemBatch.from_problems([problem]), 1)[0])


def marginals(problem: Problem) -> Marginals:
    """Posterior probabilities of tokens, arcs, bigrams (and sibling triples) under p(solution) ∝ exp(objective):
    by the scaled chart (a batch of one: the same numbers as in any batch), or in log space where its values leave
    the safe range."""
    return marginals_many(ProblemBatch.from_problems([problem]), 1)[0]


def _one_log_partition(problem: Problem) -> float:
    """log Z of a problem the batch kernel did not answer (second order, or out of its range): by the scaled chart,
    whose third underflow rule keeps some the kernel's two did not, else in log space."""
    found = scaled_log_partition(problem)
    return found if found is not None else _log_space_inside(problem)[4]


def _one_marginals(problem: Problem) -> Marginals:
    """:func:`_one_log_partition`'s engines for the marginals."""
    found = scaled_marginals(problem)
    return found if found is not None else log_space_marginals(problem)


def _previous_sibling(graph: Hypergraph, attach: np.ndarray) -> np.ndarray:
    """For second-order attachments: the previous modifier s read off the hyperedge's antecedents."""
    N = graph.n + 1
    first, second = graph.antecedents[attach, 0], graph.antecedents[attach, 1]
    kind = first // (N * N)
    conclusion_kind = graph.conclusion[attach] // (N * N)
    head = graph.head[attach]
    # [rtrap-next] (rtrap h s) (box s m): s is the first antecedent's right end
    # [ltrap-next] (box m s) (ltrap s h): s is the second antecedent's left end
    # [rtrap-first] (skip h r) (ltri r+1 m) and [ltrap-first] (rtri m h-1) (ltri h h): s = h
    right_next = (conclusion_kind == RTRAP) & (kind == RTRAP)
    left_next = (conclusion_kind == LTRAP) & (second >= 0) & (second // (N * N) == LTRAP)
    return np.where(right_next, first % N, np.where(left_next, (second // N) % N, head))


def _batched(batch: ProblemBatch, with_marginals: bool, jobs: int) -> tuple[np.ndarray, ...]:
    """A first-order batch through the compiled batch kernel (:func:`compbench_solvers.compressive.batch.infer`):
    (log Z, safe, token, arc, bigram posteriors in the batch's padded shapes).  A second-order batch is answered by
    none (every sentence unsafe: :func:`_one_log_partition` answers it)."""
    B = len(batch)
    if batch.second_order:
        return np.full(B, NEG), np.zeros(B, bool), None, None, None
    announce_compile((_infer_many,), "the batch inside-outside kernel", "10 s")
    plans = [_goal_counts(n, lo, hi) for n, lo, hi in zip(batch.sizes.tolist(), batch.min_length.tolist(),
                                                           batch.max_length.tolist())]
    width = max(len(goal) for _, _, goal in plans)
    params = np.zeros((B, 2), np.int64)
    goals = np.zeros((B, width))
    for k, (counting, cap, goal) in enumerate(plans):
        params[k] = COUNTING[counting], cap
        goals[k, :len(goal)] = goal
    cells = [(n + 1) ** 2 * (cap + 1) for n, (_, cap, _) in zip(batch.sizes.tolist(), plans)]
    largest = int(np.argmax(cells))  # once per batch: the largest chart (inside and outside), a sentence's own
    _refuse_if_too_big("scaled chart", int(batch.sizes[largest]), 8 * 2 * ITEMS * cells[largest])
    return infer(batch, params, goals, with_marginals, jobs)


def log_partition_many(batch: ProblemBatch, jobs: int) -> np.ndarray:
    """:func:`log_partition` of every sentence of a batch; first-order ones in compiled calls over ``jobs``
    threads."""
    log_z, safe, *_ = _batched(batch, False, jobs)
    for k in np.flatnonzero(~safe).tolist():
        log_z[k] = _one_log_partition(batch[k])
    return log_z


def marginals_many(batch: ProblemBatch, jobs: int) -> list[Marginals]:
    """:func:`marginals` of every sentence of a batch; first-order ones in compiled calls over ``jobs`` threads."""
    log_z, safe, token, arc, bigram = _batched(batch, True, jobs)
    at_most_one(token, arc, bigram)
    answers = []
    for k, (n, ok) in enumerate(zip(batch.sizes.tolist(), safe.tolist())):
        if ok:
            answers.append(Marginals(float(log_z[k]), token[k, :n], arc[k, :n + 1, :n + 1],
                                     bigram[k, :n + 2, :n + 2]))
        else:
            answers.append(_one_marginals(batch[k]))
    return answers


def tree_many(arcs: np.ndarray, single_root: bool, with_marginals: bool, jobs: int) -> tuple[np.ndarray, list]:
    """log Z and (with ``with_marginals``) the arc marginals of B tree-CRFs of one size (``arcs``: B x (n+1) x (n+1),
    checked scores): the batch of problems that keep every token, with no token or bigram scores (the problem
    :func:`compbench.tree_marginals` builds).  (log Z per tree, [arc marginals per tree])."""
    if len(arcs) == 0:
        return np.zeros(0), []
    n = arcs.shape[1] - 1
    batch = ProblemBatch.from_arrays(arcs, length=n, single_root=single_root)
    if with_marginals:
        answers = marginals_many(batch, jobs)
        return np.array([m.log_partition for m in answers]), [m.arc for m in answers]
    return log_partition_many(batch, jobs), []
