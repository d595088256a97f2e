"""First-order arc features of McDonald, Crammer & Pereira (2005), for every (head, modifier) pair at once.

Positions: 0 is the root, 1..n the words.  Each template is hashed (:func:`compbench.learning.features.mix`) into
one of ``TABLES`` tables of ``DIM`` weights, twice: alone and conjoined with the arc's direction and binned
distance.  The templates: unigram (head word/tag, modifier word/tag), bigram (head and modifier words and tags),
surrounding tags (h±1, m±1), some of them again with coarse tags (UPOS, or a PTB tag's first two letters), a word
with the other side's neighbouring tags, the numbers of verbs, punctuation marks and commas between h and m, and for
every word b strictly between h and m the tags (h, b, m) and their coarse tags (feature set 2 on).  Words are
lower-cased; a word seen fewer than ``rare`` times in training (:func:`build_vocabulary`) is replaced by its shape and
3-letter suffix.

>>> f = arc_features(["The", "cat", "sat"], ["DT", "NN", "VBD"])
>>> f.fixed.shape[:2], f.between.shape
((4, 4), (4, 4, 4, 2))
>>> int(f.between[1, 1, 3, 0]) == PAD, int(f.between[1, 2, 3, 0]) == PAD     # b = 2 lies between 1 and 3
(True, False)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..learning.features import DIM, code, distance_bucket, mix, shape
from ..evaluate import sibling_pairs
from .defaults import FEATURES

TABLES = 8
SIZE = TABLES * DIM  # hashed weights; index SIZE is padding (always weight 0)
PAD = SIZE

W, P, B, A, C, CB, CA, NO = range(8)  # a slot's quantity: word, tag, tag before, tag after, their coarse tags, nothing
TEMPLATES = [  # (head quantities, modifier quantities)
    ((W, P), ()), ((W,), ()), ((P,), ()), ((), (W, P)), ((), (W,)), ((), (P,)),  # unigram
    ((W, P), (W, P)), ((P,), (W, P)), ((W,), (W, P)), ((W, P), (P,)), ((W, P), (W,)), ((W,), (W,)),  # bigram
    ((P,), (P,)),
    ((P, A), (B, P)), ((B, P), (B, P)), ((P, A), (P, A)), ((B, P), (P, A)),  # surrounding tags
    ((P,), (B, P)), ((P, A), (P,)), ((B, P), (P,)), ((P,), (P, A)),
    ((C,), (C,)), ((W,), (C,)), ((C,), (W,)),  # the same with coarse tags (the tag's first two letters)
    ((C, CA), (CB, C)), ((CB, C), (CB, C)), ((C, CA), (C, CA)), ((CB, C), (C, CA)),
    ((C,), (CB, C)), ((C, CA), (C,)), ((CB, C), (C,)), ((C,), (C, CA)),
    ((W,), (P, A)), ((W,), (B, P)), ((P, A), (W,)), ((B, P), (W,)),  # a word with the other side's context
]
PUNCTUATION = frozenset({",", ".", ":", "``", "''", "-LRB-", "-RRB-", "HYPH", "NFP"})


def _slots(side: int) -> np.ndarray:
    """(templates, 4): per template and slot, the quantity the head (side 0) or modifier (1) puts there."""
    out = np.full((len(TEMPLATES), 4), NO)
    for t, (h, m) in enumerate(TEMPLATES):
        out[t, :len(h) + len(m)] = [*h, *[NO] * len(m)] if side == 0 else [*[NO] * len(h), *m]
    return out


HEAD_SLOTS, MODIFIER_SLOTS = _slots(0), _slots(1)
TEMPLATE_IDS = np.arange(len(TEMPLATES), dtype=np.int64)[:, None, None]


SIBLING_TABLE = 3  # the table the sibling templates share with a few arc templates


def sibling_features(words: list[str], tags: list[str], vocabulary: np.ndarray | None = None) -> np.ndarray:
    """Second-order features (n+1, n+1, n+1, F) [h, s, m] of modifier m of head h after its previous modifier s
    on the same side (s = h: m is the first): the tags of h, s and m, the tags and words of s and m, with the side
    and whether m is the first.

    >>> sibling_features(["a", "b"], ["DT", "NN"]).shape
    (3, 3, 3, 5)
    """
    N = len(words) + 1
    w = np.concatenate([[code("<root>")], word_codes(words, vocabulary)])
    p = np.array([code(t) for t in ["<root>", *tags]], dtype=np.int64)
    h, s, m = np.arange(N)[:, None, None], np.arange(N)[None, :, None], np.arange(N)[None, None, :]
    kind = 2 * (s == h) + (m > h)  # first modifier or not, and the side
    sp = np.where(s == h, code("<first>"), p[s])
    sw = np.where(s == h, code("<first>"), w[s])
    out = np.stack([mix(110, p[h], sp, p[m], kind), mix(111, sp, p[m], kind), mix(112, sw, w[m], kind),
                    mix(113, sw, p[m], kind), mix(114, sp, w[m], kind)], axis=-1)
    return out + SIBLING_TABLE * DIM


@dataclass
class ArcFeatures:
    """``fixed[h, m]`` (n+1, n+1, F) the indices of arc h -> m's fixed templates; ``between[h, b, m]``
    (n+1, n+1, n+1, B) the in-between-tag features of word b for that arc (``PAD`` where b is not between h and
    m)."""

    fixed: np.ndarray
    between: np.ndarray
    sibling: np.ndarray | None = None  # second order: (n+1, n+1, n+1, F) from :func:`sibling_features`

    def scores(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Arc scores (n+1, n+1) and sibling scores (n+1, n+1, n+1) or None under ``weights`` (SIZE + 1 entries,
        the last one 0)."""
        arc = weights[self.fixed].sum(-1) + weights[self.between].sum((1, 3))
        return arc, None if self.sibling is None else weights[self.sibling].sum(-1)

    def of_siblings(self, heads: np.ndarray) -> np.ndarray:
        """The sibling feature indices (with repeats) of the tree ``heads`` (empty in first order)."""
        if self.sibling is None:
            return np.zeros(0, dtype=np.int64)
        triples = np.array(sibling_pairs(heads), dtype=np.int64).reshape(-1, 3)
        return self.sibling[triples[:, 0], triples[:, 1], triples[:, 2]].ravel()

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


