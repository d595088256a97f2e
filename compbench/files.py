"""Files compbench writes, whole or not at all: written under a temporary name beside the target, then renamed over
it in one step (readers see the old file or the new one, never a mix).  Light: the CLI imports it before numpy."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from os import PathLike
from pathlib import Path
from typing import Iterable, Iterator


def remove_leftovers(parent: Path, prefix: str) -> None:
    """Remove what a killed process left in ``parent`` (a SIGKILL runs no cleanup): the entries named
    ``prefix``PID-... whose process PID no longer runs (those of a process that still runs are its own)."""
    try:
        entries = [e for e in os.scandir(parent) if e.name.startswith(prefix)]
    except OSError:
        return
    for entry in entries:
        pid = entry.name[len(prefix):].split("-", 1)[0]
        if not pid.isdigit() or _running(int(pid)):
            continue
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(entry.path)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: only whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        pass
    return True


@contextlib.contextmanager
def atomic_output(path: str | PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``, of this write alone (two commands writing one file each write their
    own); on success it replaces ``path`` in one step (never half a file, nor a mix of two); a symbolic link's target
    is replaced, the link kept.  A write that fails is an
    :class:`OSError` naming ``path``; the temporary files of earlier writes of ``path`` that were killed go first."""
    given = Path(path)
    out = Path(os.path.realpath(given)) if given.is_symlink() else given  # a link's target is written, the link kept
    remove_leftovers(out.parent, f".{out.name}.partial-")
    partial = out.with_name(f".{out.name}.partial-{os.getpid()}-{secrets.token_hex(4)}{out.suffix}")
    try:
        yield partial
        os.replace(partial, out)
    except OSError as exc:  # a failed write names the file it was for (a write error itself names none)
        raise OSError(exc.errno, exc.strerror or str(exc), str(given)) from None
    finally:
        partial.unlink(missing_ok=True)


@contextlib.contextmanager
def staging_folder(parent: str | PathLike, prefix: str) -> Iterator[Path]:
    """A new folder ``prefix``PID-RANDOM in ``parent`` (on its file system: files move out of it in one rename), removed
    at exit whatever happens, an interrupt (Ctrl-C, SIGTERM) that lands while it is being removed included: the
    removal finishes, then the interrupt goes on; a folder a killed run left (SIGKILL) is removed by the next.
    (``tempfile.TemporaryDirectory`` leaves the rest of the folder
    when an interrupt cuts its removal short.)"""
    remove_leftovers(Path(parent), prefix)  # the folders of earlier runs that were killed
    folder = Path(parent) / f"{prefix}{os.getpid()}-{secrets.token_hex(4)}"
    try:
        folder.mkdir()
        yield folder
    finally:
        interrupted = None
        while True:
            try:
                shutil.rmtree(folder, ignore_errors=True)
                break
            except KeyboardInterrupt as exc:  # the removal again, to its end
                interrupted = exc
        if interrupted is not None:
            raise interrupted


@contextlib.contextmanager
def replaced_together(out: str | PathLike, stale: Iterable[str] = (), last: str | None = None) -> Iterator[Path]:
    """Yield a new folder inside ``out`` to write a set of files into (subfolders too); when the block ends without
    an error, each written file is renamed into ``out`` (through a symbolic link there, as :func:`atomic_output`
    writes), ``last`` (e.g. a README that links the others) last, and then the ``stale`` files (names relative to
    ``out``) that the new set lacks are removed.  A block that fails or is interrupted leaves ``out`` as it was;
    an interrupt between the renames leaves the old README beside some new files, never a README whose figures
    are gone."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with staging_folder(out, ".staged-") as staging:
        yield staging
        written = [path for path in staging.rglob("*") if path.is_file()]
        for path in sorted(written, key=lambda path: (path.relative_to(staging).as_posix() == last, str(path))):
            target = out / path.relative_to(staging)
            target = Path(os.path.realpath(target)) if target.is_symlink() else target
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, target)
        for name in stale:
            if not any(path.relative_to(staging).as_posix() == name for path in written):
                (out / name).unlink(missing_ok=True)


def text_lines(text: str) -> list[str]:
    r"""The lines of a text file (JSON Lines, a corpus, CoNLL-U): split at line feeds only, a CR before one dropped
    (``str.splitlines`` also splits at U+2028, U+0085, form feeds ..., which a JSON string or a token may hold).

    >>> text_lines("a\u2028b\r\nc\n")
    ['a\u2028b', 'c']
    """
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    return lines[:-1] if lines and not lines[-1] else lines
