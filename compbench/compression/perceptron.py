"""Averaged structured perceptron with latent gold trees and small minibatches.

Each example is a sentence with one gold kept set K*.  The prediction is the best compression at the gold length
|K*| under the current weights; the target is the best tree over exactly the tokens K* (the same DP on the
sub-problem holding only K*, all of them kept).  Updates are summed over a minibatch; the weights returned are
averaged over all steps, and the epoch with the best dev F1 is kept.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..agreement import validate
from ..corpora import Sentence
from ..learning.features import DIM
from ..learning.training import AveragedWeights
from ..problem import Length, Problem, Solution, Status
from ..solver import Solver, SolverError
from .accuracy import System
from .features import BigramLM
from .model import CompressionModel
from .training import Batch, train_on_batches


def gold_sub_problem(problem: Problem, gold: np.ndarray) -> Problem:
    """The sub-problem holding only the gold kept tokens, all of them kept."""
    index = np.concatenate([[0], gold])
    ends = np.concatenate([index, [problem.n + 1]])
    sibling = problem.sibling_scores[np.ix_(index, index, index)] if problem.second_order else None
    return Problem(problem.token_scores[gold - 1], problem.arc_scores[np.ix_(index, index)],
                   problem.bigram_scores[np.ix_(ends, ends)], length=Length.exact(len(gold)), sibling_scores=sibling)


def _optimal_tree(solver: Solver, problem: Problem, solution: Solution, what: str) -> np.ndarray:
    """The heads of a proven, valid optimum (the perceptron learns from it), else a SolverError saying why."""
    if solution.status != Status.OPTIMAL:
        raise SolverError(f"{solver.name} gave {solution.status.value} on {what}: {solution.message}")
    validity = validate(problem, solution)
    if validity != "ok":
        raise SolverError(f"{solver.name} gave an {validity} on {what}")
    return solution.heads


def _gold_heads(solver: Solver, problem: Problem, gold: np.ndarray, sub: Problem, solution: Solution) -> np.ndarray:
    """The tree of ``sub`` (:func:`gold_sub_problem`), solved, as ``heads`` of the full problem."""
    sub_heads = _optimal_tree(solver, sub, solution, f"the gold sub-problem of {problem.id}")
    index = np.concatenate([[0], gold])
    heads = np.full(problem.n + 1, -1, dtype=np.int64)
    heads[gold] = index[sub_heads[1:]]
    return heads


def latent_gold_heads(solver: Solver, problem: Problem, gold: np.ndarray) -> np.ndarray:
    """The best tree over exactly the gold kept tokens: ``heads`` of the full problem."""
    sub = gold_sub_problem(problem, gold)
    return _gold_heads(solver, problem, gold, sub, solver.solve(sub))


def _predicted(solver: Solver, problem: Problem, solution: Solution) -> np.ndarray:
    return _optimal_tree(solver, problem, solution, problem.id)


def train_perceptron(model: CompressionModel, train: list[Sentence], dev: list[Sentence], solver: Solver, *,
                     epochs: int = 8, batch_size: int = 8, max_n: int | None = 60, seed: int = 0,
                     progress: Callable | None = None, log: Callable[[str], None] = print) -> list[dict]:
    """Train ``model.weights`` in place (:func:`~compbench.compression.training.train_on_batches`); returns one
    record per epoch (mistakes, dev F1 at the gold length)."""
    weights = AveragedWeights(DIM + 1)

    def train_epoch(batches: list[Batch], lms: dict[str, BigramLM]) -> tuple[np.ndarray, dict, str]:
        mistakes = examples = 0
        for batch in batches:
            update_ids, update_signs, lm_update = [], [], 0.0
            # the weights change only after the minibatch: its problems are decoded in two batches
            features = [model.features(sentence, lms[sentence.id]) for sentence, _ in batch]
            problems = [model.problem(sentence, Length.exact(len(gold)), f, weights.current)
                        for (sentence, gold), f in zip(batch, features)]
            best = solver.solve_many(problems, jobs=1)
            subs = [gold_sub_problem(p, gold) for p, (_, gold) in zip(problems, batch)]
            latent = solver.solve_many(subs, jobs=1)
            for (sentence, gold), features_k, problem, solution, sub, gold_solution in zip(batch, features, problems,
                                                                                            best, subs, latent):
                examples += 1
                predicted = _predicted(solver, problem, solution)
                target = _gold_heads(solver, problem, gold, sub, gold_solution)
                if np.array_equal(predicted, target):
                    continue
                mistakes += 1
                for heads, sign in ((target, 1.0), (predicted, -1.0)):
                    ids, lm_total = model.phi(features_k, heads)
                    update_ids.append(ids)
                    update_signs.append(np.full(len(ids), sign))
                    lm_update += sign * lm_total
            if update_ids:
                delta = np.bincount(np.concatenate(update_ids), weights=np.concatenate(update_signs),
                                    minlength=DIM + 1)
                delta[DIM] += lm_update
                moved = np.flatnonzero(delta)  # the rest stays as it is
                weights.add(moved, delta[moved])
            weights.next_step()
        return weights.average(), {"mistakes": mistakes, "examples": examples}, f"{mistakes}/{examples} mistakes"

    return train_on_batches(model, train, dev, System("joint", solver, "joint"), train_epoch, epochs=epochs,
                            batch_size=batch_size, max_n=max_n, seed=seed, progress=progress, log=log)
