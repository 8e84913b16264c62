"""The sidecar lock that keeps maintenance from pulling a database out from under its users.

Every `SQLiteBackend` holds a *shared* OS lock (`flock(LOCK_SH)`) on `<db>.lock`, next to the
database, for as long as it is open. `repair`, `restore` and `migrate` replace or rewrite the
file, so they take the lock *exclusively* (`LOCK_EX | LOCK_NB`): while any backend in any
process has the database open they refuse (`StoreInUseError`), or, given a wait, poll until the
holders go or the wait runs out. Without this, a writer that kept its connection open committed
into the file that repair had just moved away, and its acknowledged writes were lost.

Conversely, a backend opening while maintenance holds the lock waits (bounded) for it to finish,
so it always opens the file maintenance leaves behind.

The lock belongs to the file, not to the spelling of its path:

- `<db>` is the path with every symlink resolved (`Path.resolve`, as `connection.connect` opens
  it), so `link.db -> data/context.db` and `data/context.db` share one `data/context.db.lock`.
  The lock is keyed on that name rather than on the inode because repair and restore put a new
  inode in place: users and maintenance must agree on the lock across the swap.
- A hard link is a second name for the same inode, with a lock file of its own; so, once it
  holds the lock, maintenance also asks the kernel who has *the inode* open (openers.py, by
  device and inode) and refuses while anyone does. `repair` and `restore` also refuse a file
  with several names: they would put the new file under one name and leave the others on the
  old one. Where open files cannot be listed (no `/proc`), `migrate` refuses such a file too.

Why `flock` and not SQLite's own locks: SQLite locks are per transaction, and a connection that
is idle holds none, yet it still points at the old inode. The lock is per open file description,
so it is released when the process exits or dies (no stale lock to clean up), a forked child
shares its parent's, and two backends in one process hold two compatible shared locks. The lock
file is empty and 0600, and is never moved. It is removed only by the hold that created it,
while holding it exclusively, when the file beside it was refused (not a contextchef database,
or maintenance refused): no sidecar is left next to someone else's file. Every hold checks,
once locked, that its descriptor is still the file at `<db>.lock`, and starts again otherwise,
so a removal can never split the lock in two.

Whoever holds the lock also removes what a killed maintenance left behind (`<db>.repairing`,
`<db>.restoring` and their journals): the hold proves no maintenance of that name is running.

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

from contextchef.errors import ForeignDatabaseError, StoreError, StoreInUseError
from contextchef.store.backends.sqlite.openers import file_id, flock_holders, openers
from contextchef.store.backends.sqlite.private import create_private_file, make_private_dirs

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "LEFTOVER_SUFFIXES",
    "LOCKING_SUPPORTED",
    "SharedLock",
    "exclusive",
    "holders",
    "lock_path",
    "real_path",
]

log = logging.getLogger("contextchef.store.backends.sqlite.locking")

LOCKING_SUPPORTED = fcntl is not None
"""Whether this platform has `flock`; without it maintenance cannot see other processes."""

OPEN_WAIT_S = 30.0
"""How long a backend waits for running maintenance to finish before it gives up."""

LEFTOVER_SUFFIXES = (
    ".repairing",
    ".repairing-wal",
    ".repairing-shm",
    ".repairing-journal",
    ".restoring",
    ".restoring-journal",
)
"""The files repair and restore build next to the database, removed when found unattended."""

_POLL_S = 0.05
_RETAKES = 100
_SCAN_POLL_S = 0.25


def real_path(db_path: Path) -> Path:
    """The database's path with every symlink resolved: the file SQLite opens."""
    return db_path.expanduser().resolve()


def lock_path(db_path: Path) -> Path:
    """The sidecar lock file of a database: `<db>.lock`, beside the real file."""
    real = real_path(db_path)
    return real.with_name(real.name + ".lock")


