"""Agreement: run solvers on the same instances and find every provably wrong answer.

Each solve runs in a child process under a hard limit (as in a sweep).  Every solution is validated with
``compbench.agreement.judge`` (tree, length, forbidden scores, reported objective); then, per instance, the best
valid objective found by any solver is a proven lower bound on the optimum, so an ``optimal`` claim below it, an
``infeasible`` claim while a valid solution exists, or a ``bound`` below it is a disagreement (judged by the same
``judge`` against that reference).  Every disagreement or invalid solution is written as a standalone instance file
carrying both answers (a ready regression case).

>>> from compbench.harness.sweep import source_problems
>>> report = check(source_problems("gen:gaussian:4:2"), ["brute-force"], time_limit=30)
>>> report.failed, report.table["brute-force"]["optimal"]
(False, 2)
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from compbench.agreement import contradiction, judge, objectives_agree
from compbench.io import problem_to_dict
from compbench.problem import Problem, Solution, Status
from compbench.records import record_solution

from .sweep import LocalExecutor, make_tasks, run_tasks, unique_ids

COLUMNS = ("optimal", "infeasible", "feasible", "timeout", "unsupported", "error", "invalid", "disagreeing")


def best_valid(records: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """The record with the highest objective among valid solutions (a proven lower bound on the optimum)."""
    valid = [r for r in records if r.get("heads") is not None and r.get("validity") == "ok"]
    return max(valid, key=lambda r: float(r["objective"]), default=None)


def verdicts(problem: Problem, records: list[dict[str, Any]]) -> dict[str, str]:
    """``judge``'s verdict for each solver's record on one problem, against the best valid solution found."""
    best = best_valid(records)
    out = {}
    for record in records:
        if record.get("validity", "ok") != "ok":
            out[record["solver"]] = record["validity"]
            continue
        reference = Solution(Status.OPTIMAL, objective=float(best["objective"])) if best is not None else None
        out[record["solver"]] = judge(problem, record_solution(record, problem.n), reference)
    return out


def record_verdicts(records: list[dict[str, Any]]) -> dict[str, str]:
    """``verdicts`` for records already validated (their ``validity``, as a run file holds them): each record's own
    validity, else whether it contradicts the best valid solution found on that problem (``contradiction``).

    >>> ok = {"n": 2, "heads": [0], "kept": [1], "validity": "ok"}
    >>> record_verdicts([{**ok, "solver": "a", "status": "optimal", "objective": 2.0},
    ...                  {"n": 2, "solver": "b", "status": "infeasible", "objective": None}])["b"]
    'disagrees: claims infeasible, reference optimum is 2.0'
    """
    best = best_valid(records)
    reference = Solution(Status.OPTIMAL, objective=float(best["objective"])) if best is not None else None
    out = {}
    for record in records:
        validity = record.get("validity", "ok")
        if validity == "ok":
            try:
                validity = contradiction(record_solution(record, record["n"]), reference)
            except ValueError as exc:  # kept and heads that describe no tree
                validity = f"invalid: {exc}"
        out[record["solver"]] = validity
    return out


def agreement_matrix(results: Iterable[dict[str, Any]]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Solvers, and for each pair the number of instances where both claimed ``optimal`` and how many agreed."""
    by_instance: dict[str, dict[str, float]] = defaultdict(dict)
    for r in results:
        if r.get("type", "result") == "result" and r.get("status") == "optimal" and r.get("objective") is not None:
            by_instance[r["instance"]][r["solver"]] = float(r["objective"])
    solvers = sorted({s for claims in by_instance.values() for s in claims})
    index = {s: i for i, s in enumerate(solvers)}
    both = np.zeros((len(solvers), len(solvers)), dtype=int)
    agree = np.zeros_like(both)
    for claims in by_instance.values():
        for a, va in claims.items():
            for b, vb in claims.items():
                both[index[a], index[b]] += 1
                agree[index[a], index[b]] += objectives_agree(va, vb)
    return solvers, both, agree


