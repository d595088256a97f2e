"""Models as sparse numpy arrays, and how a formulation builds one: named column blocks and row families.

Every formulation (:mod:`compbench_solvers.ilp.formulations`) builds a :class:`Model` once; every backend adapter
loads the same arrays.  Maximize ``cost @ x`` subject to ``row_lower <= A x <= row_upper``,
``col_lower <= x <= col_upper``, ``x[j]`` integer where ``integrality[j]``; the model decodes a column vector into
heads.  A :class:`ModelBuilder` allocates columns in named blocks (``y(0,3)``: the block ``y``, key (0, 3)) and adds
rows in named families (``flow_cons(3)``); the names are kept as integer keys (:class:`Labels`) and formatted only
when asked (:attr:`Model.row_names`, :func:`compbench_solvers.ilp.export.write_model`).  Names use parentheses, not
brackets: the LP file format has no brackets in names.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

INTEGRALITY_TOLERANCE = 1e-5


class Labels:
    """Names of a model's rows or columns as blocks of (kind, integer keys); ``kind(k1,k2)`` when formatted."""

    def __init__(self) -> None:
        self.blocks: list[tuple[str, np.ndarray]] = []  # (kind, keys (count, width))
        self._kind = ""
        self._pending: list[tuple[int, ...]] = []  # single labels of one kind, not yet a block

    def add(self, kind: str, keys: Any) -> None:
        """A block of labels: ``keys`` (count, width) integers, or a count for a key-less kind."""
        self._flush()
        keys = np.zeros((keys, 0), dtype=np.int64) if isinstance(keys, int) else np.asarray(keys, dtype=np.int64)
        self.blocks.append((kind, keys[:, None] if keys.ndim == 1 else keys))

    def add_one(self, kind: str, *key: int) -> None:
        """One label (consecutive ones of a kind are gathered into one block)."""
        if kind != self._kind or (self._pending and len(self._pending[0]) != len(key)):
            self._flush()
            self._kind = kind
        self._pending.append(key)

    def _flush(self) -> None:
        if self._pending:
            self.blocks.append((self._kind, np.array(self._pending, dtype=np.int64)))
            self._pending = []

    def __len__(self) -> int:
        self._flush()
        return sum(len(keys) for _, keys in self.blocks)

    def names(self) -> list[str]:
        self._flush()
        out: list[str] = []
        for kind, keys in self.blocks:
            if keys.shape[1] == 0:
                out.extend([kind] * len(keys))
            else:
                out.extend(f"{kind}({','.join(map(str, key))})" for key in keys.tolist())
        return out

    def subset(self, keep: np.ndarray) -> Labels:
        """The labels where ``keep`` is true."""
        self._flush()
        out, start = Labels(), 0
        for kind, keys in self.blocks:
            chosen = keys[keep[start:start + len(keys)]]
            if len(chosen):
                out.blocks.append((kind, chosen))
            start += len(keys)
        return out


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
    col_labels: Labels | None = field(default=None, kw_only=True)
    row_labels: Labels | None = field(default=None, kw_only=True)
    row_families: dict[str, tuple[int, int]] = field(default_factory=dict, kw_only=True)  # name: (first, stop)

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

    @property
    def col_names(self) -> list[str]:
        """Readable column names (``x(j)`` when the formulation gave none)."""
        return self.col_labels.names() if self.col_labels is not None else [f"x({j})" for j in range(self.num_cols)]

    @property
    def row_names(self) -> list[str]:
        """Readable row names (``r(i)`` when the formulation gave none)."""
        return self.row_labels.names() if self.row_labels is not None else [f"r({i})" for i in range(self.num_rows)]

    def rows(self) -> Iterator[tuple[float, float, np.ndarray, np.ndarray]]:
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
                     row_values=self.row_values[entries], row_lower=self.row_lower, row_upper=self.row_upper,
                     col_labels=None if self.col_labels is None else self.col_labels.subset(keep),
                     row_labels=self.row_labels, row_families=self.row_families)

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

    def scaled(self, factor: float) -> Model:
        """The same model with every cost multiplied by ``factor`` (a power of two: exact)."""
        return self if factor == 1.0 else dataclasses.replace(self, cost=self.cost * factor)

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


