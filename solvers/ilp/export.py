"""A model written to a file (MPS or LP, by the file's extension) through HiGHS, with readable names."""

from __future__ import annotations

from pathlib import Path

from .backends.output import quiet_highs
from .model import Model


def write_model(model: Model, path: str | Path, *, minimize: bool = False) -> None:
    """Write ``model`` (maximize ``cost @ x``) to ``path``: ``.mps`` or ``.lp`` (HiGHS picks the format from the
    extension), with its row and column names.  ``minimize`` writes it as the minimization of ``-cost @ x`` (what
    every MPS reader takes without an OBJSENSE section): the file's optimum is then minus the model's.

    >>> import compbench, tempfile, pathlib
    >>> from compbench_solvers.ilp import build_joint_model
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "m.lp"
    >>> write_model(build_joint_model(compbench.generate("gaussian", n=3, seed=0, length=2)), path)
    >>> "one_head(1):" in path.read_text()
    True
    """
    import highspy

    import numpy as np

    # A model of no column (an empty sentence's dp model, its one row 0 = 1) gets one column fixed at 0: a reader
    # (HiGHS) calls a model without columns empty, solved at 0, and never reads its rows' infeasibility.
    cols, no_column = max(1, model.num_cols), model.num_cols == 0
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = cols, model.num_rows
    lp.sense_ = highspy.ObjSense.kMinimize if minimize else highspy.ObjSense.kMaximize
    lp.col_cost_ = np.zeros(1) if no_column else -model.cost if minimize else model.cost
    lp.col_lower_, lp.col_upper_ = (np.zeros(1), np.zeros(1)) if no_column else (model.col_lower, model.col_upper)
    lp.row_lower_, lp.row_upper_ = model.row_lower, model.row_upper  # np.inf is HiGHS's infinity
    matrix = lp.a_matrix_
    matrix.format_ = highspy.MatrixFormat.kRowwise
    matrix.num_col_, matrix.num_row_ = cols, model.num_rows
    if no_column:  # the column in every row (fixed at 0, it changes no row's sum): CBC dies on a row of no term
        matrix.start_, matrix.index_, matrix.value_ = (np.arange(model.num_rows + 1), np.zeros(model.num_rows, int),
                                                       np.ones(model.num_rows))
    else:
        matrix.start_, matrix.index_, matrix.value_ = model.row_starts, model.row_cols, model.row_values
    if model.is_mip and not no_column:
        lp.integrality_ = [highspy.HighsVarType.kInteger if integer else highspy.HighsVarType.kContinuous
                           for integer in model.integrality]
    lp.col_names_, lp.row_names_ = ["no_column"] if no_column else model.col_names, model.row_names
    h = quiet_highs(highspy)
    if (status := h.passModel(lp)) != highspy.HighsStatus.kOk:
        raise ValueError(f"HiGHS could not load the model ({status}) for {path}")
    if (status := h.writeModel(str(path))) == highspy.HighsStatus.kError:  # a warning: e.g. a model of no column
        raise ValueError(f"HiGHS could not write the model ({status}) for {path}")
    if Path(path).suffix == ".lp":
        _long_section_names(Path(path))


# HiGHS writes the LP format's short section names; CBC's reader takes "bin" and "gen" for variables (and so solves
# the relaxation): the long names, which every LP reader takes, and no empty "semi" section.
LP_SECTIONS = {"bin": "binaries", "gen": "generals", "semi": None}


def _long_section_names(path: Path) -> None:
    lines = path.read_text().split("\n")
    kept = [LP_SECTIONS.get(line, line) for line in lines]
    path.write_text("\n".join(line for line in kept if line is not None))
