"""The parser: a POS tagger, hashed arc-feature weights, and decoding on the project's chart.

Eisner's algorithm is the compressive chart with no deletion: :func:`parse_problem` builds a :class:`Problem`
whose arc scores are the parser's, token scores 0, bigram scores 0 for adjacent words (i, i+1) and -inf
elsewhere (no word can be skipped), free length and one root word; ``hook-dp`` (from the registry) maximizes it.

>>> model = ParserModel()
>>> model.parse(["a", "b", "c"], ["DT", "NN", "VBD"]).tolist()      # all-zero weights: some projective tree
[-1, 0, 1, 2]
"""

from __future__ import annotations

import json
from os import PathLike
from typing import Any, Iterable, Iterator

import numpy as np

from ..learning.model_file import array_of, check_members, read_info, save_arrays, sparse_weights
from ..learning.tagger import OutdatedModelError, PosTagger, StructuredTagger, load_tagger
from ..problem import Problem, Status
from ..registry import get_solver
from ..solver import Solver, SolverError
from .features import FEATURES, SIZE, ArcFeatures, arc_features
from .labels import ArcLabeler

DECODER = "hook-dp"
PAIR = "|"  # a model that reads universal tags has a tagger of "XPOS|UPOS" pairs, cut at the last "|" (an XPOS
# may hold one, e.g. "N|sg"; a UPOS never does)
UNIVERSAL_TAGS = frozenset("ADJ ADP ADV AUX CCONJ DET INTJ NOUN NUM PART PRON PROPN PUNCT SCONJ SYM VERB X".split())


def are_pairs(tags: list[str]) -> bool:
    """Whether a tagger's tags are all "XPOS|UPOS" pairs: each cut at its last "|" ends in a UD UPOS tag (an XPOS
    holding "|" itself, "NN|UTR|SIN", is no pair)."""
    return all(PAIR in t and t.rsplit(PAIR, 1)[1] in UNIVERSAL_TAGS for t in tags)


def paired_tags(tags: list[str], universal_tags: list[str]) -> list[str]:
    """The "XPOS|UPOS" tags a tagger of both learns; :meth:`ParserModel.tag` splits its output back."""
    return [f"{x}{PAIR}{u}" for x, u in zip(tags, universal_tags)]


def parse_problem(arc_scores: np.ndarray, sibling_scores: np.ndarray | None = None, id: str = "") -> Problem:
    """The no-deletion problem of an (n+1) x (n+1) arc-score matrix (and in second order sibling scores): its
    solutions are the projective trees with one root word.

    >>> p = parse_problem(np.zeros((3, 3)))
    >>> float(p.bigram_scores[0, 1]), float(p.bigram_scores[0, 2]), p.length, p.single_root
    (0.0, -inf, None, True)
    """
    n = len(arc_scores) - 1
    bigram = np.full((n + 2, n + 2), -np.inf)
    bigram[np.arange(n + 1), np.arange(1, n + 2)] = 0.0
    return Problem(np.zeros(n), arc_scores, bigram, length=None, single_root=True, id=id,
                   sibling_scores=sibling_scores)


def decode(solver: Solver, arc_scores: np.ndarray, sibling_scores: np.ndarray | None = None) -> np.ndarray:
    """The best projective tree (heads, n+1 entries) under the scores by ``solver`` on :func:`parse_problem`."""
    return decode_many(solver, [(arc_scores, sibling_scores)])[0]


def decode_many(solver: Solver, scores: list[tuple[np.ndarray, np.ndarray | None]]) -> list[np.ndarray]:
    """:func:`decode` of every (arc, sibling) score pair, in one :meth:`~compbench.Solver.solve_many` batch."""
    solutions = solver.solve_many([parse_problem(arc, sibling) for arc, sibling in scores], jobs=1)
    for solution in solutions:
        if solution.status != Status.OPTIMAL:
            raise SolverError(f"{solver.name} gave {solution.status.value} on a parse: {solution.message}")
    return [solution.heads for solution in solutions]


CHUNK = 256  # sentences parsed per batch: their scores are held at once (second order: 1 MB at 50 words)
Tagged = tuple[list[str], list[str], list[str] | None]  # words, tags, universal tags


