"""Both ILP formulations on five backends against brute force; the joint model's projectivity rows; the dp model's
derivations; the LP relaxations; honest time limits."""

import itertools
from pathlib import Path

import numpy as np
import pytest

import compbench
from compbench import Length, Status, evaluate
from compbench.evaluate import tree_violation
from compbench.testing import assert_conforms, check_solver
from compbench.testing import problems
from hypothesis import HealthCheck, given, settings
from compbench_solvers.compressive.chart import hypergraph
from compbench_solvers.ilp.dp_flow import build_dp_model
from compbench_solvers.ilp.joint import FAMILIES, Shape, build_joint_model, model_size
from compbench_solvers.ilp.export import write_model

BACKENDS = {  # name: (max_n, hypothesis examples)
    "ilp-highs": (8, 40),
    "ilp-pulp-highs": (7, 25),
    "ilp-pulp-cbc": (7, 25),
    "ilp-ortools-scip": (7, 25),
    "ilp-ortools-cpsat": (7, 25),
    "ilp-dp-highs": (8, 40),
    "ilp-dp-rcfix-highs": (8, 40),
    "ilp-dp-pulp-highs": (7, 25),
    "ilp-dp-pulp-cbc": (7, 25),
    "ilp-dp-ortools-scip": (7, 25),
    "ilp-dp-ortools-cpsat": (7, 25),
    "ilp-gurobi": (7, 25),  # inside the size-limited licence of the package index
    "ilp-dp-gurobi": (7, 25),
}
RELAXATIONS = ["lp-joint-highs", "lp-dp-highs"]


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_backend_matches_brute_force(name):
    max_n, examples = BACKENDS[name]
    check_solver(name, max_n=max_n, max_examples=examples)


@pytest.mark.parametrize("options", [{"flow": "multi"}, {"bigram_cuts": True}, {"tighten": False},
                                     {"flow": "multi", "tighten": False}])
def test_formulation_options_match_brute_force(options):
    check_solver("ilp-highs", max_n=7, max_examples=20, **options)


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_infeasible_and_empty(name):
    solver = compbench.get_solver(name)
    p = compbench.generate("forbidden", n=5, seed=1, length=2)
    arc = np.full((6, 6), -np.inf)  # no arc at all: only the empty compression is possible
    infeasible = compbench.Problem(p.token_scores, arc, p.bigram_scores, length=Length.exact(2))
    assert solver.solve(infeasible).status == Status.INFEASIBLE
    empty = assert_conforms(solver, infeasible.replace(length=None))
    assert empty.status == Status.OPTIMAL and len(empty.kept) == 0


def _column_vector(model, n, heads):
    """Columns for an all-kept head assignment that is a tree: z = 1, y from heads, consecutive bigrams, flow =
    subtree sizes (single flow)."""
    x = np.zeros(model.num_cols)
    x[model.z_index[1:]] = 1
    for k in range(1, n + 1):
        x[model.y_index[heads[k], k]] = 1
    for a in range(n + 1):
        x[model.b_index[a, a + 1]] = 1
    flow_start = int(model.integrality.sum())  # single flow: one column per arc, in the order of the y columns
    for k in range(1, n + 1):  # each token adds one unit to every arc on its path from the root
        j = k
        while j != 0:
            x[flow_start + model.y_index[heads[j], j] - n] += 1
            j = heads[j]
    return x


@pytest.mark.parametrize("n", [3, 4, 5])
def test_model_accepts_exactly_the_projective_trees(n):
    p = compbench.generate("gaussian", n=n, seed=0)
    model = build_joint_model(p)
    projective = 0
    for assignment in itertools.product(range(n + 1), repeat=n):
        heads = np.array((-1, *assignment))
        if any(heads[k] == k for k in range(1, n + 1)):
            continue
        violation = tree_violation(heads)
        if violation is not None and "cycl" in violation.lower():
            continue
        x = _column_vector(model, n, heads)
        ax = np.add.reduceat(model.row_values * x[model.row_cols], model.row_starts[:-1])
        feasible = bool(np.all(ax >= model.row_lower - 1e-9) and np.all(ax <= model.row_upper + 1e-9))
        assert feasible == (violation is None), (heads, violation)
        projective += feasible
    assert projective > 0


