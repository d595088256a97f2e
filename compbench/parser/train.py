"""Training the parser: averaged online updates (the perceptron, or passive-aggressive: 1-best MIRA), or the tree-CRF
(log-likelihood by inside-outside, AdaGrad).

Both make passes over the shuffled training sentences, score every epoch's averaged weights on the dev sentences (UAS
with the dev sentences' tags as given: predicted ones when the caller tagged them) and keep the best epoch
(:func:`train_by_epochs`).

>>> from compbench.parser.conllu import TreeSentence
>>> s = TreeSentence(["a", "b"], ["_", "_"], ["DT", "NN"], np.array([-1, 2, 0]), ["det", "root"])
>>> model = ParserModel()
>>> history = train_online(model, [s] * 3, [s], epochs=2, log=lambda line: None)
>>> model.parse(s.words, s.xpos).tolist(), history[-1]["dev_uas"]
([-1, 2, 0], 1.0)
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

from ..inference import marginals
from ..learning.training import AdaGrad, AveragedWeights, train_by_epochs
from .conllu import TreeSentence
from .defaults import L2, LEARNING_RATE
from .features import PAD, SIZE, ArcFeatures
from .model import ParserModel, decode, parse_problem

Step = Callable[[TreeSentence, ArcFeatures], bool]  # learns from one sentence; True: it made a mistake


def attachment_score(gold: list[TreeSentence], predicted: list[np.ndarray], punctuation: bool = True,
                     labels: list[list[str]] | None = None) -> float:
    """The share of words whose predicted head is the gold one (UAS; with ``labels``, and whose label is the gold
    one: LAS); ``punctuation=False`` leaves out the words whose UPOS is PUNCT (the UD convention counts every word).

    >>> s = TreeSentence(["a", "."], ["DET", "PUNCT"], ["DT", "."], np.array([-1, 0, 1]), ["root", "punct"])
    >>> attachment_score([s], [np.array([-1, 0, 0])]), attachment_score([s], [np.array([-1, 0, 0])], False)
    (0.5, 1.0)
    >>> attachment_score([s], [np.array([-1, 0, 1])], labels=[["root", "dep"]])
    0.5
    """
    right = total = 0
    for i, (sentence, heads) in enumerate(zip(gold, predicted)):
        counted = np.ones(sentence.n, dtype=bool) if punctuation else np.array(
            [u != "PUNCT" for u in sentence.upos])
        correct = heads[1:] == sentence.heads[1:]
        if labels is not None:
            correct &= np.array([a == b for a, b in zip(labels[i], sentence.deprels)], dtype=bool)
        right += int(np.sum(correct & counted))
        total += int(counted.sum())
    return right / total if total else 0.0


def train_parser_by_epochs(model: ParserModel, train: list[TreeSentence], dev: list[TreeSentence], step: Step,
                            averaged: AveragedWeights, *, epochs: int, seed: int,
                            log: Callable[[str], None], progress: Callable | None = None) -> list[dict]:
    """:func:`~compbench.learning.training.train_by_epochs` over the training sentences: ``step`` learns from each
    one, the epoch's weights are ``averaged``'s average, scored by dev UAS.  ``progress`` (e.g.
    :func:`compbench.progress.bar`) wraps each epoch's sentences and the dev sentences."""
    shown = progress or (lambda sentences, desc, **options: sentences)

    def train_epoch(epoch: int, sentences: list[TreeSentence]) -> tuple[np.ndarray, dict, str]:
        start = time.perf_counter()
        mistakes = sum(step(s, model.features(s.words, s.xpos, s.upos))
                       for s in shown(sentences, f"epoch {epoch}", unit="sentence"))
        seconds = time.perf_counter() - start
        return (averaged.average(), {"mistakes": mistakes, "seconds": round(seconds, 1)},
                f"{mistakes}/{len(train)} sentences with a mistake, {seconds:.1f} s")

    def dev_uas() -> float | None:
        return attachment_score(dev, model.parse_many((s.words, s.xpos, s.upos)
                                                      for s in shown(dev, "dev", unit="sentence"))) if dev else None

    return train_by_epochs(model, train, train_epoch, dev_uas, epochs=epochs, seed=seed, score_name="dev_uas",
                           show_score=lambda uas: f"UAS {'-' if uas is None else f'{100 * uas:.2f}'}", log=log)


def cost_augmented(arc_scores: np.ndarray, heads: np.ndarray, cost: float) -> np.ndarray:
    """``arc_scores`` plus ``cost`` on every arc that is not in the gold tree ``heads``: the best tree under them
    maximizes score + cost x (words with a wrong head), the loss-augmented decoding of a margin-based update.

    >>> cost_augmented(np.zeros((3, 3)), np.array([-1, 0, 1]), 1.0).tolist()
    [[1.0, 0.0, 1.0], [1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]
    """
    augmented = arc_scores + cost
    augmented[heads[1:], np.arange(1, len(heads))] -= cost
    return augmented


