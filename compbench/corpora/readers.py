"""Corpus readers: a directory laid out like the corpus's release, files found by name prefix.  :data:`CORPORA` holds
one :class:`CorpusFormat` per corpus (its reader and its split rule): a new corpus is one entry there.

* ``clarke-lapata-written`` / ``clarke-lapata-broadcast``: every ``*.jsonl`` file, lines
  ``{"id", "text", "summaries": [...]}`` (tokenized text; one compression, or three for broadcast).
  A document is the id without its last field.
* ``google``: ``eval_data*.csv`` (columns ``original``, ``compressed``) line-parallel with ``test_words*``,
  ``test_pos*`` and ``test_dep*`` (Google's tokens, PTB tags and dependency labels, one sentence a line).

Fixed splits (documented in the README): Clarke & Lapata by document in file order, document i goes to
test when i % 5 == 4, to dev when i % 10 == 2, else to train; Google by line order, the first 10% of the
lines are test, the next 10% dev, the rest train.

>>> import tempfile, json, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "x.jsonl").write_text(json.dumps({"id": "d.1.0", "text": "a b c", "summaries": ["a c"]}) + "\\n")
>>> corpus = read_corpus("clarke-lapata-written", d)
>>> corpus.sentences[0].golds[0].tolist(), corpus.sentences[0].document
([1, 3], 'd.1')
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Callable

import numpy as np

from ..files import text_lines
from .align import align_text, align_tokens


class CorpusError(ValueError):
    """The corpus directory is missing files or holds malformed ones (message names the file)."""


@dataclass
class Sentence:
    """One original sentence with its gold compressions as kept-token arrays (1-based; None = not aligned)."""

    id: str
    document: str
    tokens: list[str]
    golds: list[np.ndarray | None]
    pos: list[str] | None = None
    dep: list[str] | None = None
    heads: np.ndarray | None = None  # an input parse (positions 0..n, heads[0] = -1), from a parser

    @property
    def n(self) -> int:
        return len(self.tokens)

    @property
    def aligned(self) -> bool:
        """Every gold compression (at least one) aligns to the sentence's tokens."""
        return bool(self.golds) and all(g is not None for g in self.golds)


@dataclass
class Corpus:
    """The sentences of a corpus directory plus what the alignment could not handle."""

    name: str
    sentences: list[Sentence]
    report: dict = field(default_factory=dict)  # counts: sentences, unaligned, stray punctuation, ...


def _files(directory: Path, pattern: str) -> list[Path]:
    found = sorted(directory.glob(pattern))
    if not found:
        raise CorpusError(f"{directory}: no file matching {pattern!r}")
    return found


def _one_file(directory: Path, prefix: str) -> Path:
    found = _files(directory, prefix + "*")
    if len(found) > 1:
        raise CorpusError(f"{directory}: several files match {prefix}*: {', '.join(p.name for p in found)}")
    return found[0]


