"""The built-in solvers' numba decorator: :func:`njit`, numba's own, whose kernels load from numba's cache without
numba refreshing its registries first.

Before numba loads a cached kernel, ``Cache.load_overload`` calls ``target_context.refresh()``: it fills the typing
and lowering registries of everything numba can compile, and starts numba's runtime (NRT).  That is most of a warm
``compbench solve`` (reports/performance/startup.txt: numba's floor against the same function defined here).
Loading a kernel needs none of the registries: a cached kernel is machine code, linked and ready; the refresh serves
code numba generates *after* a load (object-mode blocks and ``vectorize`` wrappers: numba issue #2198, pull request
#9806), which no kernel here has.  What a loaded kernel does need is the runtime, when its object code calls it
(allocations, reference counts): loaded without it, such a kernel crashes.

So a kernel defined with :func:`njit` loads through numba's own ``_load_overload`` with the runtime started
(``rtsys.initialize``, idempotent, which the refresh also does) instead of the refresh: the runtime is always there,
so no loaded kernel can miss it, and nothing of numba's loading is re-implemented here; on any error in that path
(a numba whose internals differ) the kernel loads through numba's own ``load_overload``, refresh included.  Compiling is unchanged
(numba's compiler refreshes both contexts before it starts: a cache miss in the same process compiles as before),
and so is every function not defined with this decorator: a user's kernels load as numba loads them.
``Cache.load_overload`` is private API, like the ``_nrt`` flag: pyproject.toml bounds numba to the versions tested,
``tests/test_jit.py`` checks both ways of loading in fresh processes, and ``.ci/run`` runs it on the lower bound.

The chart's kernels are defined with :func:`kernel`: :func:`njit`, cached, and without numba's reference counting
(``_nrt=False``): their arrays are allocated by the caller, and a rule that takes the arrays as arguments then costs
no atomic increments per call (with them hook-dp and resource-dp ran 1.6-7x slower).  Kernels that allocate (the
marginals, the signature DP, the pruned path's windows) use :func:`njit` with numba's runtime.

numba's cache checks a kernel against its own source file only: a kernel that calls kernels of another module (the
batch kernels call the chart's) would load its stale compiled code after that module changed.  So the kernels of this
package are stamped with the contents of every kernel module (``KERNEL_SOURCES``), and a change to any of them
compiles them all again (a first solve then compiles for a few seconds: reports/performance/compile.txt).  The
cached GPU kernels likewise (``GPU_KERNEL_SOURCES``: hook.py's kernels compile device functions of other modules).

Every private numba name this project touches, all here: the ``_nrt`` option of ``numba.njit`` (above; set in
``NO_REFERENCE_COUNTS``, which kernels and an ``overload`` they call take);
``numba.core.caching.Cache.load_overload`` (replaced, for our kernels only) and the two members of ``Cache`` it
calls, ``_load_overload`` and ``_guard_against_spurious_io_errors``, and ``_py_func``;
``numba.core.caching._SourceFileBackedLocatorMixin.get_source_stamp`` (replaced, for our kernel modules only) and its
``_py_file``, and the same method of numba-cuda's cache locators (``numba.cuda.core.caching.CacheImpl.
_locator_classes``, replaced by :mod:`.cuda.device` for the GPU's kernel modules only); ``numba.core.runtime.rtsys
.initialize`` (public in numba's runtime module); and a dispatcher's ``_cache._cache_file._load_index()``, which
``compressive.chart.announce_compile`` reads to say whether a first call will compile (any error there: it says
nothing).

>>> @njit(_nrt=False)
... def twice(x):
...     return 2 * x
>>> twice(21)
42
"""

from __future__ import annotations

import functools
import hashlib
import inspect
from pathlib import Path
from types import FunctionType
from typing import Any, Callable

import numba
from numba.core import caching
from numba.core.runtime import rtsys

MARK = "_loads_without_registries"  # set on every function njit defines (numba's Cache keeps the function)
HERE = Path(__file__).resolve().parent
KERNEL_SOURCES = ("jit.py", "compressive/batch.py", "compressive/chart.py", "compressive/marginals.py",
                  "compressive/pruned.py", "signature/chart.py")  # the modules whose kernels share one cache stamp
GPU_KERNEL_SOURCES = ("jit.py", "compressive/marginals.py", "cuda/device.py", "cuda/hook.py")  # the cached GPU
# kernels' module (hook.py's; eisner.py's are not cached) and the modules they compile code or copies from: one stamp


def njit(*args: Any, **options: Any) -> Callable:
    """``numba.njit`` with the same arguments (``@njit`` or ``@njit(...)``), for a kernel that loads from the
    cache without numba's registries."""
    if len(args) == 1 and not options and inspect.isfunction(args[0]):
        return njit()(args[0])

    def define(function: Callable) -> Callable:
        setattr(function, MARK, True)  # before numba.njit: with a signature, it loads the kernel at once
        return numba.njit(*args, **options)(function)

    return define


