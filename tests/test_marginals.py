"""log Z and marginals (inside-outside over the hook-trick chart) against brute-force enumeration."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compbench
from compbench import objective, sibling_pairs, tree_violation
from compbench.testing import problems
from compbench_solvers.compressive.chart import shift_to_unit
from compbench_solvers.compressive.marginals import (_batched, _log_space_inside, log_space_marginals, scaled_log_partition,
                                                     scaled_marginals)


def enumerate_solutions(problem):
    """(heads, objective) of every valid solution, by trying every head assignment."""
    n = problem.n
    lo, hi = problem.length_bounds()
    for assignment in itertools.product(range(-1, n + 1), repeat=n):
        heads = np.array((-1, *assignment))
        if not lo <= int((heads[1:] >= 0).sum()) <= hi or tree_violation(heads, problem.single_root) is not None:
            continue
        value = objective(problem, heads)
        if value > -math.inf:
            yield heads, value


def brute_force_marginals(problem):
    n = problem.n
    solutions = list(enumerate_solutions(problem))
    token, arc, bigram = np.zeros(n), np.zeros((n + 1, n + 1)), np.zeros((n + 2, n + 2))
    sibling = np.zeros((n + 1,) * 3)
    if not solutions:
        return -math.inf, token, arc, bigram, sibling
    values = np.array([v for _, v in solutions])
    log_z = values.max() + math.log(np.exp(values - values.max()).sum())
    for (heads, _), p in zip(solutions, np.exp(values - log_z)):
        kept = [k for k in range(1, n + 1) if heads[k] >= 0]
        for k in kept:
            token[k - 1] += p
            arc[heads[k], k] += p
        sequence = [0, *kept, n + 1]
        for a, b in zip(sequence, sequence[1:]):
            bigram[a, b] += p
        for h, s, k in sibling_pairs(heads):
            sibling[h, s, k] += p
    return log_z, token, arc, bigram, sibling


def assert_marginals_equal(got, log_z, token, arc, bigram, sibling):
    assert got.log_partition == pytest.approx(log_z, rel=1e-9, abs=1e-9)
    np.testing.assert_allclose(got.token, token, atol=1e-9)
    np.testing.assert_allclose(got.arc, arc, atol=1e-9)
    np.testing.assert_allclose(got.bigram, bigram, atol=1e-9)
    if sibling is not None:
        np.testing.assert_allclose(got.sibling, sibling, atol=1e-9)
    else:
        assert got.sibling is None


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(problem=problems(max_n=5, second_order=None), temperature=st.sampled_from((1.0, 1.0, 150.0)))
def test_log_partition_and_marginals_match_brute_force(problem, temperature):
    # both engines: the scaled chart (used whenever its values stay in range: always at temperature 1 but when
    # there is no solution) and the log-space hypergraph it falls back to; scores 150 times as far apart reach
    # the scaled chart's range and underflow rules
    problem = problem.replace(**{name: None if problem.sibling_scores is None and name == "sibling_scores"
                                 else getattr(problem, name) * temperature
                                 for name in ("token_scores", "arc_scores", "bigram_scores", "sibling_scores")})
    log_z, token, arc, bigram, sibling = brute_force_marginals(problem)
    expected = (log_z, token, arc, bigram, sibling if problem.second_order else None)
    assert compbench.log_partition(problem) == pytest.approx(log_z, rel=1e-9, abs=1e-9)
    assert_marginals_equal(compbench.marginals(problem), *expected)
    assert_marginals_equal(log_space_marginals(problem), *expected)
    scaled = scaled_marginals(problem)
    if temperature == 1.0:
        assert (scaled is None) == (log_z == -math.inf)
    if scaled is not None:
        assert_marginals_equal(scaled, *expected)
        assert scaled_log_partition(problem) == pytest.approx(log_z, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("length", [None, 4])
@pytest.mark.parametrize("second_order", [False, True])
def test_marginals_are_the_gradient_of_log_partition(length, second_order):
    p = compbench.generate("gaussian", n=9, seed=3, length=length, second_order=second_order)
    got = compbench.marginals(p)
    eps = 1e-6
    for k in (1, 4, 9):
        token = p.token_scores.copy()
        token[k - 1] += eps
        up = compbench.log_partition(p.replace(token_scores=token))
        token[k - 1] -= 2 * eps
        down = compbench.log_partition(p.replace(token_scores=token))
        assert (up - down) / (2 * eps) == pytest.approx(got.token[k - 1], abs=1e-6)
    arc = p.arc_scores.copy()
    arc[0, 5] += eps
    up = compbench.log_partition(p.replace(arc_scores=arc))
    arc[0, 5] -= 2 * eps
    assert (up - compbench.log_partition(p.replace(arc_scores=arc))) / (2 * eps) == pytest.approx(got.arc[0, 5],
                                                                                                abs=1e-6)
    assert got.token.sum() == pytest.approx(4.0 if length else np.sum(got.token))  # the expected length


def test_marginals_concentrate_on_the_optimum_at_low_temperature():
    p = compbench.generate("gaussian", n=12, seed=1, length=5)
    best = compbench.get_solver("resource-dp").solve(p)
    cold = p.replace(token_scores=p.token_scores * 200, arc_scores=p.arc_scores * 200,
                     bigram_scores=p.bigram_scores * 200)
    kept = np.zeros(p.n)
    kept[best.kept - 1] = 1
    np.testing.assert_allclose(compbench.marginals(cold).token, kept, atol=1e-6)


@pytest.mark.parametrize("engine", [scaled_marginals, log_space_marginals])
def test_no_underflow_at_n_200(engine):
    p = compbench.generate("distance", n=200, seed=0)
    got = engine(p)
    assert math.isfinite(got.log_partition) and np.all(np.isfinite(got.arc))
    assert np.allclose(got.arc[:, 1:].sum(axis=0), got.token)  # each kept token has exactly one head


@pytest.mark.parametrize("temperature", [1.0, 50.0, 400.0])
def test_log_partition_is_near_the_optimum_at_every_length_and_temperature(temperature):
    # log Z_m lies between the optimum at m and the optimum plus log(number of solutions): at low temperature the
    # count vectors spread over hundreds of nats and the convolutions switch to log space
    p = compbench.generate("gaussian", n=12, seed=1)
    cold = p.replace(token_scores=p.token_scores * temperature, arc_scores=p.arc_scores * temperature,
                     bigram_scores=p.bigram_scores * temperature)
    for m in range(13):
        at_m = cold.replace(length=compbench.Length.exact(m))
        best = compbench.get_solver("resource-dp").solve(at_m).objective
        assert best - 1e-6 <= compbench.log_partition(at_m) <= best + 12 * math.log(14)


@pytest.mark.parametrize("seed", range(8))
def test_marginals_match_brute_force_at_low_temperature(seed):
    p = compbench.generate("gaussian", n=5, seed=seed, length=[None, 2, compbench.Length(1, 3)][seed % 3],
                           second_order=seed % 2 == 1)
    cold = p.replace(token_scores=p.token_scores * 300, arc_scores=p.arc_scores * 300,
                     bigram_scores=p.bigram_scores * 300,
                     sibling_scores=None if p.sibling_scores is None else p.sibling_scores * 300)
    log_z, token, arc, bigram, _ = brute_force_marginals(cold)
    assert scaled_marginals(cold) is None  # the scores spread over thousands of nats: the log-space engine answers
    got = compbench.marginals(cold)
    assert got.log_partition == pytest.approx(log_z, rel=1e-12)
    np.testing.assert_allclose(got.token, token, atol=1e-9)
    np.testing.assert_allclose(got.arc, arc, atol=1e-9)
    np.testing.assert_allclose(got.bigram, bigram, atol=1e-9)


@pytest.mark.parametrize("single_root", [False, True])
def test_tree_crf_for_parsing_matches_enumeration(single_root):
    rng = np.random.default_rng(5)
    arc = rng.standard_normal((6, 6))
    got = compbench.tree_marginals(arc, single_root=single_root)
    everything_kept = compbench.Problem(np.zeros(5), arc, np.zeros((7, 7)), length=5, single_root=single_root)
    log_z, _, arcs, _, _ = brute_force_marginals(everything_kept)
    assert got.log_partition == pytest.approx(log_z)
    assert compbench.tree_log_partition(arc, single_root=single_root) == pytest.approx(log_z)
    np.testing.assert_allclose(got.arc, arcs, atol=1e-9)


def eisner_inside_outside(arc: np.ndarray, single_root: bool) -> tuple[float, np.ndarray]:
    """log Z and arc marginals of a first-order projective tree-CRF by Eisner's inside-outside, written from the
    textbook recurrences (complete spans C and incomplete spans I, R: head on the left, L: head on the right),
    independently of the compressive chart.  Multi-root: position 0 heads a complete span over 0..n.  Single root:
    Z = ⊕_m arc(0, m) ⊗ C[1, m, L] ⊗ C[m, n, R] over the chart of 1..n."""
    n = arc.shape[0] - 1
    lse = np.logaddexp
    neg = -math.inf
    first = 1 if single_root else 0
    C = np.full((n + 1, n + 1, 2), neg)
    I = np.full((n + 1, n + 1, 2), neg)
    R, L = 0, 1
    score = arc.copy()
    score[:, 0] = neg  # nothing heads the root
    for i in range(n + 1):
        C[i, i] = 0.0
    for w in range(1, n + 1):
        for i in range(first, n + 1 - w):
            j = i + w
            both = [C[i, k, R] + C[k + 1, j, L] for k in range(i, j)]
            I[i, j, R] = lse.reduce(both) + score[i, j]
            I[i, j, L] = lse.reduce(both) + score[j, i]
            C[i, j, R] = lse.reduce([I[i, k, R] + C[k, j, R] for k in range(i + 1, j + 1)])
            C[i, j, L] = lse.reduce([C[i, k, L] + I[k, j, L] for k in range(i, j)])
    OC = np.full_like(C, neg)
    OI = np.full_like(I, neg)
    marginal = np.zeros_like(arc)
    if single_root:
        roots = np.array([arc[0, m] + C[1, m, L] + C[m, n, R] for m in range(1, n + 1)])
        log_z = float(lse.reduce(roots))
        for m in range(1, n + 1):
            marginal[0, m] = math.exp(roots[m - 1] - log_z)
            OC[1, m, L] = lse(OC[1, m, L], arc[0, m] + C[m, n, R])
            OC[m, n, R] = lse(OC[m, n, R], arc[0, m] + C[1, m, L])
    else:
        log_z = float(C[0, n, R])
        OC[0, n, R] = 0.0
    for w in range(n, 0, -1):  # widest first; in a span its complete items before its incomplete ones
        for i in range(first, n + 1 - w):
            j = i + w
            for k in range(i + 1, j + 1):  # C[i, j, R] <- I[i, k, R] C[k, j, R]
                OI[i, k, R] = lse(OI[i, k, R], OC[i, j, R] + C[k, j, R])
                OC[k, j, R] = lse(OC[k, j, R], OC[i, j, R] + I[i, k, R])
            for k in range(i, j):  # C[i, j, L] <- C[i, k, L] I[k, j, L]
                OC[i, k, L] = lse(OC[i, k, L], OC[i, j, L] + I[k, j, L])
                OI[k, j, L] = lse(OI[k, j, L], OC[i, j, L] + C[i, k, L])
            for d, s in ((R, score[i, j]), (L, score[j, i])):  # I[i, j, d] <- C[i, k, R] C[k+1, j, L] + s
                for k in range(i, j):
                    OC[i, k, R] = lse(OC[i, k, R], OI[i, j, d] + C[k + 1, j, L] + s)
                    OC[k + 1, j, L] = lse(OC[k + 1, j, L], OI[i, j, d] + C[i, k, R] + s)
            marginal[i, j] = math.exp(OI[i, j, R] + I[i, j, R] - log_z)
            marginal[j, i] = math.exp(OI[i, j, L] + I[i, j, L] - log_z)
    return log_z, marginal


@pytest.mark.parametrize("n", [1, 2, 7, 12])
@pytest.mark.parametrize("single_root", [False, True])
def test_tree_crf_matches_an_independent_eisner_inside_outside(n, single_root):
    rng = np.random.default_rng(n)
    arc = 2.0 * rng.standard_normal((n + 1, n + 1))
    arc[rng.random((n + 1, n + 1)) < 0.1] = -math.inf  # forbidden arcs too
    log_z, marginal = eisner_inside_outside(arc, single_root)
    got = compbench.tree_marginals(arc, single_root=single_root)
    assert got.log_partition == pytest.approx(log_z, abs=1e-9)
    np.testing.assert_allclose(got.arc, marginal, atol=1e-9)
    # every token has one head in every tree: each column of arc marginals sums to 1
    np.testing.assert_allclose(marginal[:, 1:].sum(axis=0), 1.0, atol=1e-9)


def test_a_problem_too_big_for_memory_is_refused_in_one_line(monkeypatch):
    import compbench_solvers.compressive.marginals as engines

    monkeypatch.setattr(engines, "available_memory", lambda: 2**20)
    p = compbench.generate("gaussian", n=150, seed=0, length=70)  # charts above 64 MiB: checked
    with pytest.raises(MemoryError, match=r"scaled chart for n = 150 needs \d+ MiB, above the 1 MiB available"):
        compbench.marginals(p)
    with pytest.raises(MemoryError, match="log-space engine for n = 150"):
        log_space_marginals(p)


def test_a_batch_needs_the_memory_of_its_largest_chart_not_of_its_largest_sizes(monkeypatch):
    """A long free-length sentence beside a short counted one was charged n = 300's chart times the other's count
    width (174 MiB) though each needs a few MiB: the batch was refused what the same problems in a list were not."""
    import compbench_solvers.compressive.marginals as engines

    monkeypatch.setattr(engines, "available_memory", lambda: 100 * 2**20)
    flat = [compbench.Problem(np.zeros(n), np.zeros((n + 1, n + 1)), np.zeros((n + 2, n + 2)), length=length)
            for n, length in ((300, None), (40, 20))]
    as_list = compbench.log_partition_many(flat)
    np.testing.assert_array_equal(compbench.log_partition_many(compbench.ProblemBatch.from_problems(flat)), as_list)


def far_apart_scores(seed: int) -> compbench.Problem:
    """A sentence of 4 to 6 words whose arc scores lie hundreds of nats apart, many forbidden: some items of the
    scaled chart are below 2^-1074 of their column's largest while their completions weigh up to e^600."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 7))
    arc = rng.choice([-np.inf, -np.inf, -np.inf, -200.0, 0.0, 0.0, 100.0, 200.0, 205.0], size=(n + 1, n + 1))
    return compbench.Problem(np.zeros(n), arc, np.zeros((n + 2, n + 2)), length=n if seed % 3 else None,
                             single_root=bool(seed % 2))


