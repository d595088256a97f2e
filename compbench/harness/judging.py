"""The judgement of a run's answers, instance by instance: the reference each instance's answers are judged against
(recorded in the run, certified, or the best valid answer), which answers are second opinions of each other, and the
verdict of each (:func:`compbench.agreement.verdict`).  Shared by ``check``, ``bench`` and the statistics.

A reference is set aside, for the best valid answer (a lower bound), when a valid answer refutes it (a tree that
beats its optimum is a fact about the instance: the reference is wrong, not the answer) or when its solver gave a
wrong answer elsewhere; an answer agreeing only with a solver found wrong is not compared.
"""

from __future__ import annotations

from collections import defaultdict

from compbench.agreement import WRONG, Judgement, Reference, Verdict, answers_agree, refutes, verdict
from compbench.problem import Solution, Status
from compbench.records import decode_number, record_solution, recorded_error, runtime
from compbench.registry import opinion

IN_RUN = " in this run"  # the end of the source of a reference an exact solver computed in the run


def recorded_reference(record: dict) -> Reference | None:
    """The reference a result carries (``reference``: what its run file recorded for its instance), or None."""
    data = record.get("reference")
    if not isinstance(data, dict) or data.get("status") not in ("optimal", "infeasible"):
        return None
    source = str(data.get("source"))
    solver = data.get("solver")
    if solver is None and source.endswith(IN_RUN):  # a run file written before references named their solver
        solver = source[:-len(IN_RUN)]
    try:
        return Reference(Status(data["status"]), decode_number(data.get("objective")), source, solver=solver,
                         error=recorded_error(data))
    except (TypeError, ValueError):
        return None


def recorded_answer(record: dict) -> tuple[Solution, str]:
    """(solution, validity) of a result record; a record whose tree cannot be read is an invalid answer."""
    try:
        return record_solution(record, int(record["n"])), record.get("validity", "ok")
    except (ValueError, TypeError, KeyError) as exc:
        return record_solution({"status": record.get("status")}, 0), f"invalid: {exc}"


def fallback_reference(records: list[dict], answers: list[tuple[Solution, str]], note: str = "",
                       floor: Reference | None = None) -> Reference | None:
    """The best valid objective among an instance's answers (a lower bound on its optimum), or ``infeasible`` when
    no answer has a solution and one claims infeasibility; None when there is nothing.  ``answers``: the records'
    (solution, validity) (:func:`recorded_answer`: a tree that cannot be read is no valid answer); ``note`` ends
    its source (why a proven reference was set aside); ``floor``: that reference, whose value, a validated tree's,
    stays a lower bound.  Ties go to the larger float64 error, then the solver's name (the same on any order)."""
    bounds = [(solution.objective, recorded_error(r), r["solver"]) for r, (solution, validity) in zip(records, answers)
              if validity == "ok" and solution.has_solution and solution.objective is not None]
    if floor is not None and floor.status == Status.OPTIMAL and floor.objective is not None:
        bounds.append((floor.objective, floor.error, f"the set-aside reference ({floor.source})"))
    if bounds:
        value, error, whose = max(bounds)
        owner = whose if whose.startswith("the set-aside") else f"{whose}'s"
        return Reference(Status.OPTIMAL, value, f"best valid answer in the run, {owner}{note}", proven=False,
                         error=error)
    if any(r.get("status") == "infeasible" for r in records):
        return Reference(Status.INFEASIBLE, None, f"an infeasible claim in the run{note}", proven=False)
    return None


def _instance_reference(records: list[dict], answers: list[tuple[Solution, str]], reference: Reference | None,
                        disqualified: set[str]) -> Reference | None:
    """The reference an instance's answers are judged against: ``reference`` (certified, or computed in the run),
    else the best valid answer (:func:`fallback_reference`); a reference that a valid answer refutes
    (:func:`compbench.agreement.refutes`), or whose solver is ``disqualified`` (wrong elsewhere: its value, a
    validated tree's, stays a lower bound), is set aside for the best valid answer, which says so."""
    if reference is None:
        return fallback_reference(records, answers)
    for r, (solution, validity) in zip(records, answers):
        if refutes(solution, validity, reference, recorded_error(r)):
            return fallback_reference(records, answers, f"; it refutes {reference.describe()}")
    if reference.solver is not None and opinion(reference.solver) in disqualified:
        return fallback_reference(records, answers, f"; {reference.describe()} set aside: {reference.solver} is "
                                                    "disqualified (a wrong answer elsewhere)", floor=reference)
    return reference


