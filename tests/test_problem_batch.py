"""compbench.ProblemBatch through the compiled batch path: the same answers as the list of its problems and as brute
force, with padding (mixed sizes), ties, -inf scores, both root modes, every length mode, first and second order."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compbench
from compbench import Length, Problem, ProblemBatch, ProblemError, Status
from compbench.testing import problems

from .test_batch import batched, same

CHART_SOLVERS = ("hook-dp", "resource-dp", "bisection", "bisection-exact", "pruned-dp")


@st.composite
def batches(draw, max_n: int = 6) -> ProblemBatch:  # noqa: ANN001
    """A batch of 1..5 problems of mixed sizes (padded), one root mode and order, any length modes."""
    single_root, second_order = draw(st.booleans()), draw(st.booleans())
    items = draw(st.lists(problems(max_n=max_n, single_root=single_root, second_order=second_order), min_size=1,
                          max_size=5))
    return ProblemBatch.from_problems(items)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(batches(), st.sampled_from([1, 2]))
def test_problem_batches_match_their_problems_and_brute_force(batch: ProblemBatch, jobs: int) -> None:
    listed = batch.problems()
    truth = compbench.solve_many(listed, "brute-force", jobs=1)
    for name in CHART_SOLVERS:
        solver = compbench.get_solver(name)
        supported = sum(solver.supports.reason_unsupported(p) is None for p in listed)
        from_batch = solver.solve_many(batch, jobs=jobs)
        for p, a, b, t in zip(listed, solver.solve_many(listed, jobs=jobs), from_batch, truth, strict=True):
            assert same(a, b), (name, p.n, p.length, a, b)
            if b.status == Status.UNSUPPORTED:
                assert solver.supports.reason_unsupported(p) is not None
                continue
            assert batched(b, supported), (name, b.stats)
            if b.status in (Status.OPTIMAL, Status.INFEASIBLE):  # bisection's proven answers only
                assert b.status == t.status and (b.objective is None or b.objective == pytest.approx(t.objective))


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(batches(max_n=7))
def test_problem_batch_inference_matches_its_problems(batch: ProblemBatch) -> None:
    listed = batch.problems()
    log_z = compbench.log_partition_many(batch, jobs=2)
    assert np.array_equal(log_z, compbench.log_partition_many(listed, jobs=1))  # one kernel, bit for bit
    for p, z, m in zip(listed, log_z, compbench.marginals_many(batch), strict=True):
        one = compbench.marginals(p)
        assert z == one.log_partition == m.log_partition
        for field in ("token", "arc", "bigram", "sibling"):
            a, b = getattr(m, field), getattr(one, field)
            assert (a is None) == (b is None) and (a is None or np.array_equal(a, b)), field


def test_problem_batch_from_arrays_is_its_sentences() -> None:
    """Padded arrays with sizes: each sentence's blocks, whatever the padding holds, solved as its Problem."""
    rng = np.random.default_rng(0)
    arc, token, bigram = rng.standard_normal((4, 8, 8)), rng.standard_normal((4, 7)), rng.standard_normal((4, 9, 9))
    arc[1, 5:, :] = 1e6  # padding of sentence 1 (n = 4): never read
    batch = ProblemBatch.from_arrays(arc, token, bigram, sizes=[7, 4, 0, 2], length=[[2, 5], [1, 1], [0, 0], [0, 2]])
    assert batch[1].n == 4 and batch[1].length == Length.exact(1) and batch[3].length == Length(0, 2)
    expected = [compbench.get_solver("resource-dp").solve(p) for p in batch.problems()]
    for a, b in zip(expected, compbench.solve_many(batch, "resource-dp", jobs=2), strict=True):
        assert same(a, b) and batched(b, 4)
    hook = compbench.solve_many(batch, "hook-dp")  # a length for every sentence (3: the range 0..n): none free
    assert [s.status for s in hook] == [Status.UNSUPPORTED] * 4
    free = ProblemBatch.from_arrays(arc, token, bigram, sizes=[7, 4, 0, 2])
    answers = compbench.solve_many(free.take([3, 0]), "hook-dp")
    assert [len(s.heads) for s in answers] == [3, 8] and all(batched(s, 2) for s in answers)


def test_problem_batch_errors_name_the_field() -> None:
    with pytest.raises(ProblemError, match="scores.arc") as error:
        ProblemBatch.from_arrays(np.zeros((2, 3)))
    assert error.value.field == "scores.arc"
    cases = [({"token_scores": np.zeros((2, 3))}, "scores.token"), ({"sizes": [1, 5]}, "sizes[1]"),
             ({"bigram_scores": np.full((2, 5, 5), np.nan)}, "scores.bigram"), ({"length": [1, 3]}, "length"),
             ({"sibling_scores": np.zeros((2, 3, 3))}, "scores.sibling"), ({"sizes": [1.0, 2.0]}, "sizes"), ({"length": (0, 2)}, "length")]
    for kwargs, field in cases:
        with pytest.raises(ProblemError) as error:
            ProblemBatch.from_arrays(np.zeros((2, 3, 3)), **kwargs)
        assert error.value.field.startswith(field), (kwargs, error.value.field)
    with pytest.raises(ProblemError, match="one root mode"):
        ProblemBatch.from_problems([compbench.generate("gaussian", 3, seed=0),
                                    compbench.generate("gaussian", 3, seed=0).replace(single_root=True)])


