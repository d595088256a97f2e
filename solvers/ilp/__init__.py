"""The ILP side: the formulations (:mod:`.formulations`: the joint model of :mod:`.joint`, the chart's hypergraph
flow of :mod:`.dp_flow`, both built as named arrays with :mod:`.model`) on the MIP backends of :mod:`.backends`, and
their LP relaxations; :data:`SOLVERS` (:mod:`.catalog`) holds every such solver; :func:`write_model` exports a model
with readable names."""

from .catalog import SOLVERS
from .dp_flow import DPFlowModel, build_dp_model
from .export import write_model
from .formulations import FORMULATIONS, Formulation, build_model
from .joint import JointModel, build_joint_model, model_size
from .model import Model

__all__ = ["DPFlowModel", "FORMULATIONS", "Formulation", "JointModel", "Model", "SOLVERS", "build_dp_model",
           "build_joint_model", "build_model", "model_size", "write_model"]
