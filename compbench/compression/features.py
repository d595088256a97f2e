"""Hashed sparse features of tokens, bigrams and arcs of a sentence to compress, and a bigram language model, all
vectorized in numpy.

Positions are those of the problem contract: 0 is the root and ``<s>``, 1..n the tokens, n+1 ``</s>``.  Every
feature is a template of :mod:`compbench.learning.features` over codes of the words it looks at.

>>> f = sentence_features("The cat sat .".split(), pos=["DT", "NN", "VBD", "."])
>>> f.token.shape[0], f.arc.shape[:2], f.bigram.shape[:2]
(4, (5, 5), (6, 6))
"""

from __future__ import annotations

import string
from dataclasses import dataclass

import numpy as np

from ..learning.features import code, distance_bucket, mix, shape
from ..learning.model_file import array_of

STOP_WORDS = frozenset("""a an the and or but if of to in on at by for with from as is are was were be been being
it its this that these those he she they we you i his her their our your my me him them us not no do does did
has have had will would can could should may might must there here which who whom whose what when where why how
than then so such also just only very about into over after before up down out off""".split())
PARENS_OPEN = frozenset({"(", "[", "{", "-LRB-", "-LSB-", "-LCB-"})
PARENS_CLOSE = frozenset({")", "]", "}", "-RRB-", "-RSB-", "-RCB-"})


def is_punct(word: str) -> bool:
    return all(ch in string.punctuation for ch in word)


@dataclass
class SentenceFeatures:
    """Feature indices per part: ``token`` (n, F), ``arc`` (n+1, n+1, F) [h, k], ``bigram`` (n+2, n+2, F) [a, b];
    ``lm`` (n+2, n+2) the bigram language-model log-probability of b following a; ``sibling`` (second order)
    (n+1, n+1, n+1, F) [h, s, k] for modifier k of h after its previous modifier s (s = h: the first)."""

    token: np.ndarray
    arc: np.ndarray
    bigram: np.ndarray
    lm: np.ndarray
    sibling: np.ndarray | None = None  # (n+1, n+1, n+1, F) [h, s, k], second order only


