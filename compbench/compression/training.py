"""What every compression trainer shares: the (sentence, gold) examples, jackknifed language models, minibatches
and the dev F1 that picks the epoch, around :func:`compbench.learning.training.train_by_epochs`."""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..corpora import Sentence
from ..learning.training import train_by_epochs
from .accuracy import System, evaluate_systems
from .features import BigramLM
from .model import CompressionModel

class TrainingError(Exception):
    """Training cannot give a model: no example to learn from, or no dev sentence decoded to choose an epoch by."""


Batch = list[tuple[Sentence, np.ndarray]]
EpochOfBatches = Callable[[list[Batch], dict[str, BigramLM]], tuple[np.ndarray, dict, str]]


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


def train_on_batches(model: CompressionModel, train: list[Sentence], dev: list[Sentence], dev_system: System,
                     train_epoch: EpochOfBatches, *, epochs: int, batch_size: int, max_n: int | None, seed: int,
                     progress: Callable | None, log: Callable[[str], None]) -> list[dict]:
    """The epochs of every compression trainer: the shuffled (sentence, gold) examples cut into minibatches,
    ``train_epoch(batches, lms)`` makes one pass (it returns the epoch's weights, its record fields and a log line),
    ``dev_system`` decodes the dev split, and the epoch with the best dev F1 is kept (the loop is
    :func:`~compbench.learning.training.train_by_epochs`).

    Training sentences see jackknifed LMs (:func:`jackknife_lms`); dev sentences see ``model.lm``.  Sentences
    longer than ``max_n`` are left out of training and of the dev score used to pick the epoch.
    """
    examples = training_examples(train, max_n)
    if not examples:
        raise TrainingError("no training example: no aligned sentence with a non-empty gold compression"
                            + (f" of at most {max_n} tokens (--max-n)" if max_n is not None else ""))
    lms = jackknife_lms(train)
    given, dev = dev, [s for s in dev if s.aligned and (max_n is None or s.n <= max_n)]
    if given and not dev:  # a dev split that scores nothing chooses no epoch (the last one would pass as chosen)
        raise TrainingError("no aligned dev sentence" + (f" of at most {max_n} tokens (--max-n)" if max_n is not None
                                                         else "") + ": no epoch can be chosen on dev")
    model.parse_all([sentence for sentence, _ in examples] + dev, progress)  # a parse-feature model's parses, batched

    def epoch_of_batches(epoch: int, shuffled: list[tuple[Sentence, np.ndarray]]) -> tuple[np.ndarray, dict, str]:
        batches = [shuffled[i:i + batch_size] for i in range(0, len(shuffled), batch_size)]
        return train_epoch(progress(batches, desc=f"epoch {epoch}") if progress else batches, lms)

    def dev_f1() -> float | None:
        if not dev:
            return None
        row = evaluate_systems(model, dev, [dev_system])[dev_system.label]
        if not row["answered_sentences"]:  # an F1 of 0 that says nothing of the weights
            raise TrainingError(f"no dev sentence was decoded by {dev_system.label} (its answers: "
                                f"{row['statuses']}): no epoch can be chosen")
        return row["f1"]

    return train_by_epochs(model, examples, epoch_of_batches, dev_f1, epochs=epochs, seed=seed, score_name="dev_f1",
                           show_score=lambda f1: f"F1 {f1 if f1 is None else round(f1, 4)}", log=log)
