"""Files compbench writes, whole or not at all: written under a temporary name beside the target, then renamed over
it in one step (readers see the old file or the new one, never a mix).  Light: the CLI imports it before numpy."""

from __future__ import annotations

import contextlib
import os
from os import PathLike
from pathlib import Path
from typing import Iterator


@contextlib.contextmanager
def atomic_output(path: str | PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success it replaces ``path`` in one step (never half a file).  A
    write that fails is an :class:`OSError` naming ``path``."""
    out = Path(path)
    partial = out.with_name(f".{out.name}.partial{out.suffix}")
    try:
        yield partial
        os.replace(partial, out)
    except OSError as exc:  # a failed write names the file it was for (a write error itself names none)
        raise OSError(exc.errno, exc.strerror or str(exc), str(out)) from None
    finally:
        partial.unlink(missing_ok=True)
