"""Accuracy against gold compressions: token precision, recall and F1 (macro per sentence), compression rate,
exact matches and time per sentence, for the joint model, its bigram-only and tree-only parts, and first-m.

For a corpus with several annotators (broadcast) each sentence's numbers are averaged over its annotators; at
the gold length the system compresses to each annotator's own length.

>>> [round(x, 4) for x in token_prf(np.array([1, 2, 3]), np.array([2, 3, 4, 5]))]
[0.6667, 0.5, 0.5714]
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from ..agreement import validate
from ..corpora import Sentence
from ..inference import marginals, marginals_many
from ..problem import Length, Problem
from ..solver import Solver
from .model import CompressionModel


def token_prf(kept: np.ndarray, gold: np.ndarray) -> tuple[float, float, float]:
    """Precision, recall and F1 of a kept-token set against a gold one (both empty: all 1)."""
    common = len(np.intersect1d(kept, gold))
    if len(kept) == 0 and len(gold) == 0:
        return 1.0, 1.0, 1.0
    precision = common / len(kept) if len(kept) else 0.0
    recall = common / len(gold) if len(gold) else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def syntactic_f1(parse: Callable[[np.ndarray], np.ndarray], kept: np.ndarray, gold: np.ndarray) -> float:
    """Dependency F1 between the parse of a compression and the parse of the gold one, both by ``parse`` (kept
    positions -> heads over positions 0..len, heads[0] = -1): the seeds' second metric (Clarke & Lapata with RASP,
    Thadani with the Stanford parser).  Arcs are compared as (head, modifier) pairs of original token positions
    (0: the root); both compressions empty: 1.

    >>> chain = lambda kept: np.arange(-1, len(kept))          # every word heads the next
    >>> round(syntactic_f1(chain, np.array([1, 2, 4]), np.array([1, 2, 3])), 4)
    0.6667
    """
    def arcs(kept: np.ndarray) -> set[tuple[int, int]]:
        if len(kept) == 0:
            return set()
        heads = np.asarray(parse(kept))
        original = np.concatenate([[0], kept])
        return {(int(original[heads[j]]), int(original[j])) for j in range(1, len(original))}

    system, reference = arcs(np.asarray(kept)), arcs(np.asarray(gold))
    if not system and not reference:
        return 1.0
    return 2 * len(system & reference) / (len(system) + len(reference))


def compression_parser(model: CompressionModel, sentence: Sentence) -> Callable[[np.ndarray], np.ndarray]:
    """kept positions -> heads of that compression of ``sentence`` by the model's parser (the sentence's tags at
    those positions); each compression is parsed once, whichever systems chose it."""
    tags = model.pos(sentence)
    parses: dict[tuple[int, ...], np.ndarray] = {}

    def parse(kept: np.ndarray) -> np.ndarray:
        key = tuple(int(k) for k in kept)
        if key not in parses:
            parses[key] = model.parse([sentence.tokens[k - 1] for k in key],
                                      [tags[k - 1] for k in key] if tags is not None else None)
        return parses[key]

    return parse


def first_m(n: int, m: int) -> np.ndarray:
    """The first-m-tokens baseline."""
    return np.arange(1, m + 1, dtype=np.int64)


@dataclass
class System:
    """One row of the table: a solver on one part of the model, or ``first-m`` (solver None); part ``mbr`` decodes
    the joint model by minimum Bayes risk (:func:`mbr_problem`).  ``model`` (default: the one evaluated) scores the
    problems of this row and, with ``decode(sentence, m)`` (instead of a solver), the sentence that decode reads is
    its own copy; decode returns the kept tokens directly."""

    label: str
    solver: Solver | None = None
    part: str = "joint"
    model: CompressionModel | None = None
    decode: Callable[[Sentence, int], np.ndarray] | None = None


def mbr_problem(problem: Problem, token_marginals: np.ndarray | None = None) -> Problem:
    """The problem whose optimum is the minimum-Bayes-risk compression of ``problem`` for token F1 at its length.

    At a fixed length m, token precision, recall and F1 all equal |K ∩ G| / m, so the expected F1 of a kept set K
    under the model's posterior is Σ_{k in K} p(k kept) / m: the MBR compression keeps the m tokens of highest
    posterior marginal that a valid tree can hold.  Token scores become the marginals, every allowed arc and bigram
    scores 0, forbidden ones stay forbidden.  ``token_marginals``: the problem's, when already computed.
    """
    marginal = marginals(problem).token if token_marginals is None else token_marginals
    allowed = lambda scores: np.where(np.isfinite(scores), 0.0, -np.inf)  # noqa: E731
    return Problem(np.where(np.isfinite(problem.token_scores), marginal, -np.inf), allowed(problem.arc_scores),
                   allowed(problem.bigram_scores), length=problem.length, single_root=problem.single_root,
                   id=problem.id)


def target_lengths(sentence: Sentence, length: str | float) -> list[int]:
    """One length per annotator: each gold's own length, or round(ratio * n) for all."""
    if length == "gold":
        return [len(g) for g in sentence.golds]
    return [int(round(float(length) * sentence.n))] * len(sentence.golds)


