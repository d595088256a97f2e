"""The signature chart of Qian & Liu (2014), compiled with numba, and its backtrace.

A compression becomes a full projective tree over the sentence: each deleted word i hangs from i-1 by a
*virtual arc* (score 0); kept words keep their real heads.  This is a bijection: a deleted word can only have the
next word (if deleted) as a virtual child, so a run of deleted words i+1..q is a chain under the kept word (or
root) i, and every real arc stays projective.  Spans over positions 0..n (0 = root) carry the signatures
k = number of deleted words inside and p = rightmost kept word (root counts as kept).  Chart items, with the
rules (deduction-system notation; one function-local block per rule in ``_fill``):

* ``(CR s t k p)`` complete span headed by the kept word/root s, covering s..t.
  - chain (paper's cases 1 + 3):   ``(CR s t t-s s) <- .``   s kept, s+1..t deleted (virtual arcs), score 0.
    Chains are built whole, so a deleted word never heads a span and each compression has one derivation.
  - ``(CR s t k1+k2 p) <- (IR s r k1) (CR r t k2 p)``   r = outermost real right modifier of s, p >= r.
* ``(PAIR s t k)`` two facing halves: ``<- (CR s r k1 p) (CL r+1 t k2)  + bigram(p, r+1)`` (paper's case 2'/4'
  bigram: r+1 is always kept, since a left-headed span starts with a kept word; p is the last kept word
  before it).  Shared by both arc directions, as in Eisner's algorithm.
* ``(IR s t k) <- (PAIR s t k)  + arc(s, t) + token(t)``   real arc s -> t (case 2').
* ``(IL s t k) <- (PAIR s t k)  + arc(t, s) + token(s)``   real arc t -> s, s >= 1 (case 4').
* ``(CL s t k1+k2) <- (CL s r k1) (IL r t k2)``, ``(CL t t 0) <- .``   left-headed spans keep both ends.
* goal: ``max_p (CR 0 n k p) + bigram(p, n+1)`` keeps n - k words (k = n: the empty compression).
* single_root: the root's spans ``(CR 0 t)`` with t < n are chains only, and ``(CR 0 n)`` takes one
  ``(IR 0 r)`` at most, so the root has exactly one real modifier (or none: the empty compression).

Token scores are added when a word gets its real head, so each kept word is scored once; each bigram is added
where its two words first meet (the goal for p -> n+1), so each is scored once.

With ``count=False`` the k dimension has size 1 and every k index is 0: the same rules without the count
signature (the chart of the Lagrangian relaxation, O(n^4) time, O(n^3) memory).  With the count: O(n^6) time
(the PAIR and CR rules each range over s, t, r, k1, k2, p), O(n^4) memory, as in the paper.  (p is only ever
read against the word r+1 right after its span, so folding ``bigram(p, t+1)`` into ``CR`` would drop p and give
O(n^5) time, O(n^3) memory; this module keeps the published chart on purpose.)
"""

from __future__ import annotations

import numpy as np

from ..jit import njit

NO_SPLIT = -1  # CR backpointer of a chain


def chart_bytes(n: int, count: bool) -> int:
    """Bytes the chart of an n-token problem allocates (float64 scores, int16 backpointers)."""
    positions = n + 1
    kd = positions if count else 1
    cr = positions * positions * kd * positions * (8 + 2 + 2)  # CR, its r and k1
    small = positions * positions * kd * (8 * 4 + 2 * 5)  # PAIR, IR, IL, CL, backpointers of PAIR and CL
    return cr + small + 8 * (kd + 1) * 2