NO_REFERENCE_COUNTS = {"_nrt": False}  # the one place that flag is set (see the module docstring)


def kernel(*args: Any, **options: Any) -> Callable:
    """A chart kernel: :func:`njit` with ``cache=True`` and ``NO_REFERENCE_COUNTS``, and any other option or a
    signature as numba takes them: ``@kernel``, ``@kernel(inline="always")``, ``@kernel(types.void(...))``.  (An
    ``overload`` that a kernel calls takes ``jit_options=NO_REFERENCE_COUNTS``.)"""
    if len(args) == 1 and not options and inspect.isfunction(args[0]):
        return kernel()(args[0])
    return njit(*args, **{"cache": True, **NO_REFERENCE_COUNTS, **options})


def sources_stamp(paths: list[Path]) -> str:
    """What changes when any of ``paths`` changes: a sha256 of their names and contents (numba stamps one file by
    its contents too)."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@functools.cache
def _kernel_sources(sources: tuple[str, ...]) -> tuple[frozenset[str], str]:
    """The kernel modules ``sources`` of this package (resolved paths) and their stamp, once per process."""
    paths = [(HERE / name).resolve() for name in sources]
    return frozenset(map(str, paths)), sources_stamp(paths)


_STAMPED: list[tuple[str, ...]] = []  # the groups of kernel modules whose kernels share a stamp (share_stamp)


def share_stamp(locators: tuple[type, ...], sources: tuple[str, ...]) -> None:
    """Stamp the cached kernels of the modules ``sources`` with the contents of them all (:func:`sources_stamp`):
    ``get_source_stamp`` of each cache locator class of ``locators`` (numba's, or numba-cuda's, which has its own)
    replaced, for the kernels of a module of a group given here only (the first group that lists it); any other
    function keeps numba's stamp of its own file."""
    if sources not in _STAMPED:
        _STAMPED.append(sources)
    for locator in locators:
        numba_stamp = locator.get_source_stamp
        if getattr(numba_stamp, MARK, False):  # replaced already (on this class or one it inherits it from)
            continue

        def get_source_stamp(self, numba_stamp=numba_stamp):
            try:
                path = str(Path(self._py_file).resolve())
                for group in _STAMPED:
                    files, stamp = _kernel_sources(group)
                    if path in files:
                        return stamp
            except Exception:  # a kernel module unreadable, a locator without a file: numba's own stamp
                pass
            return numba_stamp(self)

        setattr(get_source_stamp, MARK, True)
        locator.get_source_stamp = get_source_stamp


def _install() -> None:
    """Make numba's cache load the kernels :func:`njit` defines without refreshing its registries: numba's own
    ``load_overload`` less its first line (``target_context.refresh()``), the runtime started instead."""
    numba_load = caching.Cache.load_overload
    if getattr(numba_load, MARK, False):
        return

    def load_overload(self, sig, target_context):
        if not getattr(self._py_func, MARK, False):  # not ours: numba's own
            return numba_load(self, sig, target_context)
        try:
            rtsys.initialize(target_context)  # idempotent: the part of the refresh a loaded kernel may need
            with self._guard_against_spurious_io_errors():
                return self._load_overload(sig, target_context)
        except Exception:  # any mismatch with this numba's internals: numba's own path, refresh included
            try:
                return numba_load(self, sig, target_context)
            except Exception:  # an entry numba cannot load either: a miss, compiled again and the entry replaced
                return None  # (one written under another module name, e.g. `solvers.compressive` imported from
                # the repository root, named a module no other process can import: every chart solver failed)

    setattr(load_overload, MARK, True)
    caching.Cache.load_overload = load_overload
    share_stamp((caching._SourceFileBackedLocatorMixin,), KERNEL_SOURCES)


_install()


def with_globals(function: FunctionType, name: str, **names: object) -> FunctionType:
    """A copy of ``function`` named ``name`` in which the global ``names`` have the values given.  numba reads a
    function's globals as constants when it compiles it, so each copy compiles to a kernel of its own, holding the
    code of what is bound (numba's cache files are named by the function's qualified name: one per copy).  The
    copy sees the module's globals as they are when it is made."""
    unused = set(names) - set(function.__code__.co_names)
    if unused:
        raise ValueError(f"{function.__name__} reads no global {', '.join(sorted(unused))}")
    code = function.__code__.replace(co_name=name, co_qualname=name)
    copy = FunctionType(code, {**function.__globals__, **names}, name, function.__defaults__)
    copy.__doc__, copy.__module__ = function.__doc__, function.__module__
    return copy