@pytest.mark.parametrize("seed", range(40))
def test_log_partition_matches_brute_force_where_the_scaled_chart_underflows(seed):
    # the scaled chart used to keep an answer when its outside values were at most SAFE: at seed 3 that answer was
    # wrong (a search over such sentences of up to 9 words found log Z off by up to 108, marginals too).  Its
    # underflow rules (chart.py, above SAFE) keep only what they prove exact, and log space answers the rest.
    problem = far_apart_scores(seed)
    log_z, token, arc, bigram, _ = brute_force_marginals(problem)
    assert compbench.log_partition(problem) == pytest.approx(log_z, rel=1e-12, abs=1e-12)
    assert_marginals_equal(compbench.marginals(problem), log_z, token, arc, bigram, None)
    if problem.length is not None and problem.length.min == problem.n and problem.single_root is False:
        assert compbench.tree_log_partition(problem.arc_scores) == pytest.approx(log_z, rel=1e-12)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(problem=problems(max_n=5))
def test_shift_to_unit_takes_the_same_off_every_solution_and_leaves_none_above_zero(problem):
    # the scaled chart's shift (chart.shift_to_unit): every factor of a solution at most 1, log Z moved by C
    n = problem.n
    attach = problem.arc_scores.copy()
    attach[:, 1:] += problem.token_scores
    bigram = np.empty((n + 2, n + 2))
    shift = shift_to_unit(attach, problem.bigram_scores, bigram, np.empty(n + 2))
    shifted = compbench.Problem(np.zeros(n), attach, bigram, length=problem.length, single_root=problem.single_root)
    for heads, value in enumerate_solutions(problem):
        assert objective(shifted, heads) == pytest.approx(value - shift, abs=1e-9)
        assert objective(shifted, heads) <= 1e-9