class _Pending:
    """A problem's answer to come: its kept tokens (None: no solution) once its batch is solved."""

    kept: np.ndarray | None = None


class _Batch:
    """One system's problems of an evaluation, solved in one batch (:func:`compbench.solve_many`); with ``mbr``, the
    problems' minimum-Bayes-risk versions (:func:`mbr_problem`), their marginals in one batch too."""

    def __init__(self, mbr: bool = False) -> None:
        self.mbr = mbr
        self.problems: list[Problem] = []
        self.answers: list[_Pending] = []
        self.seconds: list[float] = []  # building each problem, added to its solve (and a share of the marginals)

    def add(self, problem: Problem, seconds: float) -> tuple[_Pending, float]:
        self.problems.append(problem)
        self.answers.append(_Pending())
        self.seconds.append(seconds)
        return self.answers[-1], seconds

    def solve(self, solver: Solver | None, row: dict, time_limit: float | None) -> None:
        if not self.problems or solver is None:
            return
        if self.mbr:
            start = time.perf_counter()
            posteriors = marginals_many(self.problems)
            self.problems = [mbr_problem(p, posterior.token) for p, posterior in zip(self.problems, posteriors)]
            share = (time.perf_counter() - start) / len(self.problems)
            self.seconds = [seconds + share for seconds in self.seconds]
        solutions = solver.solve_many(self.problems, time_limit=time_limit)
        for problem, answer, before, solution in zip(self.problems, self.answers, self.seconds, solutions):
            valid = not solution.has_solution or validate(problem, solution) == "ok"
            status = solution.status.value if valid else "invalid"  # a tree off the length, or no tree: not scored
            row["statuses"][status] = row["statuses"].get(status, 0) + 1
            row["batch_fallbacks"] += "batch_fallback" in solution.stats
            answer.kept = solution.kept if solution.has_solution and valid else None
            row["seconds"].append(before + solution.seconds.get("total", 0.0))


