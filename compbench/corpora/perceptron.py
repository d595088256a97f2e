"""Averaged structured perceptron with latent gold trees and small minibatches.

Each example is a sentence with one gold kept set K*.  The prediction is the best compression at the gold length
|K*| under the current weights; the target is the best tree over exactly the tokens K* (the same DP on the
sub-problem holding only K*, all of them kept).  Updates are summed over a minibatch; the weights returned are
averaged over all steps, and the epoch with the best dev F1 is kept.
"""

from __future__ import annotations

import random
from typing import Callable

import numpy as np

from ..problem import Length, Problem, Status
from ..registry import Solver, SolverError
from .accuracy import System, evaluate_systems
from .features import DIM, BigramLM
from .model import CompressionModel
from .readers import Sentence


def latent_gold_heads(solver: Solver, problem: Problem, gold: np.ndarray) -> np.ndarray:
    """The best tree over exactly the gold kept tokens: ``heads`` of the full problem."""
    index = np.concatenate([[0], gold])
    ends = np.concatenate([index, [problem.n + 1]])
    sibling = problem.sibling_scores[np.ix_(index, index, index)] if problem.second_order else None
    sub = Problem(problem.token_scores[gold - 1], problem.arc_scores[np.ix_(index, index)],
                  problem.bigram_scores[np.ix_(ends, ends)], length=Length.exact(len(gold)), sibling_scores=sibling)
    solution = solver.solve(sub)
    if solution.status != Status.OPTIMAL:
        raise SolverError(f"{solver.name} gave {solution.status.value} on the gold sub-problem of {problem.id}: "
                          f"{solution.message}")
    heads = np.full(problem.n + 1, -1, dtype=np.int64)
    heads[gold] = index[solution.heads[1:]]
    return heads


def predicted_heads(solver: Solver, problem: Problem) -> np.ndarray:
    solution = solver.solve(problem)
    if solution.status != Status.OPTIMAL:
        raise SolverError(f"{solver.name} gave {solution.status.value} on {problem.id}: {solution.message}")
    return solution.heads


def training_examples(sentences: list[Sentence], max_n: int | None = None) -> list[tuple[Sentence, np.ndarray]]:
    """(sentence, gold) pairs, one per annotator, of aligned sentences with a non-empty gold (n <= max_n)."""
    return [(s, g) for s in sentences if s.aligned and (max_n is None or s.n <= max_n)
            for g in s.golds if len(g)]


def jackknife_lms(train: list[Sentence], folds: int = 5) -> dict[str, BigramLM]:
    """Per training sentence, a bigram LM of the gold compressions of the other folds (documents dealt round-robin).

    A training sentence must not see an LM estimated from its own gold compression, or the LM weight learns to
    copy the training golds and does not generalize.
    """
    documents = {d: i % folds for i, d in enumerate(dict.fromkeys(s.document for s in train))}
    texts = [[[s.tokens[k - 1] for k in g] for s in train if documents[s.document] != fold and s.aligned
              for g in s.golds] for fold in range(folds)]
    lms = [BigramLM.fit(t) for t in texts]
    return {s.id: lms[documents[s.document]] for s in train}


Batch = list[tuple[Sentence, np.ndarray]]


def train_by_epochs(model: CompressionModel, train: list[Sentence], dev: list[Sentence], solver: Solver,
                    train_epoch: Callable[[list[Batch], dict[str, BigramLM]], tuple[dict, str]], *, epochs: int,
                    batch_size: int, max_n: int | None, seed: int, progress: Callable | None,
                    log: Callable[[str], None], dev_system: System | None = None) -> list[dict]:
    """The loop both objectives share: shuffle the (sentence, gold) examples, cut them into minibatches, let
    ``train_epoch(batches, lms)`` make one pass (it leaves the epoch's weights in ``model.weights`` and returns its
    record fields and a log line), score the dev split, and keep the epoch with the best dev F1.

    Training sentences see jackknifed LMs (:func:`jackknife_lms`); dev sentences see ``model.lm``.  Sentences
    longer than ``max_n`` are left out of training and of the dev score used to pick the epoch.  ``dev_system``
    (default: ``solver`` on the joint problem) decodes the dev split.
    """
    examples = training_examples(train, max_n)
    lms = jackknife_lms(train)
    dev = [s for s in dev if s.aligned and (max_n is None or s.n <= max_n)]
    rng = random.Random(seed)
    history, best = [], (-1.0, None, 0)
    joint = [dev_system if dev_system is not None else System("joint", solver, "joint")]
    for epoch in range(1, epochs + 1):
        rng.shuffle(examples)
        batches = [examples[i:i + batch_size] for i in range(0, len(examples), batch_size)]
        fields, summary = train_epoch(progress(batches, desc=f"epoch {epoch}") if progress else batches, lms)
        score = evaluate_systems(model, dev, joint)[joint[0].label]["f1"] if dev else None
        history.append({"epoch": epoch, **fields, "dev_f1": score})
        log(f"epoch {epoch}: {summary}, dev F1 {score if score is None else round(score, 4)}")
        if score is None or score > best[0]:
            best = (score if score is not None else -1.0, model.weights.copy(), epoch)
    model.weights = best[1]
    model.info["chosen_epoch"] = best[2]
    model.info["history"] = history
    return history


def train_perceptron(model: CompressionModel, train: list[Sentence], dev: list[Sentence], solver: Solver, *,
                     epochs: int = 8, batch_size: int = 8, max_n: int | None = 60, seed: int = 0,
                     progress: Callable | None = None, log: Callable[[str], None] = print) -> list[dict]:
    """Train ``model.weights`` in place (:func:`train_by_epochs`); returns one record per epoch (mistakes, dev F1
    at the gold length)."""
    weights = np.zeros(DIM + 1)
    totals = np.zeros(DIM + 1)  # sum over steps of step * update, for averaging
    step = 1

    def train_epoch(batches: list[Batch], lms: dict[str, BigramLM]) -> tuple[dict, str]:
        nonlocal step, weights, totals
        mistakes = examples = 0
        for batch in batches:
            update_ids, update_signs, lm_update = [], [], 0.0
            for sentence, gold in batch:
                examples += 1
                features = model.features(sentence, lms[sentence.id])
                problem = model.problem(sentence, Length.exact(len(gold)), features, weights)
                predicted = predicted_heads(solver, problem)
                target = latent_gold_heads(solver, problem, gold)
                if np.array_equal(predicted, target):
                    continue
                mistakes += 1
                for heads, sign in ((target, 1.0), (predicted, -1.0)):
                    ids, lm_total = model.phi(features, heads)
                    update_ids.append(ids)
                    update_signs.append(np.full(len(ids), sign))
                    lm_update += sign * lm_total
            if update_ids:
                delta = np.bincount(np.concatenate(update_ids), weights=np.concatenate(update_signs),
                                    minlength=DIM + 1)
                delta[DIM] += lm_update
                weights += delta
                totals += step * delta
            step += 1
        model.weights = weights - totals / step
        return {"mistakes": mistakes, "examples": examples}, f"{mistakes}/{examples} mistakes"

    return train_by_epochs(model, train, dev, solver, train_epoch, epochs=epochs, batch_size=batch_size,
                           max_n=max_n, seed=seed, progress=progress, log=log)