def test_the_best_completion_rule_keeps_what_the_batch_kernel_refuses():
    # n = 100 at three times the default temperature: the batch kernel's two underflow rules refuse every sentence,
    # the scaled chart's third (the max chart's outside values bound the completions) keeps it, exactly
    p = compbench.generate("gaussian", n=100, seed=0)
    p = p.replace(token_scores=p.token_scores * 3, arc_scores=p.arc_scores * 3, bigram_scores=p.bigram_scores * 3)
    log_z, safe, *_ = _batched(compbench.ProblemBatch.from_problems([p]), False, 1)
    assert not safe[0]
    assert scaled_log_partition(p) == pytest.approx(_log_space_inside(p)[4], rel=1e-12)


def test_a_sibling_score_does_not_revive_an_attach_factor_that_underflowed():
    # (a second review's case) root -> 2 scores -800 but its sibling score +200: apart, exp(-800) underflowed and
    # the attachment was lost, with e^-600 of Z, and the empty compression's e^-650 was kept as Z.  Each attachment
    # now takes its best sibling score before the shift, so every sibling factor is at most 1 as well.
    arc = np.full((3, 3), -np.inf)
    arc[1, 2] = arc[2, 1] = 0.0
    arc[0, 2] = -800.0
    bigram = np.zeros((4, 4))
    bigram[0, 3] = -650.0
    sibling = np.zeros((3, 3, 3))
    sibling[0, 0, 2] = 200.0
    problem = compbench.Problem(np.zeros(2), arc, bigram, sibling_scores=sibling)
    log_z, token, arc_marginals, bigram_marginals, sibling_marginals = brute_force_marginals(problem)
    assert compbench.log_partition(problem) == pytest.approx(log_z, rel=1e-12)
    assert_marginals_equal(compbench.marginals(problem), log_z, token, arc_marginals, bigram_marginals,
                           sibling_marginals)


