"""The ``joint`` formulation: the joint compression ILP (tree + bigram chain + projectivity + length + single_root;
Thadani & McKeown 2013 style; ``flow`` and tightening options below).

The model is built from named column blocks and row families (:class:`Family`: each adds its rows and carries its
size formula beside it; :func:`model_size` sums them).

Variables (n tokens, arcs = n² pairs (h, k) with h in 0..n, k in 1..n, h != k):

- ``z(k)`` (n, binary): token k kept;
- ``y(h,k)`` (n², binary): arc h -> k;
- ``b(a,b)`` ((n+2)(n+1)/2, binary): bigram a -> b, 0 <= a < b <= n+1;
- ``u(h,s,k)`` (second order only, binary, one per triple with s = h or s strictly between h and k): k is a
  modifier of h whose previous modifier on the same side, moving outward from h, is s (s = h: k is the first);
- flow: ``flow="single"`` (default, Magnanti-Wolsey / Martins, Smith & Xing 2009): one continuous ``f(h,k)`` per arc
  (n² variables); ``flow="multi"``: one ``f(t,h,k)`` per arc and kept-token commodity t (n³ variables).

Constraints (rows; the families' names in parentheses):

- one head per kept token (``one_head``): Σ_h y_hk = z_k (n rows); kept head (``kept_head``): y_hk <= z_h for
  h >= 1 (n(n-1) rows);
- single flow (``flow_root``, ``flow_cons``, ``flow_cap``): root emits Σ_k z_k (1 row), each token absorbs z_k
  (n rows), f_hk <= n y_hk (n² rows); multi flow (``commodity_flow``): for each commodity t the root emits z_t, t
  absorbs z_t, others conserve (n(n+1) rows) and f^t_hk <= y_hk (n³ rows);
- ``tighten`` (default, chosen by ``benchmarks/bench_ilp.py``; ``tighten=False`` for the plain model): single-flow
  capacities hi (root arcs) and hi - 1 (other arcs) instead of n, with hi the
  largest allowed length, f_hk >= y_hk (n² rows), and no 2-cycles (``no_2cycles``) y_hk + y_kh <= 1 (n(n-1)/2
  rows);
- projectivity (``projectivity``): for every pair l < r with r - l >= 2 and every j with l < j < r:
  y_lr + y_rl + Σ_{g not in [l, r]} y_gj <= 1 (about n³/6 rows of about n+2 nonzeros: O(n⁴) nonzeros);
- bigram chain (``bigram_chain``): Σ_b b_0b = 1, Σ_a b_a,n+1 = 1, Σ_a b_ak = z_k, Σ_b b_kb = z_k (2n+2 rows);
  optional ``bigram_cuts`` (``bigram_cuts``): b_ab + z_j <= 1 for a < j < b (about n³/6 rows of 2 nonzeros);
- second order (``siblings``, sibling scores): Σ_s u_hsk = y_hk (each modifier has exactly one predecessor), for
  s != h Σ_{k beyond s} u_hsk <= y_hs (a modifier has at most one successor), Σ_{k on one side} u_hhk <= 1 (one first
  modifier per side): (n+1)² rows.  Every predecessor is strictly closer to h than its modifier and h has at most
  one successor per side, so following predecessors from any modifier reaches h: a side's modifiers form one path
  out from h with strictly growing distance, i.e. they are chained in order and u marks exactly the consecutive
  pairs that the objective scores;
- ``length``: lo <= Σ z <= hi (1 row, omitted when free); ``single_root``: Σ_k y_0k <= 1 (1 row; a non-empty tree
  needs a root arc because the flow must leave the root).

Scores of -inf fix their variable to 0 (upper bound 0, objective coefficient 0).  :func:`model_size` gives the
exact counts for a given n; ``Model.stats()`` reports them for a built model.

Projectivity constraint, proof of equivalence (root at position 0, leftmost)
--------------------------------------------------------------------------
Claim: a tree rooted at 0 over K is projective iff for every arc {l, r} (l < r) and every kept j with l < j < r,
head(j) lies in [l, r].

(⇐) Take an arc between l and r with head h in {l, r}, and kept j strictly between.  Follow heads from j: each
head of a token strictly inside (l, r) is in [l, r], so the chain stays inside until it reaches l or r; it must
leave (the chain ends at 0, and 0 <= l is never strictly inside), so j descends from l or from r.  If the arc is
l -> r then r descends from l; if r -> l then l descends from r: either way j descends from h.  This is the
definition of projectivity.

(⇒) Suppose the tree is projective, arc {l, r} with head h, j kept strictly between with head g outside [l, r],
say g < l (g > r is symmetric).  Then l is strictly between g and j, so by projectivity of g -> j, l descends
from g.  By projectivity of the arc {l, r}, j descends from h, and since j's parent is g != h, g is a proper
descendant of h.  If h = l: l descends from g and g descends properly from l: a cycle.  If h = r: l's parent is
r, so g (an ancestor of l other than l) is r or an ancestor of r, but g descends properly from r: a cycle.  Both
contradict the tree.  ``tests/test_ilp.py`` checks the equivalence by enumerating every head assignment for small n.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from compbench import Problem, sibling_triples

from .model import INTEGRALITY_TOLERANCE, Model, ModelBuilder

FLOWS = ("single", "multi")
INF = np.inf


@dataclass(frozen=True)
class Shape:
    """What the joint model's size depends on: n and the options."""

    n: int
    flow: str = "single"
    bigram_cuts: bool = False
    tighten: bool = True
    length: bool = True
    single_root: bool = False
    second_order: bool = False

    @property
    def arcs(self) -> int:
        return self.n * self.n

    def triples(self) -> np.ndarray:
        """The sibling triples (h, s, k), none in first order."""
        return np.argwhere(sibling_triples(self.n)) if self.second_order else np.zeros((0, 3), dtype=np.int64)


