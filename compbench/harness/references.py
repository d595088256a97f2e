"""Reference optima: what every answer of ``check`` and ``bench`` is judged against.

MIPLIB ships a ``.solu`` file of known optima beside its instances and its checker judges every answer against it;
compbench does the same.  ``compbench certify FILE`` solves every instance of an instance file with two independent
exact methods (the resource-constrained DP and a second one: the signature DP, else an ILP, else brute force),
which must agree, and writes the optima beside the file (``x.jsonl`` -> ``x.solu.json``), with the methods, their
versions and the date.  ``check`` and ``bench`` read it when it is there (matching instances by their content hash);
for instances without one they compute the optimum with the resource-constrained DP in the run, in a worker under
the run's limits.  The references are recorded in the run file (``reference`` records), so every later view judges
the same way.  An instance with neither (the DP failed or cannot take it) is judged against the best valid objective
any answer reached, a lower bound: an exact answer on it counts as compared only beside a second exact answer.

>>> from compbench.harness.sweep import source_problems
>>> problems = source_problems("gen:gaussian:4:2")
>>> table = certify(problems, jobs=1)
>>> [(entry["status"], entry["methods"]) for entry in table["optima"]][0]
('optimal', ['resource-dp', 'signature-dp'])
"""

from __future__ import annotations

import datetime
import json
import math
import os
from collections import defaultdict
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable

from compbench.agreement import Reference
from compbench.files import atomic_output
from compbench.evaluate import largest_objective_error
from compbench.io import instance_hash
from compbench.limits import CERTIFY_SECONDS
from compbench.problem import Problem, Status
from compbench.records import decode_number, encode_number, is_error_value, recorded_error

SOLU_FORMAT = "compbench-solu/1"
IN_RUN_METHOD = "resource-dp"  # the exact DP that gives a reference in the run when no certified optimum is there
SECOND_METHODS = ("signature-dp", "ilp-highs", "brute-force")  # the certificate's second method: the first that can


class ReferenceError(ValueError):
    """A reference-optima file that cannot be read or does not match its instances: one line naming the file."""


def solu_path(instances: str | os.PathLike) -> Path:
    """Where the certified optima of an instance file live: ``x.jsonl`` -> ``x.solu.json`` beside it (beside the
    file a symbolic link names, which is what a write through the link replaces)."""
    path = Path(instances).resolve()
    return path.with_name(f"{path.name.rsplit('.', 1)[0]}.solu.json")


def _second_methods() -> list[Any]:
    """The solvers of SECOND_METHODS that are registered and can run here, in order."""
    from compbench.registry import get_solver

    out = []
    for name in SECOND_METHODS:
        try:
            solver = get_solver(name)
        except KeyError:
            continue
        if solver.unavailable() is None:
            out.append(solver)
    return out


def _second_method(problem: Problem, candidates: list[Any]) -> str | None:
    """The first of ``candidates`` that takes ``problem``, by name."""
    return next((s.name for s in candidates if s.supports.reason_unsupported(problem) is None), None)


def _solve_all(problems: list[Problem], method_of: dict[str, str], pool: Any, time_limit: float | None,
               memory_limit: int | None) -> dict[str, dict]:
    """The worker's result record of each problem (by id) under the method ``method_of[id]``, on the executor
    ``pool`` (worker processes under a hard limit, as a sweep runs them)."""
    from .sweep import make_tasks, run_tasks

    tasks = []
    by_method: dict[str, list[Problem]] = defaultdict(list)
    for problem in problems:
        by_method[method_of[problem.id]].append(problem)
    for method, group in by_method.items():
        tasks += make_tasks(group, [method], time_limit, memory_limit)
    results: dict[str, dict] = {}
    run_tasks(tasks, pool, lambda record: results.__setitem__(record["instance"], record))
    return results


def _proven(record: dict | None) -> tuple[str, float | None, float] | None:
    """(status, objective, its float64 error) of a validated proven answer, or None."""
    if record is None or record.get("validity", "ok") != "ok" or record.get("status") not in ("optimal", "infeasible"):
        return None
    return record["status"], decode_number(record.get("objective")), recorded_error(record)