@pytest.mark.parametrize("flow", ["single", "multi"])
@pytest.mark.parametrize("second_order", [False, True])
@pytest.mark.parametrize("tighten", [False, True])
def test_model_size_is_the_built_size(flow, second_order, tighten):
    """model_size, summed from the column blocks and row families, is the built model's size, family by family."""
    for n, single_root, mode, bigram_cuts in itertools.product((0, 1, 2, 4, 7), (False, True),
                                                                ("free", "exact", "range"), (False, True)):
        length = {"free": None, "exact": Length.exact(n // 2), "range": Length(n // 3, n)}[mode]
        p = compbench.generate("gaussian", n=n, seed=n, length=length, single_root=single_root,
                               second_order=second_order)
        model = build_joint_model(p, flow=flow, tighten=tighten, bigram_cuts=bigram_cuts)
        options = dict(flow=flow, tighten=tighten, bigram_cuts=bigram_cuts, length=length is not None,
                       single_root=single_root, second_order=second_order)
        expected = model_size(n, **options)
        assert {k: model.stats()[k] for k in expected} == expected
        assert (model.num_cols, model.num_rows, len(model.row_values)) == tuple(expected.values())
        shape = Shape(n, **options)
        families = {f.name: f.size(shape) for f in FAMILIES if f.when(shape)}
        assert families == {name: (stop - first, int(model.row_starts[stop] - model.row_starts[first]))
                            for name, (first, stop) in model.row_families.items()}
        assert len(set(model.row_names)) == model.num_rows and len(set(model.col_names)) == model.num_cols


@pytest.mark.parametrize("formulation", ["joint", "dp"])
@pytest.mark.parametrize("suffix", [".mps", ".lp"])
def test_written_model_reads_back_with_its_names_and_optimum(formulation, suffix, tmp_path):
    highspy = pytest.importorskip("highspy")
    from compbench_solvers.ilp import build_model

    p = compbench.generate("gaussian", n=6, seed=3, length=3, second_order=True)
    model = build_model(p, formulation)
    path = tmp_path / f"model{suffix}"
    write_model(model, path)
    text = path.read_text()
    for name in (model.row_names[0], model.row_names[-1], model.col_names[0], model.col_names[-1]):
        assert name in text
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    lp = h.getLp()
    names = list(lp.row_names_), list(lp.col_names_)
    if suffix == ".lp":  # an LP file lists the columns as they first occur
        names = names[0], sorted(names[1], key=model.col_names.index)
    assert names == (model.row_names, model.col_names)
    optimum = compbench.get_solver("brute-force").solve(p).objective
    assert h.getInfo().objective_function_value == pytest.approx(optimum, abs=1e-6)


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_second_order_backend_matches_brute_force(name):
    # the kit draws sibling scores half the time; here every problem has them
    solver = compbench.get_solver(name)

    @settings(max_examples=BACKENDS[name][1], deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(problem=problems(max_n=6, second_order=True))
    def run(problem):
        assert_conforms(solver, problem)

    run()


@pytest.mark.parametrize("name", ["ilp-highs", "ilp-pulp-cbc", "ilp-ortools-cpsat", "ilp-dp-ortools-cpsat",
                                  "ilp-dp-rcfix-highs"])
def test_time_limit_never_yields_invalid_solution(name):
    p = compbench.generate("distance", n=22, seed=4, length=10)
    solution = compbench.get_solver(name).solve(p, time_limit=0.05)
    assert solution.status in (Status.OPTIMAL, Status.TIMEOUT), solution.message
    if solution.heads is not None:
        assert evaluate(p, solution) == pytest.approx(solution.objective)
    if solution.status == Status.TIMEOUT and solution.bound is not None and solution.objective is not None:
        assert solution.bound >= solution.objective - 1e-6


@pytest.mark.parametrize("name", ["ilp-ortools-scip", "ilp-dp-ortools-scip", "ilp-highs", "ilp-pulp-cbc",
                                  "ilp-ortools-cpsat"])
def test_an_infinite_time_limit_is_none(name):
    """solve() takes time_limit=inf as no limit: SCIP's int64 milliseconds overflowed (an error answer)."""
    p = compbench.generate("gaussian", n=8, seed=1, length=4)
    expected = compbench.get_solver("resource-dp").solve(p).objective
    for limit in (float("inf"), 1e16):
        solution = compbench.get_solver(name).solve(p, time_limit=limit)
        assert solution.status == Status.OPTIMAL and solution.objective == pytest.approx(expected), solution.message


def test_a_backends_import_counts_within_its_time_limit(monkeypatch):
    """The import came before the clock started: stats['overrun'] and setup missed it."""
    import time

    solver = compbench.get_solver("ilp-highs")
    load = solver._load
    monkeypatch.setattr(solver, "_load", lambda: (time.sleep(0.3), load())[1])
    solution = solver.solve(compbench.generate("gaussian", n=6, seed=1, length=3), time_limit=0.2)
    assert solution.seconds["setup"] >= 0.3 and solution.stats["overrun"] >= 0.1


def _solutions(n: int, single_root: bool) -> int:
    """The number of (kept set, projective tree over it) pairs, by enumerating every head assignment."""
    count = 0
    for assignment in itertools.product(range(-1, n + 1), repeat=n):
        heads = np.array((-1, *assignment))
        count += tree_violation(heads, single_root) is None
    return count


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5])
@pytest.mark.parametrize("single_root", [False, True])
@pytest.mark.parametrize("second_order", [False, True])
def test_hypergraph_has_one_derivation_per_solution(n, single_root, second_order):
    # the dp model's integral points are the goal's hyperpaths: counting them (the count semiring over the listed
    # hyperedges) must give exactly the number of solutions
    p = compbench.generate("gaussian", n=n, seed=0, single_root=single_root, second_order=second_order)
    g = hypergraph(p)
    paths: dict[int, int] = {}
    for e in range(len(g.score)):
        ways = 1
        for item in g.antecedents[e]:
            ways *= paths.get(int(item), 0) if item >= 0 else 1
        paths[int(g.conclusion[e])] = paths.get(int(g.conclusion[e]), 0) + ways
    assert paths.get(g.goal, 0) == _solutions(n, single_root)


def test_dp_model_is_cubic():
    sizes = {n: build_dp_model(compbench.generate("gaussian", n=n, seed=0, length=n // 2)).stats() for n in (20, 40)}
    assert 7 < sizes[40]["nonzeros"] / sizes[20]["nonzeros"] < 9  # doubling n: about 2^3
    assert 3 < sizes[40]["constraints"] / sizes[20]["constraints"] < 5  # and 2^2 rows


@pytest.mark.parametrize("second_order", [False, True])
def test_dp_lp_is_integral_at_free_length(second_order):
    # Martin, Rardin & Campbell: the flow polytope of the hypergraph is integral, so the LP answers exactly
    solver = compbench.get_solver("lp-dp-highs")

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(problem=problems(max_n=8, length_modes=("free",), second_order=second_order))
    def run(problem):
        solution = assert_conforms(solver, problem)
        reference = compbench.get_solver("brute-force").solve(problem)
        assert solution.status == reference.status
        if solution.status == Status.OPTIMAL:
            assert solution.stats["lp_integral"]

    run()


@pytest.mark.parametrize("name", RELAXATIONS)
def test_relaxation_claims_optimal_only_with_proof(name):
    solver = compbench.get_solver(name)
    claims = {"optimal": 0, "other": 0}

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(problem=problems(max_n=7, second_order=None))
    def run(problem):
        solution = assert_conforms(solver, problem)  # never a false optimal, never an invalid solution
        if solution.status == Status.OPTIMAL:
            claims["optimal"] += 1
            assert solution.bound == pytest.approx(solution.objective)
        else:
            claims["other"] += 1
            if solution.status == Status.FEASIBLE:
                assert not solution.stats["lp_integral"]
                assert solution.bound is not None
        if name == "lp-joint-highs" and not solution.stats.get("lp_integral", True):
            assert solution.heads is None  # a fractional joint LP is never rounded

    run()
    assert claims["optimal"] > 0 and claims["other"] > 0


def test_reduced_cost_fixing_records_its_bound():
    p = compbench.generate("distance", n=16, seed=2, length=7)
    solution = compbench.get_solver("ilp-dp-rcfix-highs").solve(p)
    reference = compbench.get_solver("resource-dp").solve(p)
    assert solution.status == Status.OPTIMAL and solution.objective == pytest.approx(reference.objective)
    stats = solution.stats
    assert stats["lp_bound"] >= reference.objective - 1e-9
    assert stats["kept_columns"] < stats["model"]["variables"]


@pytest.mark.parametrize("name", ["ilp-gurobi", "ilp-dp-gurobi"])
def test_gurobi_licence_limit_is_unsupported_not_a_crash(name):
    pytest.importorskip("gurobipy", reason="the gurobi extra is not installed")
    solution = compbench.get_solver(name).solve(compbench.generate("distance", n=30, seed=0, length=13))
    # the package index's licence stops at 2,000 variables and constraints; a full licence solves it
    assert solution.status in (Status.UNSUPPORTED, Status.OPTIMAL), solution.message
    if solution.status == Status.UNSUPPORTED:
        assert "licen" in solution.message


@pytest.mark.parametrize("name", ["ilp-highs", "ilp-dp-highs", "ilp-pulp-cbc"])
def test_model_that_cannot_fit_is_refused_before_it_is_built(name):
    p = compbench.generate("distance", n=800, seed=0, length=300)  # the dp model alone: about 0.3 TB
    solution = compbench.get_solver(name).solve(p, time_limit=5)
    assert solution.status == Status.UNSUPPORTED and "GiB, more than a quarter of the memory" in solution.message
    assert solution.seconds["total"] < 2


def test_reduced_cost_fixing_without_lp_duals_still_proves():
    # length 0 with a forbidden <s> -> </s> bigram: the LP is infeasible and its interior-point run gives no duals;
    # the whole MIP then decides (found by hypothesis)
    inf = np.inf
    p = compbench.Problem(np.array([0.924, 0.556]),
                          np.array([[-inf, -0.988, -1.821], [-inf, -inf, -0.808], [-inf, 2.153, -inf]]),
                          np.array([[-inf, 0.291, -0.489, -inf], [-inf, -inf, 0.371, 0.411],
                                    [-inf, -inf, -inf, 0.421], [-inf, -inf, -inf, -inf]]), length=Length.exact(0))
    assert compbench.get_solver("ilp-dp-rcfix-highs").solve(p).status == Status.INFEASIBLE


def test_lp_relaxation_proves_an_infeasible_problem_where_the_interior_point_fails():
    # HiGHS's interior point + crossover answers "Solve error" on this infeasible LP (found by hypothesis)
    n, rng = 7, np.random.default_rng(4294967295)
    arrays = [rng.integers(-2, 3, size=s).astype(np.float64) for s in [(n,), (n + 1, n + 1), (n + 2, n + 2)]]
    for array in arrays:
        array[rng.random(array.shape) < 0.15] = -np.inf
    p = compbench.Problem(*arrays, length=Length.exact(5), single_root=True)
    assert compbench.get_solver("brute-force").solve(p).status == Status.INFEASIBLE
    assert compbench.get_solver("lp-dp-highs").solve(p).status == Status.INFEASIBLE


def cancelling_problem(scale: float) -> compbench.Problem:
    """n = 6, length 3..5: costs near ``scale`` that cancel to an optimum of 1 (found by a fuzzer at 1e12)."""
    N, T, H = -np.inf, scale, scale / 2
    arc = [[N, -T, -H, N, N, N, N], [N, N, N, N, 0.0, N, N], [N, -(T - 1), N, T, N, N, N],
           [N, T, T - 1, N, N, N, N], [N, N, T - 1, 0.0, N, N, N], [N] * 7, [N] * 7]
    bigram = [[N, 0.0, 0.0, N, N, N, N, N], [N, N, -H, N, N, N, N, N], [N, N, N, 0.0, T - 1, N, N, N],
              [N, N, N, N, 0.0, N, N, T], [N, N, N, N, N, N, N, -H], [N] * 8, [N] * 8, [N] * 8]
    return compbench.Problem(np.array([-H, -H, T, 0.0, N, N]), np.array(arc), np.array(bigram),
                             length=compbench.Length(3, 5))


@pytest.mark.parametrize("name", ["ilp-highs", "ilp-ortools-scip", "ilp-dp-highs", "ilp-dp-rcfix-highs",
                                  "lp-joint-highs"])
def test_mip_backends_refuse_scores_their_tolerances_cannot_certify(name):
    # at 1e12 ilp-highs claimed 0 optimal and SCIP -1 (down to 1e9): a floating-point backend refuses such scores
    solver = compbench.get_solver(name)
    if solver.unavailable():
        pytest.skip(solver.unavailable())
    assert compbench.get_solver("resource-dp").solve(cancelling_problem(1e12)).objective == 1.0
    refused = solver.solve(cancelling_problem(1e12))
    assert refused.status == Status.UNSUPPORTED and "limit of 1e+06" in refused.message
    assert_conforms(solver, cancelling_problem(compbench.limits.MIP_MAX_SCORE))  # at the limit: right


@pytest.mark.parametrize("name", ["ilp-highs", "ilp-dp-highs", "ilp-pulp-highs", "ilp-pulp-cbc", "ilp-ortools-scip",
                                  "ilp-dp-rcfix-highs", "lp-dp-highs"])
def test_mip_backends_prove_optima_of_tiny_scores(name):
    # scores near 1e-6 are as large as the backends' absolute tolerances (HiGHS's mip_abs_gap 1e-6): ilp-dp-highs
    # claimed 5e-7 optimal on the first problem (the optimum, keeping nothing, is 6e-7), CBC was off by 1.4e-6 of
    # 5.7e-6 elsewhere; the driver now scales such costs by a power of two
    solver = compbench.get_solver(name)
    if solver.unavailable():
        pytest.skip(solver.unavailable())
    first = compbench.Problem(np.array([-8, 0]) * 1e-7, np.array([[1, -5, -4], [-7, 8, 0], [-4, 5, 9]]) * 1e-7,
                              np.array([[-4, 8, 5, 6], [0, 8, -7, -8], [9, 0, -2, 4], [-4, 3, 7, 6]]) * 1e-7)
    assert assert_conforms(solver, first).objective == pytest.approx(6e-7, rel=1e-12)
    rng = np.random.default_rng(10)
    for k in range(6):
        n = 5
        tiny = compbench.Problem(rng.normal(size=n) * 1e-6, rng.normal(size=(n + 1, n + 1)) * 1e-6,
                                 rng.normal(size=(n + 2, n + 2)) * 1e-6, single_root=bool(k % 2), id=f"tiny-{k}")
        assert_conforms(solver, tiny)


def test_cp_sat_takes_every_score_exactly():
    solver = compbench.get_solver("ilp-ortools-cpsat")
    if solver.unavailable():
        pytest.skip(solver.unavailable())
    assert solver.solve(cancelling_problem(1e12)).objective == 1.0


@pytest.mark.parametrize("name", ["ilp-highs", "ilp-pulp-highs"])
def test_highs_presolve_on_the_joint_model_stays_off(name):
    # HiGHS with presolve on reports the empty compression (-0.201) optimal here, where keeping word 3 under the
    # root scores 2.132 (found by hypothesis): both HiGHS backends keep presolve off on the joint model
    inf = np.inf
    p = compbench.Problem(
        np.array([0.038, 1.298, 0.534, -inf, -inf]),
        np.array([[-inf, -inf, 0.323, 1.606, -inf, -0.135], [-inf] * 6, [-inf, -inf, -inf, -inf, -0.913, -0.889],
                  [-inf, -0.928, 0.039, -inf, -0.998, -inf], [-inf, -2.326, -inf, -inf, -inf, 1.412],
                  [-inf, -inf, -inf, -inf, -0.756, -inf]]),
        np.array([[-inf, -inf, -inf, -0.418, 0.825, -inf, -0.201], [-inf, -inf, -inf, 1.248, -inf, -inf, 0.367],
                  [-inf, -inf, -inf, -inf, -inf, 0.077, -0.112], [-inf, -inf, -inf, -inf, -0.362, -2.186, 0.41],
                  [-inf] * 7, [-inf, -inf, -inf, -inf, -inf, -inf, -1.105], [-inf] * 7]))
    assert compbench.get_solver("brute-force").solve(p).objective == pytest.approx(2.132)
    assert_conforms(compbench.get_solver(name), p)


def test_highs_runs_with_any_thread_count_after_another() -> None:
    """HiGHS's scheduler is per process: threads=2 after a run with 1 (or back) was an error answer, through highspy
    and through PuLP ('global scheduler has already been initialized to use 1 threads')."""
    p = compbench.generate("gaussian", n=4, seed=0, length=2)
    optimum = compbench.get_solver("brute-force").solve(p).objective
    for spec in ("ilp-highs", "ilp-highs[threads=2]", "ilp-pulp-highs[threads=2]", "ilp-dp-highs[threads=3]",
                 "ilp-pulp-highs", "ilp-highs"):
        solution = compbench.get_solver(spec).solve(p, time_limit=30)
        assert solution.status == compbench.Status.OPTIMAL, (spec, solution.message)
        assert solution.objective == pytest.approx(optimum)


def test_pulp_backends_refuse_settings_their_solver_does_not_take() -> None:
    """CBC and PuLP's HiGHS ignored an unknown or bad setting and the result recorded it as applied."""
    p = compbench.generate("gaussian", n=4, seed=0, length=2)
    for spec, says in (("ilp-pulp-cbc[settings.no_such_parameter=1]", "CBC refused the setting no_such_parameter"),
                       ("ilp-pulp-cbc[settings.presolve=maybe]", "CBC refused the setting presolve = 'maybe'"),
                       ("ilp-pulp-highs[settings.no_such_parameter=1]", "HiGHS refused the setting")):
        solution = compbench.get_solver(spec).solve(p, time_limit=30)
        assert solution.status == compbench.Status.ERROR and says in solution.message, (spec, solution.message)
    assert compbench.get_solver("ilp-pulp-cbc[settings.presolve=off]").solve(p, time_limit=30).status.value == \
        "optimal"


def test_cp_sat_leaves_ctrl_c_to_compbench() -> None:
    """CP-SAT's solve set the C-level SIGINT handler back to the default: after one CP-SAT solve in the process
    (demo warms every solver up in its own), Ctrl-C killed compbench with no cleanup and no end record."""
    def caught() -> bool:
        status = Path("/proc/self/status").read_text()
        return int(next(line for line in status.splitlines() if line.startswith("SigCgt")).split()[1], 16) & 2 != 0

    assert caught()
    p = compbench.generate("gaussian", n=4, seed=0, length=2)
    assert compbench.get_solver("ilp-ortools-cpsat").solve(p, time_limit=30).status == compbench.Status.OPTIMAL
    assert caught()
