"""The MIP backends: one module each (an :class:`~.driver.ILPSolver` subclass with ``_load`` and ``_run``), and the
shared driver (:mod:`.driver`).  A new backend is one module here and its class in :data:`BACKENDS`."""

from .driver import BackendLimit, ILPSolver
from .gurobi import Gurobi
from .highs import Highs
from .ortools import OrtoolsCpSat, OrtoolsScip
from .pulp import PulpCbc, PulpHighs
from .rcfix import ReducedCostFixing

BACKENDS: tuple[type[ILPSolver], ...] = (Highs, ReducedCostFixing, PulpCbc, PulpHighs, OrtoolsScip, OrtoolsCpSat,
                                         Gurobi)

__all__ = ["BACKENDS", "BackendLimit", "ILPSolver"]