def judge_records(results: list[dict], references: dict[str, Reference]) -> list[Judgement]:
    """The judgement of every result record (in order): :func:`compbench.agreement.verdict` of its answer, its
    recorded validity and its instance's reference (:func:`_instance_reference`).  A second opinion is a proven
    answer of another implementation (the record's ``implementation``, else :func:`compbench.registry.opinion`)
    that agrees with it (:func:`compbench.agreement.answers_agree`); the references and the second opinions of a
    solver found wrong are set aside and the answers judged again, until no more solver is found wrong."""
    by_instance: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(results):
        by_instance[r["instance"]].append(i)
    answers = [recorded_answer(r) for r in results]
    errors = [recorded_error(r) for r in results]
    opinions = [r.get("implementation") or opinion(r["solver"]) for r in results]  # as recorded in the run
    disqualified: set[str] = set()
    while True:
        out: list[Judgement | None] = [None] * len(results)
        for instance, indices in by_instance.items():
            records = [results[i] for i in indices]
            mine = [answers[i] for i in indices]
            reference = _instance_reference(records, mine, references.get(instance), disqualified)
            for i, r, (solution, validity) in zip(indices, records, mine):
                second = any(opinions[k] not in (opinions[i], *disqualified)
                             and answers[k][1] == "ok" == validity
                             and answers_agree(solution, answers[k][0], errors[i] + errors[k])
                             for k in indices)  # one implementation is no second, with any options
                out[i] = verdict(solution, validity, reference, skipped=r.get("status") == "skipped",
                                 second_opinion=second, solver=r["solver"], implementation=opinions[i],
                                 error=errors[i])
        wrong = {opinions[i] for i, j in enumerate(out) if j.verdict in WRONG}
        if wrong <= disqualified:
            return out  # type: ignore[return-value]
        disqualified |= wrong


def judge_results(results: list[dict]) -> list[Judgement]:
    """The judgement of each result, in order: against the reference it carries (its run file's), else the best
    valid answer on its instance (:func:`judge_records`).  Results of several runs may carry other references of
    the same value: a certified one goes first, then the first source in order (the same on any order of files)."""
    references: dict[str, Reference] = {}
    for r in results:
        ref, old = recorded_reference(r), references.get(r["instance"])
        if ref is not None and (old is None or (ref.solver is not None, ref.source) < (old.solver is not None,
                                                                                        old.source)):
            references[r["instance"]] = ref
    return judge_records(results, references)


def outcome(judged: Judgement, record: dict | None = None) -> str:
    """One of OUTCOMES: ``solved`` only for a validated proven answer that agrees with its reference, within its
    result ``record``'s time limit (an answer that came later, in the grace before the kill, is a ``timeout``).

    >>> ref = Reference(Status.OPTIMAL, 2.0, "certified")
    >>> outcome(Judgement(Verdict.OK, reference=ref, compared=True, proven=True)), outcome(Judgement(Verdict.OK))
    ('solved', 'unproven')
    >>> outcome(Judgement(Verdict.OK, reference=ref, compared=True, proven=True),
    ...         {"seconds": {"total": 1.5}, "time_limit": 1.0})
    'timeout'
    """
    if judged.verdict != Verdict.OK:
        return judged.verdict.value
    seconds, limit = (runtime(record), record.get("time_limit")) if record is not None else (None, None)
    if seconds is not None and limit is not None and seconds > limit:
        return "timeout"
    if judged.solved:
        return "solved"
    return "unchecked" if judged.proven else "unproven"


def outcomes(results: list[dict]) -> list[str]:
    """The outcome of each result, in order (judged against its instance's reference)."""
    return [outcome(j, r) for r, j in zip(results, judge_results(results))]
