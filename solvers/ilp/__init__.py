"""The ILP side: the formulations as arrays (:mod:`compbench_solvers.ilp.model`: the joint model; :mod:`compbench_solvers.ilp.dp_flow`:
the chart's hypergraph flow) on five MIP backends, and their LP relaxations (:mod:`compbench_solvers.ilp.backends`)."""

from .backends import (FORMULATIONS, GurobiDPILP, GurobiILP, HighsDPILP, HighsDPLP, HighsILP, HighsJointLP, HighsReducedCostDPILP,
                       OrtoolsCpSatDPILP,
                       OrtoolsCpSatILP, OrtoolsScipDPILP, OrtoolsScipILP, PulpCbcDPILP, PulpCbcILP, PulpHighsDPILP,
                       PulpHighsILP, build_model)
from .dp_flow import DPFlowModel, build_dp_model
from .model import JointModel, Model, build_joint_model, model_size

__all__ = ["FORMULATIONS", "GurobiDPILP", "GurobiILP", "DPFlowModel", "HighsDPILP", "HighsDPLP", "HighsILP", "HighsJointLP", "HighsReducedCostDPILP", "JointModel", "Model",
           "OrtoolsCpSatDPILP", "OrtoolsCpSatILP", "OrtoolsScipDPILP", "OrtoolsScipILP", "PulpCbcDPILP", "PulpCbcILP",
           "PulpHighsDPILP", "PulpHighsILP", "build_dp_model", "build_joint_model", "build_model", "model_size"]