def passive_aggressive_step(loss: float, margin: float, squared: float, max_step: float) -> float:
    """The step of a passive-aggressive update (Crammer et al. 2006, PA-I): the smallest move along delta that
    makes the gold structure beat the predicted one by ``loss``, given the ``margin`` w.delta it has now and
    ``squared`` = |delta|^2, kept within [0, ``max_step``] (0 when it already wins by ``loss``: a gold tree the
    decoder cannot produce, a non-projective one, can).

    >>> passive_aggressive_step(2.0, 0.5, 3.0, 1.0), passive_aggressive_step(2.0, 2.5, 3.0, 1.0)
    (0.5, 0.0)
    >>> passive_aggressive_step(2.0, -4.0, 3.0, 1.0), passive_aggressive_step(1.0, 0.0, 0.0, 1.0)
    (1.0, 0.0)
    """
    return min(max_step, max(0.0, loss - margin) / squared) if squared > 0 else 0.0


def train_online(model: ParserModel, train: list[TreeSentence], dev: list[TreeSentence], *, epochs: int = 10,
                 seed: int = 0, cost: float = 1.0, max_step: float | None = None,
                 log: Callable[[str], None] = print, progress: Callable | None = None) -> list[dict]:
    """Averaged online large-margin training.  Each training sentence is decoded with ``cost`` added to its
    non-gold arcs (:func:`cost_augmented`; 0: plain decoding); when that tree has a wrong head the weights move by
    step x delta, delta = the gold tree's features minus the predicted tree's (the arcs into the words with a wrong
    head, and in second order the sibling triples of both trees).  ``max_step`` None: the perceptron, step 1.
    Otherwise the passive-aggressive step (:func:`passive_aggressive_step`; 1-best MIRA, as McDonald et al. 2005
    trained their parser) for the loss cost x (wrong heads); scaling ``cost`` then only scales the weights, unless
    ``max_step`` clips the step.  Returns one record per epoch (mistakes: the sentences whose loss-augmented tree
    had a wrong head, seconds, dev UAS)."""
    if max_step is not None and cost <= 0:
        raise ValueError("the passive-aggressive update needs a cost > 0: its loss is cost x (wrong heads)")
    averaged = AveragedWeights(SIZE + 1)
    weights = averaged.current

    def step(sentence: TreeSentence, features: ArcFeatures) -> bool:
        arc_scores, sibling_scores = features.scores(weights)
        predicted = decode(model.solver, cost_augmented(arc_scores, sentence.heads, cost), sibling_scores)
        wrong = np.flatnonzero(predicted[1:] != sentence.heads[1:]) + 1
        if len(wrong):
            gold = np.concatenate([features.of_arcs(sentence.heads, wrong), features.of_siblings(sentence.heads)])
            guessed = np.concatenate([features.of_arcs(predicted, wrong), features.of_siblings(predicted)])
            ids, inverse = np.unique(np.concatenate([gold, guessed]), return_inverse=True)
            delta = np.bincount(inverse, weights=np.concatenate([np.ones(len(gold)), -np.ones(len(guessed))]))
            size = 1.0 if max_step is None else passive_aggressive_step(
                cost * len(wrong), float(delta @ weights[ids]), float(delta @ delta), max_step)
            averaged.add(ids, size * delta)
        averaged.next_step()
        return bool(len(wrong))

    return train_parser_by_epochs(model, train, dev, step, averaged, epochs=epochs, seed=seed, log=log,
                                  progress=progress)


def train_crf(model: ParserModel, train: list[TreeSentence], dev: list[TreeSentence], *, epochs: int = 10,
              seed: int = 0, learning_rate: float = LEARNING_RATE, l2: float = L2,
              log: Callable[[str], None] = print, progress: Callable | None = None) -> list[dict]:
    """The tree-CRF: p(tree) ∝ exp(Σ arc scores) over the projective trees with one root word; each sentence
    takes an AdaGrad step on -log p(gold tree) + l2/2 |w|^2 (the l2 term on the weights the sentence touches),
    whose gradient is expected minus gold features, the expectation from the arc marginals of
    :func:`compbench.marginals` on :func:`parse_problem`.  Dev UAS and the model use the average of the steps'
    weights, as the online updates do.  An epoch's "mistakes" count the sentences where some word's best-scoring
    head is not its gold head."""
    averaged = AveragedWeights(SIZE + 1)
    weights = averaged.current
    adagrad = AdaGrad(SIZE + 1, learning_rate)

    def step(sentence: TreeSentence, features: ArcFeatures) -> bool:
        scores, sibling = features.scores(weights)
        if sibling is not None:
            raise ValueError("the tree-CRF is first order only")
        posterior = marginals(parse_problem(scores)).arc
        n = sentence.n
        h, m = np.nonzero(posterior[:, 1:] > 1e-12)
        m = m + 1
        expected = np.repeat(posterior[h, m], features.fixed.shape[-1])
        ids = [features.fixed[h, m].ravel()]
        counts = [expected]
        between = features.between[h, :, m]
        inside = between != PAD
        ids.append(between[inside])
        counts.append(np.broadcast_to(posterior[h, m][:, None, None], between.shape)[inside])
        gold = features.of_arcs(sentence.heads, np.arange(1, n + 1))
        ids.append(gold)
        counts.append(-np.ones(len(gold)))
        ids_all = np.concatenate(ids)
        unique, inverse = np.unique(ids_all, return_inverse=True)
        gradient = np.bincount(inverse, weights=np.concatenate(counts)) + l2 * weights[unique]
        averaged.add(unique, adagrad.step(unique, gradient))
        averaged.next_step()
        return bool(np.any(scores[sentence.heads[1:], np.arange(1, n + 1)] < scores[:, 1:].max(0)))

    return train_parser_by_epochs(model, train, dev, step, averaged, epochs=epochs, seed=seed, log=log,
                                  progress=progress)
