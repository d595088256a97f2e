"""A small averaged-perceptron POS tagger over hashed features (greedy, left to right).

Trained on Google's tokens and PTB tags, it tags the Clarke & Lapata corpora, which come without POS; trained on
a treebank's PTB tags (XPOS) with ``rich=True`` (more affixes, word shape flags, neighbouring words' suffixes and
the previous tag with the word), it tags the parser's input.

>>> tagger = PosTagger.fit([("the cat sat".split(), ["DT", "NN", "VBD"])] * 5, epochs=3)
>>> tagger.tag("the cat sat".split())
['DT', 'NN', 'VBD']
"""

from __future__ import annotations

import random
from typing import Iterator

import numpy as np

from .features import code, mix, shape

TAGGER_DIM = 1 << 18
RICH_DIM = 1 << 20


def _contexts(tokens: list[str], rich: bool = False) -> np.ndarray:
    """(n, F): per token, the indices of its tag-independent features (the previous tags are added while
    tagging); in 0..TAGGER_DIM-1 (RICH_DIM with ``rich``)."""
    n = len(tokens)
    words = ["<s>", "<s>"] + [t.lower() for t in tokens] + ["</s>", "</s>"]
    codes = np.array([code(w) for w in words], dtype=np.int64)
    affix = lambda f: np.array([code(f(t.lower())) for t in tokens], dtype=np.int64)  # noqa: E731
    shapes = np.array([code(shape(t)) for t in tokens], dtype=np.int64)
    j = np.arange(2, n + 2)
    parts = [mix(60, codes[j]), mix(61, affix(lambda w: w[-3:])), mix(62, affix(lambda w: w[-2:])),
             mix(63, affix(lambda w: w[:2])), mix(64, shapes), mix(65, codes[j - 1]), mix(66, codes[j + 1]),
             mix(67, codes[j - 2]), mix(68, codes[j + 2]), mix(69, codes[j], codes[j + 1]),
             mix(70, (j == 2).astype(np.int64), shapes), np.broadcast_to(mix(71, 0), (n,))]
    if not rich:
        return np.stack(parts, axis=-1).reshape(n, -1) % TAGGER_DIM
    suffix3 = np.concatenate([[code("<s>")] * 2, affix(lambda w: w[-3:]), [code("</s>")] * 2])
    flags = np.array([4 * any(c.isdigit() for c in t) + 2 * ("-" in t) + (t[:1].isupper() and t[1:].islower())
                      for t in tokens], dtype=np.int64)
    parts += [mix(80, affix(lambda w: w[-1:])), mix(81, affix(lambda w: w[-4:])), mix(82, affix(lambda w: w[:1])),
              mix(83, affix(lambda w: w[:3])), mix(84, flags, (j == 2).astype(np.int64)),
              mix(85, codes[j - 1], codes[j]), mix(86, suffix3[j - 1]), mix(87, suffix3[j + 1]),
              mix(88, codes[j - 1], affix(lambda w: w[-3:])), mix(89, np.array([code(t) for t in tokens], np.int64)),
              mix(90, shapes, codes[j + 1]), mix(91, shapes, codes[j - 1]), mix(92, codes[j - 1], codes[j + 1])]
    return np.stack(parts, axis=-1).reshape(n, -1) % RICH_DIM


def shuffled_passes(count: int, epochs: int, seed: int) -> Iterator[int]:
    """The indices 0..count-1, once per epoch, each epoch in a fresh random order (``random.Random(seed)``): the
    example order of the averaged perceptrons.

    >>> list(shuffled_passes(3, 2, seed=0))
    [0, 2, 1, 1, 2, 0]
    """
    order = list(range(count))
    rng = random.Random(seed)
    for _ in range(epochs):
        rng.shuffle(order)
        yield from order


