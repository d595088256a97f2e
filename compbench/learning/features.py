"""Hashed feature templates shared by every learner: stable string codes, a template's hash over integer codes
folded into ``DIM`` weights, word shapes and distance buckets.

Every feature is a template number combined with integer codes of what it looks at (CRC-32 of the strings, so the
hashes are stable across processes); no raw text is stored anywhere.

>>> int(mix(1, np.array([code("a")]))[0]) == int(mix(1, np.array([code("a")]))[0]) < DIM
True
"""

from __future__ import annotations

import zlib

import numpy as np

DIM = 1 << 20
_MULTIPLIERS = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93,
                         0xFF51AFD7ED558CCD], dtype=np.uint64)


def code(text: str) -> int:
    """A stable integer code of a string."""
    return zlib.crc32(text.encode("utf-8"))


def mix(template: int, *codes: np.ndarray) -> np.ndarray:
    """Feature indices in 0..DIM-1 of one template over broadcast integer code arrays."""
    h = np.full(1, code(f"template{template}"), dtype=np.uint64) * _MULTIPLIERS[0]  # arrays wrap silently
    for i, c in enumerate(codes):
        h = h ^ (np.asarray(c, dtype=np.uint64) * _MULTIPLIERS[1 + i % 4] + np.uint64(i + 1))
        h = (h ^ (h >> np.uint64(29))) * _MULTIPLIERS[0]
    return (h >> np.uint64(40)).astype(np.int64) & (DIM - 1)


def shape(word: str) -> str:
    """Word shape: ``Xxxx`` -> ``Xx``, ``1999`` -> ``d``, ``,`` -> ``,``."""
    out = []
    for ch in word:
        c = "X" if ch.isupper() else "x" if ch.islower() else "d" if ch.isdigit() else ch
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out)[:6]


def distance_bucket(distance: np.ndarray) -> np.ndarray:
    """A distance's bin, either way: 0..5 as they are, 6 up to 10, 7 beyond.

    >>> distance_bucket(np.array([-3, 0, 8, 40])).tolist()
    [3, 0, 6, 7]
    """
    d = np.abs(distance)
    return np.where(d <= 5, d, np.where(d <= 10, 6, 7))