def test_a_word_never_kept_with_a_huge_score_neither_overflows_nor_raises():
    # word 1 has no bigram into it, so it is never kept: its attach score of 800 (exp overflows) must not matter
    arc = np.full((3, 3), -np.inf)
    arc[0, 1] = 800.0
    bigram = np.zeros((4, 4))
    bigram[:, 1] = -np.inf
    problem = compbench.Problem(np.zeros(2), arc, bigram)
    assert compbench.log_partition(problem) == pytest.approx(brute_force_marginals(problem)[0], abs=1e-12)
    assert scaled_log_partition(problem) == pytest.approx(0.0, abs=1e-12)  # only the empty compression: log 1


def test_a_batch_of_tree_crfs_refuses_what_one_refuses_naming_its_matrix():
    """A batch coerced what tree_log_partition refuses ("1e3" read as 1000, booleans, complex numbers) and named a
    NaN by its index among the matrices of its size."""
    bad = np.zeros((4, 4))
    bad[1, 2] = np.nan
    cases = [([[[0, "1e3"], [0, 0]]], r"arc_scores\[0\]: expected real numbers"),
             ([np.zeros((2, 2)), np.zeros((2, 2), bool)], r"arc_scores\[1\]: expected real numbers, got .* bool"),
             (np.zeros((2, 3, 3), complex), r"arc_scores\[0\]: expected real numbers"),
             ([np.zeros((3, 3)), np.zeros((4, 4)), bad], r"arc_scores\[2\]: NaN at index \(1, 2\)")]
    for arcs, why in cases:
        for function in (compbench.tree_log_partition_many, compbench.tree_marginals_many):
            with pytest.raises(compbench.ProblemError, match=why):
                function(arcs)


