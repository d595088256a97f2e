"""What every trainer of the project shares: the example order of the passes, averaged weights under online
updates, AdaGrad's per-weight steps, and the loop over epochs that keeps the epoch with the best dev score.

>>> w = AveragedWeights(2)
>>> w.add(np.array([0]), np.array([1.0])); w.next_step(); w.next_step()
>>> w.current.tolist(), w.average().tolist()         # the weights after each step: (1, 0) twice; before: 0
([1.0, 0.0], [0.6666666666666667, 0.0])
"""

from __future__ import annotations

import random
from typing import Any, Callable, Iterator, Protocol, Sequence, TypeVar

import numpy as np

T = TypeVar("T")


def shuffled_passes(count: int, epochs: int, seed: int) -> Iterator[int]:
    """The indices 0..count-1, once per epoch, each epoch in a fresh random order (``random.Random(seed)``, the one
    order shuffled again each epoch): the example order of every trainer.

    >>> list(shuffled_passes(3, 2, seed=0))
    [0, 2, 1, 1, 2, 0]
    """
    order = list(range(count))
    rng = random.Random(seed)
    for _ in range(epochs):
        rng.shuffle(order)
        yield from order


class AveragedWeights:
    """Weights under online updates and their average over the steps taken, kept in O(1) a step (the averaged
    perceptron's trick: ``totals`` holds Σ step number x update, so the average is current - totals / steps)."""

    def __init__(self, shape: int | tuple[int, ...]):
        self.current = np.zeros(shape)
        self.totals = np.zeros(shape)
        self.steps = 1

    def add(self, ids: Any, update: np.ndarray | float) -> None:
        """Move the weights at ``ids`` (a numpy index; repeated entries add up) by ``update`` in this step."""
        np.add.at(self.current, ids, update)
        np.add.at(self.totals, ids, self.steps * update)

    def next_step(self) -> None:
        self.steps += 1

    def average(self) -> np.ndarray:
        return self.current - self.totals / self.steps


class AdaGrad:
    """AdaGrad's steps (Duchi et al. 2011): each weight's step is ``learning_rate`` x its gradient over the root of
    the sum of its squared gradients so far, that sum starting at ``initial`` (δ² in the paper's δI + diag(G)^½).

    δ keeps rounding noise from moving the weights: with δ = 0 AdaGrad is scale-free per weight, so the first
    gradient of any size takes a whole ``learning_rate`` step, and an expected-minus-gold count that is 0 in exact
    arithmetic but ±1e-15 in floating point (every feature of an example whose loss is 0) moved its weight by the
    full step in a random direction: the trained CRF then depended on the last bit of the marginals (on broadcast
    news, 0.2 dev F1 points between two computations of the same marginals 1e-12 apart).  With δ² = 1e-8 such noise
    moves a weight by about 1e-12 x ``learning_rate``, and a real gradient (far above δ = 1e-4) steps as before.

    >>> AdaGrad(2, learning_rate=0.5).step(slice(None), np.array([2.0, 1e-15])).round(6).tolist()
    [-0.5, -0.0]
    """

    def __init__(self, size: int, learning_rate: float, initial: float = 1e-8):
        self.learning_rate = learning_rate
        self.squares = np.full(size, initial)

    def step(self, ids: Any, gradient: np.ndarray) -> np.ndarray:
        """The update of the weights at ``ids`` (distinct, or a slice) for their ``gradient``."""
        self.squares[ids] += gradient ** 2
        squares = self.squares[ids]
        touched = squares > 0
        update = np.zeros_like(gradient)
        update[touched] = -self.learning_rate * gradient[touched] / np.sqrt(squares[touched])
        return update


class Trainable(Protocol):
    weights: np.ndarray
    info: dict


class EpochsInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) during :func:`train_by_epochs` after ``done`` of ``planned`` epochs finished: the model
    holds the best of them, its ``info`` says it was interrupted; a command writes it before it ends."""

    def __init__(self, done: int, planned: int):
        super().__init__(f"interrupted after epoch {done} of {planned}")
        self.done, self.planned = done, planned


def train_by_epochs(model: Trainable, examples: Sequence[T],
                    train_epoch: Callable[[int, list[T]], tuple[np.ndarray, dict, str]],
                    dev_score: Callable[[], float | None], *, epochs: int, seed: int, score_name: str,
                    show_score: Callable[[float | None], str], log: Callable[[str], None]) -> list[dict]:
    """The loop every trainer runs: each epoch shuffles ``examples`` (as :func:`shuffled_passes`), lets
    ``train_epoch(epoch, shuffled)`` make one pass (it returns the epoch's weights, a fresh array, its record fields
    and a log line), puts those weights in ``model`` and scores them by ``dev_score()`` (None: no dev sentences).
    ``model`` keeps the weights of the best-scoring epoch (the last one without a dev score), ``info`` its number
    (``chosen_epoch``) and the records (``history``, one per epoch, the dev score under ``score_name``).  Interrupted
    after an epoch finished, it raises :class:`EpochsInterrupted` with the model so made (``info["interrupted"]``)."""
    order = list(examples)
    rng = random.Random(seed)
    history, best = [], (-1.0, model.weights, 0)
    try:
        for epoch in range(1, epochs + 1):
            rng.shuffle(order)
            weights, fields, summary = train_epoch(epoch, order)
            model.weights = weights
            score = dev_score()
            history.append({"epoch": epoch, **fields, score_name: score})
            log(f"epoch {epoch}: {summary}, dev {show_score(score)}")
            if score is None or score > best[0]:
                best = (-1.0 if score is None else score, weights, epoch)
    except KeyboardInterrupt:
        if not history:
            raise
        model.weights = best[1]  # the finished epochs are not lost: the best of them, said to be interrupted
        model.info.update(chosen_epoch=best[2], history=history, interrupted=f"after epoch {len(history)} of {epochs}")
        raise EpochsInterrupted(len(history), epochs) from None
    model.weights = best[1]
    model.info.update(chosen_epoch=best[2], history=history)
    return history