@dataclass
class CheckReport:
    solvers: list[str]
    table: dict[str, dict[str, int]]
    failures: list[dict[str, Any]] = field(default_factory=list)  # {instance, solver, verdict, file}
    records: list[dict[str, Any]] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return bool(self.failures)

    def format_table(self) -> str:
        lines = [f"{'solver':<20}" + "".join(f"{c:>12}" for c in COLUMNS)]
        for solver in self.solvers:
            lines.append(f"{solver:<20}" + "".join(f"{self.table[solver][c]:>12}" for c in COLUMNS))
        return "\n".join(lines)


def safe_file_name(name: str) -> str:
    """A file-name part for ``name``: safe characters, at most 60 of them, and a hash of the whole name when
    anything was replaced or cut (so ``a/b`` and ``a_b`` never share a file)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
    if safe == name and len(name) <= 60:
        return name
    return f"{safe[:60]}-{hashlib.sha1(name.encode('utf-8', 'surrogatepass')).hexdigest()[:10]}"


def write_repro(directory: Path, problem: Problem, solver: str, verdict: str, record: dict[str, Any],
                reference: dict[str, Any] | None) -> Path:
    """An instance file carrying the failing answer and the reference answer (extra keys are kept and ignored)."""
    directory.mkdir(parents=True, exist_ok=True)
    data = problem_to_dict(problem)
    strip = lambda r: {k: r.get(k) for k in ("solver", "status", "objective", "bound", "kept", "heads", "message")}
    data["check"] = {"solver": solver, "verdict": verdict, "answer": strip(record),
                     "reference": strip(reference) if reference is not None else None}
    path = directory / f"{safe_file_name(problem.id or 'instance')}--{safe_file_name(solver)}.json"
    path.write_text(json.dumps(data, allow_nan=False, indent=1) + "\n", encoding="utf-8")
    return path


def check(problems: list[Problem], solvers: list[str], *, time_limit: float | None = 60.0,
          memory_limit: int | None = None, jobs: int = 1, repro_dir: str | os.PathLike | None = None,
          executor: Any = None, on_record: Any = None) -> CheckReport:
    """Run every solver on every problem and judge all answers (see the module docstring)."""
    problems = unique_ids(problems)  # answers are grouped by id
    by_id = {p.id: p for p in problems}
    tasks = make_tasks(problems, solvers, time_limit, memory_limit)
    results: dict[str, list[dict[str, Any]]] = defaultdict(list)
    records: list[dict[str, Any]] = []

    def collect(record: dict[str, Any]) -> None:
        results[record["instance"]].append(record)
        records.append(record)
        if on_record is not None:
            on_record(record)

    from ..progress import bar

    pool = executor or LocalExecutor(jobs)
    progress = bar(total=len(tasks), desc="check", unit="solve")

    def collect_and_count(record: dict[str, Any]) -> None:
        collect(record)
        progress.update(1)

    try:
        run_tasks(tasks, pool, collect_and_count, progress=progress)
    finally:
        progress.close()
        if executor is None:
            pool.close()
    table = {s: dict.fromkeys(COLUMNS, 0) for s in solvers}
    report = CheckReport(solvers, table, records=records)
    for instance, answers in results.items():
        problem = by_id[instance]
        reference = best_valid(answers)
        for solver, verdict in verdicts(problem, answers).items():
            record = next(r for r in answers if r["solver"] == solver)
            if record["status"] in table[solver]:
                table[solver][record["status"]] += 1
            if verdict == "ok":
                continue
            table[solver]["invalid" if verdict.startswith("invalid") else "disagreeing"] += 1
            failure = {"instance": instance, "solver": solver, "verdict": verdict}
            if repro_dir is not None:
                failure["file"] = str(write_repro(Path(repro_dir), problem, solver, verdict, record, reference))
            report.failures.append(failure)
    return report