def certify(problems: Iterable[Problem], *, jobs: int = 1, time_limit: float | None = CERTIFY_SECONDS,
            memory_limit: int | None = None) -> dict[str, Any]:
    """The certified optima of ``problems`` (ids made unique as the harness makes them): per instance its id, hash,
    ``status`` (``optimal``/``infeasible``, or None when the two methods did not both prove the same answer, with
    ``why``), ``objective`` and the two ``methods``; plus the methods' versions and the date."""
    from compbench.agreement import objectives_agree

    from .sweep import LocalExecutor, unique_ids

    problems = unique_ids(problems)
    candidates = _second_methods()
    seconds = {p.id: _second_method(p, candidates) for p in problems}
    pool = LocalExecutor(max(1, jobs))
    try:
        first = _solve_all(problems, {p.id: IN_RUN_METHOD for p in problems}, pool, time_limit, memory_limit)
        second = _solve_all([p for p in problems if seconds[p.id]], {k: v for k, v in seconds.items() if v}, pool,
                            time_limit, memory_limit)
    finally:
        pool.close()
    optima = []
    for problem in problems:
        entry: dict[str, Any] = {"instance": problem.id, "hash": instance_hash(problem), "status": None,
                                 "objective": None, "methods": [IN_RUN_METHOD, seconds[problem.id]]}
        a, b = _proven(first.get(problem.id)), _proven(second.get(problem.id))
        if seconds[problem.id] is None:
            entry["why"] = f"no second exact method ({', '.join(SECOND_METHODS)}) takes this instance"
        elif a is None or b is None:
            failed = [(m, r) for m, r, v in ((IN_RUN_METHOD, first.get(problem.id), a),
                                             (seconds[problem.id], second.get(problem.id), b)) if v is None]
            entry["why"] = "; ".join(f"{m} gave no proven valid answer ({(r or {}).get('status', 'nothing')}"
                                     f"{': ' + r['message'][:120] if r and r.get('message') else ''})"
                                     for m, r in failed)
        elif a[0] != b[0] or (a[0] == "optimal" and not objectives_agree(a[1], b[1], slack=a[2] + b[2])):
            entry["why"] = f"the methods disagree: {IN_RUN_METHOD} {a[:2]}, {seconds[problem.id]} {b[:2]}"
        else:
            entry["status"], entry["objective"] = a[0], encode_number(a[1])
            if max(a[2], b[2]) > 0:
                entry["objective_error"] = max(a[2], b[2])
        optima.append(entry)
    methods = sorted({m for entry in optima for m in entry["methods"] if m})
    return {"format": SOLU_FORMAT, "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "compbench": metadata.version("compbench"), "methods": {m: _method_version(m) for m in methods},
            "optima": optima}


def _method_version(name: str) -> dict[str, Any]:
    """The distribution and version that register a solver, and for an ILP the MIP backend's version."""
    from compbench.registry import solver_distributions

    out = dict(solver_distributions().get(name) or {})
    if name.startswith("ilp-"):
        try:
            out["highspy"] = metadata.version("highspy")
        except metadata.PackageNotFoundError:
            pass
    return out


def write_solu(path: str | os.PathLike, table: dict[str, Any], instances: str | os.PathLike) -> Path:
    """Write a certify table beside its instance file, whole or not at all (a temporary name, then a rename)."""
    path = Path(path)
    with atomic_output(path) as partial:
        partial.write_text(json.dumps({**table, "instances": Path(instances).name}, indent=1, allow_nan=False)
                           + "\n", encoding="utf-8")
    return path