def test_a_batch_of_tree_crfs_takes_what_one_takes_in_the_entries_it_ignores():
    """Column 0 and the diagonal are ignored (read as -inf): a batch refused a mask of -1e30 there, or a NaN, that
    tree_log_partition takes, and still refuses one in a read entry."""
    arc = np.zeros((4, 4))
    np.fill_diagonal(arc, -1e30)
    arc[:, 0] = -1e30
    arc[2, 0] = np.nan
    one = compbench.tree_log_partition(arc)
    assert one == pytest.approx(np.log(12))
    for arcs in ([arc, np.zeros((3, 3))], np.stack([arc, np.zeros((4, 4))])):
        assert compbench.tree_log_partition_many(arcs)[0] == pytest.approx(one)
        marginals = compbench.tree_marginals_many(arcs)[0]
        assert marginals.log_partition == pytest.approx(one)
        assert np.allclose(marginals.arc, compbench.tree_marginals(arc).arc)
    assert np.isnan(arc[2, 0]) and arc[1, 1] == -1e30  # the input is not written
    arc[1, 2] = -1e30
    with pytest.raises(compbench.ProblemError, match=r"arc_scores\[0\]: -1e\+30 at index \(1, 2\)"):
        compbench.tree_log_partition_many([arc])


def test_one_tree_crf_refuses_a_matrix_that_is_not_one():
    for arcs in (np.zeros((0, 0)), np.zeros((3, 4)), 5):
        with pytest.raises(compbench.ProblemError, match=r"arc_scores: expected an \(n\+1\) x \(n\+1\) matrix"):
            compbench.tree_log_partition(arcs)


