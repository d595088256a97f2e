"""Solutions as JSON records: one convention for ``compbench solve --json``, the worker's pipe and the run files.

A record holds ``status``, ``objective``, ``bound``, ``kept`` (the kept tokens, increasing) and ``heads`` (the head
of each kept token, in the same order; 0 is the root), ``seconds``, and ``message`` and ``stats`` when the solver
gave any.  JSON has no infinities: a non-finite number is written as the string ``"inf"``, ``"-inf"`` or ``"nan"``;
``null`` means "none" (no objective, no bound).  Reading accepts numbers, ``null`` and those strings.

>>> import numpy as np
>>> from compbench import Solution
>>> record = solution_record(Solution("optimal", heads=np.array([-1, 3, -1, 0]), objective=5.35, bound=float("inf")))
>>> record["kept"], record["heads"], record["bound"]
([1, 3], [3, 0], 'inf')
>>> record_solution(record, n=3).heads.tolist()
[-1, 3, -1, 0]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .problem import Solution, Status, is_finite_number


def encode_number(value: float | None) -> float | str | None:
    """A float for JSON: itself when finite, ``"inf"``/``"-inf"``/``"nan"`` when not, None for None."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else str(value)


NON_FINITE = ("inf", "-inf", "nan")  # how encode_number writes the floats JSON has no numbers for


def decode_number(value: float | str | None) -> float | None:
    """The float a record's field holds (a number, one of the strings of :func:`encode_number`, or None);
    ValueError for anything else (a string such as "3.5" included: records hold numbers as numbers).

    >>> decode_number(2), decode_number("-inf"), decode_number(None)
    (2.0, -inf, None)
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)) or (
            isinstance(value, str) and value not in NON_FINITE):
        raise ValueError(f"expected a number, got {value!r}"[:200])
    return float(value)


def number_field(record: dict[str, Any], key: str) -> float | None:
    """:func:`decode_number` of ``record[key]``; its ValueError names the field."""
    try:
        return decode_number(record.get(key))
    except ValueError as exc:
        raise ValueError(f"{key}: {exc}") from None


def is_error_value(value: Any) -> bool:
    """Whether ``value`` can be an ``objective_error``: a finite number >= 0."""
    return is_finite_number(value) and value >= 0


def runtime(record: dict[str, Any]) -> float | None:
    """The time of a result: the larger of ``seconds.total`` (the solver's own clock) and ``seconds.wall`` (the
    worker's clock around the solve: no solver reports itself faster than it ran), or None when it has neither.

    >>> runtime({"seconds": {"total": 1e-6, "wall": 0.3}}), runtime({"seconds": {"total": 0.2}}), runtime({})
    (0.3, 0.2, None)
    """
    seconds = record.get("seconds") or {}
    times = [float(seconds[key]) for key in ("total", "wall") if seconds.get(key) is not None]
    return max(times) if times else None


def recorded_error(record: dict[str, Any]) -> float:
    """The float64 error a result or reference record gives its objective (``objective_error``; 0.0 when it gives
    none, as records of older run files do): see :func:`compbench.evaluate.objective_error`."""
    value = record.get("objective_error")
    return float(value) if is_error_value(value) else 0.0


STATS_DEPTH = 32  # levels of nesting kept in a solver's stats; deeper ones are cut (an answer nested 500 deep was
# an error: RecursionError in the worker)


def json_safe(value: Any, depth: int = 0) -> Any:
    """Solver stats as strict JSON: numpy scalars and arrays become numbers and lists, non-finite floats strings,
    what is nested deeper than :data:`STATS_DEPTH` a string saying so."""
    if isinstance(value, (dict, list, tuple)) and depth >= STATS_DEPTH:
        return f"(cut: nested deeper than {STATS_DEPTH} levels)"
    if isinstance(value, dict):
        return {str(k): json_safe(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v, depth + 1) for v in value]
    if hasattr(value, "tolist"):
        return json_safe(value.tolist(), depth)
    if isinstance(value, float):
        return encode_number(value)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return str(value)


def solution_record(solution: Solution, *, stats: bool = True) -> dict[str, Any]:
    """The JSON record of ``solution`` (``stats`` leaves the solver's statistics out when false)."""
    kept = [int(k) for k in solution.kept] if solution.has_solution else None
    record: dict[str, Any] = {
        "status": solution.status.value,
        "objective": encode_number(solution.objective),
        "kept": kept,
        "heads": [int(solution.heads[k]) for k in kept] if kept is not None else None,
        "bound": encode_number(solution.bound),
        "seconds": {key: round(float(value), 9) for key, value in solution.seconds.items()},
    }
    if solution.message:
        record["message"] = solution.message
    if stats and solution.stats:
        record["stats"] = json_safe(solution.stats)
    return record


def record_solution(record: dict[str, Any], n: int) -> Solution:
    """The :class:`Solution` a record describes, for a problem of ``n`` tokens.  An unknown status reads as
    ``error``; a record of an older run file (``heads`` for all n + 1 positions, no ``kept``) reads too."""
    status = record.get("status")
    status = Status(status) if status in Status._value2member_map_ else Status.ERROR
    heads = None
    if record.get("heads") is not None:
        if record.get("kept") is None:
            heads = np.asarray(record["heads"], dtype=np.int64)
        else:
            kept = np.asarray(record["kept"], dtype=np.int64)
            if len(kept) != len(record["heads"]) or np.any((kept < 1) | (kept > n)):
                raise ValueError(f"kept {record['kept']!r} and heads {record['heads']!r} do not describe tokens "
                                 f"of 1..{n}"[:300])
            heads = np.full(n + 1, -1, dtype=np.int64)
            heads[kept] = record["heads"]
    return Solution(status, heads=heads, objective=number_field(record, "objective"),
                    bound=number_field(record, "bound"), seconds=dict(record.get("seconds") or {}),
                    stats=record.get("stats") or {}, message=record.get("message", ""))
