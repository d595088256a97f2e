"""CRF training of the compression model: conditional log-likelihood of the gold compression, its tree latent.

For a sentence with gold kept set K* (|K*| = m) and features phi, the model is p(K, T) ∝ exp(w · phi(K, T)) over
the solutions of length m (every kept set of m tokens, every projective tree over it).  The loss is

    L(w) = log Z_m(w) - log Z_{K*}(w) + (l2 / 2) |w|^2,

Z_m summing over all solutions of length m and Z_{K*} over the trees of the gold kept set only (the other tokens
forbidden), so that p(K*) = Z_{K*} / Z_m marginalizes the latent tree.  Its gradient is E_m[phi] - E_{K*}[phi] + l2 w,
the two expectations from the posterior marginals of tokens, arcs, bigrams (and sibling triples) that
:func:`compbench.marginals` computes by inside-outside over the same chart the decoders maximize over (a minibatch's
sentences in one :func:`compbench.marginals_many` call).

The optimizer is AdaGrad on minibatches (Duchi et al. 2011): the features are hashed into 2^20 weights of which a
sentence touches a few thousand, and AdaGrad's per-weight step sizes suit such sparse, unevenly frequent features;
a full-batch quasi-Newton method (scipy's L-BFGS) would need a pass over the whole corpus per step.  The epoch with
the best dev F1 under MAP decoding (the same decoder as the perceptron's) is kept.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..corpora import Sentence
from ..inference import Marginals, marginals_many
from ..learning.features import DIM
from ..learning.training import AdaGrad
from ..problem import Length, Problem
from ..solver import Solver
from .accuracy import System
from .features import BigramLM, SentenceFeatures
from .model import CompressionModel
from .training import Batch, train_on_batches


def expected_features(features: SentenceFeatures, posterior: Marginals) -> tuple[np.ndarray, np.ndarray, float]:
    """(feature ids, their expected counts, expected LM total) under ``posterior``, the marginals of p ∝
    exp(objective) over a problem with these features."""
    parts = [(features.token, posterior.token), (features.arc, posterior.arc), (features.bigram, posterior.bigram)]
    if features.sibling is not None:
        parts.append((features.sibling, posterior.sibling))
    ids = np.concatenate([f.reshape(-1) for f, _ in parts])
    weights = np.concatenate([np.repeat(p.reshape(-1), f.shape[-1]) for f, p in parts])
    lm = float(np.sum(posterior.bigram * np.where(posterior.bigram > 0, features.lm, 0.0)))
    return ids, weights, lm


def gold_problem(problem: Problem, gold: np.ndarray) -> Problem:
    """The same problem with every token outside the gold kept set forbidden: its solutions are the gold set's
    trees."""
    token = np.full(problem.n, -np.inf)
    token[gold - 1] = problem.token_scores[gold - 1]
    return problem.replace(token_scores=token, length=Length.exact(len(gold)))


Example = tuple[SentenceFeatures, Sentence, np.ndarray]  # a sentence's features, the sentence, a gold kept set


def batch_losses(model: CompressionModel, examples: list[Example],
                 weights: np.ndarray) -> list[tuple[float, np.ndarray]]:
    """The negative conditional log-likelihood of each example's gold compression and its gradient (dense, DIM + 1),
    the marginals of the whole batch (each sentence's problem and its gold problem) in one :func:`marginals_many`
    call."""
    problems = []
    for features, sentence, gold in examples:
        problem = model.problem(sentence, Length.exact(len(gold)), features, weights)
        problems += [problem, gold_problem(problem, gold)]
    posteriors = marginals_many(problems)
    out = []
    for k, (features, _, _) in enumerate(examples):
        everything, gold = posteriors[2 * k], posteriors[2 * k + 1]
        ids, counts, lm = expected_features(features, everything)
        gold_ids, gold_counts, gold_lm = expected_features(features, gold)
        gradient = np.bincount(np.concatenate([ids, gold_ids]), weights=np.concatenate([counts, -gold_counts]),
                               minlength=DIM + 1)
        gradient[DIM] += lm - gold_lm
        out.append((everything.log_partition - gold.log_partition, gradient))
    return out


def sentence_loss(model: CompressionModel, features: SentenceFeatures, sentence: Sentence, gold: np.ndarray,
                  weights: np.ndarray) -> tuple[float, np.ndarray]:
    """:func:`batch_losses` of one gold compression."""
    return batch_losses(model, [(features, sentence, gold)], weights)[0]


def train_crf(model: CompressionModel, train: list[Sentence], dev: list[Sentence], solver: Solver, *,
              epochs: int = 8, batch_size: int = 8, max_n: int | None = 60, seed: int = 0, l2: float = 1e-4,
              learning_rate: float = 0.2, progress: Callable | None = None,
              log: Callable[[str], None] = print) -> list[dict]:
    """Train ``model.weights`` in place by AdaGrad on the CRF loss (the epochs of
    :func:`~compbench.compression.training.train_on_batches`, as the perceptron); returns one record per epoch (mean
    loss and dev F1 at the gold length, MAP decoding with ``solver``).  A sentence whose gold compression has no tree
    under the model's forbidden scores is skipped."""
    weights = model.weights.copy()
    adagrad = AdaGrad(DIM + 1, learning_rate)

    def train_epoch(batches: list[Batch], lms: dict[str, BigramLM]) -> tuple[np.ndarray, dict, str]:
        total, counted = 0.0, 0
        for batch in batches:
            gradient = np.zeros(DIM + 1)
            examples = [(model.features(sentence, lms[sentence.id]), sentence, gold) for sentence, gold in batch]
            for loss, g in batch_losses(model, examples, weights):
                if not np.isfinite(loss):
                    continue
                total, counted = total + loss, counted + 1
                gradient += g
            weights[:] += adagrad.step(slice(None), gradient + l2 * len(batch) * weights)
        mean = total / max(counted, 1)
        return weights.copy(), {"mean_loss": mean, "examples": counted}, f"mean loss {mean:.4f} over {counted} examples"

    # before the epochs: a training interrupted after one writes them too
    model.info.update(objective="crf", l2=l2, learning_rate=learning_rate)
    history = train_on_batches(model, train, dev, System("joint", solver, "joint"), train_epoch, epochs=epochs,
                               batch_size=batch_size, max_n=max_n, seed=seed, progress=progress, log=log)
    return history
