"""The ILP formulations as sparse numpy arrays, and the joint compression ILP (tree + bigram chain + projectivity +
length + single_root).

Every formulation builds a :class:`Model` once; every backend adapter loads the same arrays.  Maximize ``cost @ x``
subject to ``row_lower <= A x <= row_upper``, ``col_lower <= x <= col_upper``, ``x[j]`` integer where
``integrality[j]``; the model decodes a column vector into heads.  The formulations (:data:`FORMULATIONS`):
``joint``, this module's model (Thadani & McKeown 2013 style; ``flow`` and tightening options below), and
``dp``, the flow polytope of the hook-trick chart's hypergraph (:mod:`compbench_solvers.ilp.dp_flow`).

The joint model:

Variables (n tokens, arcs = n² pairs (h, k) with h in 0..n, k in 1..n, h != k):

- ``z_k`` (n, binary): token k kept;
- ``y_hk`` (n², binary): arc h -> k;
- ``b_ab`` ((n+2)(n+1)/2, binary): bigram a -> b, 0 <= a < b <= n+1;
- ``u_hsk`` (second order only, binary, one per triple with s = h or s strictly between h and k): k is a
  modifier of h whose previous modifier on the same side, moving outward from h, is s (s = h: k is the first);
- flow: ``flow="single"`` (default, Magnanti-Wolsey / Martins, Smith & Xing 2009): one continuous ``f_hk`` per arc
  (n² variables); ``flow="multi"``: one ``f^t_hk`` per arc and kept-token commodity t (n³ variables).

Constraints (rows):

- one head per kept token: Σ_h y_hk = z_k (n rows); kept head: y_hk <= z_h for h >= 1 (n(n-1) rows);
- single flow: root emits Σ_k z_k (1 row), each token absorbs z_k (n rows), f_hk <= n y_hk (n² rows);
  multi flow: for each commodity t the root emits z_t, t absorbs z_t, others conserve (n(n+1) rows) and
  f^t_hk <= y_hk (n³ rows);
- ``tighten`` (default, chosen by ``benchmarks/bench_ilp.py``; ``tighten=False`` for the plain model): single-flow
  capacities hi (root arcs) and hi - 1 (other arcs) instead of n, with hi the
  largest allowed length, f_hk >= y_hk (n² rows), and no 2-cycles y_hk + y_kh <= 1 (n(n-1)/2 rows);
- projectivity: for every pair l < r with r - l >= 2 and every j with l < j < r:
  y_lr + y_rl + Σ_{g not in [l, r]} y_gj <= 1 (about n³/6 rows of about n+2 nonzeros: O(n⁴) nonzeros);
- bigram chain: Σ_b b_0b = 1, Σ_a b_a,n+1 = 1, Σ_a b_ak = z_k, Σ_b b_kb = z_k (2n+2 rows);
  optional ``bigram_cuts``: b_ab + z_j <= 1 for a < j < b (about n³/6 rows of 2 nonzeros);
- second order (sibling scores): Σ_s u_hsk = y_hk (each modifier has exactly one predecessor), for s != h
  Σ_{k beyond s} u_hsk <= y_hs (a modifier has at most one successor), Σ_{k on one side} u_hhk <= 1 (one first
  modifier per side): (n+1)² rows.  Every predecessor is strictly closer to h than its modifier and h has at most
  one successor per side, so following predecessors from any modifier reaches h: a side's modifiers form one path
  out from h with strictly growing distance, i.e. they are chained in order and u marks exactly the consecutive
  pairs that the objective scores;
- length: lo <= Σ z <= hi (1 row, omitted when free); single_root: Σ_k y_0k <= 1 (1 row; a non-empty tree needs
  a root arc because the flow must leave the root).

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

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from compbench import Problem, sibling_triples

FLOWS = ("single", "multi")
INTEGRALITY_TOLERANCE = 1e-5


@dataclass
class Model:
    """An ILP as arrays (maximize ``cost @ x``), built by one of the formulations."""

    cost: np.ndarray  # (num_cols,)
    col_lower: np.ndarray
    col_upper: np.ndarray
    integrality: np.ndarray  # bool (num_cols,)
    row_starts: np.ndarray  # CSR: row i has entries row_starts[i]:row_starts[i+1]
    row_cols: np.ndarray
    row_values: np.ndarray
    row_lower: np.ndarray
    row_upper: np.ndarray

    formulation = ""

    @property
    def num_cols(self) -> int:
        return len(self.cost)

    @property
    def num_rows(self) -> int:
        return len(self.row_lower)

    def stats(self) -> dict[str, Any]:
        return {"formulation": self.formulation, "variables": self.num_cols, "integer": int(self.integrality.sum()),
                "constraints": self.num_rows, "nonzeros": int(len(self.row_values))}

    def rows(self):
        """Yield (lower, upper, cols, values) per row."""
        for i in range(self.num_rows):
            s, e = self.row_starts[i], self.row_starts[i + 1]
            yield self.row_lower[i], self.row_upper[i], self.row_cols[s:e], self.row_values[s:e]

    @property
    def is_mip(self) -> bool:
        return bool(self.integrality.any())

    @property
    def entry_rows(self) -> np.ndarray:
        """The row of every entry of the CSR arrays."""
        return np.repeat(np.arange(self.num_rows), np.diff(self.row_starts))

    def restricted(self, keep: np.ndarray) -> Model:
        """The model on the columns where ``keep`` is true (the others fixed at 0), as a plain :class:`Model`."""
        entries = keep[self.row_cols]
        new_index = np.cumsum(keep) - 1
        starts = np.zeros(self.num_rows + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.entry_rows[entries], minlength=self.num_rows), out=starts[1:])
        return Model(cost=self.cost[keep], col_lower=self.col_lower[keep], col_upper=self.col_upper[keep],
                     integrality=self.integrality[keep], row_starts=starts, row_cols=new_index[self.row_cols[entries]],
                     row_values=self.row_values[entries], row_lower=self.row_lower, row_upper=self.row_upper)

    def dual_bound(self, row_duals: np.ndarray) -> tuple[float, np.ndarray]:
        """(UB, d): an upper bound on ``cost @ x`` over the box-and-row polyhedron from any row multipliers y, and
        the reduced costs d = cost - A^T y.

        For every x in the model, cost @ x = y @ (A x) + d @ x <= Σ_r (y_r hi_r if y_r > 0 else y_r lo_r)
        + Σ_j (d_j u_j if d_j > 0 else d_j l_j) = UB (a multiplier whose row bound on its side is infinite is set
        to 0 first).  Weak duality needs no optimality, so the bound is valid whatever solver gave y.  Moreover a
        solution with x_j = 1 where d_j < 0 and l_j = 0 is worth at most UB + d_j: a column with -d_j > UB - v
        can take no part in a solution worth more than v.
        """
        y = np.where(((row_duals > 0) & np.isinf(self.row_upper)) | ((row_duals < 0) & np.isinf(self.row_lower)),
                     0.0, row_duals)
        d = self.cost - np.bincount(self.row_cols, self.row_values * y[self.entry_rows], minlength=self.num_cols)
        row_part = y * np.where(y > 0, self.row_upper, np.where(y < 0, self.row_lower, 0.0))  # y = 0: no inf * 0
        col_part = np.where(d > 0, d * self.col_upper, d * self.col_lower)
        return float(row_part.sum() + col_part.sum()), d

    def relaxed(self) -> Model:
        """The LP relaxation: the same model with no integer columns."""
        return dataclasses.replace(self, integrality=np.zeros_like(self.integrality))

    @property
    def n(self) -> int:
        """The problem's number of tokens."""
        raise NotImplementedError

    def decode(self, values: np.ndarray) -> np.ndarray | None:
        """Heads from a column vector, or None when it does not encode one solution."""
        raise NotImplementedError