def read_clarke_lapata(directory: Path) -> tuple[list[Sentence], dict]:
    """Every ``*.jsonl`` file's {id, text, summaries} records, a document being an id without its last field."""
    sentences, unaligned = [], []
    for path in _files(directory, "*.jsonl"):
        for number, line in enumerate(_lines(path), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                sid, text, summaries = record["id"], record["text"], record["summaries"]
            except (ValueError, KeyError, TypeError, RecursionError) as exc:  # RecursionError: [[[[... nested deep
                raise CorpusError(f"{path}: line {number}: not an {{id, text, summaries}} record "
                                  f"({type(exc).__name__}: {exc})"[:300]) from None
            if not (isinstance(sid, str) and isinstance(text, str) and isinstance(summaries, list)
                    and all(isinstance(summary, str) for summary in summaries)):
                raise CorpusError(f"{path}: line {number}: expected a string id and text and a list of string "
                                  "summaries")
            tokens = text.split()
            golds = [align_tokens(tokens, summary.split()) if tokens else None for summary in summaries]
            sentence = Sentence(sid, sid.rsplit(".", 1)[0], tokens, golds)
            if not sentence.aligned:
                unaligned.append(sid)
            sentences.append(sentence)
    report = {"sentences": len(sentences), "documents": len({s.document for s in sentences}),
              "unaligned": len(unaligned), "unaligned_ids": unaligned}
    return sentences, report


def _text(path: Path) -> str:
    """A corpus file's text, without a byte-order mark; one that cannot be read (not UTF-8, a directory) is a
    CorpusError naming it."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise CorpusError(f"{path}: cannot read it as UTF-8 text ({exc})") from None


def _lines(path: Path) -> list[str]:
    return text_lines(_text(path))


def read_google(directory: Path) -> tuple[list[Sentence], dict]:
    """``eval_data*.csv`` line-parallel with Google's tokens, tags and labels (``test_words*``, ...)."""
    csv_path = _one_file(directory, "eval_data")
    rows = list(csv.DictReader(io.StringIO(_text(csv_path), newline="")))
    if rows and "compressed" not in rows[0]:
        raise CorpusError(f"{csv_path}: no 'compressed' column")
    words, pos, dep = (_lines(_one_file(directory, p)) for p in ("test_words", "test_pos", "test_dep"))
    if not len(rows) == len(words) == len(pos) == len(dep):
        raise CorpusError(f"{directory}: files are not line-parallel ({len(rows)} CSV rows, {len(words)} words, "
                          f"{len(pos)} pos, {len(dep)} dep lines)")
    sentences, unaligned, with_stray = [], [], 0
    for i, (row, w, p, d) in enumerate(zip(rows, words, pos, dep)):
        tokens, tags, labels = w.split(), p.split(), d.split()
        if not len(tokens) == len(tags) == len(labels):
            raise CorpusError(f"{directory}: line {i + 1}: {len(tokens)} tokens, {len(tags)} tags, "
                              f"{len(labels)} labels")
        if not isinstance(row.get("compressed"), str):  # a row of fewer fields than the header
            raise CorpusError(f"{csv_path}: row {i + 1}: no 'compressed' field")
        aligned = align_text(tokens, row["compressed"]) if tokens else None
        gold = None if aligned is None else aligned[0]
        if aligned is None:
            unaligned.append(i + 1)
        elif aligned[1]:
            with_stray += 1
        sentences.append(Sentence(f"google.{i + 1}", f"line{i + 1}", tokens, [gold], tags, labels))
    report = {"sentences": len(sentences), "unaligned": len(unaligned), "unaligned_lines": unaligned,
              "aligned_with_stray_punctuation": with_stray}
    return sentences, report


Split = dict[str, list[Sentence]]


def split_by_document(sentences: list[Sentence]) -> Split:
    """Documents in file order: document i goes to test when i % 5 == 4, to dev when i % 10 == 2, else to train."""
    parts: Split = {"train": [], "dev": [], "test": []}
    order: dict[str, int] = {}
    for sentence in sentences:
        order.setdefault(sentence.document, len(order))
    for sentence in sentences:
        i = order[sentence.document]
        parts["test" if i % 5 == 4 else "dev" if i % 10 == 2 else "train"].append(sentence)
    return parts


def split_by_line_order(sentences: list[Sentence]) -> Split:
    """The first 10% of the lines are test, the next 10% dev, the rest train."""
    tenth = len(sentences) // 10
    return {"train": sentences[2 * tenth:], "dev": sentences[tenth:2 * tenth], "test": sentences[:tenth]}


@dataclass(frozen=True)
class CorpusFormat:
    """One corpus: how its directory is read (sentences and a report of counts), how it splits, and whether its
    sentences come with gold POS tags."""

    name: str
    read: Callable[[Path], tuple[list[Sentence], dict]]
    split: Callable[[list[Sentence]], Split]
    gold_pos: bool = False


CORPORA: dict[str, CorpusFormat] = {corpus.name: corpus for corpus in (
    CorpusFormat("clarke-lapata-written", read_clarke_lapata, split_by_document),
    CorpusFormat("clarke-lapata-broadcast", read_clarke_lapata, split_by_document),
    CorpusFormat("google", read_google, split_by_line_order, gold_pos=True),
)}


def read_corpus(name: str, directory: str | PathLike) -> Corpus:
    """Read corpus ``name`` (one of :data:`CORPORA`) from ``directory``."""
    directory = Path(directory)
    if not directory.is_dir():
        raise CorpusError(f"{directory}: not a directory")
    if name not in CORPORA:
        raise CorpusError(f"unknown corpus {name!r} (known: {', '.join(CORPORA)})")
    sentences, report = CORPORA[name].read(directory)
    return Corpus(name, sentences, report)


def split_corpus(corpus: Corpus) -> Split:
    """The fixed train/dev/test split of the corpus's :class:`CorpusFormat`."""
    return CORPORA[corpus.name].split(corpus.sentences)