def arc_features(words: list[str], tags: list[str], vocabulary: np.ndarray | None = None,
                 second_order: bool = False, universal_tags: list[str] | None = None,
                 version: int = FEATURES) -> ArcFeatures:
    """The features of every arc h -> m (h = 0..n, m = 0..n; column 0 and the diagonal are never used), and with
    ``second_order`` of every sibling triple.  The coarse tags are ``universal_tags`` (UPOS) when given, else each
    PTB tag's first two letters.  ``version`` 1 leaves out the coarse in-between template, as its models were
    trained."""
    n = len(words)
    N = n + 1
    w = np.concatenate([[code("<root>")], word_codes(words, vocabulary)])
    padded = ["<none>", "<root>", *tags, "</s>"]
    fine = np.array([code(t) for t in padded], dtype=np.int64)
    coarse_tags = [t[:2] for t in tags] if universal_tags is None else [f"U:{u}" for u in universal_tags]
    coarse = np.array([code(t) for t in ["<none>", "<root>", *coarse_tags, "</s>"]], dtype=np.int64)
    p = fine[1:N + 1]
    h = np.arange(N)[:, None]
    m = np.arange(N)[None, :]
    distance = (2 * distance_bucket(m - h) + (h < m)).astype(np.int64)  # direction and binned distance

    # slot i of template t holds the head's quantity HEAD_SLOTS[t, i] plus the modifier's (one of them is NO: 0)
    quantities = np.stack([w, p, fine[:N], fine[2:], coarse[1:N + 1], coarse[:N], coarse[2:], np.zeros(N, np.int64)])
    fixed = mix(100, TEMPLATE_IDS, *(quantities[HEAD_SLOTS[:, i]][:, :, None]
                                      + quantities[MODIFIER_SLOTS[:, i]][:, None, :]
                                      for i in range(HEAD_SLOTS.shape[1])))
    # how many verbs, punctuation marks and commas lie between h and m (0, 1, 2 or more), with the tags of both
    counts = np.cumsum([[t.startswith("VB") or t == "MD", t in PUNCTUATION, t == ","] for t in ["<root>", *tags]],
                       axis=0)
    lo, hi = np.minimum(h, m), np.maximum(h, m)
    counted = np.minimum(2, np.maximum(0, counts[np.maximum(hi - 1, 0)] - counts[lo]))  # (N, N, 3)
    pairs = np.stack([mix(103, p[:, None], p[None, :], counted[..., 0], counted[..., 1]),
                      mix(104, coarse[1:N + 1, None], coarse[None, 1:N + 1], counted[..., 2])])
    fixed = np.concatenate([fixed, pairs])
    ids = np.arange(len(fixed), dtype=np.int64)[:, None, None]
    joined = mix(101, fixed, distance[None])
    table = ids % TABLES * DIM
    fixed = np.concatenate([fixed + table, joined + (table + DIM) % SIZE]).transpose(1, 2, 0)

    b = np.arange(N)[None, :, None]
    H, M = h[:, :, None], m[:, None, :]
    inside = (np.minimum(H, M) < b) & (b < np.maximum(H, M))
    between = [mix(102, p[:, None, None], p[None, :, None], p[None, None, :], distance[:, None, :]) + 2 * DIM]
    if version >= 2:
        c = coarse[1:N + 1]
        between.append(mix(105, c[:, None, None], c[None, :, None], c[None, None, :], distance[:, None, :]) + 5 * DIM)
    between = np.where(inside[..., None], np.stack(between, axis=-1), PAD)
    sibling = sibling_features(words, tags, vocabulary) if second_order else None
    return ArcFeatures(np.ascontiguousarray(fixed), between, sibling)
