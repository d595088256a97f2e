"""Arc labels (DEPREL): an averaged multiclass perceptron that labels each arc of a parsed tree.

The features of arc h -> m look at the words and tags of h and m, their neighbours' tags, the direction and
distance, and how many modifiers m has on each side.

>>> from compbench.parser.conllu import TreeSentence
>>> s = TreeSentence(["the", "cat", "sat"], ["_"] * 3, ["DT", "NN", "VBD"], np.array([-1, 2, 3, 0]),
...                  ["det", "nsubj", "root"])
>>> labeler = ArcLabeler.fit([s] * 3, epochs=2)
>>> labeler.label(s.words, s.xpos, s.heads)
['det', 'nsubj', 'root']
"""

from __future__ import annotations

import numpy as np

from ..learning.features import code, distance_bucket, mix
from ..learning.model_file import array_of, dense_weights
from ..learning.training import AveragedWeights, shuffled_passes
from .conllu import TreeSentence
from .features import word_codes

LABEL_DIM = 1 << 18


def arc_label_features(words: list[str], tags: list[str], heads: np.ndarray,
                       vocabulary: np.ndarray | None = None) -> np.ndarray:
    """(n, F): the feature indices of the arc into each word 1..n under ``heads``."""
    n = len(words)
    w = np.concatenate([[code("<root>")], word_codes(words, vocabulary)])
    padded = np.array([code(t) for t in ["<none>", "<root>", *tags, "</s>"]], dtype=np.int64)
    p = padded[1:n + 2]
    m = np.arange(1, n + 1)
    h = heads[1:]
    distance = 2 * distance_bucket(m - h) + (h < m)
    left = np.bincount(h[h > m], minlength=n + 1)[1:]  # modifiers of each word on its left
    right = np.bincount(h[h < m], minlength=n + 1)[1:]
    children = np.minimum(left, 3) * 4 + np.minimum(right, 3)
    parts = [mix(130, w[m]), mix(131, p[m]), mix(132, w[h]), mix(133, p[h]), mix(134, p[h], p[m]),
             mix(135, w[h], p[m]), mix(136, p[h], w[m]), mix(137, w[h], w[m]), mix(138, p[h], p[m], distance),
             mix(139, p[m], padded[m + 2]), mix(140, padded[m], p[m]), mix(141, p[m], children),
             mix(142, w[m], distance), mix(143, p[h], p[m], children), mix(144, np.zeros(n, dtype=np.int64))]
    return np.stack(parts, axis=-1) % LABEL_DIM


ROOT_LABEL = "root"  # UD's DEPREL of the arc from the root, and of no other arc


class ArcLabeler:
    """``weights[feature, label]`` over hashed arc features, with the training vocabulary's word back-off."""

    def __init__(self, labels: list[str], weights: np.ndarray, vocabulary: np.ndarray | None = None):
        self.labels = list(labels)
        self.weights = weights
        self.vocabulary = vocabulary

    def label(self, words: list[str], tags: list[str], heads: np.ndarray) -> list[str]:
        """The label of the arc into each word 1..n: ``root`` exactly on the arcs from the root (UD's rule), when
        the labeler knows that label."""
        if not words:
            return []
        scores = self.weights[arc_label_features(words, tags, heads, self.vocabulary)].sum(1)
        if ROOT_LABEL in self.labels:
            root = self.labels.index(ROOT_LABEL)
            from_root = np.asarray(heads)[1:] == 0
            scores[~from_root, root] = -np.inf  # a head other than 0: never root
            scores[from_root] = -np.inf
            scores[from_root, root] = 0.0  # head 0: root
        return [self.labels[i] for i in np.argmax(scores, axis=1)]

    @classmethod
    def fit(cls, sentences: list[TreeSentence], vocabulary: np.ndarray | None = None, epochs: int = 5,
            seed: int = 0) -> ArcLabeler:
        """Train on the gold trees and labels of ``sentences`` (their XPOS as given); weights averaged."""
        labels = sorted({d for s in sentences for d in s.deprels})
        index = {d: i for i, d in enumerate(labels)}
        data = [(arc_label_features(s.words, s.xpos, s.heads, vocabulary), np.array([index[d] for d in s.deprels]))
                for s in sentences if s.n]
        weights = AveragedWeights((LABEL_DIM, len(labels)))
        for i in shuffled_passes(len(data), epochs, seed):
            ids, gold = data[i]
            guess = np.argmax(weights.current[ids].sum(1), axis=1)
            wrong = np.flatnonzero(guess != gold)
            if len(wrong):
                rows = ids[wrong]
                for column, sign in ((gold[wrong], 1.0), (guess[wrong], -1.0)):
                    weights.add((rows, column[:, None]), sign)
            weights.next_step()
        return cls(labels, weights.average().astype(np.float32), vocabulary)

    def arrays(self) -> dict[str, np.ndarray]:
        return {"labeler_weights": self.weights, "labeler_labels": np.array(self.labels)}

    @classmethod
    def from_arrays(cls, arrays, vocabulary: np.ndarray | None) -> ArcLabeler:
        labels = array_of(arrays, "labeler_labels", "U").tolist()
        return cls(labels, dense_weights(arrays, "labeler_weights", (LABEL_DIM, len(labels))), vocabulary)