class ModelBuilder:
    """Columns in named blocks and rows in named families, in the order added; :meth:`arrays` gives the model's."""

    def __init__(self) -> None:
        self.cost: list[np.ndarray] = []
        self.col_lower: list[np.ndarray] = []
        self.col_upper: list[np.ndarray] = []
        self.integrality: list[np.ndarray] = []
        self.col_labels = Labels()
        self.num_cols = 0
        self.lengths: list[int] = []
        self.cols: list[np.ndarray] = []
        self.values: list[np.ndarray] = []
        self.lower: list[float] = []
        self.upper: list[float] = []
        self.row_labels = Labels()
        self.families: dict[str, tuple[int, int]] = {}

    @property
    def num_rows(self) -> int:
        return len(self.lengths)

    def columns(self, kind: str, keys: Any, *, cost: Any = 0.0, upper: Any = 1.0, integer: bool = False) -> np.ndarray:
        """Allocate one column per key (lower bound 0) and return their indices."""
        keys = np.asarray(keys, dtype=np.int64)
        count = len(keys)
        self.col_labels.add(kind, keys)
        self.cost.append(np.broadcast_to(np.asarray(cost, dtype=np.float64), (count,)))
        self.col_lower.append(np.zeros(count))
        self.col_upper.append(np.broadcast_to(np.asarray(upper, dtype=np.float64), (count,)))
        self.integrality.append(np.full(count, integer))
        self.num_cols += count
        return self.num_cols - count + np.arange(count)

    def row(self, kind: str, key: tuple[int, ...], cols: Any, values: Any, lower: float, upper: float) -> None:
        """One row ``lower <= Σ values * x[cols] <= upper`` named ``kind(key)`` (scalar ``values``: every entry)."""
        cols = np.asarray(cols, dtype=np.int64)
        self.cols.append(cols)
        self.values.append(np.broadcast_to(np.asarray(values, dtype=np.float64), (len(cols),)))
        self.lengths.append(len(cols))
        self.lower.append(lower)
        self.upper.append(upper)
        self.row_labels.add_one(kind, *key)

    def row_block(self, labels: list[tuple[str, Any]], rows: np.ndarray, cols: np.ndarray, values: np.ndarray,
                  lower: np.ndarray, upper: np.ndarray) -> None:
        """Rows given by their entries (rows numbered from 0 within the block; a row's entries kept in order),
        named by ``labels``: (kind, keys) blocks that cover them in order."""
        starts, row_cols, row_values = csr_rows(rows, cols, values, len(lower))
        self.cols.append(row_cols)
        self.values.append(row_values)
        self.lengths.extend(np.diff(starts).tolist())
        self.lower.extend(np.asarray(lower, dtype=np.float64).tolist())
        self.upper.extend(np.asarray(upper, dtype=np.float64).tolist())
        for kind, keys in labels:
            self.row_labels.add(kind, keys)

    def family(self, name: str, add: Any, *args: Any) -> None:
        """Call ``add(*args)`` and record the rows it added as the family ``name``."""
        first = self.num_rows
        add(*args)
        self.families[name] = (first, self.num_rows)

    def arrays(self) -> dict[str, Any]:
        """The keyword arguments of a :class:`Model`: columns, CSR rows and labels."""
        row_starts = np.zeros(self.num_rows + 1, dtype=np.int64)
        np.cumsum(np.array(self.lengths, dtype=np.int64), out=row_starts[1:])
        cols = np.concatenate(self.cols) if self.cols else np.zeros(0, dtype=np.int64)
        values = np.concatenate(self.values) if self.values else np.zeros(0)
        return dict(cost=np.concatenate(self.cost), col_lower=np.concatenate(self.col_lower),
                    col_upper=np.concatenate(self.col_upper), integrality=np.concatenate(self.integrality),
                    row_starts=row_starts, row_cols=cols, row_values=values,
                    row_lower=np.array(self.lower, dtype=np.float64), row_upper=np.array(self.upper, dtype=np.float64),
                    col_labels=self.col_labels, row_labels=self.row_labels, row_families=self.families)