def read_solu(path: str | os.PathLike) -> dict[str, Reference]:
    """The certified references of a ``.solu.json`` file by instance hash (entries the methods could not certify are
    left out); :class:`ReferenceError` names the file and the field of anything malformed."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ReferenceError(f"{path}: cannot read the reference optima ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != SOLU_FORMAT or not isinstance(data.get("optima"), list):
        raise ReferenceError(f"{path}: not a reference-optima file (format {SOLU_FORMAT!r} with a list 'optima')")
    out = {}
    for i, entry in enumerate(data["optima"]):
        if not isinstance(entry, dict) or not isinstance(entry.get("hash"), str):
            raise ReferenceError(f"{path}: optima[{i}].hash: expected a string")
        status = entry.get("status")
        if status is None:
            continue
        try:
            objective = decode_number(entry.get("objective"))
        except (TypeError, ValueError):
            raise ReferenceError(f"{path}: optima[{i}].objective: expected a number") from None
        if status not in ("optimal", "infeasible") or (status == "optimal" and (objective is None
                                                                                or not math.isfinite(objective))):
            raise ReferenceError(f"{path}: optima[{i}].status: expected optimal with a finite objective, or "
                                 "infeasible")
        if status == "infeasible" and objective is not None:  # a value the judgement would silently ignore
            raise ReferenceError(f"{path}: optima[{i}].objective: an infeasible instance has none (null), got "
                                 f"{entry.get('objective')!r}")
        if not is_error_value(entry.get("objective_error", 0.0)):
            raise ReferenceError(f"{path}: optima[{i}].objective_error: expected a finite number >= 0")
        reference = Reference(Status(status), objective, f"certified, {path.name}", error=recorded_error(entry))
        earlier = out.setdefault(entry["hash"], reference)
        if (earlier.status, earlier.objective) != (reference.status, reference.objective):
            raise ReferenceError(f"{path}: optima[{i}].hash: {entry['hash']} again, certified as "
                                 f"{reference.describe()} here and {earlier.describe()} before")
    return out


def certified_for(source: str, problems: list[Problem]) -> dict[str, Reference]:
    """The certified references (by problem id) of the problems of instance file ``source`` that its
    ``.solu.json`` holds; empty for a generator spec or a file without one."""
    if source.startswith("gen:"):
        return {}
    path = solu_path(source)
    if not path.is_file():
        return {}
    table = read_solu(path)
    found = {p.id: (p, table[h]) for p in problems if (h := instance_hash(p)) in table}
    for problem, reference in found.values():  # a wrong optimum with an error this wide would agree with anything
        if reference.error > (most := largest_objective_error(problem)):
            raise ReferenceError(f"{path}: the optimum of {problem.id}: objective_error {reference.error!r} is above "
                                 f"the float64 error of any tree of that instance (at most {most:.3g})")
    return {instance: reference for instance, (_, reference) in found.items()}


def compute_references(problems: list[Problem], known: dict[str, Reference], pool: Any, *,
                       time_limit: float | None = None, memory_limit: int | None = None) -> dict[str, Reference]:
    """``known`` and, for every other problem, the optimum :data:`IN_RUN_METHOD` proves on the executor ``pool``
    under the run's limits (a problem it cannot solve, or a machine without it, gets none)."""
    from compbench.registry import solver_names

    todo = [p for p in problems if p.id not in known]
    out = dict(known)
    if not todo or IN_RUN_METHOD not in solver_names():
        return out
    for instance, record in _solve_all(todo, {p.id: IN_RUN_METHOD for p in todo}, pool, time_limit,
                                       memory_limit).items():
        proven = _proven(record)
        if proven is not None:
            out[instance] = Reference(Status(proven[0]), proven[1], f"{IN_RUN_METHOD} in this run",
                                      solver=IN_RUN_METHOD, error=proven[2])
    return out


def reference_record(problem: Problem, reference: Reference) -> dict[str, Any]:
    """The run-file record of an instance's reference."""
    return {"type": "reference", "instance": problem.id, "hash": instance_hash(problem),
            "status": reference.status.value, "objective": encode_number(reference.objective),
            "source": reference.source, "solver": reference.solver,
            **({"objective_error": reference.error} if reference.error else {})}