def evaluate_systems(model: CompressionModel, sentences: list[Sentence], systems: list[System],
                     length: str | float = "gold", time_limit: float | None = None,
                     progress: Callable | None = None) -> dict[str, dict]:
    """Per system: macro P/R/F1, compression rate, exact matches, mean seconds per solve, failures."""
    usable = [s for s in sentences if s.aligned and s.golds]
    rows = {system.label: {"p": [], "r": [], "f1": [], "rate": [], "exact": [], "seconds": [], "failed": 0,
                           "statuses": {}, "batch_fallbacks": 0, "answered_f1": [], "answered_rate": [], "syntactic": []}
            for system in systems}

    pending = {system.label: _Batch(mbr=system.part == "mbr") for system in systems}
    scored: list[tuple[dict, Sentence, object, list]] = []  # per sentence and system: its kept sets against golds
    for sentence in (progress(usable) if progress else usable):
        as_read = replace(sentence)  # before the evaluated model's tagger, parser and labeler fill in `sentence`

        def own_copy(other: CompressionModel) -> Sentence:
            """The sentence as read, for another model: its own tagger (if any) tags it and its own parser (if
            any) parses and labels it, as in its training; nothing of the evaluated model's reaches it."""
            return replace(as_read, pos=None) if other.info.get("pos") == "tagger" else replace(as_read)

        features = model.features(sentence)
        parse = compression_parser(model, sentence) if model.parser is not None else None

        problems = {(id(model), part): model.problem(sentence, None, features, part="joint" if part == "mbr" else part)
                    for part in {system.part for system in systems if system.solver is not None
                                 and system.model in (None, model)}}
        for system in systems:
            other = system.model
            if other is None or other is model or system.solver is None or (id(other), system.part) in problems:
                continue
            problems[id(other), system.part] = other.problem(own_copy(other), None, part=system.part)
        lengths = target_lengths(sentence, length)
        for system in systems:
            row = rows[system.label]
            cache: dict[int, tuple[np.ndarray | None, float]] = {}
            scores = []
            seen = sentence if system.model in (None, model) else own_copy(system.model)
            for m, gold in zip(lengths, sentence.golds):
                if m not in cache:
                    if system.decode is not None:
                        start = time.perf_counter()
                        cache[m] = system.decode(seen, m), time.perf_counter() - start
                        row["seconds"].append(cache[m][1])
                    elif system.solver is None:
                        start = time.perf_counter()
                        cache[m] = first_m(sentence.n, m), time.perf_counter() - start
                    else:
                        start = time.perf_counter()
                        key = (id(system.model if system.model is not None else model), system.part)
                        problem = problems[key].replace(length=Length.exact(m))
                        cache[m] = pending[system.label].add(problem, time.perf_counter() - start)
                kept, _ = cache[m]
                scores.append((kept, gold))
            if system.solver is None and system.decode is None:
                row["seconds"].extend(seconds for _, seconds in cache.values())
            scored.append((row, sentence, parse, scores))
    for system in systems:  # the solvers' problems, a batch per system
        pending[system.label].solve(system.solver, rows[system.label], time_limit)
    for row, sentence, parse, scores in scored:
        failed_before = row["failed"]
        values = []
        for kept, gold in scores:
            if isinstance(kept, _Pending):
                kept = kept.kept
            if kept is None:
                row["failed"] += 1
                kept = np.zeros(0, dtype=np.int64)
            values.append((*token_prf(kept, gold), len(kept) / max(sentence.n, 1), float(np.array_equal(kept, gold))))
            if parse is not None:
                row["syntactic"].append(syntactic_f1(parse, kept, gold))
        for key, value in zip(("p", "r", "f1", "rate", "exact"), np.mean(values, axis=0)):
            row[key].append(float(value))
        if row["failed"] == failed_before:  # an answer for every length of this sentence
            row["answered_f1"].append(row["f1"][-1])
            row["answered_rate"].append(row["rate"][-1])
    summary = {}
    for label, row in rows.items():
        summary[label] = {"sentences": len(row["f1"]), "f1": _mean(row["f1"]),
                          # each sentence's F1, in the split's order (the same in every file of a split): paired
                          # comparisons and confidence intervals
                          "f1_per_sentence": [round(f, 6) for f in row["f1"]], "precision": _mean(row["p"]),
                          "recall": _mean(row["r"]), "compression_rate": _mean(row["rate"]),
                          "exact_matches": _mean(row["exact"]), "seconds_per_solve": _mean(row["seconds"]),
                          "median_seconds": float(np.median(row["seconds"])) if row["seconds"] else None,
                          "failed": row["failed"], "statuses": row["statuses"],
                          # answers solved one at a time because the solver's batch raised (stats batch_fallback)
                          "batch_fallbacks": row["batch_fallbacks"],
                          # F1 over the sentences the system answered (an inexact solver without a certificate
                          # returns no compression; the F1 above counts those as empty)
                          "answered_sentences": len(row["answered_f1"]), "answered_f1": _mean(row["answered_f1"]),
                          "answered_compression_rate": _mean(row["answered_rate"]),
                          # dependency F1 of the compression's parse against the gold compression's, by the
                          # model's parser (None without one); per annotator, then averaged
                          "syntactic_f1": _mean(row["syntactic"])}
    return summary


def _mean(values: list[float]) -> float | None:
    return float(np.mean(values)) if values else None


def format_table(summary: dict[str, dict]) -> str:
    """A fixed-width table of :func:`evaluate_systems` results."""
    syntactic = any(row.get("syntactic_f1") is not None for row in summary.values())
    lines = [f"{'system':<32} {'F1':>6} {'P':>6} {'R':>6} {'rate':>6} {'exact':>6} {'ms/solve':>9} {'failed':>6}"
             + (f" {'synF1':>6}" if syntactic else "")]
    for label, row in summary.items():
        ms = 1000 * row["seconds_per_solve"] if row["seconds_per_solve"] is not None else float("nan")
        lines.append(f"{label:<32} {row['f1']:>6.3f} {row['precision']:>6.3f} {row['recall']:>6.3f} "
                     f"{row['compression_rate']:>6.3f} {row['exact_matches']:>6.3f} {ms:>9.2f} {row['failed']:>6}"
                     + (f" {row['syntactic_f1']:>6.3f}" if syntactic and row.get("syntactic_f1") is not None
                        else ""))
    lines += [f"{label}: {row['batch_fallbacks']} answers solved one at a time after its batch raised"
              for label, row in summary.items() if row.get("batch_fallbacks")]
    return "\n".join(lines)

