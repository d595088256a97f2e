"""Agreement: run solvers on the same instances and judge every answer against the instance's reference.

Each solve runs in a child process under a hard limit (as in a sweep).  Every solution is validated in the worker
(``compbench.agreement.validate``: tree, length, forbidden scores, reported objective); then every answer is judged
(``compbench.agreement.verdict``) against its instance's reference (:mod:`.references`: a certified optimum, else
the optimum the resource-constrained DP computed in this run, else the best valid objective any answer reached).  An
``optimal`` claim off the reference, an ``infeasible`` claim where a solution exists, or a ``bound`` below the
optimum is a disagreement; every disagreement or invalid solution is written as a standalone instance file carrying
the answer and the reference (a ready regression case).  A check *compared* an instance when at least one exact
solver's proven answer on it was judged against a proven reference or a second exact answer; a check that compared
nothing, or in which every answer of a solver is an error, has failed.

>>> from compbench.harness.sweep import source_problems
>>> report = check(source_problems("gen:gaussian:4:2"), ["brute-force"], time_limit=30)
>>> report.failed, report.table["brute-force"]["optimal"], report.compared
(False, 2, 2)
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from compbench.agreement import WRONG, Judgement, Reference, Verdict, objectives_agree
from compbench.files import atomic_output
from compbench.io import instance_hash, problem_to_dict
from compbench.problem import Problem
from compbench.records import recorded_error
from compbench.registry import base_name, opinion

from .references import compute_references
from .judging import judge_records
from .sweep import LocalExecutor, make_tasks, run_tasks, unique_ids

COLUMNS = ("optimal", "infeasible", "feasible", "timeout", "unsupported", "error", "invalid", "disagreeing",
           "compared")


def _reference_kind(computed: Reference | None, used: Reference | None) -> str:
    """What an instance's answers were judged against, for check's summary line: the proven reference computed or
    certified for it, or the best valid answer, and why (none computed, or the proven one set aside)."""
    if used is not None and used.proven:
        return used.source
    if computed is not None and computed.proven:
        return "best valid answer (a lower bound): the proven reference set aside (refuted, or its solver wrong)"
    return "none computed: best valid answer (a lower bound)"


def agreement_matrix(results: Iterable[dict[str, Any]]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Solvers, and for each pair the number of instances where both claimed ``optimal`` and on how many every claim
    of the one agreed with every claim of the other (repeats included: on the diagonal, a solver's repeats that
    disagree with each other).

    >>> claim = lambda solver, value, repeat=0: {"instance": "x", "solver": solver, "status": "optimal",
    ...                                          "objective": value, "repeat": repeat}
    >>> solvers, both, agree = agreement_matrix([claim("a", 4.0), claim("a", 5.0, 1), claim("b", 5.0)])
    >>> both.tolist(), agree.tolist()
    ([[1, 1], [1, 1]], [[0, 0], [0, 1]])
    """
    by_instance: dict[str, dict[str, list[tuple[float, float]]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        if r.get("type", "result") == "result" and r.get("status") == "optimal" and r.get("objective") is not None:
            by_instance[r["instance"]][r["solver"]].append((float(r["objective"]), recorded_error(r)))
    solvers = sorted({s for claims in by_instance.values() for s in claims})
    index = {s: i for i, s in enumerate(solvers)}
    both = np.zeros((len(solvers), len(solvers)), dtype=int)
    agree = np.zeros_like(both)
    for claims in by_instance.values():
        for a, of_a in claims.items():
            for b, of_b in claims.items():
                both[index[a], index[b]] += 1
                agree[index[a], index[b]] += all(objectives_agree(va, vb, slack=ea + eb)
                                                 for va, ea in of_a for vb, eb in of_b)
    return solvers, both, agree


@dataclass
class CheckReport:
    solvers: list[str]
    table: dict[str, dict[str, int]]
    failures: list[dict[str, Any]] = field(default_factory=list)  # {instance, solver, verdict, file}
    records: list[dict[str, Any]] = field(default_factory=list)
    judgements: list[Judgement] = field(default_factory=list)  # of each record, in order
    instances: int = 0
    compared: int = 0  # instances on which some exact solver's proven answer was compared
    references: dict[str, int] = field(default_factory=dict)  # how many instances each reference source served
    reference_of: dict[str, Reference] = field(default_factory=dict)  # the proven reference of each instance (id)

    @property
    def all_errors(self) -> list[str]:
        """The solvers every answer of which is an error, but for the problems they declined (``unsupported``)."""
        return [s for s in self.solvers if self.table[s]["error"] and self.table[s]["error"] == sum(
            self.table[s][c] for c in ("optimal", "infeasible", "feasible", "timeout", "error"))]

    @property
    def nothing_compared(self) -> str | None:
        """Why nothing was compared (``"nothing was compared: ..."``), or None when something was."""
        if self.compared:
            return None
        statuses = Counter(r.get("status") for r in self.records)
        shown = ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())) or "no answers"
        shared = [s for s in self.solvers if opinion(s) != base_name(s)]
        hint = (f"; {', '.join(shared)} and the reference's method share one implementation ({opinion(shared[0])}): "
                "one opinion; add an independent exact solver (e.g. signature-dp) or certify the instances"
                if shared else "")
        return (f"nothing was compared: no exact solver gave a proven answer that could be judged against a "
                f"reference optimum or a second exact answer ({shown}){hint}")

    @property
    def failed(self) -> bool:
        return bool(self.failures) or self.nothing_compared is not None or bool(self.all_errors)

    def summary_lines(self) -> list[str]:
        """The verdict lines: what was compared against what, and why the check failed (if it did)."""
        sources = "; ".join(f"{source} ({count})" for source, count in sorted(self.references.items()))
        lines = [f"compared: {self.compared} of {self.instances} instances; reference: {sources or 'none'}"]
        if self.nothing_compared:
            lines.append(self.nothing_compared)
        for solver in self.all_errors:
            unsupported = self.table[solver]["unsupported"]
            lines.append(f"every answer of {solver} is an error: {self.table[solver]['error']} of "
                         f"{self.table[solver]['error']}" + (f" (and {unsupported} unsupported)" if unsupported else ""))
        if self.failures:
            lines.append(f"agreement: {len(self.failures)} failure(s)")
        elif not self.failed:
            lines.append(f"agreement: every answer on the {self.compared} compared instances holds up"
                         + self._unjudged())
        return lines

    def _unjudged(self) -> str:
        """What the agreement line does not cover: the answers that were errors, by solver ("" when none)."""
        errors = {solver: self.table[solver]["error"] for solver in self.solvers if self.table[solver]["error"]}
        if not errors:
            return ""
        shown = ", ".join(f"{solver} {count}" for solver, count in errors.items())
        return f" but for {sum(errors.values())} error answer(s), which were not judged ({shown})"

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
                reference: Reference | None) -> Path:
    """An instance file carrying the failing answer and the reference (extra keys are kept and ignored)."""
    directory.mkdir(parents=True, exist_ok=True)
    data = problem_to_dict(problem)
    strip = lambda r: {k: r.get(k) for k in ("solver", "status", "objective", "bound", "kept", "heads", "message")}
    data["check"] = {"solver": solver, "verdict": verdict, "answer": strip(record),
                     "reference": None if reference is None else {
                         "status": reference.status.value, "objective": reference.objective,
                         "source": reference.source, "proven": reference.proven}}
    path = directory / f"{safe_file_name(problem.id or 'instance')}--{safe_file_name(solver)}.json"
    with atomic_output(path) as partial:  # a full disk leaves no half a repro
        partial.write_text(json.dumps(data, allow_nan=False, indent=1) + "\n", encoding="utf-8")
    return path