def test_a_length_that_does_not_fit_names_its_sentence() -> None:
    """One length for the whole batch said only 'length: 2 is outside 0..1', not which sentence is too short."""
    cases = [(2, r"length: 2 is outside 0\.\.1 for sentence 1 \(n = 1\)"),
             (Length(2, 3), r"length\.min: 2 is outside 0\.\.1 for sentence 1 \(n = 1\)"),
             ([2, 2, 2], r"length\[1\]: 2 is outside 0\.\.1"),
             ([[0, 1], [2, 1], [0, 0]], r"length\[1\]: min 2 > max 1")]
    for length, says in cases:
        with pytest.raises(ProblemError, match=says):
            ProblemBatch.from_arrays(np.zeros((3, 4, 4)), sizes=[3, 1, 2], length=length)


def test_the_constructor_refuses_arrays_a_kernel_would_read_out_of_bounds() -> None:
    """ProblemBatch(...) takes the scores as they are, but not a layout the kernels would overrun (a size of 50 in
    a batch 3 wide read past the arrays and crashed the process)."""
    good = ProblemBatch.from_arrays(np.zeros((2, 4, 4)), sizes=[3, 2], length=[[0, 2], [1, 1]])
    fields = dict(vars(good))
    cases = [("sizes", np.array([50, 2]), "sizes[0]"), ("sizes", [3, 2], "sizes"),
             ("max_length", np.array([2, 5]), "max_length[1]"), ("min_length", np.array([3, 1]), "min_length[0]"),
             ("arc_scores", np.zeros((2, 4, 5)), "arc_scores"), ("token_scores", np.zeros((2, 3), np.float32),
                                                                  "token_scores"),
             ("bigram_scores", np.zeros((2, 10, 5))[:, ::2], "bigram_scores"), ("free", np.zeros(2), "free"),
             ("single_root", "no", "single_root"), ("sibling_scores", np.zeros((2, 4, 4)), "sibling_scores"),
             ("sizes", np.array([3, 0, 2, 0])[::2], "sizes"), ("free", np.array([True, False]), "free[0]")]
    for name, value, field in cases:
        with pytest.raises(ProblemError) as error:
            ProblemBatch(**{**fields, name: value})
        assert error.value.field == field, (name, error.value)
    assert ProblemBatch(**fields).sizes.tolist() == [3, 2]


def test_a_batch_is_indexed_by_sentence_positions() -> None:
    batch = ProblemBatch.from_arrays(np.zeros((3, 4, 4)), sizes=[3, 1, 2])
    assert batch.take([2, 0]).sizes.tolist() == [2, 3] and len(batch.take([])) == 0 and batch[-1].n == 2
    for index in ([True, False, True], [1.7], ["0"], 1, [[0, 1]]):
        with pytest.raises(TypeError, match="index: expected a list of sentence positions"):
            batch.take(index)
    with pytest.raises(IndexError, match="sentence 5 of a batch of 3"):
        batch.take([0, 5])
    for b in (1.0, True, slice(0, 2)):
        with pytest.raises(TypeError, match="indexed by a sentence position"):
            batch[b]


def test_a_list_is_laid_out_as_batches_of_one_kind_and_similar_sizes() -> None:
    ps: list[Problem] = [compbench.generate("gaussian", n, seed=n, second_order=n % 2 == 0) for n in range(1, 12)]
    groups = ProblemBatch.grouped(ps)
    assert sorted(k for index, _ in groups for k in index.tolist()) == list(range(11))
    for index, batch in groups:
        assert {ps[k].second_order for k in index} == {batch.second_order}
        assert all(np.array_equal(batch[j].arc_scores, ps[k].arc_scores) for j, k in enumerate(index))
        assert batch.max_n <= batch.sizes.min() + max(1, batch.sizes.min() // 4)


SPECIAL_SCORES = [0.0, -1.5, 2.0, compbench.limits.MAX_SCORE, -compbench.limits.MAX_SCORE,
                  2 * compbench.limits.MAX_SCORE, -2 * compbench.limits.MAX_SCORE, np.nan, np.inf, -np.inf]


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(st.lists(st.sampled_from(SPECIAL_SCORES), min_size=0, max_size=12), st.sampled_from([1, 2]))
def test_check_scores_names_the_first_bad_score_of_a_full_search(values: list[float], rows: int) -> None:
    """check_scores' two reductions pass exactly the arrays that the search for a bad score (NaN first, then
    +inf, then a finite score outside MAX_SCORE) finds nothing in, and raise its error for the others."""
    from compbench.problem import _first_bad_score, check_scores

    array = np.array(values, dtype=np.float64)
    if len(values) % rows == 0:  # a matrix: the index named has two numbers
        array = array.reshape(rows, -1)
    try:
        _first_bad_score("scores", array)
        expected = None
    except ProblemError as exc:
        expected = str(exc)
    try:
        check_scores("scores", array)
        got = None
    except ProblemError as exc:
        got = str(exc)
    assert got == expected


def test_a_size_beyond_int64_is_named_as_given() -> None:
    """A uint64 size of 2^64 - 1 was cast first and reported as -1."""
    with pytest.raises(compbench.ProblemError, match="sizes\\[0\\]: 18446744073709551615 is outside 0..2"):
        compbench.ProblemBatch.from_arrays(np.zeros((2, 3, 3)), sizes=np.array([2 ** 64 - 1, 1], np.uint64))


def test_a_pickled_or_copied_batch_keeps_its_arrays_read_only() -> None:
    import copy
    import pickle

    batch = compbench.ProblemBatch.from_arrays(np.zeros((2, 3, 3)), sizes=[2, 1])
    for copied in (pickle.loads(pickle.dumps(batch)), copy.deepcopy(batch)):
        arrays = [value for value in vars(copied).values() if isinstance(value, np.ndarray)]
        assert len(arrays) == 7 and not any(array.flags.writeable for array in arrays)
        assert copied.sizes.tolist() == [2, 1]