class ParserModel:
    """Weights over hashed arc features (``weights[SIZE]`` is the padding's 0), the vocabulary of non-rare word
    codes, a POS tagger (None: the input's own tags are used) and an arc labeler (None: no labels);
    ``info["second_order"]`` adds sibling features, ``info["features"]`` is the feature set's version (a model
    file reads with the one it was trained with)."""

    def __init__(self, weights: np.ndarray | None = None, vocabulary: np.ndarray | None = None,
                 tagger: PosTagger | StructuredTagger | None = None, info: dict[str, Any] | None = None,
                 decoder: str = DECODER, labeler: ArcLabeler | None = None):
        self.weights = np.zeros(SIZE + 1) if weights is None else np.asarray(weights, dtype=np.float64)
        self.vocabulary = vocabulary
        self.tagger = tagger
        self.labeler = labeler
        self.info = dict(info or {})
        self.info.setdefault("kind", "parser")
        self.info.setdefault("features", FEATURES)
        self.solver = get_solver(decoder)

    def tag(self, words: list[str], tags: list[str] | None = None, universal_tags: list[str] | None = None
            ) -> tuple[list[str], list[str] | None]:
        """The PTB tags of ``words`` and, for a model that reads them, their universal tags (else None): the
        tagger's, or the given ones when the model has no tagger."""
        if self.tagger is not None:
            predicted = self.tagger.tag(words)
            if not self.universal:
                return predicted, None
            pairs = [t.rsplit(PAIR, 1) for t in predicted]
            return [p[0] for p in pairs], [p[1] for p in pairs]
        if tags is None or (self.universal and universal_tags is None):
            raise ValueError("the model has no tagger and the sentence has no tags")
        return list(tags), list(universal_tags) if self.universal else None

    @property
    def second_order(self) -> bool:
        return bool(self.info.get("second_order", False))

    @property
    def universal(self) -> bool:
        """Whether the features read universal tags (UPOS) as the coarse tags; the tagger then tags pairs."""
        return bool(self.info.get("universal_tags", False))

    def features(self, words: list[str], tags: list[str], universal_tags: list[str] | None = None) -> ArcFeatures:
        if self.universal and universal_tags is None:
            raise ValueError("the model reads universal tags (UPOS) and none were given")
        return arc_features(words, tags, self.vocabulary, self.second_order,
                            universal_tags if self.universal else None, self.info["features"])

    def parse(self, words: list[str], tags: list[str], weights: np.ndarray | None = None,
              universal_tags: list[str] | None = None) -> np.ndarray:
        """The heads (n+1 entries, heads[0] = -1) of the best projective tree of a tagged sentence."""
        return self.parse_many([(words, tags, universal_tags)], weights)[0]

    def parse_many(self, sentences: Iterable[Tagged], weights: np.ndarray | None = None) -> list[np.ndarray]:
        """:meth:`parse` of every (words, tags, universal tags), decoded :data:`CHUNK` sentences per
        :func:`decode_many` batch.

        >>> [h.tolist() for h in ParserModel().parse_many([(["a"], ["DT"], None), (["a", "b"], ["DT", "NN"], None)])]
        [[-1, 0], [-1, 0, 1]]
        """
        w = self.weights if weights is None else weights
        heads: list[np.ndarray] = []
        chunk: list[tuple[np.ndarray, np.ndarray | None]] = []
        for words, tags, universal_tags in sentences:
            chunk.append(self.features(words, tags, universal_tags).scores(w))
            if len(chunk) == CHUNK:
                heads += decode_many(self.solver, chunk)
                chunk = []
        return heads + (decode_many(self.solver, chunk) if chunk else [])

    def tag_and_parse(self, words: list[str], tags: list[str] | None = None,
                      universal_tags: list[str] | None = None) -> tuple[list[str], list[str] | None, np.ndarray]:
        """:meth:`tag`, then :meth:`parse` over those tags: (PTB tags, universal tags or None, heads)."""
        return self.tag_and_parse_many([(words, tags, universal_tags)])[0]

    def tag_and_parse_many(self, sentences: Iterable[tuple[list[str], list[str] | None, list[str] | None]]
                           ) -> list[tuple[list[str], list[str] | None, np.ndarray]]:
        """:meth:`tag_and_parse` of every (words, tags or None, universal tags or None), the parses in batches
        (``sentences`` is read once, each sentence tagged as the parses reach it)."""
        tagged: list[Tagged] = []

        def tag_each() -> Iterator[Tagged]:
            for words, tags, universal_tags in sentences:
                tagged.append((words, *self.tag(words, tags, universal_tags)))
                yield tagged[-1]

        heads = self.parse_many(tag_each())
        return [(tags, universal_tags, h) for (_, tags, universal_tags), h in zip(tagged, heads)]

    def labels(self, words: list[str], tags: list[str], heads: np.ndarray) -> list[str]:
        """The labeler's DEPREL of each word's arc, or ``_`` when the model has no labeler."""
        return self.labeler.label(words, tags, heads) if self.labeler is not None else ["_"] * len(words)

    def save(self, path: str | PathLike) -> None:
        """One ``.npz``: the non-zero weights, the vocabulary codes, the tagger and ``info`` (no raw text)."""
        nonzero = np.flatnonzero(self.weights)
        arrays = {"weight_index": nonzero, "weight_value": self.weights[nonzero].astype(np.float32),
                  "info": np.array(json.dumps(self.info))}
        if self.vocabulary is not None:
            arrays["vocabulary"] = self.vocabulary
        if self.tagger is not None:
            arrays.update(self.tagger.arrays())
        if self.labeler is not None:
            arrays.update(self.labeler.arrays())
        save_arrays(path, arrays)

    @classmethod
    def load(cls, path: str | PathLike) -> ParserModel:
        with np.load(path) as data:
            check_members(data)
            info = read_info(data) if "info" in data else {}
            if info.get("kind") != "parser":
                raise ValueError("not a parser model")
            info.setdefault("features", 1)  # a model from before the feature set had a number
            if info["features"] not in range(1, FEATURES + 1):
                raise OutdatedModelError(f"a parser model of feature set {info['features']!r}, which this version "
                                         f"of compbench does not read (it reads 1 to {FEATURES}; a newer version "
                                         f"wrote it?)")
            weights = sparse_weights(data, SIZE)
            tagger = load_tagger(data) if "tagger_weights" in data else None
            universal = info.get("universal_tags", False)
            if not isinstance(universal, bool):
                raise ValueError(f"info.universal_tags: expected true or false, got {universal!r}")
            if tagger is not None and universal and not all(PAIR in t for t in tagger.tags):
                raise ValueError("info.universal_tags: true, but the tagger's tags are not XPOS|UPOS pairs")
            if tagger is not None and not universal and are_pairs(tagger.tags):  # pairs printed as XPOS
                raise ValueError("info.universal_tags: false, but the tagger's tags are XPOS|UPOS pairs")
            vocabulary = array_of(data, "vocabulary", "iu", increasing=True) if "vocabulary" in data else None
            labeler = ArcLabeler.from_arrays(data, vocabulary) if "labeler_weights" in data else None
            return cls(weights, vocabulary, tagger, info, labeler=labeler)