def sure_problem() -> compbench.Problem:
    """Scores near 1e12 (within compbench.limits.MAX_SCORE) whose every competitor is 1e10 worse: each posterior
    is 0 or 1, and float64's rounding of the sums made sure tokens 1.00003."""
    token = np.array([0.87, 0.28, -0.78]) * 1e12
    arc = np.array([[0.1, 0.23, 0.56, 0.97], [0.55, 0.03, 0.5, -0.29], [-0.07, 0.07, -0.26, 0.96],
                    [-0.43, 0.29, -0.54, 1.0]]) * 1e12
    return compbench.Problem(token, arc, np.zeros((5, 5)))


def test_log_space_marginals_of_nothing_attached_are_float_zeros() -> None:
    """n = 0 in log space (a bigram of -800 leaves the scaled chart's range): the clip to 1 raised UFuncTypeError on
    the integer zeros np.bincount gives for no entries."""
    for bigram in (1e12, -1e12, -800.0):
        p = compbench.Problem(np.zeros(0), np.zeros((1, 1)), np.array([[0, bigram], [0, 0]]), length=0)
        for m in (compbench.marginals(p), compbench.marginals_many([p])[0]):
            assert m.log_partition == bigram and m.arc.dtype == m.bigram.dtype == np.float64
            assert m.bigram[0, 1] == 1.0


def test_marginals_of_scores_near_the_limit_are_probabilities() -> None:
    p = sure_problem()
    for m in (compbench.marginals(p), compbench.marginals_many([p])[0], compbench.tree_marginals(p.arc_scores),
              compbench.tree_marginals_many([p.arc_scores])[0]):
        for part in (m.token, m.arc, m.bigram):
            assert np.all((0.0 <= part) & (part <= 1.0))
    np.testing.assert_allclose(compbench.marginals(p).token, [1.0, 1.0, 1.0], rtol=1e-3)


def test_marginals_of_a_sure_part_are_never_above_one() -> None:
    """Every token kept: the scaled chart's posteriors of the sure tokens and bigrams read 1.0000000000000002 (log1p
    of minus them NaN); every path gives at most 1, first and second order, with 1 within rounding."""
    for seed in range(40):
        p = compbench.generate("gaussian", n=6, seed=seed, length=6)
        second = compbench.generate("gaussian", n=5, seed=seed, length=5, second_order=True)
        for m in (compbench.marginals(p), compbench.marginals_many([p, p])[1], compbench.marginals(second)):
            for part in (m.token, m.arc, m.bigram) + (() if m.sibling is None else (m.sibling,)):
                assert part.max() <= 1.0
            np.testing.assert_allclose(m.token, 1.0, rtol=1e-12)


def test_one_matrix_where_a_batch_is_expected_says_so() -> None:
    """It said 'arc_scores[0]: expected an (n+1) x (n+1) matrix, got shape (3,)'."""
    for call in (compbench.tree_log_partition_many, compbench.tree_marginals_many):
        for matrix in (np.zeros((3, 3)), np.zeros((3, 3)).tolist()):
            with pytest.raises(compbench.ProblemError, match="got one matrix of shape \\(3, 3\\)"):
                call(matrix)


def test_a_device_that_is_no_name_is_refused_as_an_unknown_one() -> None:
    """device=["cuda"] said 'unhashable type: list' (the providers' cache), not what devices there are."""
    for device in (["cuda"], None, 3, "gpu"):
        with pytest.raises(ValueError, match=r"device=.*: expected one of 'cpu'"):
            compbench.tree_log_partition_many(np.zeros((1, 3, 3)), device=device)
