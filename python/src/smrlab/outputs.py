"""Files smrlab writes (figures, the report): whole or not at all, never over something else.

Each is written to a hidden temporary file beside it and renamed over it when complete, so a
full disk, an error or Ctrl-C halfway leaves the previous file, not half of a new one. What is
there and is not a regular file (a directory, a symbolic link, a FIFO, a device) is refused
rather than replaced: the rename would replace it, as smrbench refuses too.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from smrlab.errors import UsageError


def check_output(path: Path) -> None:
    """UsageError if ``path`` exists and is not a regular file."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        raise UsageError(f"will not replace {path}: it is {kind}")


def check_output_dir(path: Path, option: str = "--out") -> None:
    """UsageError, before any work, if the directory ``path`` cannot be made or written: it
    exists and is not a directory, or the nearest directory above it that exists is not one
    this process may write."""
    if path.exists() and not path.is_dir():
        raise UsageError(f"{option} {path}: exists and is not a directory")
    _check_writable_from(path, option)


def check_output_file(path: Path, option: str = "--out") -> None:
    """UsageError, before any work, if the file ``path`` cannot be written whole (see
    ``check_output``; its directory may not exist yet)."""
    _check_writable_from(path.parent, option, shown=path)
    check_output(path)


def _check_writable_from(directory: Path, option: str, shown: Path | None = None) -> None:
    shown = shown or directory
    existing = directory
    while not existing.exists():
        if existing.is_symlink():  # a dangling link: nothing can be made through it
            raise UsageError(f"{option} {shown}: {existing} is a broken symbolic link")
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"{option} {shown}: {existing} is not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"{option} {shown}: permission denied to write in {existing}")


def write_atomically(path: Path, write: Callable[[Path], None]) -> None:
    """Calls ``write(temporary)`` to fill a new file beside ``path``, then renames it over
    ``path``. Any failure removes the temporary file and leaves ``path`` as it was."""
    check_output(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # A new file of our own (O_EXCL): nothing that exists, a link included, is written through.
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".smrlab.tmp")
    os.close(fd)
    temporary = Path(name)
    try:
        # The mode of the file it replaces, or a new file's.
        temporary.chmod(path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~_umask())
        write(temporary)
        temporary.replace(path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