class PosTagger:
    """Greedy averaged-perceptron tagger: ``weights[feature, tag]``; ``rich`` selects the larger feature set."""

    def __init__(self, tags: list[str], weights: np.ndarray, rich: bool = False):
        self.tags = list(tags)
        self.weights = weights
        self.rich = bool(rich)
        self._history_table: np.ndarray | None = None

    def _history_ids(self) -> np.ndarray:
        """(T+1, T+1, 2): the features of (previous tag, the one before), each -1 (none) .. T-1, shifted by 1."""
        t = np.arange(len(self.tags) + 1, dtype=np.int64)
        return np.stack([np.broadcast_to(mix(72, t[:, None]), (len(t), len(t))),
                         mix(73, t[:, None], t[None, :])], axis=-1) % self.weights.shape[0]

    def _word_history(self, tokens: list[str]) -> np.ndarray:
        """(n, T+1): the feature of (previous tag, word) for each token and previous tag (rich features only)."""
        t = np.arange(len(self.tags) + 1, dtype=np.int64)
        codes = np.array([code(w.lower()) for w in tokens], dtype=np.int64)
        return mix(74, t[None, :], codes[:, None]) % self.weights.shape[0]

    def tag(self, tokens: list[str]) -> list[str]:
        if not tokens:
            return []
        if self._history_table is None:
            self._history_table = self.weights[self._history_ids()].sum(2)  # (T+1, T+1, T) scores
        scores = self.weights[_contexts(tokens, self.rich)].sum(1)  # (n, T)
        word_history = self.weights[self._word_history(tokens)] if self.rich else None  # (n, T+1, T)
        previous = before = -1
        out = []
        for i in range(len(tokens)):
            total = scores[i] + self._history_table[previous + 1, before + 1]
            if word_history is not None:
                total = total + word_history[i, previous + 1]
            best = int(np.argmax(total))
            out.append(self.tags[best])
            previous, before = best, previous
        return out

    @classmethod
    def fit(cls, sentences: list[tuple[list[str], list[str]]], epochs: int = 5, seed: int = 0,
            rich: bool = False) -> PosTagger:
        """Train on (tokens, tags) pairs; the returned weights are averaged over every update step."""
        tags = sorted({t for _, ts in sentences for t in ts})
        index = {t: i for i, t in enumerate(tags)}
        weights = np.zeros((RICH_DIM if rich else TAGGER_DIM, len(tags)))
        tagger = cls(tags, weights, rich)
        history = tagger._history_ids()
        data = [(_contexts(tokens, rich), tagger._word_history(tokens) if rich else None, [index[t] for t in ts])
                for tokens, ts in sentences if tokens]
        totals = np.zeros_like(weights)  # sum of step * update, for averaging
        step = 1
        for i in shuffled_passes(len(data), epochs, seed):
            contexts, word_history, gold = data[i]
            previous = before = -1
            for k, truth in enumerate(gold):
                ids = [contexts[k], history[previous + 1, before + 1]]
                if word_history is not None:
                    ids.append(word_history[k, previous + 1:previous + 2])
                ids = np.concatenate(ids)
                guess = int(np.argmax(weights[ids].sum(0)))
                if guess != truth:
                    np.add.at(weights[:, truth], ids, 1.0)
                    np.add.at(weights[:, guess], ids, -1.0)
                    np.add.at(totals[:, truth], ids, step)
                    np.add.at(totals[:, guess], ids, -step)
                step += 1
                previous, before = truth, previous
        return cls(tags, (weights - totals / step).astype(np.float32), rich)

    def arrays(self) -> dict[str, np.ndarray]:
        return {"tagger_weights": self.weights, "tagger_tags": np.array(self.tags), "tagger_rich": np.array(self.rich)}

    @classmethod
    def from_arrays(cls, arrays) -> PosTagger:
        rich = bool(arrays["tagger_rich"]) if "tagger_rich" in arrays else False  # files before rich: the basic set
        return cls([str(t) for t in arrays["tagger_tags"]], arrays["tagger_weights"], rich)
