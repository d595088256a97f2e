"""First-order arc features of McDonald, Crammer & Pereira (2005), for every (head, modifier) pair at once.

Positions: 0 is the root, 1..n the words.  Each template is hashed (:func:`compbench.corpora.features.mix`) into
one of ``TABLES`` tables of ``DIM`` weights, twice: alone and conjoined with the arc's direction and binned
distance.  The templates: unigram (head word/tag, modifier word/tag), bigram (head and modifier words and tags),
surrounding tags (h±1, m±1) and, for every word b strictly between h and m, the tags (h, b, m).  Words are
lower-cased; a word seen fewer than ``rare`` times in training is replaced by its shape and 3-letter suffix.

>>> f = arc_features(["The", "cat", "sat"], ["DT", "NN", "VBD"])
>>> f.fixed.shape[:2], f.between.shape
((4, 4), (4, 4, 4))
>>> int(f.between[1, 1, 3]) == PAD, int(f.between[1, 2, 3]) == PAD     # b = 2 lies between 1 and 3
(True, False)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..corpora.features import DIM, _bucket, code, mix, shape

TABLES = 4
SIZE = TABLES * DIM  # hashed weights; index SIZE is padding (always weight 0)
PAD = SIZE

W, P, B, A, NO = range(5)  # a template slot's quantity: word, tag, tag before, tag after, nothing
TEMPLATES = [  # (head quantities, modifier quantities)
    ((W, P), ()), ((W,), ()), ((P,), ()), ((), (W, P)), ((), (W,)), ((), (P,)),  # unigram
    ((W, P), (W, P)), ((P,), (W, P)), ((W,), (W, P)), ((W, P), (P,)), ((W, P), (W,)), ((W,), (W,)),  # bigram
    ((P,), (P,)),
    ((P, A), (B, P)), ((B, P), (B, P)), ((P, A), (P, A)), ((B, P), (P, A)),  # surrounding tags
    ((P,), (B, P)), ((P, A), (P,)), ((B, P), (P,)), ((P,), (P, A)),
]


def _slots(side: int) -> np.ndarray:
    """(templates, 4): per template and slot, the quantity the head (side 0) or modifier (1) puts there."""
    out = np.full((len(TEMPLATES), 4), NO)
    for t, (h, m) in enumerate(TEMPLATES):
        out[t, :len(h) + len(m)] = [*h, *[NO] * len(m)] if side == 0 else [*[NO] * len(h), *m]
    return out


HEAD_SLOTS, MODIFIER_SLOTS = _slots(0), _slots(1)
TEMPLATE_IDS = np.arange(len(TEMPLATES), dtype=np.int64)[:, None, None]


@dataclass
class ArcFeatures:
    """``fixed[h, m]`` (n+1, n+1, F) the indices of arc h -> m's fixed templates; ``between[h, b, m]``
    (n+1, n+1, n+1) the in-between-tag feature of word b for that arc (``PAD`` where b is not between h and m)."""

    fixed: np.ndarray
    between: np.ndarray

    def scores(self, weights: np.ndarray) -> np.ndarray:
        """Arc scores (n+1, n+1) under ``weights`` (SIZE + 1 entries, the last one 0)."""
        return weights[self.fixed].sum(-1) + weights[self.between].sum(1)

    def of_arcs(self, heads: np.ndarray, words: np.ndarray) -> np.ndarray:
        """The feature indices (with repeats) of the arcs into ``words`` (1-based) under ``heads``."""
        h = heads[words]
        between = self.between[h, :, words]
        return np.concatenate([self.fixed[h, words].ravel(), between[between != PAD]])


def word_codes(words: list[str], vocabulary: np.ndarray | None) -> np.ndarray:
    """Codes of the lower-cased words; words whose code is not in ``vocabulary`` (sorted) back off to their shape
    and suffix.  ``vocabulary`` None: no back-off."""
    lower = [w.lower() for w in words]
    codes = np.array([code(w) for w in lower], dtype=np.int64)
    if vocabulary is None or not len(words):
        return codes
    at = np.minimum(np.searchsorted(vocabulary, codes), max(len(vocabulary) - 1, 0))
    known = vocabulary[at] == codes if len(vocabulary) else np.zeros(len(codes), dtype=bool)
    for i in np.flatnonzero(~known):
        codes[i] = code(f"<unk>{shape(words[i])}{lower[i][-3:]}")
    return codes


def build_vocabulary(sentences: list[list[str]], rare: int = 2) -> np.ndarray:
    """The sorted codes of the lower-cased words seen at least ``rare`` times."""
    codes, counts = np.unique(np.array([code(w.lower()) for s in sentences for w in s], dtype=np.int64),
                              return_counts=True)
    return codes[counts >= rare]


def arc_features(words: list[str], tags: list[str], vocabulary: np.ndarray | None = None) -> ArcFeatures:
    """The features of every arc h -> m (h = 0..n, m = 0..n; column 0 and the diagonal are never used)."""
    n = len(words)
    N = n + 1
    w = np.concatenate([[code("<root>")], word_codes(words, vocabulary)])
    padded = np.array([code(t) for t in ["<none>", "<root>", *tags, "</s>"]], dtype=np.int64)
    p, before, after = padded[1:N + 1], padded[:N], padded[2:]  # tag of position i, of i-1, of i+1
    h = np.arange(N)[:, None]
    m = np.arange(N)[None, :]
    distance = (2 * _bucket(m - h) + (h < m)).astype(np.int64)  # direction and binned distance

    # slot i of template t holds the head's quantity HEAD_SLOTS[t, i] plus the modifier's (one of them is NO: 0)
    quantities = np.stack([w, p, before, after, np.zeros(N, dtype=np.int64)])
    fixed = mix(100, TEMPLATE_IDS, *(quantities[HEAD_SLOTS[:, i]][:, :, None]
                                      + quantities[MODIFIER_SLOTS[:, i]][:, None, :]
                                      for i in range(HEAD_SLOTS.shape[1])))
    joined = mix(101, fixed, distance[None])
    table = TEMPLATE_IDS % TABLES * DIM
    fixed = np.concatenate([fixed + table, joined + (table + DIM) % SIZE]).transpose(1, 2, 0)

    b = np.arange(N)[None, :, None]
    H, M = h[:, :, None], m[:, None, :]
    inside = (np.minimum(H, M) < b) & (b < np.maximum(H, M))
    between = mix(102, p[:, None, None], p[None, :, None], p[None, None, :], distance[:, None, :]) + 2 * DIM
    between = np.where(inside, between, PAD)
    return ArcFeatures(np.ascontiguousarray(fixed), between)