@njit(cache=True)
def _fill(token, arc, bigram, count, single_root):
    n = token.shape[0]
    N = n + 1
    KD = N if count else 1
    NEG = -np.inf
    CR = np.full((N, N, KD, N), NEG)
    CR_r = np.full((N, N, KD, N), NO_SPLIT, np.int16)
    CR_k = np.zeros((N, N, KD, N), np.int16)
    PAIR = np.full((N, N, KD), NEG)
    PAIR_r = np.zeros((N, N, KD), np.int16)
    PAIR_k = np.zeros((N, N, KD), np.int16)
    PAIR_p = np.zeros((N, N, KD), np.int16)
    IR = np.full((N, N, KD), NEG)
    IL = np.full((N, N, KD), NEG)
    CL = np.full((N, N, KD), NEG)
    CL_r = np.zeros((N, N, KD), np.int16)
    CL_k = np.zeros((N, N, KD), np.int16)
    for w in range(N):
        for s in range(N - w):
            t = s + w
            # chain: (CR s t t-s s) <- .   s kept (or root), s+1..t deleted
            CR[s, t, w if count else 0, s] = 0.0
            if w == 0:
                if s >= 1:
                    CL[s, s, 0] = 0.0  # (CL t t 0) <- .
                continue
            # (PAIR s t k1+k2) <- (CR s r k1 p) (CL r+1 t k2) + bigram(p, r+1)
            for r in range(s, t):
                for k1 in range(min(r - s, KD - 1) + 1):
                    for p in range(s, r + 1):
                        left = CR[s, r, k1, p]
                        if left == NEG:
                            continue
                        left += bigram[p, r + 1]
                        if left == NEG:
                            continue
                        for k2 in range(min(t - r - 1, KD - 1 - k1) + 1):
                            value = left + CL[r + 1, t, k2]
                            if value > PAIR[s, t, k1 + k2]:
                                PAIR[s, t, k1 + k2] = value
                                PAIR_r[s, t, k1 + k2] = r
                                PAIR_k[s, t, k1 + k2] = k1
                                PAIR_p[s, t, k1 + k2] = p
            # (IR s t k) <- (PAIR s t k) + arc(s, t) + token(t)   real arc s -> t
            right_arc = arc[s, t] + token[t - 1]
            if right_arc > NEG:
                for k in range(KD):
                    IR[s, t, k] = PAIR[s, t, k] + right_arc
            if s >= 1:
                # (IL s t k) <- (PAIR s t k) + arc(t, s) + token(s)   real arc t -> s
                left_arc = arc[t, s] + token[s - 1]
                if left_arc > NEG:
                    for k in range(KD):
                        IL[s, t, k] = PAIR[s, t, k] + left_arc
                # (CL s t k1+k2) <- (CL s r k1) (IL r t k2)
                for r in range(s, t):
                    for k1 in range(min(r - s, KD - 1) + 1):
                        left = CL[s, r, k1]
                        if left == NEG:
                            continue
                        for k2 in range(min(t - r, KD - 1 - k1) + 1):
                            value = left + IL[r, t, k2]
                            if value > CL[s, t, k1 + k2]:
                                CL[s, t, k1 + k2] = value
                                CL_r[s, t, k1 + k2] = r
                                CL_k[s, t, k1 + k2] = k1
            if s == 0 and single_root and t < n:
                continue  # single root: (CR 0 t), t < n, stays a chain
            # (CR s t k1+k2 p) <- (IR s r k1) (CR r t k2 p)   r = outermost real right modifier of s
            for r in range(s + 1, t + 1):
                for k1 in range(min(r - s - 1, KD - 1) + 1):
                    left = IR[s, r, k1]
                    if left == NEG:
                        continue
                    for k2 in range(min(t - r, KD - 1 - k1) + 1):
                        for p in range(r, t + 1):
                            value = left + CR[r, t, k2, p]
                            if value > CR[s, t, k1 + k2, p]:
                                CR[s, t, k1 + k2, p] = value
                                CR_r[s, t, k1 + k2, p] = r
                                CR_k[s, t, k1 + k2, p] = k1
    # goal: max_p (CR 0 n k p) + bigram(p, n+1)
    goal = np.full(KD, NEG)
    goal_p = np.zeros(KD, np.int64)
    for k in range(KD):
        for p in range(N):
            value = CR[0, n, k, p] + bigram[p, n + 1]
            if value > goal[k]:
                goal[k] = value
                goal_p[k] = p
    return goal, goal_p, CR_r, CR_k, PAIR_r, PAIR_k, PAIR_p, CL_r, CL_k


class Chart:
    """The filled chart of one problem; ``goal[k]`` is the best score with k deleted words (count mode).

    >>> import numpy as np
    >>> c = Chart(np.zeros(2), np.zeros((3, 3)), np.zeros((4, 4)), count=True, single_root=False)
    >>> c.goal.shape, c.heads(0).tolist()
    ((3,), [-1, 0, 1])
    """

    def __init__(self, token: np.ndarray, arc: np.ndarray, bigram: np.ndarray, *, count: bool, single_root: bool):
        self.n = token.shape[0]
        self.count = count
        arrays = [np.ascontiguousarray(a, dtype=np.float64) for a in (token, arc, bigram)]
        (self.goal, self.goal_p, self._cr_r, self._cr_k, self._pair_r, self._pair_k, self._pair_p,
         self._cl_r, self._cl_k) = _fill(*arrays, bool(count), bool(single_root))

    def heads(self, k: int) -> np.ndarray:
        """The heads array of the goal item with k deleted words (index 0 without the count)."""
        heads = np.full(self.n + 1, -1, dtype=np.int64)
        stack = [("CR", 0, self.n, k, int(self.goal_p[k]))]
        while stack:
            item, s, t, k, p = stack.pop()
            if item == "CR":
                r = int(self._cr_r[s, t, k, p])
                if r != NO_SPLIT:  # (IR s r k1) (CR r t k2 p); a chain leaves s+1..t deleted
                    k1 = int(self._cr_k[s, t, k, p])
                    heads[r] = s
                    stack += [("PAIR", s, r, k1, 0), ("CR", r, t, k - k1, p)]
            elif item == "PAIR":
                r, k1 = int(self._pair_r[s, t, k]), int(self._pair_k[s, t, k])
                stack += [("CR", s, r, k1, int(self._pair_p[s, t, k])), ("CL", r + 1, t, k - k1, 0)]
            elif s < t:  # CL: (CL s r k1) (IL r t k2)
                r, k1 = int(self._cl_r[s, t, k]), int(self._cl_k[s, t, k])
                heads[r] = t
                stack += [("CL", s, r, k1, 0), ("PAIR", r, t, k - k1, 0)]
        return heads
