"""compbench_solvers.jit: kernels defined with its njit load from numba's cache without numba's registries, and run
(with numba's runtime when they allocate); every other function loads as numba loads it."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import textwrap

import pytest

KERNELS = textwrap.dedent("""
    import sys

    import numba
    import numpy as np

    from compbench_solvers.jit import njit

    REGISTRIES = "numba.np.linalg"  # one of the modules numba's registry refresh imports (import numba does not)


    @njit(cache=True, _nrt=False)
    def total(a):
        s = 0.0
        for x in a:
            s += x
        return s


    @njit(cache=True)
    def halves(n):  # allocates: needs numba's runtime
        out = np.empty(n)
        for i in range(n):
            out[i] = i / 2
        return out


    @numba.njit(cache=True)
    def plain(x):  # not ours: numba's own loading
        return x + 1


    print(total(np.arange(4.0)), halves(3).tolist(), REGISTRIES in sys.modules)
    print(plain(1), REGISTRIES in sys.modules)
""")


def test_own_kernels_load_without_registries_and_others_as_numba_loads_them(tmp_path):
    script = tmp_path / "kernels.py"
    script.write_text(KERNELS)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    runs = [subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
            for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr  # halves loaded without the runtime it calls would crash
    compiled, loaded = (run.stdout.splitlines() for run in runs)
    assert compiled == ["6.0 [0.0, 0.5, 1.0] True", "2 True"]  # compiling fills the registries
    assert loaded == ["6.0 [0.0, 0.5, 1.0] False", "2 True"]  # ours load without them; numba's own refreshes


def test_a_numba_whose_internals_differ_loads_through_numbas_own_path(tmp_path):
    """A planted mismatch in our loading path (its runtime call raises, as a renamed internal would): the kernels
    still load and run, through numba's own loading (the registries refreshed)."""
    script = tmp_path / "kernels.py"
    script.write_text(KERNELS)
    broken = tmp_path / "broken.py"
    broken.write_text(KERNELS.replace("from compbench_solvers.jit import njit", textwrap.dedent("""\
        import compbench_solvers.jit
        from compbench_solvers.jit import njit


        class Gone:
            def initialize(self, context):
                raise AttributeError("a numba whose internals differ")


        compbench_solvers.jit.rtsys = Gone()""")))
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    for path in (script, broken):  # compile into the cache, then load from it with the planted mismatch
        run = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=300)
        assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["6.0 [0.0, 0.5, 1.0] True", "2 True"]  # loaded by numba's path: refreshed


def test_a_change_to_any_kernel_module_is_a_change_to_every_kernel(tmp_path):
    import numba

    from compbench_solvers.compressive.batch import _DECODE_MANY
    from compbench_solvers.compressive.chart import _DERIVES, FILL_MAX
    from compbench_solvers.jit import sources_stamp

    # the batch kernel links the chart's rules: both carry the stamp of every kernel module, not their own file's
    assert _DECODE_MANY[1]._cache._cache_file._source_stamp == _DERIVES[FILL_MAX, 1]._cache._cache_file._source_stamp
    user = tmp_path / "user.py"  # a user's own cached function keeps numba's stamp of its own file
    user.write_text("def twice(x):\n    return 2 * x\n")
    namespace = {}
    exec(compile(user.read_text(), str(user), "exec"), namespace)
    plain = numba.njit(cache=True)(namespace["twice"])
    assert plain._cache._cache_file._source_stamp != _DECODE_MANY[1]._cache._cache_file._source_stamp
    files = [tmp_path / "a.py", tmp_path / "b.py"]
    for file in files:
        file.write_text("x = 1\n")
    before = sources_stamp(files)
    os.utime(files[1], ns=(0, 10**9))
    assert sources_stamp(files) == before  # contents, not times: a checkout of the same files compiles nothing
    files[1].write_text("x = 2\n")
    assert sources_stamp(files) != before


FIRST_SOLVE = textwrap.dedent("""
    import compbench
    from compbench_solvers.compressive.chart import _DERIVES, MODE_NAMES

    compbench.get_solver("resource-dp").solve(compbench.generate("gaussian", 5, seed=0, length=2))
    print(sorted(f"{MODE_NAMES[mode]} {order}" for (mode, order), kernel in _DERIVES.items() if kernel.signatures))
""")


def test_a_first_order_solve_compiles_only_the_first_order_fill_and_backtrace(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}  # empty: everything it needs is compiled
    run = subprocess.run([sys.executable, "-c", FIRST_SOLVE], capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split("\n")[-2] == "['fill_max 1', 'find 1']"


def test_every_module_that_defines_kernels_shares_the_stamp():
    from compbench_solvers.jit import HERE, KERNEL_SOURCES

    decorators = re.compile(r"from \.\.?jit import [^\n]*\b(njit|kernel)\b")  # not with_globals alone (the GPU's)
    defining = {str(path.relative_to(HERE)) for path in HERE.rglob("*.py") if decorators.search(path.read_text())}
    assert defining | {"jit.py"} == set(KERNEL_SOURCES), "list the module in compbench_solvers.jit.KERNEL_SOURCES"
    assert all((HERE / path).is_file() for path in KERNEL_SOURCES)


def test_the_cached_gpu_kernels_carry_the_stamp_of_every_module_they_compile_from():
    from compbench_solvers.cuda import runtime

    if runtime.simulated():
        pytest.skip("numba's CUDA simulator caches nothing")
    if importlib.util.find_spec("numba_cuda") is None:  # (numba < 0.61 has a CUDA target of its own, not this one)
        pytest.skip("numba-cuda is not installed (the gpu extra)")
    from compbench_solvers.cuda import hook
    from compbench_solvers.jit import GPU_KERNEL_SOURCES, _kernel_sources

    # hook.py's kernels compile device.py's and marginals.py's functions: a change there must miss their cache too
    stamp = _kernel_sources(GPU_KERNEL_SOURCES)[1]
    kernels = [hook._decode_team, *hook.DECODERS[(True, True)].values(), *hook.INFERRERS[True].values()]
    assert [kernel._cache._cache_file._source_stamp for kernel in kernels] == [stamp] * len(kernels)


def test_a_cache_entry_written_under_another_module_name_is_compiled_again(tmp_path):
    """Kernels imported as a package's module (``pkg.kernels``, as pytest --doctest-modules imports
    ``solvers.compressive.chart`` from the repository root) leave cache entries that name that module: loaded by a
    process that imports the file under another name, numba's own loading raised ModuleNotFoundError too, and every
    chart solver 'could not be loaded'.  Such an entry is a miss: compiled again."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    ours = KERNELS[:KERNELS.index("@numba.njit")] + KERNELS[KERNELS.index("print(total"):KERNELS.index("print(plain")]
    (package / "kernels.py").write_text(ours)  # ours only: numba's own njit fails on such an entry as it always did
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    as_package = subprocess.run([sys.executable, "-c", "import pkg.kernels"], cwd=tmp_path, capture_output=True,
                                text=True, env=env, timeout=300)
    assert as_package.returncode == 0, as_package.stderr
    alone = subprocess.run([sys.executable, "-c", "import kernels"], cwd=package, capture_output=True, text=True,
                           env={**env, "PYTHONPATH": str(package)}, timeout=300)
    assert alone.returncode == 0, alone.stderr
    assert alone.stdout.splitlines()[0].startswith("6.0 [0.0, 0.5, 1.0]")