# The column blocks, in order, with their sizes.
COLUMNS: dict[str, Callable[[Shape], int]] = {
    "z": lambda s: s.n,
    "y": lambda s: s.arcs,
    "b": lambda s: (s.n + 2) * (s.n + 1) // 2,
    "f": lambda s: s.arcs if s.flow == "single" else s.n * s.arcs,
    "u": lambda s: len(s.triples()),
}


@dataclass
class Joint:
    """The model being built: the problem, its shape, the builder and the column indices of every block."""

    problem: Problem
    shape: Shape
    rows: ModelBuilder
    z: np.ndarray  # (n+1,), z[k] for k >= 1
    y: np.ndarray  # (n+1, n+1), -1 where no variable
    b: np.ndarray  # (n+2, n+2), -1 where no variable
    f: np.ndarray  # (commodities, n+1, n+1): one commodity in single flow, t - 1 for commodity t in multi flow
    arcs: np.ndarray  # (arcs, 2): (h, k) in column order
    triples: np.ndarray  # (h, s, k) per u column
    u: np.ndarray  # the u columns

    @property
    def n(self) -> int:
        return self.shape.n


def _scored(scores: np.ndarray) -> dict[str, Any]:
    """A binary column block's cost and upper bound: a -inf score fixes its column at 0."""
    forbidden = np.isneginf(scores)
    return {"cost": np.where(forbidden, 0.0, scores), "upper": np.where(forbidden, 0.0, 1.0), "integer": True}


def _allocate(problem: Problem, shape: Shape) -> Joint:
    """The columns: z, y, b, then the flow, then u (second order)."""
    n, rows = shape.n, ModelBuilder()
    arcs = np.argwhere(~np.eye(n + 1, dtype=bool) & (np.arange(n + 1)[None, :] >= 1))
    heads, mods = arcs.T
    b_a, b_b = np.triu_indices(n + 2, 1)
    z = np.full(n + 1, -1, dtype=np.int64)
    z[1:] = rows.columns("z", np.arange(1, n + 1), **_scored(problem.token_scores))
    y = np.full((n + 1, n + 1), -1, dtype=np.int64)
    y[heads, mods] = rows.columns("y", arcs, **_scored(problem.arc_scores[heads, mods]))
    b = np.full((n + 2, n + 2), -1, dtype=np.int64)
    b[b_a, b_b] = rows.columns("b", np.column_stack([b_a, b_b]), **_scored(problem.bigram_scores[b_a, b_b]))
    commodities = 1 if shape.flow == "single" else n
    f = np.full((commodities, n + 1, n + 1), -1, dtype=np.int64)
    if shape.flow == "single":
        f[0, heads, mods] = rows.columns("f", arcs, upper=n)
    else:
        keys = np.column_stack([np.repeat(np.arange(1, n + 1), len(arcs)), np.tile(arcs, (n, 1))])
        f[keys[:, 0] - 1, keys[:, 1], keys[:, 2]] = rows.columns("f", keys)
    triples = shape.triples()
    u = np.zeros(0, dtype=np.int64)
    if len(triples):
        u = rows.columns("u", triples, **_scored(problem.sibling_scores[triples[:, 0], triples[:, 1], triples[:, 2]]))
    return Joint(problem, shape, rows, z, y, b, f, arcs, triples, u)


