"""One ``smrlab run`` per result store at a time.

Two runs on one store would both run every trial not yet stored (each checks the store before
it starts) and race on the files they record. A run therefore holds an exclusive ``flock`` on
``STORE.lock`` beside the store for as long as it runs; a second run is refused with the first
one's process id. The kernel drops the lock when its holder exits, however it ends, so a killed
run never leaves the store locked; the lock file itself stays, empty of meaning.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from smrlab.errors import UsageError


def lock_path(db_path: Path) -> Path:
    """The lock file of a store: beside the file itself, wherever a symbolic link or ``..``
    in the path given leads, so that two names of one store take one lock (SQLite too keeps
    its journal beside the resolved file)."""
    real = Path(os.path.realpath(db_path))
    return real.with_name(real.name + ".lock")


@contextlib.contextmanager
def exclusive_run(db_path: Path) -> Iterator[None]:
    """Holds the store's run lock, or raises UsageError naming the run that holds it."""
    path = lock_path(db_path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Writable by whoever may write the store (the umask decides), so that another user
        # sharing it can lock it too; flock needs only a descriptor, so a lock file made by
        # someone else is opened for reading, and holds no pid then.
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        except PermissionError:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as error:
        raise UsageError(f"cannot lock {db_path}: {path}: {error.strerror}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            raise UsageError(
                f"another smrlab run (pid {holder}) is writing to {db_path}; wait for it to "
                f"finish, or give this run another --db"
            ) from None
        with contextlib.suppress(OSError):  # a read-only descriptor: no pid to leave
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock
