"""Qian & Liu (2014): the exact signature DP (``signature-dp``) and its Lagrangian relaxation (``ql-subgradient``).

See :mod:`compbench_solvers.signature.chart` for the chart's rules.
"""

from .chart import Chart, chart_bytes
from .solvers import QLSubgradient, SignatureDP

__all__ = ["Chart", "QLSubgradient", "SignatureDP", "chart_bytes"]
