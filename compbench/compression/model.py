"""The scoring model: hashed feature weights (plus one weight for the bigram LM) turned into problem scores.

>>> from compbench.corpora import Sentence
>>> s = Sentence("s1", "d", "a b c".split(), [np.array([1, 3])])
>>> model = CompressionModel(lm=BigramLM.fit([["a", "c"]]))
>>> p = model.problem(s, length=2)
>>> p.n, p.length.min, p.extra["gold"]
(3, 2, [[1, 3]])
"""

from __future__ import annotations

import io
import json
import tempfile
from os import PathLike
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from ..corpora import Sentence
from ..evaluate import sibling_pairs
from ..learning.features import DIM
from ..learning.model_file import check_members, read_info, save_arrays, sparse_weights
from ..learning.tagger import OutdatedModelError, PosTagger, load_tagger
from ..parser import ParserModel
from ..problem import Length, Problem
from .features import BigramLM, SentenceFeatures, sentence_features

PARTS = ("joint", "bigram-only", "tree-only")


def check_parts(info: dict[str, Any], tagger: Any, parser: Any) -> None:
    """A ValueError when a model file's ``info`` and its parts disagree: a parser or tagger it was trained with and
    does not hold (it scored without them, silently, F1 0.875 -> 0.815), or flags that are not flags."""
    if "second_order" in info and not isinstance(info["second_order"], bool):
        raise ValueError(f"info.second_order: expected true or false, got {info['second_order']!r}")
    if "kind" in info and not isinstance(info["kind"], str):
        raise ValueError(f"info.kind: expected a name, got {info['kind']!r}")
    if info.get("parser") and parser is None:
        raise ValueError(f"damaged: info.parser names {info['parser']!r}, but the file holds no parser")
    if info.get("pos") == "tagger" and tagger is None:
        raise ValueError("damaged: info.pos says its tags came from its tagger, but the file holds no tagger")


