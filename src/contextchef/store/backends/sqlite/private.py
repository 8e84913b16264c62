"""Private file modes for everything the SQLite store creates: files 0600, directories 0700.

The context store holds conversation text, so, like the filesystem backend, nothing it creates
is readable by other users. The modes do not depend on the process umask: files are created
with `os.open(…, O_CREAT | O_EXCL, 0o600)` *before* SQLite opens them and then `fchmod`-ed
(a umask can only remove bits, and an odd one such as 0o277 would leave the owner unable to
write); directories are made one component at a time and `chmod`-ed. SQLite gives its `-wal`
and `-shm` files the database file's mode; `private_sidecars` also chmods them when they exist.

Existing files and directories are never re-moded, except the sidecars of a private database:
pointing `--db` at `/tmp/x.db` must not chmod `/tmp`. On platforms without POSIX modes
(Windows) the chmod calls are harmless no-ops beyond the read-only bit.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

__all__ = [
    "DIR_MODE",
    "FILE_MODE",
    "create_private_file",
    "make_private_dirs",
    "private_sidecars",
]

FILE_MODE = 0o600
DIR_MODE = 0o700
_SIDECARS = ("-wal", "-shm", "-journal")


def make_private_dirs(directory: Path) -> None:
    """Create `directory` and any missing parents, each new one 0700; existing ones untouched."""
    missing: list[Path] = []
    current = directory
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue  # another process made it first; it chose its mode
        path.chmod(DIR_MODE)


def create_private_file(path: Path) -> bool:
    """Create `path` empty with mode 0600 unless it exists; True when this call created it."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
    except FileExistsError:
        return False
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)
    return True


def private_sidecars(db_path: Path) -> None:
    """Chmod the `-wal`/`-shm`/`-journal` files of a database 0600 when the database is private.

    A database someone deliberately made group-readable keeps its sidecars as SQLite made them.
    """
    try:
        main = db_path.stat()
    except OSError:
        return
    if stat.S_IMODE(main.st_mode) & 0o077:
        return
    for suffix in _SIDECARS:
        side = db_path.with_name(db_path.name + suffix)
        with contextlib.suppress(OSError):  # absent, or owned by another user: leave it
            if stat.S_IMODE(side.stat().st_mode) != FILE_MODE:
                side.chmod(FILE_MODE)
