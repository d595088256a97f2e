"""Averaged-perceptron POS taggers over hashed features.

:class:`PosTagger` (greedy, left to right), trained on Google's tokens and PTB tags, tags the Clarke & Lapata
corpora, which come without POS.  :class:`StructuredTagger` (the rich feature set, the words' tag classes seen in
training and in an optional second tagged corpus, tag-trigram Viterbi decoding) is trained on a treebank's PTB tags
(XPOS) and tags the parser's input.

>>> tagger = PosTagger.fit([("the cat sat".split(), ["DT", "NN", "VBD"])] * 5, epochs=3)
>>> tagger.tag("the cat sat".split())
['DT', 'NN', 'VBD']
>>> StructuredTagger.fit([("the cat sat".split(), ["DT", "NN", "VBD"])] * 5, epochs=3).tag("the cat sat".split())
['DT', 'NN', 'VBD']
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Callable, Iterable

import numpy as np

from .features import code, mix, shape
from .model_file import array_of, dense_weights
from .training import AveragedWeights, shuffled_passes

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


def _steps(count: int, epochs: int, seed: int, progress: Callable | None) -> Iterable[int]:
    """The sentence indices of every epoch (:func:`shuffled_passes`), wrapped by ``progress`` when given."""
    steps = shuffled_passes(count, epochs, seed)
    if progress is None:
        return steps
    return progress(steps, desc=f"tagger, {epochs} epochs", total=count * epochs, unit="sentence")


class PosTagger:
    """Greedy averaged-perceptron tagger over the basic feature set: ``weights[feature, tag]``."""

    def __init__(self, tags: list[str], weights: np.ndarray):
        self.tags = list(tags)
        self.weights = weights
        self._history_table: np.ndarray | None = None

    def _history_ids(self) -> np.ndarray:
        """(T+1, T+1, 2): the features of (previous tag, the one before), each -1 (none) .. T-1, shifted by 1."""
        t = np.arange(len(self.tags) + 1, dtype=np.int64)
        return np.stack([np.broadcast_to(mix(72, t[:, None]), (len(t), len(t))),
                         mix(73, t[:, None], t[None, :])], axis=-1) % self.weights.shape[0]

    def tag(self, tokens: list[str]) -> list[str]:
        if not tokens:
            return []
        if self._history_table is None:
            self._history_table = self.weights[self._history_ids()].sum(2)  # (T+1, T+1, T) scores
        scores = self.weights[_contexts(tokens)].sum(1)  # (n, T)
        previous = before = -1
        out = []
        for i in range(len(tokens)):
            best = int(np.argmax(scores[i] + self._history_table[previous + 1, before + 1]))
            out.append(self.tags[best])
            previous, before = best, previous
        return out

    @classmethod
    def fit(cls, sentences: list[tuple[list[str], list[str]]], epochs: int = 5, seed: int = 0,
            progress: Callable | None = None) -> PosTagger:
        """Train on (tokens, tags) pairs; the returned weights are averaged over every update step.  ``progress``
        (e.g. :func:`compbench.progress.bar`) wraps the sentence steps of all epochs."""
        tags = sorted({t for _, ts in sentences for t in ts})
        index = {t: i for i, t in enumerate(tags)}
        weights = AveragedWeights((TAGGER_DIM, len(tags)))
        history = cls(tags, weights.current)._history_ids()
        data = [(_contexts(tokens), [index[t] for t in ts]) for tokens, ts in sentences if tokens]
        for i in _steps(len(data), epochs, seed, progress):
            contexts, gold = data[i]
            previous = before = -1
            for k, truth in enumerate(gold):
                ids = np.concatenate([contexts[k], history[previous + 1, before + 1]])
                guess = int(np.argmax(weights.current[ids].sum(0)))
                if guess != truth:
                    weights.add((ids, truth), 1.0)
                    weights.add((ids, guess), -1.0)
                weights.next_step()
                previous, before = truth, previous
        return cls(tags, weights.average().astype(np.float32))

    def arrays(self) -> dict[str, np.ndarray]:
        return {"tagger_weights": self.weights, "tagger_tags": np.array(self.tags)}


CLASS_MIN_COUNT = 2  # a word's tag class is known from this many training occurrences on
CLASS_MIN_SHARE = 0.05  # its tags: those of at least this share of its occurrences
CLASS_FOLDS = 10  # a training sentence reads the classes of the other folds (sentence i is in fold i % folds)
CANDIDATES = 6  # Viterbi keeps this many tags per word: the best by their own and their best pair score


def tag_classes(sentences: list[tuple[list[str], list[str]]]) -> dict[int, int]:
    """code(lower-cased word) -> code of its tag class: the sorted tags making at least ``CLASS_MIN_SHARE`` of its
    occurrences, for the words seen at least ``CLASS_MIN_COUNT`` times (no raw text is kept).

    >>> classes = tag_classes([(["Run", "run", "a"], ["VB", "NN", "DT"])])
    >>> classes[code("run")] == code("NN VB"), code("a") in classes
    (True, False)
    """
    counts: defaultdict[str, Counter] = defaultdict(Counter)
    for tokens, tags in sentences:
        for word, tag in zip(tokens, tags):
            counts[word.lower()][tag] += 1
    out = {}
    for word, tag_counts in counts.items():
        total = sum(tag_counts.values())
        if total >= CLASS_MIN_COUNT:
            out[code(word)] = code(" ".join(sorted(t for t, k in tag_counts.items() if k >= CLASS_MIN_SHARE * total)))
    return out


def _class_contexts(tokens: list[str], classes: dict[int, int], lexicon: dict[int, int]) -> np.ndarray:
    """(n, 10): features of the tag classes (``classes``) of the word, of its neighbours (two to the right) and of
    the neighbours' classes with the word, and of the word's and its neighbours' classes in ``lexicon`` (another
    corpus); a word without a class has the class ``?``."""
    unknown, words = code("?"), [code(t.lower()) for t in tokens]
    padded = lambda xs: np.array([code("<s>")] * 2 + xs + [code("</s>")] * 2, dtype=np.int64)  # noqa: E731
    kinds = padded([classes.get(w, unknown) for w in words])
    others = padded([lexicon.get(w, unknown) for w in words])
    lowered = padded(words)
    j = np.arange(2, len(tokens) + 2)
    return np.stack([mix(120, kinds[j]), mix(121, kinds[j - 1]), mix(122, kinds[j + 1]),
                     mix(123, kinds[j + 1], lowered[j]), mix(124, kinds[j - 1], lowered[j]),
                     mix(125, kinds[j - 1], kinds[j + 1]), mix(126, kinds[j + 2]),
                     mix(127, others[j]), mix(128, others[j - 1]), mix(129, others[j + 1])], axis=-1) % RICH_DIM


def trigram_viterbi(emission: np.ndarray, pair: np.ndarray, triple: np.ndarray,
                    candidates: int = CANDIDATES) -> np.ndarray:
    """The best tag sequence under score = sum_i emission[i, t_i] + pair[i, t_{i-1}+1, t_i] +
    triple[t_{i-1}+1, t_{i-2}+1, t_i] (index 0: before the sentence), over the ``candidates`` best tags of each
    word by emission[i, t] + max_p pair[i, p, t] (all tags when candidates >= T: exact).

    emission (n, T), pair (n, T+1, T), triple (T+1, T+1, T); returns (n,) tag indices.
    """
    n = len(emission)
    keep = np.argsort(-(emission + pair.max(1)), axis=1, kind="stable")[:, :candidates]  # (n, K)
    # best[a, b]: the best score of a prefix ending with tags keep[i-1][a], keep[i][b] (a: one start state at i=0)
    best = (emission[0, keep[0]] + pair[0, 0, keep[0]] + triple[0, 0, keep[0]])[None, :]
    before, back = np.array([-1]), []
    for i in range(1, n):
        previous, current = keep[i - 1], keep[i]
        options = best[:, :, None] + triple[(previous + 1)[None, :, None], (before + 1)[:, None, None],
                                            current[None, None, :]]  # (A, K, K) [before, previous, current]
        back.append(options.argmax(0))
        best = options.max(0) + pair[i][(previous + 1)[:, None], current[None, :]] + emission[i, current][None, :]
        before = previous
    a, b = np.unravel_index(int(best.argmax()), best.shape)
    path = [b]  # positions into keep[i], from the last word back
    for i in range(n - 1, 0, -1):
        path.append(a)
        a, b = (back[i - 1][a, b] if i > 1 else 0), a
    return np.array([keep[i][k] for i, k in zip(range(n), path[::-1])], dtype=np.int64)


class StructuredTagger:
    """Averaged structured perceptron over the rich feature set and the tag classes of words: ``weights[feature,
    tag]``; a sentence's score adds, per word, its features' weights for its tag, the weights of (previous tag),
    (previous tag, word) and (previous tag, the one before) for its tag; :func:`trigram_viterbi` decodes it.
    ``classes`` maps word codes to tag-class codes (:func:`tag_classes` of the training sentences), ``lexicon`` the
    same of another tagged corpus (empty: none)."""

    def __init__(self, tags: list[str], weights: np.ndarray, classes: dict[int, int], lexicon: dict[int, int]):
        self.tags = list(tags)
        self.weights = weights
        self.classes = classes
        self.lexicon = lexicon
        t = np.arange(len(self.tags) + 1, dtype=np.int64)
        self.previous_ids = mix(72, t) % RICH_DIM  # (T+1,) [previous + 1]
        self.history_ids = mix(73, t[:, None], t[None, :]) % RICH_DIM  # (T+1, T+1) [previous + 1, before + 1]
        self._tables: tuple[np.ndarray, np.ndarray] | None = None

    def features(self, tokens: list[str], classes: dict[int, int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(n, F) tag-independent feature ids per word and (n, T+1) ids of (previous tag, word) per word."""
        contexts = np.concatenate([_contexts(tokens, rich=True),
                                   _class_contexts(tokens, self.classes if classes is None else classes,
                                                   self.lexicon)], axis=1)
        t = np.arange(len(self.tags) + 1, dtype=np.int64)
        words = np.array([code(w.lower()) for w in tokens], dtype=np.int64)
        return contexts, mix(74, t[None, :], words[:, None]) % RICH_DIM

    def _decode(self, contexts: np.ndarray, word_pairs: np.ndarray, tables: tuple[np.ndarray, np.ndarray]
                ) -> np.ndarray:
        previous, history = tables
        emission = self.weights[contexts].sum(1)
        return trigram_viterbi(emission, previous[None] + self.weights[word_pairs], history)

    def _tables_of(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return weights[self.previous_ids], weights[self.history_ids]  # (T+1, T), (T+1, T+1, T)

    def tag(self, tokens: list[str]) -> list[str]:
        if not tokens:
            return []
        if self._tables is None:
            self._tables = self._tables_of(self.weights)
        return [self.tags[i] for i in self._decode(*self.features(tokens), self._tables)]

    @classmethod
    def fit(cls, sentences: list[tuple[list[str], list[str]]], epochs: int = 10, seed: int = 0,
            lexicon: list[tuple[list[str], list[str]]] = (), progress: Callable | None = None) -> StructuredTagger:
        """Train on (tokens, tags) pairs, a training sentence reading the tag classes of the other
        ``CLASS_FOLDS`` folds (as unseen text would) and those of the (tokens, tags) pairs of ``lexicon``; the
        weights are averaged over every sentence step.  ``progress`` (e.g. :func:`compbench.progress.bar`) wraps
        the sentences' features and the sentence steps of all epochs."""
        tags = sorted({t for _, ts in sentences for t in ts})
        index = {t: i for i, t in enumerate(tags)}
        weights = AveragedWeights((RICH_DIM, len(tags)))
        tagger = cls(tags, weights.current, tag_classes(sentences), tag_classes(lexicon))
        folds = [tag_classes([x for i, x in enumerate(sentences) if i % CLASS_FOLDS != fold])
                 for fold in range(min(CLASS_FOLDS, len(sentences)))]
        numbered = enumerate(sentences)
        if progress is not None:
            numbered = progress(numbered, desc="tagger features", total=len(sentences), unit="sentence")
        data = [(*tagger.features(tokens, folds[i % len(folds)]), np.array([index[t] for t in ts]))
                for i, (tokens, ts) in numbered if tokens]
        for i in _steps(len(data), epochs, seed, progress):
            contexts, word_pairs, gold = data[i]
            guess = tagger._decode(contexts, word_pairs, tagger._tables_of(weights.current))
            if (guess != gold).any():
                rows, columns, signs = tagger._update(contexts, word_pairs, gold, guess)
                weights.add((rows, columns), signs)
            weights.next_step()
        return cls(tags, weights.average().astype(np.float32), tagger.classes, tagger.lexicon)

    @classmethod
    def averaged(cls, taggers: list[StructuredTagger]) -> StructuredTagger:
        """One tagger whose weights are the mean of ``taggers``' (trained on the same sentences, e.g. with different
        seeds: the same tags and tag classes).  A parser reading the mean of three seeds' taggers measured 84.49 UAS
        on EWT dev against 84.16-84.36 with each of them.

        >>> data = [("the cat sat".split(), ["DT", "NN", "VBD"])] * 5
        >>> StructuredTagger.averaged([StructuredTagger.fit(data, 2, seed=s) for s in (0, 1)]).tag(["the", "cat"])
        ['DT', 'NN']
        """
        first = taggers[0]
        if len(taggers) == 1:
            return first
        for other in taggers[1:]:
            if other.tags != first.tags or other.classes != first.classes or other.lexicon != first.lexicon:
                raise ValueError("taggers of different tags or tag classes cannot be averaged")
        total = np.zeros(first.weights.shape)
        for tagger in taggers:
            total += tagger.weights
        return cls(first.tags, (total / len(taggers)).astype(np.float32), first.classes, first.lexicon)

    def _update(self, contexts: np.ndarray, word_pairs: np.ndarray, gold: np.ndarray, guess: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The perceptron step as (rows, columns, +1/-1): + the gold sequence's features, - the guess's, for the
        words whose tag, or whose (previous, tag) or (before, previous, tag) parts differ."""
        shifted = lambda y, k: np.concatenate([np.full(k, -1), y[:-k]])[:len(y)] + 1  # noqa: E731
        differs = gold != guess
        wrong = np.flatnonzero(differs)
        pair_differs = differs | (shifted(gold, 1) != shifted(guess, 1))
        pairs = np.flatnonzero(pair_differs)
        triples = np.flatnonzero(pair_differs | (shifted(gold, 2) != shifted(guess, 2)))
        rows, columns, signs = [], [], []
        for sequence, sign in ((gold, 1.0), (guess, -1.0)):
            previous, before = shifted(sequence, 1), shifted(sequence, 2)
            parts = [(contexts[wrong].ravel(), np.repeat(sequence[wrong], contexts.shape[1])),
                     (self.previous_ids[previous[pairs]], sequence[pairs]),
                     (word_pairs[pairs, previous[pairs]], sequence[pairs]),
                     (self.history_ids[previous[triples], before[triples]], sequence[triples])]
            for r, c in parts:
                rows.append(r)
                columns.append(c)
                signs.append(np.full(len(r), sign))
        return np.concatenate(rows), np.concatenate(columns), np.concatenate(signs)

    def arrays(self) -> dict[str, np.ndarray]:
        arrays = {"tagger_weights": self.weights, "tagger_tags": np.array(self.tags),
                  "tagger_kind": np.array("structured")}
        for name, classes in (("class", self.classes), ("lexicon", self.lexicon)):
            words = np.array(sorted(classes), dtype=np.int64)
            arrays[f"tagger_{name}_words"] = words
            arrays[f"tagger_{name}_codes"] = np.array([classes[w] for w in words.tolist()], dtype=np.int64)
        return arrays


class OutdatedModelError(ValueError):
    """A model file written by another version (an older one, or a newer one) whose parts this version does not
    read."""


def _code_table(arrays, name: str) -> dict[int, int]:
    """A tagger's word -> code table ``name`` (``class``, ``lexicon``): its words and their codes, as long."""
    words = array_of(arrays, f"tagger_{name}_words", "iu")
    codes = array_of(arrays, f"tagger_{name}_codes", "iu", length=len(words))
    return dict(zip(words.tolist(), codes.tolist()))


def load_tagger(arrays) -> PosTagger | StructuredTagger:
    """The tagger stored by ``arrays()`` in a model file; a greedy tagger with the rich features (files from before
    the structured tagger) is refused (:class:`OutdatedModelError`)."""
    tags = array_of(arrays, "tagger_tags", "U").tolist()
    if "tagger_kind" in arrays:
        classes, lexicon = (_code_table(arrays, name) for name in ("class", "lexicon"))
        return StructuredTagger(tags, dense_weights(arrays, "tagger_weights", (RICH_DIM, len(tags))), classes,
                                lexicon)
    if "tagger_rich" in arrays and bool(arrays["tagger_rich"]):
        raise OutdatedModelError("its POS tagger is the greedy one of an older version; train the model again")
    return PosTagger(tags, dense_weights(arrays, "tagger_weights", (TAGGER_DIM, len(tags))))
