"""The sidecar lock that keeps maintenance from pulling a database out from under its users.

Every `SQLiteBackend` holds a *shared* OS lock (`flock(LOCK_SH)`) on `<db>.lock`, next to the
database, for as long as it is open. `repair`, `restore` and `migrate` replace or rewrite the
file, so they take the lock *exclusively* (`LOCK_EX | LOCK_NB`): while any backend in any
process has the database open they refuse (`StoreInUseError`), or, given a wait, poll until the
holders go or the wait runs out. Without this, a writer that kept its connection open committed
into the file that repair had just moved away, and its acknowledged writes were lost.

Conversely, a backend opening while maintenance holds the lock waits (bounded) for it to finish,
so it always opens the file maintenance leaves behind.

Why `flock` and not SQLite's own locks: SQLite locks are per transaction, and a connection that
is idle holds none, yet it still points at the old inode. The lock is per open file description,
so it is released when the process exits or dies (no stale lock to clean up), a forked child
shares its parent's, and two backends in one process hold two compatible shared locks. The lock
file is never deleted or moved (that would split the lock in two); it is empty and 0600.

How many processes hold it is read, best effort, from `/proc/locks` on Linux (matched by device
and inode); elsewhere the message says "another process".

Platforms: POSIX (`fcntl.flock`), i.e. Linux, macOS and the BSDs. On a network filesystem,
`flock` is only as good as the server's locking. On platforms without `fcntl` (Windows) there
is no lock: backends open without one, and maintenance logs a warning and proceeds, so stopping
every process that uses the database first is the operator's job there.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from contextchef.errors import StoreError, StoreInUseError
from contextchef.store.backends.sqlite.private import create_private_file, make_private_dirs

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "LOCKING_SUPPORTED",
    "SharedLock",
    "exclusive",
    "holders",
    "lock_path",
]

log = logging.getLogger("contextchef.store.backends.sqlite.locking")

LOCKING_SUPPORTED = fcntl is not None
"""Whether this platform has `flock`; without it maintenance cannot see other processes."""

OPEN_WAIT_S = 30.0
"""How long a backend waits for running maintenance to finish before it gives up."""

_POLL_S = 0.05


def lock_path(db_path: Path) -> Path:
    """The sidecar lock file of a database: `<db>.lock`."""
    return db_path.with_name(db_path.name + ".lock")


def _open_lock(db_path: Path) -> int:
    target = lock_path(db_path)
    try:
        make_private_dirs(target.parent)
        create_private_file(target)
        return os.open(target, os.O_RDWR | os.O_CLOEXEC)
    except OSError as exc:
        raise StoreError(f"cannot open the lock file {target}: {exc.strerror or exc}") from exc


def _try_flock(fd: int, operation: int) -> bool:
    assert fcntl is not None
    try:
        fcntl.flock(fd, operation | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


class SharedLock:
    """A shared hold on `<db>.lock`, taken on construction and kept until `release`.

    Waits up to `timeout` seconds while maintenance holds the lock exclusively, then raises
    `StoreInUseError`. A no-op where `flock` does not exist.
    """

    def __init__(self, db_path: Path, *, timeout: float = OPEN_WAIT_S) -> None:
        self._fd: int | None = None
        if fcntl is None:
            return
        fd = _open_lock(db_path)
        deadline = time.monotonic() + timeout
        while not _try_flock(fd, fcntl.LOCK_SH):
            if time.monotonic() >= deadline:
                os.close(fd)
                raise StoreInUseError(
                    f"{db_path} is being repaired, restored or migrated by another process "
                    f"(it holds {lock_path(db_path)}); waited {timeout:.0f} s, try again when it "
                    "has finished"
                )
            time.sleep(_POLL_S)
        self._fd = fd

    def release(self) -> None:
        """Drop the hold (idempotent)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            with suppress(OSError):
                os.close(fd)


def holders(db_path: Path) -> list[int] | None:
    """PIDs holding a lock on `<db>.lock`, from `/proc/locks`; None when that cannot be told."""
    try:
        st = lock_path(db_path).stat()
        text = Path("/proc/locks").read_text()
    except OSError:
        return None
    device = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    pids: list[int] = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 6 or fields[1] == "->" or fields[1] != "FLOCK":
            continue
        try:
            major, minor, inode = fields[5].split(":")
            where = (int(major, 16), int(minor, 16), int(inode))
            pid = int(fields[4])
        except ValueError:
            continue
        if where == device and pid not in pids:
            pids.append(pid)
    return pids or None


def _in_use(db_path: Path, command: str) -> StoreInUseError:
    pids = holders(db_path)
    if pids:
        named = [f"{pid} (this process)" if pid == os.getpid() else str(pid) for pid in pids]
        plural = len(pids) > 1
        who = f"{len(pids)} process{'es' if plural else ''} (pid {', '.join(named)})"
        verb, them = ("have", "them") if plural else ("has", "it")
    else:
        who, verb, them = "another process", "has", "it"
    return StoreInUseError(
        f"refusing to {command} {db_path}: {who} {verb} it open; stop {them} (close the agents "
        f"or SQLiteBackend instances using it), then run `contextchef db {command}` again, or "
        "add `--wait` to wait for them",
        holders=len(pids) if pids else None,
    )


@contextmanager
def exclusive(db_path: Path, *, command: str, wait: float = 0.0) -> Iterator[None]:
    """Hold `<db>.lock` exclusively for the block: no backend has the database open meanwhile.

    Refuses at once (`StoreInUseError`, naming the holders where it can) unless `wait` > 0,
    in which case it polls for up to `wait` seconds. `command` names the operation in messages.
    """
    if fcntl is None:  # pragma: no cover - Windows
        log.warning(
            "this platform has no flock: cannot tell whether other processes use %s; "
            "make sure none does before `%s`",
            db_path,
            command,
        )
        yield
        return
    fd = _open_lock(db_path)
    try:
        deadline = time.monotonic() + wait
        while not _try_flock(fd, fcntl.LOCK_EX):
            if time.monotonic() >= deadline:
                raise _in_use(db_path, command)
            time.sleep(_POLL_S)
        yield
    finally:
        os.close(fd)
