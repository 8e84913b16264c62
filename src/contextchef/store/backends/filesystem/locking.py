"""The namespace write lock of `FileSystemBackend`: one writer per namespace directory at a time.

Every write of a namespace (`write`, `delete`, `append`, `create`, `replace_if`) runs under
this lock, so a compare-and-swap's comparison and its write are one step for every other
writer, in this process or another. Reads take no lock: writes replace whole files atomically,
so a reader sees the old file or the new one.

How it holds:

- **In the process**, a `threading.Lock` per namespace directory (shared by every backend
  instance of the process that opens that directory).
- **Across processes**, on POSIX, `fcntl.flock(LOCK_EX)` on the namespace directory itself
  (an open directory handle). No lock file is created, so the on-disk layout shared with the
  TypeScript reference is unchanged; the lock is released when the handle closes, including
  when the process dies.
- **Where that is impossible** (no `fcntl`, as on Windows; or a filesystem refusing `flock`
  on a directory, as some network filesystems do) the lock is the in-process one only: writes
  stay atomic between the threads of one process, and racing *processes* get the weaker
  guarantee of plain last-writer-wins (a warning is logged once per directory).
"""

from __future__ import annotations

import errno
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["CROSS_PROCESS", "namespace_lock"]

logger = logging.getLogger("contextchef.store.backends.filesystem.locking")

CROSS_PROCESS = fcntl is not None
"""Whether this platform can lock a namespace against other processes."""

_UNSUPPORTED = {errno.EBADF, errno.ENOLCK, errno.EINVAL, errno.EOPNOTSUPP}
_guard = threading.Lock()
_locks: dict[str, threading.Lock] = {}
_warned: set[str] = set()


def _process_lock(key: str) -> threading.Lock:
    with _guard:
        lock = _locks.get(key)
        if lock is None:
            lock = _locks[key] = threading.Lock()
        return lock


@contextmanager
def namespace_lock(key: str, dfd: int | None) -> Iterator[None]:
    """Hold the write lock of the namespace directory `key` (its absolute path), whose open
    handle is `dfd` (None when the directory does not exist: the in-process lock only)."""
    with _process_lock(key):
        if fcntl is None or dfd is None:
            yield
            return
        try:
            fcntl.flock(dfd, fcntl.LOCK_EX)
        except OSError as exc:
            if exc.errno not in _UNSUPPORTED:
                raise
            if key not in _warned:
                _warned.add(key)
                logger.warning(
                    "cannot flock %s (%s); writes there are atomic within this process only",
                    key,
                    exc.strerror,
                )
            yield
            return
        try:
            yield
        finally:
            fcntl.flock(dfd, fcntl.LOCK_UN)