def csr_rows(rows: np.ndarray, cols: np.ndarray, values: np.ndarray, num_rows: int):
    """(row_starts, row_cols, row_values) of a matrix given by its entries (rows, cols, values)."""
    order = np.argsort(rows, kind="stable")
    starts = np.zeros(num_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=num_rows), out=starts[1:])
    return starts, cols[order].astype(np.int64), values[order].astype(np.float64)


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


class _Rows:
    def __init__(self) -> None:
        self.cols: list[np.ndarray] = []
        self.values: list[np.ndarray] = []
        self.lower: list[float] = []
        self.upper: list[float] = []

    def add(self, cols, values, lower: float, upper: float) -> None:
        self.cols.append(np.asarray(cols, dtype=np.int64))
        self.values.append(np.broadcast_to(np.asarray(values, dtype=np.float64), (len(self.cols[-1]),)))
        self.lower.append(lower)
        self.upper.append(upper)


def build_joint_model(problem: Problem, *, flow: str = "single", bigram_cuts: bool = False,
                      tighten: bool = True) -> JointModel:
    """Build the joint ILP of ``problem``.

    >>> import compbench
    >>> m = build_joint_model(compbench.generate("gaussian", n=4, seed=0, length=2))
    >>> m.stats()["variables"] == model_size(4)["variables"]
    True
    """
    if flow not in FLOWS:
        raise ValueError(f"flow must be one of {FLOWS}, got {flow!r}")
    n = problem.n
    inf = np.inf
    z_index = np.full(n + 1, -1, dtype=np.int64)
    z_index[1:] = np.arange(n)
    y_index = np.full((n + 1, n + 1), -1, dtype=np.int64)
    heads, mods = np.nonzero(~np.eye(n + 1, dtype=bool)[:, :] & (np.arange(n + 1)[None, :] >= 1))
    num_arcs = len(heads)
    y_index[heads, mods] = n + np.arange(num_arcs)
    b_a, b_b = np.triu_indices(n + 2, 1)
    b_index = np.full((n + 2, n + 2), -1, dtype=np.int64)
    b_index[b_a, b_b] = n + num_arcs + np.arange(len(b_a))
    num_binary = n + num_arcs + len(b_a)
    flow_start = num_binary
    num_flow = num_arcs if flow == "single" else n * num_arcs
    triples = np.argwhere(sibling_triples(n)) if problem.second_order else np.zeros((0, 3), dtype=np.int64)
    u_start = flow_start + num_flow
    num_cols = u_start + len(triples)

    scores = np.concatenate([problem.token_scores, problem.arc_scores[heads, mods], problem.bigram_scores[b_a, b_b]])
    forbidden = np.isneginf(scores)
    cost = np.zeros(num_cols)
    cost[:num_binary] = np.where(forbidden, 0.0, scores)
    col_lower = np.zeros(num_cols)
    col_upper = np.ones(num_cols)
    col_upper[:num_binary][forbidden] = 0.0
    integrality = np.zeros(num_cols, dtype=bool)
    integrality[:num_binary] = True
    if len(triples):
        sibling = problem.sibling_scores[triples[:, 0], triples[:, 1], triples[:, 2]]
        cost[u_start:] = np.where(np.isneginf(sibling), 0.0, sibling)
        col_upper[u_start:][np.isneginf(sibling)] = 0.0
        integrality[u_start:] = True
    rows = _Rows()

    # one head per kept token; a head other than the root must be kept
    for k in range(1, n + 1):
        rows.add(np.append(y_index[np.arange(n + 1) != k, k], z_index[k]), np.append(np.ones(n), -1.0), 0, 0)
    for h in range(1, n + 1):
        for k in range(1, n + 1):
            if h != k:
                rows.add([y_index[h, k], z_index[h]], [1.0, -1.0], -inf, 0)

    arc_of = np.arange(num_arcs)  # flow column offsets per arc
    if flow == "single":
        col_upper[flow_start:u_start] = n
        f_index = np.full((n + 1, n + 1), -1, dtype=np.int64)
        f_index[heads, mods] = flow_start + arc_of
        rows.add(np.append(f_index[0, 1:], z_index[1:]), np.append(np.ones(n), -np.ones(n)), 0, 0)
        for k in range(1, n + 1):
            inflow = f_index[np.arange(n + 1) != k, k]
            outflow = f_index[k, [j for j in range(1, n + 1) if j != k]]
            rows.add(np.concatenate([inflow, outflow, [z_index[k]]]),
                     np.concatenate([np.ones(len(inflow)), -np.ones(len(outflow)), [-1.0]]), 0, 0)
        # capacity: an arc carries at most the kept words below it, hi at most from the root and hi - 1 below a
        # kept head (tighten), else n; tighten also makes a used arc carry at least its modifier's unit
        hi = problem.length_bounds()[1]
        for a in range(num_arcs):
            capacity = (hi if heads[a] == 0 else hi - 1) if tighten else n
            rows.add([flow_start + a, n + a], [1.0, -float(capacity)], -inf, 0)
            if tighten:
                rows.add([flow_start + a, n + a], [1.0, -1.0], 0, inf)
    else:
        for t in range(1, n + 1):
            base = flow_start + (t - 1) * num_arcs
            f_index = np.full((n + 1, n + 1), -1, dtype=np.int64)
            f_index[heads, mods] = base + arc_of
            rows.add(np.append(f_index[0, 1:], z_index[t]), np.append(np.ones(n), -1.0), 0, 0)  # root emits z_t
            for k in range(1, n + 1):
                inflow = f_index[np.arange(n + 1) != k, k]
                outflow = f_index[k, [j for j in range(1, n + 1) if j != k]]
                cols = np.concatenate([inflow, outflow])
                values = np.concatenate([np.ones(len(inflow)), -np.ones(len(outflow))])
                if k == t:
                    rows.add(np.append(cols, z_index[t]), np.append(values, -1.0), 0, 0)
                else:
                    rows.add(cols, values, 0, 0)
            for a in range(num_arcs):
                rows.add([base + a, n + a], [1.0, -1.0], -inf, 0)

    # projectivity: an arc {l, r} keeps the heads of the tokens strictly inside within [l, r]
    for l in range(n + 1):
        for r in range(l + 2, n + 1):
            pair = [y_index[l, r]] + ([y_index[r, l]] if l >= 1 else [])
            for j in range(l + 1, r):
                outside = [g for g in range(n + 1) if (g < l or g > r)]
                rows.add(pair + [y_index[g, j] for g in outside], 1.0, -inf, 1)

    # second order: each side's modifiers of h chained outward from h by u
    if len(triples):
        u_of = u_start + np.arange(len(triples))
        h_, s_, k_ = triples.T
        for h in range(n + 1):
            for k in range(1, n + 1):
                if k != h:  # one predecessor per modifier
                    predecessors = u_of[(h_ == h) & (k_ == k)]
                    rows.add(np.append(predecessors, y_index[h, k]), np.append(np.ones(len(predecessors)), -1.0), 0, 0)
            for side in (1, -1):  # one first modifier per side
                first = u_of[(h_ == h) & (s_ == h) & (np.sign(k_ - h) == side)]
                if len(first):
                    rows.add(first, 1.0, -inf, 1)
            for s in range(1, n + 1):
                if s != h:  # a modifier s of h has at most one successor
                    successors = u_of[(h_ == h) & (s_ == s)]
                    rows.add(np.append(successors, y_index[h, s]), np.append(np.ones(len(successors)), -1.0), -inf, 0)

    if tighten:  # no 2-cycles
        for h in range(1, n + 1):
            for k in range(h + 1, n + 1):
                rows.add([y_index[h, k], y_index[k, h]], 1.0, -inf, 1)

    # bigram chain 0 -> kept tokens ascending -> n+1
    rows.add(b_index[0, 1:], 1.0, 1, 1)
    rows.add(b_index[:n + 1, n + 1], 1.0, 1, 1)
    for k in range(1, n + 1):
        rows.add(np.append(b_index[:k, k], z_index[k]), np.append(np.ones(k), -1.0), 0, 0)
        rows.add(np.append(b_index[k, k + 1:], z_index[k]), np.append(np.ones(n + 1 - k), -1.0), 0, 0)
    if bigram_cuts:
        for a in range(n + 1):
            for b in range(a + 2, n + 2):
                for j in range(a + 1, b):
                    rows.add([b_index[a, b], z_index[j]], 1.0, -inf, 1)

    lo, hi = problem.length_bounds()
    if problem.length is not None and n > 0:
        rows.add(z_index[1:], 1.0, lo, hi)
    if problem.single_root and n > 0:
        rows.add(y_index[0, 1:], 1.0, -inf, 1)

    lengths = np.array([len(c) for c in rows.cols], dtype=np.int64)
    row_starts = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=row_starts[1:])
    empty = np.zeros(0)
    return JointModel(cost=cost, col_lower=col_lower, col_upper=col_upper, integrality=integrality,
                 row_starts=row_starts,
                 row_cols=np.concatenate(rows.cols) if rows.cols else np.zeros(0, dtype=np.int64),
                 row_values=np.concatenate(rows.values) if rows.values else empty,
                 row_lower=np.array(rows.lower, dtype=np.float64), row_upper=np.array(rows.upper, dtype=np.float64),
                 z_index=z_index, y_index=y_index, b_index=b_index, flow=flow)


