"""Inside and outside in the log semiring over the hook-trick chart's hypergraph: log Z and posterior marginals.

The rules are not written here: :func:`solvers.compressive.chart.hypergraph` lists every rule instance of the
deduction system (``_derive`` in EMIT mode, the code that fills and backtraces the chart), and the two passes below
are the generic semiring algorithms over that list (Goodman 1999; Eisner's inside-outside):

- inside, in topological order: I[x] ⊕= I[a] ⊗ I[b] ⊗ score(e) for every hyperedge e = (x <- a b);
- outside, in reverse order: O[a] ⊕= O[x] ⊗ I[b] ⊗ score(e), O[b] ⊕= O[x] ⊗ I[a] ⊗ score(e);
- the posterior of e is O[x] ⊗ I[a] ⊗ I[b] ⊗ score(e) / Z,

with ⊕ = log-sum-exp and ⊗ = +.  With a length condition every item carries a vector over its number of kept
words (``cap`` = the largest allowed length); ⊗ is then a log-space convolution of the count vectors, truncated at
cap, and an attachment adds one kept word.  Every projective tree over every kept set is exactly one hyperpath
(``tests/test_ilp.py`` counts them), so Z sums exp(objective) over the solutions exactly once each.

A hyperedge's posterior goes to what it scores: an attachment (h -> m) to token m, arc (h, m) and, in second order,
the sibling triple (h, s, m), where s is read off its antecedents ((rtrap h s) in [rtrap-next], (ltrap s h) in
[ltrap-next], s = h in the [*-first] rules); a [skip] axiom (skip i j) to bigram (i, j+1).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from compbench import Problem
from compbench.inference import Marginals

from .chart import LTRAP, RTRAP, SKIP, Hypergraph, hypergraph

NEG = -np.inf


@njit(cache=True)
def _log_add(a, b):
    if a == NEG:
        return b
    if b == NEG:
        return a
    if a > b:
        return a + math.log1p(math.exp(b - a))
    return b + math.log1p(math.exp(a - b))


@njit(cache=True, inline="always")
def _value(inside, item, c):
    """An antecedent's inside value at count c; item -1 is the semiring's one (count 0)."""
    if item < 0:
        return 0.0 if c == 0 else NEG
    return inside[item, c]


@njit(cache=True)
def _inside(conclusion, antecedents, score, adds, inside):
    """inside[item, c]: log-sum-exp over the derivations of the item that keep c words (adds[e] words per edge)."""
    cap = inside.shape[1] - 1
    for e in range(conclusion.shape[0]):
        x, a, b, k = conclusion[e], antecedents[e, 0], antecedents[e, 1], adds[e]
        for c1 in range(cap + 1 - k):
            va = _value(inside, a, c1)
            if va == NEG:
                continue
            for c2 in range(cap + 1 - k - c1):
                vb = _value(inside, b, c2)
                if vb != NEG:
                    inside[x, c1 + c2 + k] = _log_add(inside[x, c1 + c2 + k], va + vb + score[e])


@njit(cache=True)
def _outside(conclusion, antecedents, score, adds, inside, outside, log_z, posterior):
    """outside[item, c] in reverse order, and each hyperedge's posterior probability."""
    cap = inside.shape[1] - 1
    for e in range(conclusion.shape[0] - 1, -1, -1):
        x, a, b, k = conclusion[e], antecedents[e, 0], antecedents[e, 1], adds[e]
        total = NEG
        for c1 in range(cap + 1 - k):
            va = _value(inside, a, c1)
            if va == NEG:
                continue
            for c2 in range(cap + 1 - k - c1):
                vb = _value(inside, b, c2)
                ox = outside[x, c1 + c2 + k]
                if vb == NEG or ox == NEG:
                    continue
                total = _log_add(total, ox + va + vb + score[e])
                if a >= 0:
                    outside[a, c1] = _log_add(outside[a, c1], ox + vb + score[e])
                if b >= 0:
                    outside[b, c2] = _log_add(outside[b, c2], ox + va + score[e])
        posterior[e] = math.exp(total - log_z) if total != NEG else 0.0


def _inside_pass(problem: Problem) -> tuple[Hypergraph, np.ndarray, np.ndarray, float, int, int]:
    """Inside over the hypergraph; with a length condition counting kept words up to its upper end."""
    graph = hypergraph(problem)
    counting = problem.length is not None
    lo, hi = problem.length_bounds() if counting else (0, 0)
    adds = (graph.modifier >= 0).astype(np.int64) if counting else np.zeros(len(graph.score), np.int64)
    inside = np.full((graph.num_items, hi + 1), NEG)
    _inside(graph.conclusion, graph.antecedents, graph.score, adds, inside)
    allowed = inside[graph.goal, lo:hi + 1]
    top = allowed.max() if len(allowed) else NEG
    log_z = float(top + np.log(np.exp(allowed - top).sum())) if top != NEG else -math.inf
    return graph, adds, inside, log_z, lo, hi


def log_partition(problem: Problem) -> float:
    """log Σ exp(objective) over every solution of ``problem`` (its length condition, root mode and order)."""
    return _inside_pass(problem)[3]


def marginals(problem: Problem) -> Marginals:
    """Posterior probabilities of tokens, arcs, bigrams (and sibling triples) under p(solution) ∝ exp(objective)."""
    graph, adds, inside, log_z, lo, hi = _inside_pass(problem)
    n = problem.n
    token, arc, bigram = np.zeros(n), np.zeros((n + 1, n + 1)), np.zeros((n + 2, n + 2))
    sibling = np.zeros((n + 1,) * 3) if problem.second_order else None
    if log_z == -math.inf:
        return Marginals(log_z, token, arc, bigram, sibling)
    outside = np.full_like(inside, NEG)
    outside[graph.goal, lo:hi + 1] = 0.0
    posterior = np.zeros(len(graph.score))
    _outside(graph.conclusion, graph.antecedents, graph.score, adds, inside, outside, log_z, posterior)
    attach = np.flatnonzero(graph.modifier >= 0)
    heads, mods = graph.head[attach], graph.modifier[attach]
    np.add.at(token, mods - 1, posterior[attach])
    np.add.at(arc, (heads, mods), posterior[attach])
    N = n + 1
    x, i, j = graph.conclusion // (N * N), (graph.conclusion // N) % N, graph.conclusion % N
    skips = np.flatnonzero((x == SKIP) & (graph.antecedents[:, 0] < 0))
    np.add.at(bigram, (i[skips], j[skips] + 1), posterior[skips])
    if sibling is not None:
        np.add.at(sibling, (heads, _previous_sibling(graph, attach), mods), posterior[attach])
    return Marginals(log_z, token, arc, bigram, sibling)


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
