"""A small averaged-perceptron POS tagger over hashed features (greedy, left to right).

Trained on Google's tokens and PTB tags, it tags the Clarke & Lapata corpora, which come without POS.

>>> tagger = PosTagger.fit([("the cat sat".split(), ["DT", "NN", "VBD"])] * 5, epochs=3)
>>> tagger.tag("the cat sat".split())
['DT', 'NN', 'VBD']
"""

from __future__ import annotations

import random

import numpy as np

from .features import code, mix, shape

TAGGER_DIM = 1 << 18


def _contexts(tokens: list[str]) -> list[np.ndarray]:
    """Per token, the indices of its tag-independent features (the previous tags are added while tagging)."""
    words = ["<s>", "<s>"] + [t.lower() for t in tokens] + ["</s>", "</s>"]
    codes = np.array([code(w) for w in words], dtype=np.int64)
    out = []
    for i, token in enumerate(tokens):
        j = i + 2
        parts = [mix(60, codes[j]), mix(61, code(token[-3:].lower())), mix(62, code(token[-2:].lower())),
                 mix(63, code(token[:2].lower())), mix(64, code(shape(token))), mix(65, codes[j - 1]),
                 mix(66, codes[j + 1]), mix(67, codes[j - 2]), mix(68, codes[j + 2]),
                 mix(69, codes[j], codes[j + 1]), mix(70, np.int64(i == 0), code(shape(token))), mix(71, 0)]
        out.append(np.concatenate(parts) % TAGGER_DIM)
    return out


class PosTagger:
    """Greedy averaged-perceptron tagger: ``weights[feature, tag]``."""

    def __init__(self, tags: list[str], weights: np.ndarray):
        self.tags = list(tags)
        self.weights = weights

    @staticmethod
    def _history(previous: int, before: int) -> np.ndarray:
        return np.concatenate([mix(72, previous + 1), mix(73, previous + 1, before + 1)]) % TAGGER_DIM  # -1: none

    def _predict(self, context: np.ndarray, weights: np.ndarray) -> int:
        return int(np.argmax(weights[context].sum(0)))

    def tag(self, tokens: list[str]) -> list[str]:
        previous = before = -1
        out = []
        for context in _contexts(tokens):
            ids = np.concatenate([context, self._history(previous, before)])
            best = self._predict(ids, self.weights)
            out.append(self.tags[best])
            previous, before = best, previous
        return out

    @classmethod
    def fit(cls, sentences: list[tuple[list[str], list[str]]], epochs: int = 5, seed: int = 0) -> PosTagger:
        """Train on (tokens, tags) pairs; the returned weights are averaged over every update step."""
        tags = sorted({t for _, ts in sentences for t in ts})
        index = {t: i for i, t in enumerate(tags)}
        data = [(_contexts(tokens), [index[t] for t in ts]) for tokens, ts in sentences]
        weights = np.zeros((TAGGER_DIM, len(tags)))
        totals = np.zeros_like(weights)  # sum of step * update, for averaging
        step = 1
        order = list(range(len(data)))
        rng = random.Random(seed)
        for _ in range(epochs):
            rng.shuffle(order)
            for i in order:
                contexts, gold = data[i]
                previous = before = -1
                for context, truth in zip(contexts, gold):
                    ids = np.concatenate([context, cls._history(previous, before)])
                    guess = int(np.argmax(weights[ids].sum(0)))
                    if guess != truth:
                        np.add.at(weights[:, truth], ids, 1.0)
                        np.add.at(weights[:, guess], ids, -1.0)
                        np.add.at(totals[:, truth], ids, step)
                        np.add.at(totals[:, guess], ids, -step)
                    step += 1
                    previous, before = truth, previous
        return cls(tags, (weights - totals / step).astype(np.float32))

    def arrays(self) -> dict[str, np.ndarray]:
        return {"tagger_weights": self.weights, "tagger_tags": np.array(self.tags)}

    @classmethod
    def from_arrays(cls, arrays) -> PosTagger:
        return cls([str(t) for t in arrays["tagger_tags"]], arrays["tagger_weights"])
