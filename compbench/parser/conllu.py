"""CoNLL-U in and out: the basic tree of each sentence (multiword-token lines kept for writing, empty nodes skipped).

A sentence's ``heads`` has n+1 entries as in :class:`compbench.Solution`: ``heads[k]`` is the head of word k
(0 = root), ``heads[0]`` is -1; ``None`` when the file gives no heads (``_``).  Bad input raises
:class:`~compbench.corpora.CorpusError` in one line naming the file and the line.

>>> text = ("# sent_id = s1\\n1-2\\tdon't\\t_\\t_\\t_\\t_\\t_\\t_\\t_\\t_\\n"
...         "1\\tdo\\tdo\\tAUX\\tVBP\\t_\\t0\\troot\\t_\\t_\\n"
...         "2\\tn't\\tnot\\tPART\\tRB\\t_\\t1\\tadvmod\\t_\\t_\\n\\n")
>>> [s] = parse_conllu(text, "x.conllu")
>>> s.words, s.xpos, s.heads.tolist(), s.id
(['do', "n't"], ['VBP', 'RB'], [-1, 0, 1], 's1')
>>> format_conllu([s]) == text
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

import numpy as np

from ..corpora import CorpusError
from ..files import text_lines

COLUMNS = 10


@dataclass
class TreeSentence:
    """One sentence of a treebank: words 1..n, their tags, heads (n+1 entries, or None) and labels."""

    words: list[str]
    upos: list[str]
    xpos: list[str]
    heads: np.ndarray | None
    deprels: list[str]
    id: str = ""
    comments: list[str] = field(default_factory=list)  # the "# ..." lines, as read
    ranges: dict[int, str] = field(default_factory=dict)  # multiword-token lines by their first word ("1-2\tdon't...")
    lemmas: list[str] | None = None
    feats: list[str] | None = None
    misc: list[str] | None = None

    @property
    def n(self) -> int:
        return len(self.words)


def plain_sentence(words: list[str]) -> TreeSentence:
    """A sentence with words only (tags and heads unknown)."""
    return TreeSentence(list(words), ["_"] * len(words), ["_"] * len(words), None, ["_"] * len(words))


def _tree_error(heads: np.ndarray) -> str | None:
    """Why ``heads`` (entries 1..n in 0..n) is not a tree rooted at 0, or None."""
    n = len(heads) - 1
    for k in range(1, n + 1):
        seen, h = 0, k
        while h != 0:
            h = int(heads[h])
            seen += 1
            if h == k or seen > n:
                return f"word {k} lies on a cycle of heads"
    return None


def _sentence(rows: list[tuple[int, list[str]]], comments: list[str], ranges: dict[int, str], where: str
              ) -> TreeSentence:
    words, upos, xpos, heads, deprels, lemmas, feats, misc = ([] for _ in range(8))
    for number, cols in rows:
        words.append(cols[1])
        lemmas.append(cols[2])
        upos.append(cols[3])
        xpos.append(cols[4])
        feats.append(cols[5])
        heads.append(cols[6])
        deprels.append(cols[7])
        misc.append(cols[9])
    last = rows[-1][0]
    if all(h == "_" for h in heads):
        head_array = None
    elif any(h == "_" for h in heads):
        raise CorpusError(f"{where}: line {last}: some words of the sentence have a HEAD and some have none")
    else:
        for (number, _), head in zip(rows, heads):
            if not 0 <= int(head) <= len(rows):
                raise CorpusError(f"{where}: line {number}: HEAD {head} is outside the sentence's words 0..{len(rows)}")
        head_array = np.array([-1] + [int(h) for h in heads], dtype=np.int64)
        reason = _tree_error(head_array)
        if reason is not None:
            raise CorpusError(f"{where}: line {last}: the heads are not a tree ({reason})")
        roots = int(np.sum(head_array[1:] == 0))
        if roots != 1:
            raise CorpusError(f"{where}: line {last}: {roots} words have HEAD 0, expected 1")
    sid = next((c.split("=", 1)[1].strip() for c in comments if c.startswith("# sent_id")), "")
    return TreeSentence(words, upos, xpos, head_array, deprels, sid, comments, ranges, lemmas, feats, misc)


def parse_conllu(text: str, where: str = "<text>") -> list[TreeSentence]:
    """The sentences of a CoNLL-U text; ``where`` names the file in error messages."""
    sentences: list[TreeSentence] = []
    rows: list[tuple[int, list[str]]] = []
    comments: list[str] = []
    ranges: dict[int, str] = {}
    last_range = (0, 0, "")  # the end of the latest multiword token, its line number and ID
    for number, line in enumerate(text_lines(text) + [""], start=1):
        if not line.strip():
            if last_range[0] > len(rows):  # a token over words the sentence does not have
                raise CorpusError(f"{where}: line {last_range[1]}: bad multiword-token range {last_range[2]!r} (the "
                                  f"sentence has {len(rows)} words)")
            if rows:
                sentences.append(_sentence(rows, comments, ranges, where))
            elif comments or ranges:
                raise CorpusError(f"{where}: line {number}: a sentence with no words")
            rows, comments, ranges, last_range = [], [], {}, (0, 0, "")
            continue
        if line.startswith("#"):
            comments.append(line)
            continue
        cols = line.split("\t")
        if len(cols) != COLUMNS:
            raise CorpusError(f"{where}: line {number}: expected {COLUMNS} tab-separated columns, got {len(cols)}")
        token_id = cols[0]
        if "." in token_id:  # an empty node: not a word of the basic tree
            continue
        if "-" in token_id:
            first, _, end = token_id.partition("-")
            if not (_number(first) and _number(end) and int(first) == len(rows) + 1 and int(end) > int(first)
                    and int(first) > last_range[0]):  # after the words before it and the token before it
                raise CorpusError(f"{where}: line {number}: bad multiword-token range {token_id!r}")
            ranges[int(first)] = line
            last_range = (int(end), number, token_id)
            continue
        if not _number(token_id) or int(token_id) != len(rows) + 1:
            raise CorpusError(f"{where}: line {number}: expected word ID {len(rows) + 1}, got {token_id!r}")
        head = cols[6]
        if head != "_" and not _number(head):
            raise CorpusError(f"{where}: line {number}: HEAD must be a word number or _, got {head!r}")
        if cols[1] == "" or any(ch.isspace() and ch != " " for ch in cols[1]):
            raise CorpusError(f"{where}: line {number}: bad FORM {cols[1]!r}")
        rows.append((number, cols))
    for sentence in sentences:
        if sentence.heads is not None and int(sentence.heads.max()) > sentence.n:
            raise CorpusError(f"{where}: sentence {sentence.id or '(no id)'}: a HEAD points past its last word")
    return sentences


def _number(text: str) -> bool:
    """Is ``text`` a CoNLL-U number: ASCII digits (``str.isdigit`` also takes ``²`` and ``٣``, which ``int``
    refuses or reads as 3)?"""
    return text.isascii() and text.isdigit()


def read_conllu(path: str | PathLike) -> list[TreeSentence]:
    """The sentences of a CoNLL-U file."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")  # a byte-order mark is no part of the first line
    except (OSError, UnicodeDecodeError) as exc:
        raise CorpusError(f"{path}: cannot be read ({exc})") from None
    return parse_conllu(text, str(path))


def read_tokens(path: str | PathLike) -> list[TreeSentence]:
    """One tokenized sentence per line (words separated by spaces); empty lines are skipped."""
    try:
        lines = text_lines(Path(path).read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError) as exc:
        raise CorpusError(f"{path}: cannot be read ({exc})") from None
    return [plain_sentence(line.split()) for line in lines if line.strip()]


def format_conllu(sentences: list[TreeSentence]) -> str:
    """CoNLL-U text: comments, multiword-token lines and one line per word (columns not known are ``_``)."""
    out = []
    for s in sentences:
        out.extend(s.comments)
        for k in range(1, s.n + 1):
            if k in s.ranges:
                out.append(s.ranges[k])
            head = "_" if s.heads is None else str(int(s.heads[k]))
            column = lambda values: "_" if values is None else values[k - 1]  # noqa: E731
            out.append("\t".join([str(k), s.words[k - 1], column(s.lemmas), s.upos[k - 1], s.xpos[k - 1],
                                  column(s.feats), head, s.deprels[k - 1], "_", column(s.misc)]))
        out.append("")
    return "\n".join(out) + ("\n" if out else "")
