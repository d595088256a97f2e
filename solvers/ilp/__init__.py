"""The joint compression ILP (:mod:`solvers.ilp.model`) on five MIP backends (:mod:`solvers.ilp.backends`)."""

from .backends import HighsILP, OrtoolsCpSatILP, OrtoolsScipILP, PulpCbcILP, PulpHighsILP
from .model import Model, build_model, model_size

__all__ = ["HighsILP", "OrtoolsCpSatILP", "OrtoolsScipILP", "PulpCbcILP", "PulpHighsILP", "Model", "build_model",
           "model_size"]