class CompressionModel:
    """Weights over hashed features; ``weights[DIM]`` scales the bigram LM log-probability.

    ``tagger`` (optional) tags sentences that come without POS (Clarke & Lapata).  ``second_order`` adds
    sibling features, so the problems carry sibling scores (kept in ``info``).
    """

    def __init__(self, weights: np.ndarray | None = None, lm: BigramLM | None = None,
                 tagger: PosTagger | None = None, info: dict[str, Any] | None = None, second_order: bool = False,
                 parser: ParserModel | None = None):
        self.weights = np.zeros(DIM + 1) if weights is None else np.asarray(weights, dtype=np.float64)
        self.lm = lm if lm is not None else BigramLM.fit([])
        self.tagger = tagger
        self.parser = parser
        self.info = dict(info or {})
        self.info.setdefault("second_order", bool(second_order))

    @property
    def second_order(self) -> bool:
        return bool(self.info.get("second_order", False))

    def pos(self, sentence: Sentence) -> list[str] | None:
        """The sentence's own tags, else the model's tagger's, else its parser's tagger's (cached on the sentence),
        else None."""
        if sentence.pos is None:
            if self.tagger is not None:
                sentence.pos = self.tagger.tag(sentence.tokens)
            elif self.parser is not None and self.parser.tagger is not None:
                sentence.pos = self.parser.tag(sentence.tokens)[0]
        return sentence.pos

    def parse(self, words: list[str], tags: list[str] | None = None) -> np.ndarray:
        """The model's parser's heads of ``words`` (positions 0..n), with the parser's own tags when it has a
        tagger, else ``tags``."""
        return self.parser.tag_and_parse(words, tags)[2]

    def parse_all(self, sentences: Iterable[Sentence], progress: Callable | None = None) -> None:
        """With a parser: parse every sentence that has no parse yet (``sentence.heads``; the tags and labels the
        parse brings when the sentence has none), the parses in batches (:meth:`ParserModel.tag_and_parse_many`);
        ``progress`` (e.g. :func:`compbench.progress.bar`) wraps the sentences as they are parsed."""
        if self.parser is None:
            return
        todo = list({id(sentence): sentence for sentence in sentences if sentence.heads is None}.values())
        # the parser's tagger (if any) tags the sentence for the parse anyway: with no tagger of the model's own
        # and no tags of the sentence's, those tags are :meth:`pos`'s, kept rather than tagged twice
        given = [self.pos(sentence) if self.tagger is not None else sentence.pos for sentence in todo]
        shown = progress(todo, "parsing", unit="sentence") if progress and todo else todo
        parses = self.parser.tag_and_parse_many((s.tokens, tags, None) for s, tags in zip(shown, given))
        for sentence, (tags, _, heads) in zip(todo, parses):
            sentence.heads = heads
            if sentence.pos is None:
                sentence.pos = tags
            if sentence.dep is None and self.parser.labeler is not None:  # Clarke & Lapata come without labels
                sentence.dep = self.parser.labels(sentence.tokens, tags, heads)

    def features(self, sentence: Sentence, lm: BigramLM | None = None) -> SentenceFeatures:
        """Feature indices of a sentence; ``lm`` overrides the model's language model (jackknifed training).  With a
        parser the sentence is parsed once (``sentence.heads``) and the parse features are added."""
        self.parse_all([sentence])
        return sentence_features(sentence.tokens, self.pos(sentence), sentence.dep, lm or self.lm,
                                 second_order=self.second_order, heads=sentence.heads)

    def scores(self, features: SentenceFeatures, weights: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        """(token (n,), arc (n+1, n+1), bigram (n+2, n+2), sibling (n+1, n+1, n+1) or None) scores under
        ``weights`` (default: the model's)."""
        w = self.weights if weights is None else weights
        token = w[features.token].sum(-1)
        arc = w[features.arc].sum(-1)
        bigram = w[features.bigram].sum(-1) + w[DIM] * features.lm
        sibling = w[features.sibling].sum(-1) if features.sibling is not None else None
        return token, arc, bigram, sibling

    def problem(self, sentence: Sentence, length: int | Length | None, features: SentenceFeatures | None = None,
                weights: np.ndarray | None = None, part: str = "joint") -> Problem:
        """The compression problem of a sentence; ``part`` drops arcs (bigram-only) or bigrams (tree-only)."""
        token, arc, bigram, sibling = self.scores(features or self.features(sentence), weights)
        if part == "bigram-only":
            arc = np.zeros_like(arc)
            sibling = None
        elif part == "tree-only":
            bigram = np.zeros_like(bigram)
        elif part != "joint":
            raise ValueError(f"unknown part {part!r} (known: {', '.join(PARTS)})")
        gold = [[int(k) for k in g] for g in sentence.golds if g is not None]
        return Problem(token, arc, bigram, length=length, tokens=tuple(sentence.tokens), id=sentence.id,
                       extra={"gold": gold}, sibling_scores=sibling)

    def phi(self, features: SentenceFeatures, heads: np.ndarray) -> tuple[np.ndarray, float]:
        """The feature indices (with repeats) and the LM total of the structure ``heads``."""
        n = len(heads) - 1
        kept = np.flatnonzero(heads[1:] >= 0) + 1
        sequence = np.concatenate([[0], kept, [n + 1]])
        parts = [features.token[kept - 1].ravel(), features.arc[heads[kept], kept].ravel(),
                 features.bigram[sequence[:-1], sequence[1:]].ravel()]
        if features.sibling is not None:
            triples = np.array(sibling_pairs(heads), dtype=np.int64).reshape(-1, 3)
            parts.append(features.sibling[triples[:, 0], triples[:, 1], triples[:, 2]].ravel())
        return np.concatenate(parts), float(features.lm[sequence[:-1], sequence[1:]].sum())

    def save(self, path: str | PathLike) -> None:
        """One ``.npz`` file: non-zero weights, the hashed LM counts, the tagger and ``info`` (no raw text)."""
        nonzero = np.flatnonzero(self.weights)
        arrays = {"weight_index": nonzero, "weight_value": self.weights[nonzero], **self.lm.arrays()}
        if self.tagger is not None:
            arrays.update(self.tagger.arrays())
        if self.parser is not None:  # the parser's own file, embedded: the model needs nothing else to run
            with tempfile.TemporaryDirectory() as scratch:
                self.parser.save(Path(scratch) / "parser.npz")
                arrays["parser_npz"] = np.frombuffer((Path(scratch) / "parser.npz").read_bytes(), np.uint8)
        arrays["info"] = np.array(json.dumps(self.info))
        save_arrays(path, arrays)

    @classmethod
    def load(cls, path: str | PathLike) -> CompressionModel:
        with np.load(path) as data:
            check_members(data)
            info = read_info(data)
            weights = sparse_weights(data, DIM)
            tagger = load_tagger(data) if "tagger_weights" in data else None
            try:
                parser = ParserModel.load(io.BytesIO(data["parser_npz"].tobytes())) if "parser_npz" in data else None
            except OutdatedModelError as exc:
                raise OutdatedModelError(f"the parser it embeds: {exc}") from None
            except ValueError as exc:  # its info, tags or vocabulary: named as the embedded parser's, not the model's
                raise ValueError(f"the parser it embeds: {exc}") from None
            check_parts(info, tagger, parser)
            return cls(weights, BigramLM.from_arrays(data), tagger, info, parser=parser)