class BigramLM:
    """An interpolated bigram language model over lower-cased words, stored as hashed counts.

    >>> lm = BigramLM.fit([["a", "b"], ["a", "c"]])
    >>> bool(lm.logprob(np.array([code("a")]), np.array([code("b")]))[0] > lm.logprob(
    ...     np.array([code("b")]), np.array([code("a")]))[0])
    True
    """

    def __init__(self, unigram_keys: np.ndarray, unigram_counts: np.ndarray, bigram_keys: np.ndarray,
                 bigram_counts: np.ndarray, smoothing: float = 2.0):
        self.unigram_keys, self.unigram_counts = unigram_keys, unigram_counts
        self.bigram_keys, self.bigram_counts = bigram_keys, bigram_counts
        self.smoothing = smoothing
        self.total = float(unigram_counts.sum())

    @staticmethod
    def _key(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return mix(0, a, b) if b is not None else mix(1, a)

    @classmethod
    def fit(cls, sentences: list[list[str]]) -> BigramLM:
        """Counts from word sequences (``<s>``/``</s>`` added)."""
        firsts, seconds = [], []
        for words in sentences:
            codes = [code("<s>")] + [code(w.lower()) for w in words] + [code("</s>")]
            firsts.extend(codes[:-1])
            seconds.extend(codes[1:])
        a, b = np.array(firsts, dtype=np.int64), np.array(seconds, dtype=np.int64)
        ukeys, ucounts = np.unique(np.concatenate([cls._key(a, None), cls._key(b[-1:], None)]), return_counts=True)
        bkeys, bcounts = np.unique(cls._key(a, b), return_counts=True)
        return cls(ukeys, ucounts.astype(np.float64), bkeys, bcounts.astype(np.float64))

    @staticmethod
    def _lookup(keys: np.ndarray, counts: np.ndarray, query: np.ndarray) -> np.ndarray:
        if keys.size == 0:
            return np.zeros(query.shape)
        i = np.clip(np.searchsorted(keys, query), 0, keys.size - 1)
        return np.where(keys[i] == query, counts[i], 0.0)

    def logprob(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """log p(b | a) for broadcast arrays of word codes."""
        a, b = np.broadcast_arrays(a, b)
        vocabulary = self.unigram_keys.size + 1
        unigram_b = (self._lookup(self.unigram_keys, self.unigram_counts, self._key(b, None)) + 1.0) / (
            self.total + vocabulary)
        count_a = self._lookup(self.unigram_keys, self.unigram_counts, self._key(a, None))
        count_ab = self._lookup(self.bigram_keys, self.bigram_counts, self._key(a, b))
        return np.log((count_ab + self.smoothing * unigram_b) / (count_a + self.smoothing))

    def arrays(self) -> dict[str, np.ndarray]:
        return {"lm_unigram_keys": self.unigram_keys, "lm_unigram_counts": self.unigram_counts,
                "lm_bigram_keys": self.bigram_keys, "lm_bigram_counts": self.bigram_counts}

    @classmethod
    def from_arrays(cls, arrays) -> BigramLM:
        """The LM a model file holds (:meth:`arrays`), its keys sorted and its counts counts (else a ValueError naming
        the array: unsorted keys were read silently as other words' counts)."""
        parts = []
        for order in ("unigram", "bigram"):
            keys = array_of(arrays, f"lm_{order}_keys", "iu", increasing=True)
            parts += [keys, array_of(arrays, f"lm_{order}_counts", "iuf", length=len(keys), counts=True)]
        return cls(*parts)


def ancestor_distances(heads: np.ndarray) -> np.ndarray:
    """``D[a, k]`` = how many arcs up from k its ancestor a is in the tree ``heads`` (positions 0..n, heads[0] = -1;
    0 when a is not an ancestor of k).

    >>> ancestor_distances(np.array([-1, 2, 0]))[:, 1].tolist()   # 1 <- 2 <- 0
    [2, 0, 1]
    """
    n = len(heads) - 1
    distances = np.zeros((n + 1, n + 1), dtype=np.int64)
    current, columns = np.asarray(heads, dtype=np.int64).copy(), np.arange(n + 1)
    for step in range(1, n + 1):
        alive = current >= 0
        if not alive.any():
            break
        distances[current[alive], columns[alive]] = step
        current[alive] = heads[current[alive]]
    return distances


def parse_features(heads: np.ndarray, tag: np.ndarray, lab: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The compressive-parsing draft's features of the input parse ``heads`` (positions 0..n, heads[0] = -1), as
    extra (token (n, F), arc (n+1, n+1, F), bigram (n+2, n+2, F)) columns: an output arc's fidelity (it is an input
    arc) with the POS and the input label of its modifier, the input ancestor relation binned by distance (either
    way), whether head and modifier share an input head; a token's depth, whether it heads an input subtree (and
    how large), its input label with its POS; a bigram's input relation (one word heads the other, siblings) with
    both input labels.  ``tag`` and ``lab`` are the codes of positions 0..n+1."""
    heads = np.asarray(heads, dtype=np.int64)
    n = len(heads) - 1
    N = np.arange(n + 1)
    above = ancestor_distances(heads)
    depth = above[0]  # arcs from the root
    children = np.bincount(heads[1:], minlength=n + 1)
    subtree = (above > 0).sum(axis=1)  # descendants
    fidelity = np.zeros((n + 1, n + 1), dtype=np.int64)
    fidelity[heads[1:], N[1:]] = 1
    down, up = np.minimum(above, 4), np.minimum(above.T, 4)  # h an ancestor of k at distance d; or k of h
    same_head = (heads[:, None] == heads[None, :]).astype(np.int64)
    H, K = tag[: n + 1, None], tag[None, : n + 1]
    label_k = lab[None, : n + 1]
    arc = np.stack([mix(80, fidelity), mix(81, fidelity, H, K), mix(82, fidelity, label_k, H), mix(83, down, up),
                    mix(84, down, up, label_k), mix(85, same_head, K, label_k)], axis=-1)
    t = slice(1, n + 1)
    size = np.minimum(subtree[t], 8)
    token = np.stack([mix(86, np.minimum(depth[t], 6), tag[t]), mix(87, np.minimum(children[t], 3), tag[t]),
                      mix(88, size, lab[t]), mix(89, lab[t], tag[t], np.minimum(depth[t], 3))], axis=-1)
    relation = np.zeros((n + 2, n + 2), dtype=np.int64)
    relation[: n + 1, : n + 1] = fidelity + 2 * fidelity.T + 3 * (same_head & (N[:, None] > 0))
    bigram = np.stack([mix(90, relation, lab[:, None], lab[None, :]), mix(91, relation, tag[:, None], tag[None, :])],
                      axis=-1)
    return token, arc, bigram


def dropped_span_features(A: np.ndarray, B: np.ndarray, tag: np.ndarray, verb: np.ndarray, punct: np.ndarray,
                          paren: np.ndarray) -> list[np.ndarray]:
    """McDonald (2006)'s features of the words a bigram (a, b) drops, a < k < b: the last dropped word's tag with
    b's, the first and last dropped tags together, whether the span holds a verb, a punctuation mark or a
    parenthesis (with its length), and whether it is closed by punctuation before b (a clause or an aside dropped
    whole).  Every column is one value per bigram; adjacent bigrams see a constant."""
    adjacent = (B - A == 1).astype(np.int64)
    last = np.clip(B - 1, 0, len(tag) - 1)
    first = np.clip(A + 1, 0, len(tag) - 1)
    spans = lambda flags: np.cumsum(flags)[last] - np.cumsum(flags)[np.clip(A, 0, len(tag) - 1)]  # noqa: E731
    inside = lambda flags: np.where(adjacent == 1, 2, np.minimum(1, np.maximum(0, spans(flags))))  # noqa: E731
    length = distance_bucket(B - A - 1)
    return [mix(51, np.where(adjacent == 1, 0, tag[last]), tag[None, :]),
            mix(52, np.where(adjacent == 1, 0, tag[first]), np.where(adjacent == 1, 0, tag[last])),
            mix(53, inside(verb), inside(punct), length),
            mix(54, inside(paren), length),
            mix(55, np.where(adjacent == 1, 2, punct[last]), tag[:, None])]


def sentence_features(tokens: list[str], pos: list[str] | None = None, dep: list[str] | None = None,
                      lm: BigramLM | None = None, second_order: bool = False,
                      heads: np.ndarray | None = None) -> SentenceFeatures:
    """All feature indices of one sentence (``pos``/``dep`` None: those templates see a constant);
    ``second_order`` adds the sibling templates, ``heads`` (an input parse, positions 0..n) the parse templates."""
    n = len(tokens)
    pos = pos if pos is not None else ["-"] * n
    dep = dep if dep is not None else ["-"] * n
    words = ["<s>"] + tokens + ["</s>"]
    tags = ["<s>"] + list(pos) + ["</s>"]
    labels = ["<root>"] + list(dep) + ["</s>"]
    lower = np.array([code(w.lower()) for w in words], dtype=np.int64)
    shp = np.array([code(shape(w)) for w in words], dtype=np.int64)
    tag = np.array([code(t) for t in tags], dtype=np.int64)
    ctag = np.array([code(t[:2]) for t in tags], dtype=np.int64)
    lab = np.array([code(t) for t in labels], dtype=np.int64)
    punct = np.array([is_punct(w) for w in words], dtype=np.int64)
    stop = np.array([w.lower() in STOP_WORDS for w in words], dtype=np.int64)
    verb = np.array([t.startswith("VB") or t == "MD" for t in tags], dtype=np.int64)
    depth, inside = 0, []
    for w in words:
        depth += w in PARENS_OPEN
        inside.append(min(depth, 1))
        depth = max(0, depth - (w in PARENS_CLOSE))
    paren = np.array(inside, dtype=np.int64)
    index = np.arange(n + 2)
    relative = np.minimum(4, (5 * index) // max(n + 1, 1))
    edge = np.where(index == 1, 1, np.where(index == n, 2, 0))

    # token k = 1..n
    t = slice(1, n + 1)
    token = np.stack([mix(1, np.zeros(n, dtype=np.int64)), mix(2, lower[t]), mix(3, shp[t]), mix(4, tag[t]),
                      mix(5, lab[t]), mix(6, tag[t], lab[t]), mix(7, relative[t], ctag[t]), mix(8, punct[t], lab[t]),
                      mix(9, stop[t], tag[t]), mix(10, paren[t], lab[t]), mix(11, lower[t], tag[t]),
                      mix(12, edge[t], tag[t]), mix(13, shp[t], lab[t]), mix(14, relative[t], lab[t])], axis=-1)

    # arc h -> k, h = 0..n, k = 0..n (column 0 unused)
    h, k = index[: n + 1, None], index[None, : n + 1]
    direction = (h < k).astype(np.int64)
    dist = distance_bucket(k - h)
    cum_verb, cum_punct = np.cumsum(verb[: n + 1]), np.cumsum(punct[: n + 1])
    lo, hi = np.minimum(h, k), np.maximum(h, k)
    verb_between = np.minimum(1, np.maximum(0, cum_verb[np.maximum(hi - 1, 0)] - cum_verb[lo]))
    punct_between = np.minimum(1, np.maximum(0, cum_punct[np.maximum(hi - 1, 0)] - cum_punct[lo]))
    H, K = tag[: n + 1, None], tag[None, : n + 1]
    arc = np.stack([mix(20, H, K), mix(21, lab[None, : n + 1], H), mix(22, lab[None, : n + 1], direction),
                    mix(23, H, K, direction, dist), mix(24, lower[: n + 1, None], K), mix(25, H, lower[None, : n + 1]),
                    mix(26, lab[None, : n + 1], lab[: n + 1, None]), mix(27, H, K, verb_between),
                    mix(28, H, K, punct_between), mix(29, lab[None, : n + 1], H, K),
                    mix(30, ctag[: n + 1, None], ctag[None, : n + 1], direction, dist),
                    mix(31, shp[: n + 1, None], shp[None, : n + 1], direction)], axis=-1)

    # bigram a -> b, a, b = 0..n+1 (only a < b used)
    A, B = index[:, None], index[None, :]
    gap = distance_bucket(B - A)
    adjacent = (B - A == 1).astype(np.int64)
    after_a = tag[np.minimum(A + 1, n + 1)]
    TA, TB = tag[:, None], tag[None, :]
    bigram = np.stack([mix(40, TA, TB), mix(41, lower[:, None], lower[None, :]), mix(42, gap, adjacent),
                       mix(43, TA, TB, adjacent), mix(44, TA, after_a, TB), mix(45, lab[:, None], lab[None, :]),
                       mix(46, punct[:, None], punct[None, :], adjacent), mix(47, lower[:, None], TB),
                       mix(48, TA, lower[None, :]), mix(49, shp[:, None], shp[None, :]),
                       mix(50, lab[:, None], after_a, lab[None, :]),
                       *dropped_span_features(A, B, tag, verb, punct, paren)], axis=-1)
    if heads is not None:
        extra_token, extra_arc, extra_bigram = parse_features(heads, tag, lab)
        token = np.concatenate([token, extra_token], axis=-1)
        arc = np.concatenate([arc, extra_arc], axis=-1)
        bigram = np.concatenate([bigram, extra_bigram], axis=-1)
    lm_scores = lm.logprob(lower[:, None], lower[None, :]) if lm is not None else np.zeros((n + 2, n + 2))
    sibling = None
    if second_order:
        # modifier k of head h after sibling s (s = h: k is the first on its side), h, s, k = 0..n
        SH, SS, SK = (index[: n + 1].reshape(shape) for shape in ((-1, 1, 1), (1, -1, 1), (1, 1, -1)))
        first = (SS == SH).astype(np.int64)
        side = (SK > SH).astype(np.int64)
        gap = distance_bucket(SK - SS)
        sibling = np.stack([mix(60, tag[SH], tag[SS], tag[SK], side), mix(61, tag[SS], tag[SK], first, side),
                            mix(62, lab[SS], lab[SK], first, side), mix(63, ctag[SH], ctag[SS], ctag[SK], gap),
                            mix(64, punct[SS], punct[SK], first, side)], axis=-1)
    return SentenceFeatures(token, arc, bigram, lm_scores, sibling)