def recorded_answers(path: str | os.PathLike, problems: list[Problem]) -> tuple[list[dict[str, Any]],
                                                                              dict[str, Reference]]:
    """The result records of a check's run file (each checked as ``report`` reads it: :class:`RunFileError` names
    the record and the field) and the references it recorded for ``problems`` (by id, where the content hash
    matches): what ``check --resume`` judges with the answers still to come."""
    from .runfiles import checked_results, read_records
    from .judging import recorded_reference

    records = read_records(path)
    results = checked_results(path, records)
    hashes = {p.id: instance_hash(p) for p in problems}
    references = {r["instance"]: reference for r in records if r["type"] == "reference"
                  and hashes.get(r.get("instance")) == r.get("hash")
                  and (reference := recorded_reference({"reference": r})) is not None}
    return results, references


def check(problems: list[Problem], solvers: list[str], *, time_limit: float | None = 60.0,
          memory_limit: int | None = None, jobs: int = 1, repro_dir: str | os.PathLike | None = None,
          executor: Any = None, on_record: Any = None, references: dict[str, Reference] | None = None,
          recorded: list[dict[str, Any]] | None = None) -> CheckReport:
    """Run every solver on every problem and judge all answers (see the module docstring).  ``references``: the
    instances' known references by id (certified optima); the others get the optimum the resource-constrained DP
    computes here (:func:`.references.compute_references`).  ``recorded``: answers of an earlier part of the same
    check (result records), judged with the others and not solved again."""
    from ..progress import bar

    problems = unique_ids(problems)  # answers are grouped by id
    by_id = {p.id: p for p in problems}
    tasks = make_tasks(problems, solvers, time_limit, memory_limit)
    pair = lambda header, solver: (header["instance"], header.get("hash"), solver)  # noqa: E731
    wanted = {pair(t.header, t.solver) for t in tasks}
    latest = {pair(r, r["solver"]): r for r in recorded or [] if pair(r, r["solver"]) in wanted}  # the last of twins
    records = list(latest.values())
    done = set(latest)
    tasks = [t for t in tasks if pair(t.header, t.solver) not in done]
    pool = executor or LocalExecutor(jobs)
    progress = bar(total=len(tasks), desc="check", unit="solve")

    def collect(record: dict[str, Any]) -> None:
        records.append(record)
        if on_record is not None:
            on_record(record)
        progress.update(1)

    try:
        references = compute_references(problems, references or {}, pool, time_limit=time_limit,
                                        memory_limit=memory_limit)
        run_tasks(tasks, pool, collect, progress=progress)
    finally:
        progress.close()
        if executor is None:
            pool.close()
    judgements = judge_records(records, references)
    table = {s: dict.fromkeys(COLUMNS, 0) for s in solvers}
    report = CheckReport(solvers, table, records=records, judgements=judgements, instances=len(problems),
                         reference_of=references)
    compared = set()
    for record, judged in zip(records, judgements):
        solver, instance = record["solver"], record["instance"]
        if record["status"] in table[solver]:
            table[solver][record["status"]] += 1
        if judged.compared:
            table[solver]["compared"] += 1
            compared.add(instance)
        if judged.verdict not in WRONG:
            continue
        table[solver]["invalid" if judged.verdict == Verdict.INVALID else "disagreeing"] += 1
        failure = {"instance": instance, "solver": solver, "verdict": str(judged)}
        if repro_dir is not None:
            try:
                failure["file"] = str(write_repro(Path(repro_dir), by_id[instance], solver, str(judged), record,
                                                  judged.reference))
            except OSError as exc:  # the verdicts stand without their repro files
                failure["repro_error"] = f"{repro_dir}: cannot write the repro file ({exc.strerror or exc})"
        report.failures.append(failure)
    report.compared = len(compared)
    used = {record["instance"]: judged.reference for record, judged in zip(records, judgements)}
    report.references = dict(Counter(_reference_kind(references.get(p.id), used.get(p.id)) for p in problems))
    return report