def model_size(n: int, *, flow: str = "single", bigram_cuts: bool = False, tighten: bool = True, length: bool = True,
               single_root: bool = False, second_order: bool = False) -> dict[str, int]:
    """Variables, constraints and nonzeros of :func:`build_joint_model` as functions of n (exact counts).

    Second order adds one sibling variable per triple (Σ_{h, k} |k - h|, about n³/3), 2n² + O(n) rows, and
    2 nonzeros per sibling variable plus 2n².
    """
    arcs = n * n
    bigrams = (n + 2) * (n + 1) // 2
    pairs = [(l, r) for l in range(n + 1) for r in range(l + 2, n + 1)]
    proj_rows = sum(r - l - 1 for l, r in pairs)
    proj_nnz = sum((r - l - 1) * ((2 if l >= 1 else 1) + (n + 1 - (r - l + 1))) for l, r in pairs)
    variables = n + arcs + bigrams + (arcs if flow == "single" else n * arcs)
    rows = n + n * (n - 1) + proj_rows + 2 + 2 * n
    nnz = n * (n + 1) + 2 * n * (n - 1) + proj_nnz + (n + 1) + (n + 1) + sum(k + 1 for k in range(1, n + 1)) \
        + sum(n + 2 - k for k in range(1, n + 1))
    if flow == "single":
        rows += 1 + n + arcs
        nnz += 2 * n + n * 2 * n + 2 * arcs
    else:
        rows += n * (1 + n) + n * arcs
        nnz += n * (n + 1 + n * (2 * n - 1) + 1) + 2 * n * arcs
    if tighten:
        if flow == "single":
            rows += arcs
            nnz += 2 * arcs
        rows += n * (n - 1) // 2
        nnz += n * (n - 1)
    if bigram_cuts:
        triples = sum(b - a - 1 for a in range(n + 1) for b in range(a + 2, n + 2))
        rows += triples
        nnz += 2 * triples
    if length and n > 0:
        rows += 1
        nnz += n
    if single_root and n > 0:
        rows += 1
        nnz += n
    if second_order:
        triples = np.argwhere(sibling_triples(n))
        h, s, k = triples.T
        first_rows = len({(int(a), int(np.sign(c - a))) for a, b, c in triples if a == b})
        variables += len(triples)
        rows += n * n + n * n + first_rows  # one predecessor per arc, one successor per modifier, first per side
        nnz += (len(triples) + n * n) + (int((s != h).sum()) + n * n) + int((s == h).sum())
    return {"variables": variables, "constraints": rows, "nonzeros": nnz}