@dataclass(frozen=True)
class Family:
    """A family of rows: its builder, (rows, nonzeros) as a function of the shape, and when the model has it."""

    name: str
    add: Callable[[Joint], None]
    size: Callable[[Shape], tuple[int, int]]
    when: Callable[[Shape], bool] = lambda s: True


def _one_head(m: Joint) -> None:
    """Σ_h y_hk = z_k: one head per kept token."""
    n = m.n
    for k in range(1, n + 1):
        m.rows.row("one_head", (k,), np.append(m.y[np.arange(n + 1) != k, k], m.z[k]), np.append(np.ones(n), -1.0),
                   0, 0)


def _kept_head(m: Joint) -> None:
    """y_hk <= z_h for h >= 1: a head other than the root is kept."""
    for h in range(1, m.n + 1):
        for k in range(1, m.n + 1):
            if h != k:
                m.rows.row("kept_head", (h, k), [m.y[h, k], m.z[h]], [1.0, -1.0], -INF, 0)


def _conservation(m: Joint, f: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(cols, values) of Σ inflow - Σ outflow at token k for the flow columns ``f``."""
    inflow = f[np.arange(m.n + 1) != k, k]
    outflow = f[k, [j for j in range(1, m.n + 1) if j != k]]
    return np.concatenate([inflow, outflow]), np.concatenate([np.ones(len(inflow)), -np.ones(len(outflow))])


def _flow_root(m: Joint) -> None:
    """Σ_k f_0k = Σ_k z_k: the root emits one unit per kept token."""
    m.rows.row("flow_root", (), np.append(m.f[0, 0, 1:], m.z[1:]), np.append(np.ones(m.n), -np.ones(m.n)), 0, 0)


def _flow_cons(m: Joint) -> None:
    """Σ_h f_hk - Σ_j f_kj = z_k: each kept token absorbs one unit."""
    for k in range(1, m.n + 1):
        cols, values = _conservation(m, m.f[0], k)
        m.rows.row("flow_cons", (k,), np.append(cols, m.z[k]), np.append(values, -1.0), 0, 0)


def _flow_cap(m: Joint) -> None:
    """f_hk <= c y_hk, c = n, or with ``tighten`` hi from the root and hi - 1 below a kept head (an arc carries at
    most the kept words below it); ``tighten`` also adds f_hk >= y_hk (a used arc carries its modifier's unit)."""
    n, tighten, hi = m.n, m.shape.tighten, m.problem.length_bounds()[1]
    for h, k in m.arcs.tolist():
        capacity = (hi if h == 0 else hi - 1) if tighten else n
        cols = [m.f[0, h, k], m.y[h, k]]
        m.rows.row("flow_cap", (h, k), cols, [1.0, -float(capacity)], -INF, 0)
        if tighten:
            m.rows.row("flow_use", (h, k), cols, [1.0, -1.0], 0, INF)


def _commodity_flow(m: Joint) -> None:
    """Per kept-token commodity t: the root emits z_t, t absorbs z_t, the others conserve, f^t_hk <= y_hk."""
    n = m.n
    for t in range(1, n + 1):
        f = m.f[t - 1]
        m.rows.row("cflow_root", (t,), np.append(f[0, 1:], m.z[t]), np.append(np.ones(n), -1.0), 0, 0)
        for k in range(1, n + 1):
            cols, values = _conservation(m, f, k)
            if k == t:
                m.rows.row("cflow_cons", (t, k), np.append(cols, m.z[t]), np.append(values, -1.0), 0, 0)
            else:
                m.rows.row("cflow_cons", (t, k), cols, values, 0, 0)
        for h, k in m.arcs.tolist():
            m.rows.row("cflow_cap", (t, h, k), [f[h, k], m.y[h, k]], [1.0, -1.0], -INF, 0)


def _projectivity(m: Joint) -> None:
    """y_lr + y_rl + Σ_{g not in [l, r]} y_gj <= 1 for l < j < r: an arc keeps the heads inside it within it."""
    n, y = m.n, m.y
    for l in range(n + 1):
        for r in range(l + 2, n + 1):
            pair = [y[l, r]] + ([y[r, l]] if l >= 1 else [])
            for j in range(l + 1, r):
                outside = [g for g in range(n + 1) if (g < l or g > r)]
                m.rows.row("proj", (l, r, j), pair + [y[g, j] for g in outside], 1.0, -INF, 1)


def _projectivity_size(s: Shape) -> tuple[int, int]:
    pairs = [(l, r) for l in range(s.n + 1) for r in range(l + 2, s.n + 1)]
    return (sum(r - l - 1 for l, r in pairs),
            sum((r - l - 1) * ((2 if l >= 1 else 1) + (s.n + 1 - (r - l + 1))) for l, r in pairs))


def _siblings(m: Joint) -> None:
    """Each side's modifiers of h chained outward from h by u: one predecessor per modifier (Σ_s u_hsk = y_hk), one
    first modifier per side, at most one successor per modifier s (Σ_k u_hsk <= y_hs)."""
    n, y, u = m.n, m.y, m.u
    h_, s_, k_ = m.triples.T
    for h in range(n + 1):
        for k in range(1, n + 1):
            if k != h:
                predecessors = u[(h_ == h) & (k_ == k)]
                m.rows.row("sib_pred", (h, k), np.append(predecessors, y[h, k]),
                           np.append(np.ones(len(predecessors)), -1.0), 0, 0)
        for side, kind in ((1, "sib_first_right"), (-1, "sib_first_left")):
            first = u[(h_ == h) & (s_ == h) & (np.sign(k_ - h) == side)]
            if len(first):
                m.rows.row(kind, (h,), first, 1.0, -INF, 1)
        for s in range(1, n + 1):
            if s != h:
                successors = u[(h_ == h) & (s_ == s)]
                m.rows.row("sib_succ", (h, s), np.append(successors, y[h, s]),
                           np.append(np.ones(len(successors)), -1.0), -INF, 0)


def _siblings_size(s: Shape) -> tuple[int, int]:
    triples = s.triples()
    h, m, k = triples.T
    first = len({(int(a), int(np.sign(c - a))) for a, b, c in triples if a == b})
    n2 = s.n * s.n  # one predecessor row per arc, one successor row per (h, s)
    return n2 + n2 + first, (len(triples) + n2) + (int((m != h).sum()) + n2) + int((m == h).sum())


def _no_2cycles(m: Joint) -> None:
    """y_hk + y_kh <= 1."""
    for h in range(1, m.n + 1):
        for k in range(h + 1, m.n + 1):
            m.rows.row("no_2cycle", (h, k), [m.y[h, k], m.y[k, h]], 1.0, -INF, 1)


def _bigram_chain(m: Joint) -> None:
    """Σ_b b_0b = 1, Σ_a b_a,n+1 = 1, Σ_a b_ak = z_k = Σ_b b_kb: 0 -> kept tokens ascending -> n+1."""
    n, b, z = m.n, m.b, m.z
    m.rows.row("chain_start", (), b[0, 1:], 1.0, 1, 1)
    m.rows.row("chain_end", (), b[:n + 1, n + 1], 1.0, 1, 1)
    for k in range(1, n + 1):
        m.rows.row("chain_in", (k,), np.append(b[:k, k], z[k]), np.append(np.ones(k), -1.0), 0, 0)
        m.rows.row("chain_out", (k,), np.append(b[k, k + 1:], z[k]), np.append(np.ones(n + 1 - k), -1.0), 0, 0)


def _bigram_cuts(m: Joint) -> None:
    """b_ab + z_j <= 1 for a < j < b."""
    for a in range(m.n + 1):
        for c in range(a + 2, m.n + 2):
            for j in range(a + 1, c):
                m.rows.row("bigram_cut", (a, c, j), [m.b[a, c], m.z[j]], 1.0, -INF, 1)


def _bigram_cuts_size(s: Shape) -> tuple[int, int]:
    rows = sum(c - a - 1 for a in range(s.n + 1) for c in range(a + 2, s.n + 2))
    return rows, 2 * rows


def _length(m: Joint) -> None:
    """lo <= Σ_k z_k <= hi."""
    lo, hi = m.problem.length_bounds()
    m.rows.row("length", (), m.z[1:], 1.0, lo, hi)


def _single_root(m: Joint) -> None:
    """Σ_k y_0k <= 1."""
    m.rows.row("single_root", (), m.y[0, 1:], 1.0, -INF, 1)


# The row families, in the model's order.
FAMILIES = (
    Family("one_head", _one_head, lambda s: (s.n, s.n * (s.n + 1))),
    Family("kept_head", _kept_head, lambda s: (s.n * (s.n - 1), 2 * s.n * (s.n - 1))),
    Family("flow_root", _flow_root, lambda s: (1, 2 * s.n), lambda s: s.flow == "single"),
    Family("flow_cons", _flow_cons, lambda s: (s.n, 2 * s.n * s.n), lambda s: s.flow == "single"),
    Family("flow_cap", _flow_cap, lambda s: ((1 + s.tighten) * s.arcs, 2 * (1 + s.tighten) * s.arcs),
           lambda s: s.flow == "single"),
    Family("commodity_flow", _commodity_flow,
           lambda s: (s.n * (1 + s.n + s.arcs), s.n * ((s.n + 1) + s.n * (2 * s.n - 1) + 1 + 2 * s.arcs)),
           lambda s: s.flow == "multi"),
    Family("projectivity", _projectivity, _projectivity_size),
    Family("siblings", _siblings, _siblings_size, lambda s: s.second_order),
    Family("no_2cycles", _no_2cycles, lambda s: (s.n * (s.n - 1) // 2, s.n * (s.n - 1)), lambda s: s.tighten),
    Family("bigram_chain", _bigram_chain, lambda s: (2 * s.n + 2, 2 * (s.n + 1) + s.n * (s.n + 3))),
    Family("bigram_cuts", _bigram_cuts, _bigram_cuts_size, lambda s: s.bigram_cuts),
    Family("length", _length, lambda s: (1, s.n), lambda s: s.length and s.n > 0),
    Family("single_root", _single_root, lambda s: (1, s.n), lambda s: s.single_root and s.n > 0),
)


@dataclass
class JointModel(Model):
    """The joint ILP; the ``*_index`` arrays map z / y / b to columns."""

    z_index: np.ndarray  # (n+1,), z_index[k] for k >= 1
    y_index: np.ndarray  # (n+1, n+1), -1 where no variable
    b_index: np.ndarray  # (n+2, n+2), -1 where no variable
    flow: str

    formulation = "joint"

    @property
    def n(self) -> int:
        return len(self.z_index) - 1

    def stats(self) -> dict[str, Any]:
        return {**super().stats(), "flow": self.flow}

    def decode(self, values: np.ndarray) -> np.ndarray | None:
        """Heads from z / y, or None when they are not integral or do not form a head assignment."""
        n = self.n
        z = values[self.z_index[1:]]
        heads = np.full(n + 1, -1, dtype=np.int64)
        if n == 0:
            return heads
        y_cols = self.y_index[:, 1:]
        y = np.where(y_cols >= 0, values[np.maximum(y_cols, 0)], 0.0)
        for block in (z, y):
            if np.any(np.abs(block - np.round(block)) > INTEGRALITY_TOLERANCE):
                return None
        z, y = np.round(z).astype(int), np.round(y).astype(int)
        for k in range(1, n + 1):
            chosen = np.flatnonzero(y[:, k - 1])
            if z[k - 1] == 1:
                if len(chosen) != 1:
                    return None
                heads[k] = chosen[0]
            elif len(chosen):
                return None
        return heads


def build_joint_model(problem: Problem, *, flow: str = "single", bigram_cuts: bool = False,
                      tighten: bool = True) -> JointModel:
    """Build the joint ILP of ``problem``: the column blocks, then every family the shape has, in order.

    >>> import compbench
    >>> m = build_joint_model(compbench.generate("gaussian", n=4, seed=0, length=2))
    >>> m.stats()["variables"] == model_size(4)["variables"], m.row_names[0], m.col_names[4]
    (True, 'one_head(1)', 'y(0,1)')
    """
    if flow not in FLOWS:
        raise ValueError(f"flow must be one of {FLOWS}, got {flow!r}")
    shape = Shape(problem.n, flow, bigram_cuts, tighten, problem.length is not None, problem.single_root,
                  problem.second_order)
    m = _allocate(problem, shape)
    for family in FAMILIES:
        if family.when(shape):
            m.rows.family(family.name, family.add, m)
    return JointModel(**m.rows.arrays(), z_index=m.z, y_index=m.y, b_index=m.b, flow=flow)


def model_size(n: int, *, flow: str = "single", bigram_cuts: bool = False, tighten: bool = True, length: bool = True,
               single_root: bool = False, second_order: bool = False) -> dict[str, int]:
    """Variables, constraints and nonzeros of :func:`build_joint_model` as functions of n (exact counts): the sums
    of the column blocks' and the row families' sizes.

    Second order adds one sibling variable per triple (Σ_{h, k} |k - h|, about n³/3), 2n² + O(n) rows, and
    2 nonzeros per sibling variable plus 2n².
    """
    shape = Shape(n, flow, bigram_cuts, tighten, length, single_root, second_order)
    sizes = [family.size(shape) for family in FAMILIES if family.when(shape)]
    return {"variables": sum(size(shape) for size in COLUMNS.values()), "constraints": sum(r for r, _ in sizes),
            "nonzeros": sum(nnz for _, nnz in sizes)}
