"""The ``dp`` formulation: the flow polytope of the hook-trick chart's hypergraph (Martin, Rardin & Campbell 1990).

The deduction system of :mod:`compbench_solvers.compressive.chart` lists its own hyperedges (:func:`hypergraph`: every
rule instance whose antecedents have a derivation and whose score is finite; a rule is written only there).  The model:

- one column x_e in [0, 1] per hyperedge e, with its score (bigram for the [skip] axioms, attach = arc + token,
  plus the sibling score in second order, for the attachments, 0 for the other rules);
- one row per item v: Σ_{e concludes v} x_e - Σ_{e uses v} x_e = [v is the goal (rtri 0 n)] (an item used twice
  by one hyperedge would count twice; none is);
- one integer column z_k per token, z_k = Σ of the attachments whose modifier is k (n rows), and the length
  condition lo <= Σ z <= hi (one row, none at free length).  single_root and -inf scores are in the hypergraph.

The integral points are the goal's derivations, i.e. the solutions, and at free length the LP itself is integral
(the hypergraph is acyclic and every hyperpath is a derivation: Martin, Rardin & Campbell's theorem; the tests
assert it).  With the length row the LP bound equals the Lagrangian dual of the length, which is what the
``bisection`` solver computes by other means.  Only z needs to be integer: with z fixed the rest is a face of the
integral polytope.  Sizes are O(n^3) columns and nonzeros and O(n^2) rows (:meth:`DPFlowModel.stats`).

Decoding (:meth:`DPFlowModel.decode`): the best derivation that uses only hyperedges with positive flow.  When z is
integral every hyperpath in the support keeps the same words (a convex combination of 0/1 keep vectors is 0/1
only if they agree), so that derivation scores at least the LP value over the face: it is an optimal solution.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from compbench import Problem

from .model import Model, ModelBuilder

if TYPE_CHECKING:
    from ..compressive.chart import Hypergraph

SUPPORT_TOLERANCE = 1e-6  # flows at or below this are read as 0


@dataclass
class DPFlowModel(Model):
    """The hypergraph flow model: hyperedge columns 0..E-1, then z_1..z_n."""

    graph: Hypergraph
    num_items: int  # flow-conservation rows (the first rows of the model)

    formulation = "dp"

    @property
    def n(self) -> int:
        return self.graph.n

    def stats(self) -> dict[str, Any]:
        return {**super().stats(), "hyperedges": len(self.graph.score), "items": self.num_items}

    def decode(self, values: np.ndarray) -> np.ndarray | None:
        """The heads of the best derivation over the hyperedges with positive flow, or None if there is none."""
        g = self.graph
        support = np.flatnonzero(values[:len(g.score)] > SUPPORT_TOLERANCE)
        best: dict[int, float] = {}
        choice: dict[int, int] = {}
        for e in support:  # hyperedges are listed after those that conclude their antecedents
            value = g.score[e]
            for item in g.antecedents[e]:
                if item >= 0:
                    value += best.get(int(item), -np.inf)
            item = int(g.conclusion[e])
            if value > best.get(item, -np.inf):
                best[item], choice[item] = value, int(e)
        if g.goal not in choice:
            return None
        heads = np.full(g.n + 1, -1, dtype=np.int64)
        stack = [g.goal]
        while stack:
            e = choice[stack.pop()]
            if g.modifier[e] >= 0:
                heads[g.modifier[e]] = g.head[e]
            stack.extend(int(item) for item in g.antecedents[e] if item >= 0)
        return heads


def build_dp_model(problem: Problem) -> DPFlowModel:
    """The hypergraph flow model of ``problem``: columns ``edge(e)`` and ``z(k)``; rows ``skip(i,j)``, ``rtri(i,j)``,
    ... (flow conservation at each item, named by its type and span), ``keep(k)`` and ``length``.

    >>> import compbench
    >>> m = build_dp_model(compbench.generate("gaussian", n=10, seed=0, length=4))
    >>> s = m.stats()
    >>> s["variables"] == s["hyperedges"] + 10, s["constraints"] == s["items"] + 10 + 1, m.row_names[-1]
    (True, True, 'length')
    """
    from ..compressive import chart  # imported when a model is built: listing the solvers needs no numba

    g = chart.hypergraph(problem)
    n, num_edges = problem.n, len(g.score)
    m = ModelBuilder()
    edge = m.columns("edge", np.arange(num_edges), cost=g.score)
    z = m.columns("z", np.arange(1, n + 1), integer=True)
    # rows: one per item that occurs (the goal always, so that a problem with no derivation is infeasible)
    occurring = np.unique(np.concatenate([[g.goal], g.conclusion, g.antecedents.ravel()]))
    items = occurring[occurring >= 0]
    row_of = np.full(g.num_items, -1, dtype=np.int64)
    row_of[items] = np.arange(len(items))
    used = g.antecedents >= 0
    lower = np.zeros(len(items))
    lower[row_of[g.goal]] = 1.0
    kind, i, j = np.unravel_index(items, (chart.ITEMS, n + 1, n + 1))  # items are sorted: grouped by kind
    names = {chart.SKIP: "skip", chart.BOX: "box", chart.RTRAP: "rtrap", chart.LTRAP: "ltrap", chart.RTRI: "rtri",
             chart.LTRI: "ltri"}
    labels = [(names[x], np.column_stack([i, j])[kind == x]) for x in range(chart.ITEMS)]
    m.family("items", m.row_block, labels, np.concatenate([row_of[g.conclusion], row_of[g.antecedents[used]]]),
             np.concatenate([edge, np.broadcast_to(edge[:, None], used.shape)[used]]),
             np.concatenate([np.ones(num_edges), -np.ones(int(used.sum()))]), lower, lower.copy())
    attachment = np.flatnonzero(g.modifier >= 0)  # z_k - Σ attachments of k = 0
    m.family("keep", m.row_block, [("keep", np.arange(1, n + 1))],
             np.concatenate([g.modifier[attachment] - 1, np.arange(n)]), np.concatenate([attachment, z]),
             np.concatenate([-np.ones(len(attachment)), np.ones(n)]), np.zeros(n), np.zeros(n))
    if problem.length is not None and n > 0:
        m.family("length", m.row, "length", (), z, 1.0, *problem.length_bounds())
    return DPFlowModel(**m.arrays(), graph=g, num_items=len(items))