def _try_flock(fd: int, operation: int) -> bool:
    assert fcntl is not None
    try:
        fcntl.flock(fd, operation | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _is_current(fd: int, target: Path) -> bool:
    """Whether the locked descriptor is still the file at `target` (it was not removed)."""
    st = os.fstat(fd)
    return file_id(target) == (st.st_dev, st.st_ino)


def _take(real: Path, operation: int) -> tuple[int, bool] | None:
    """Lock `<real>.lock` (`operation`, without waiting): (descriptor, whether this call created
    the file), or None while another process holds it incompatibly."""
    target = real.with_name(real.name + ".lock")
    for _ in range(_RETAKES):
        try:
            make_private_dirs(target.parent)
            created = create_private_file(target)
            fd = os.open(target, os.O_RDWR | os.O_CLOEXEC)
        except FileNotFoundError:
            continue  # removed between creating and opening it: create it again
        except OSError as exc:
            raise StoreError(f"cannot open the lock file {target}: {exc.strerror or exc}") from exc
        if not _try_flock(fd, operation):
            os.close(fd)
            return None
        if _is_current(fd, target):
            return fd, created
        os.close(fd)  # removed by the hold that created it: lock the file there now
    raise StoreError(f"cannot hold the lock file {target}: it keeps disappearing")


def _drop(fd: int, real: Path, *, remove: bool) -> None:
    """Release a hold; with `remove`, first delete the lock file (the caller holds it alone)."""
    if remove:
        with suppress(OSError):
            real.with_name(real.name + ".lock").unlink()
    with suppress(OSError):
        os.close(fd)


def _clean_leftovers(real: Path) -> None:
    for suffix in LEFTOVER_SUFFIXES:
        leftover = real.with_name(real.name + suffix)
        with suppress(FileNotFoundError):
            leftover.unlink()
            log.info("removed %s, left by a maintenance command that did not finish", leftover)


class SharedLock:
    """A shared hold on `<db>.lock`, taken on construction and kept until `release`.

    Waits up to `timeout` seconds while maintenance holds the lock exclusively, then raises
    `StoreInUseError`. Removes what a killed maintenance left behind. A no-op where `flock`
    does not exist.
    """

    def __init__(self, db_path: Path, *, timeout: float = OPEN_WAIT_S) -> None:
        self._fd: int | None = None
        self._created = False
        self._real = real_path(db_path)
        if fcntl is None:
            return
        deadline = time.monotonic() + timeout
        while (taken := _take(self._real, fcntl.LOCK_SH)) is None:
            if time.monotonic() >= deadline:
                raise StoreInUseError(
                    f"{db_path} is being repaired, restored or migrated by another process "
                    f"(it holds {lock_path(db_path)}); waited {timeout:.0f} s, try again when it "
                    "has finished"
                )
            time.sleep(_POLL_S)
        self._fd, self._created = taken
        _clean_leftovers(self._real)

    def release(self) -> None:
        """Drop the hold (idempotent)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            _drop(fd, self._real, remove=False)

    def discard(self) -> None:
        """Drop the hold after the database was refused: the lock file goes too when this hold
        created it and no other holds it (nothing is left beside a file that is not ours)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        alone = fcntl is not None and self._created and _try_flock(fd, fcntl.LOCK_EX)
        _drop(fd, self._real, remove=alone)


def holders(db_path: Path) -> list[int] | None:
    """PIDs holding a lock on `<db>.lock`, from `/proc/locks`; None when that cannot be told."""
    return flock_holders(lock_path(db_path))


def _in_use(db_path: Path, command: str, pids: list[int] | None) -> StoreInUseError:
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


def _several_names(db_path: Path, real: Path, command: str, names: int) -> StoreError:
    return StoreError(
        f"refusing to {command} {db_path}: the file has {names} names (hard links), and "
        f"processes using the other names cannot be ruled out, or would be left on the old "
        f"file; remove the other names (`find / -xdev -samefile {real}`) and try again"
    )


def _refusal(db_path: Path, real: Path, command: str, replaces: bool) -> StoreError | None:
    """Why maintenance must not run now although it holds the lock, or None."""
    target = file_id(real)
    if target is None:
        return None  # nothing there yet: restore and migrate create it
    users = openers(target)
    if users:
        return _in_use(db_path, command, users)
    names = real.stat().st_nlink
    if names > 1 and (replaces or users is None):
        return _several_names(db_path, real, command, names)
    return None


@contextmanager
def exclusive(
    db_path: Path, *, command: str, wait: float = 0.0, replaces: bool = False
) -> Iterator[None]:
    """Hold `<db>.lock` exclusively for the block: no backend has the database open meanwhile.

    Refuses at once (`StoreInUseError`, naming the holders where it can) unless `wait` > 0,
    in which case it polls for up to `wait` seconds. Also refuses while any process has the
    file open under another name, and, with `replaces` (the block puts a new file in place),
    a file with several names. `command` names the operation in messages.
    """
    real = real_path(db_path)
    if fcntl is None:  # pragma: no cover - Windows
        log.warning(
            "this platform has no flock: cannot tell whether other processes use %s; "
            "make sure none does before `%s`",
            db_path,
            command,
        )
        yield
        return
    deadline = time.monotonic() + wait
    while True:
        taken = _take(real, fcntl.LOCK_EX)
        if taken is None:
            if time.monotonic() >= deadline:
                raise _in_use(db_path, command, holders(db_path))
            time.sleep(_POLL_S)
            continue
        fd, created = taken
        refusal = _refusal(db_path, real, command, replaces)
        if refusal is None:
            break
        _drop(fd, real, remove=created)
        if not isinstance(refusal, StoreInUseError) or time.monotonic() >= deadline:
            raise refusal
        time.sleep(_SCAN_POLL_S)
    refused = False
    try:
        _clean_leftovers(real)
        yield
    except ForeignDatabaseError:
        refused = True
        raise
    finally:
        _drop(fd, real, remove=refused and created)
