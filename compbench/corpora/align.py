"""Gold compressions as kept-token sets: in-order subsequence alignment.

Clarke & Lapata compressions are token subsequences of their originals (greedy earliest matching).  Google
compressions are raw text: lower-cased, space-free character matching at token boundaries, with stray
compression punctuation allowed and counted; anything else (rewrites) does not align.
"""

from __future__ import annotations

import numpy as np


def align_tokens(tokens: list[str], compressed: list[str]) -> np.ndarray | None:
    """The kept tokens (1-based, increasing) that spell ``compressed``, earliest match first; None if none.

    >>> align_tokens("the the cat sat".split(), "the cat".split()).tolist()
    [1, 3]
    """
    kept, i = [], 0
    for word in compressed:
        while i < len(tokens) and tokens[i] != word:
            i += 1
        if i == len(tokens):
            return None
        kept.append(i + 1)
        i += 1
    return np.array(kept, dtype=np.int64)


def _boundaries(text: str) -> tuple[str, set[int]]:
    """``text`` lower-cased without spaces, and the positions in it where a token may start or end."""
    chars, cuts, space_before = [], set(), True
    for ch in text.lower():
        if ch.isspace():
            space_before = True
            continue
        p = len(chars)
        if space_before or p == 0 or chars[-1].isalnum() != ch.isalnum():
            cuts.add(p)
        chars.append(ch)
        space_before = False
    cuts.add(len(chars))
    return "".join(chars), cuts


def align_text(tokens: list[str], compressed: str) -> tuple[np.ndarray, int] | None:
    """Align compression text to tokens: (kept tokens 1-based, number of stray punctuation characters) or None.

    Case is ignored (the compression capitalizes its first word); a token matches only at a token boundary of
    the compression; compression punctuation that matches no kept token is skipped and counted.  Among the
    alignments with the fewest stray characters the earliest kept tokens win.

    >>> kept, stray = align_text("He said that it was fine .".split(), "It was fine.")
    >>> kept.tolist(), stray
    ([4, 5, 6, 7], 0)
    """
    text, cuts = _boundaries(compressed)
    lowered = [t.lower() for t in tokens]
    n, length = len(tokens), len(text)

    # stray[i, p]: fewest stray characters to spell text[p:] with tokens i.. (-1: impossible);
    # move[i, p]: 0 keep token i, 1 skip a punctuation character, 2 delete token i.
    impossible = np.iinfo(np.int64).max
    stray = np.full((n + 1, length + 1), impossible, dtype=np.int64)
    move = np.zeros((n + 1, length + 1), dtype=np.int8)
    stray[:, length] = 0
    # Only token boundaries and punctuation can start the rest of an alignment; other positions stay impossible.
    starts = sorted((set(cuts) | {p for p, ch in enumerate(text) if not ch.isalnum()}) - {length}, reverse=True)
    for i in range(n, -1, -1):
        for p in starts:
            word = lowered[i] if i < n else ""
            options = []
            if word and p in cuts and text.startswith(word, p) and p + len(word) in cuts:
                options.append((stray[i + 1, p + len(word)], 0))
            if not text[p].isalnum() and stray[i, p + 1] != impossible:
                options.append((stray[i, p + 1] + 1, 1))
            if i < n:
                options.append((stray[i + 1, p], 2))
            cost, choice = min(options, key=lambda o: o[0]) if options else (impossible, 0)
            stray[i, p], move[i, p] = cost, choice
    if stray[0, 0] == impossible:
        return None
    kept, i, p = [], 0, 0
    while p < length:
        choice = move[i, p]
        if choice == 0:
            kept.append(i + 1)
            p += len(lowered[i])
            i += 1
        elif choice == 1:
            p += 1
        else:
            i += 1
    if not kept:
        return None
    return np.array(kept, dtype=np.int64), int(stray[0, 0])
