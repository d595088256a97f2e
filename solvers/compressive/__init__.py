"""Compressive parsing by Eisner's algorithm with the hook trick: one chart (:mod:`compbench_solvers.compressive.chart`,
where every rule lives; :mod:`compbench_solvers.compressive.batch` runs many problems through it in one compiled call)
and the solvers over it: ``hook-dp`` (free length, max semiring), ``resource-dp`` (exact and ranged lengths,
resource-constrained semiring), ``bisection`` (Lagrangian relaxation of the length) and ``bisection-exact``
(bisection, then pruned-dp when it finds no certificate) and ``pruned-dp`` (the counted chart filled only where a
Lagrangian bound lets an optimum pass: :mod:`compbench_solvers.compressive.pruned`)."""

from .chart import Chart, ChartScores, chart_bytes
from .base import count_plan
from .lagrangian import score_bound
from .pruned import PrunedDP
from .solvers import Bisection, BisectionExact, HookDP, ResourceDP

__all__ = ["Bisection", "BisectionExact", "Chart", "ChartScores", "HookDP", "PrunedDP", "ResourceDP", "chart_bytes",
           "count_plan", "score_bound"]
