"""The built-in solvers' numba decorator: :func:`njit`, numba's own, whose kernels load from numba's cache without
numba filling its registries first.

numba's ``Cache.load_overload`` calls ``target_context.refresh()`` before it loads a cached kernel.  That fills the
typing and lowering registries of everything numba can compile (and starts numba's runtime, NRT): 0.17 s, most of a
warm ``compbench solve`` (reports/performance/startup.txt).  Loading a kernel needs none of the registries: a cached
kernel is machine code, linked and ready.  The refresh is there for code that numba generates *after* a load
(object-mode blocks and ``vectorize`` wrappers, numba issues #2198 and #9806), which no kernel here has.  What a
loaded kernel does need is the runtime when its code calls it (allocations, reference counts): numba's flag
``_nrt=False`` says it does not.

So a kernel defined with this :func:`njit` loads without the registries, after the runtime is started unless it was
declared ``_nrt=False``.  Compiling is unaffected (numba's compiler refreshes both contexts before it starts: a cache
miss in the same process compiles as before), and so is every function not defined with this decorator: a user's
kernels load as numba loads them.  ``Cache.load_overload`` is private API like the ``_nrt`` flag: pyproject.toml
bounds numba to the versions tested, and ``.ci/run`` runs the chart's tests on the lower bound.

>>> @njit(_nrt=False)
... def twice(x):
...     return 2 * x
>>> twice(21)
42
"""

from __future__ import annotations

from typing import Any, Callable

import numba
from numba.core import caching
from numba.core.runtime import rtsys

_uses_runtime: dict[Any, bool] = {}  # the code object of every kernel defined with njit -> whether it calls NRT


def njit(*args: Any, **options: Any) -> Callable:
    """``numba.njit`` with the same arguments (always called: ``@njit(...)``), for a kernel that loads from the
    cache without numba's registries."""

    def define(function: Callable) -> Callable:
        _uses_runtime[function.__code__] = options.get("_nrt", True)  # before numba.njit: a signature loads it now
        return numba.njit(*args, **options)(function)

    return define


def _install() -> None:
    """Make numba's cache load the kernels defined with :func:`njit` without refreshing its registries."""
    numba_load = caching.Cache.load_overload
    if getattr(numba_load, "without_registries", False):
        return

    def load_overload(self, sig, target_context):
        uses_runtime = _uses_runtime.get(getattr(self._py_func, "__code__", None))
        if uses_runtime is None:  # not ours: numba's own
            return numba_load(self, sig, target_context)
        if uses_runtime:
            rtsys.initialize(target_context)  # idempotent; what the refresh would have started
        with self._guard_against_spurious_io_errors():  # numba's own method without target_context.refresh()
            return self._load_overload(sig, target_context)

    load_overload.without_registries = True
    caching.Cache.load_overload = load_overload


_install()
